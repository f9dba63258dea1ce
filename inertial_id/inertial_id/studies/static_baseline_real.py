"""The static-pose baseline against ours on real Gen3 recordings, ROS-free.

The cases are the real-data study's (:mod:`.realdata`): leave one run out (calibrate on the others),
the held-out run's real torques plus the exact torques of a known virtual payload. Ours is that
study's pipeline, scored as in :mod:`.static_baseline` (usable estimate, time to it, time to
``~/apply`` accepting it). The baseline's poses are the held-out run's still segments: every joint
slower than ``STILL_SPEED_RAD_S`` for at least ``MIN_STILL_S``; each is averaged like a simulated
hold (torques with the calibration's sign and offset centre, the nominal robot's gravity removed).
When the run's still segments do not determine mass and centre of mass (fewer than two distinct
poses), the baseline is not run on it and the report says why, with each run's slowest speed and
longest still stretch.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ..core.calibration.apply import run_pipeline
from ..core.robot.regressor import PayloadRegressor
from .realdata import COM_OFFSETS_M, MASSES_KG, dumbbell, make_fold, payload_torques
from .static_baseline import (COM_TOLERANCE_M, MASS_TOLERANCE, UPDATE_PERIOD_S, errors, gravity_rows, ours_entry,
                              solve_mass_com, summarize, table, usable)

STILL_SPEED_RAD_S = 0.02       # every joint slower than this ...
MIN_STILL_S = 0.5              # ... for at least this long: a static pose


def still_segments(t, qd, speed_rad_s: float = STILL_SPEED_RAD_S, min_s: float = MIN_STILL_S) -> list[tuple[int, int]]:
    """``(start, end)`` sample ranges where every joint is slower than ``speed_rad_s`` for at least ``min_s``."""
    still = np.all(np.abs(np.asarray(qd, float)) < speed_rad_s, axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], still.astype(int), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]) if t[b - 1] - t[a] >= min_s]


def longest_still_s(t, qd, speed_rad_s: float = STILL_SPEED_RAD_S) -> float:
    """Longest stretch (s) with every joint slower than ``speed_rad_s``; 0 when no sample is."""
    spans = still_segments(t, qd, speed_rad_s, 0.0)
    return max((float(t[b - 1] - t[a]) for a, b in spans), default=0.0)


def baseline_on_run(robot, run, tau_Nm, calibration, pi_true) -> dict:
    """The baseline on the run's still segments; ``available`` false (with the reason) when they do
    not determine mass and centre of mass."""
    segments = still_segments(run.t, run.qd)
    none = {"mass_error_rel": None, "com_error_m": None, "seconds_of_motion": None, "seconds_to_usable": None}
    if not segments:
        return {"available": False, "poses": 0, **none,
                "reason": f"no still segment (every joint below {STILL_SPEED_RAD_S} rad/s for {MIN_STILL_S} s)"}
    reg = PayloadRegressor(robot)
    # logged effort = sign x rigid-body torque, offset within the calibrated box around its centre
    tau_rb = calibration.torque_sign * np.asarray(tau_Nm, float) - calibration.offset_center_Nm
    rows = [gravity_rows(reg, run.q[a:b].mean(axis=0), tau_rb[a:b].mean(axis=0)) for a, b in segments]
    solved = solve_mass_com(np.vstack([A for A, _ in rows]), np.concatenate([b for _, b in rows]))
    if solved is None:
        return {"available": False, "poses": len(segments), **none,
                "reason": f"{len(segments)} still segment(s) do not determine mass and centre of mass"}
    e_m, e_c = errors(*solved, pi_true)
    seconds = round(float(run.t[segments[-1][1] - 1] - run.t[0]), 3)
    return {"available": True, "poses": len(segments), "mass_kg": solved[0], "com_m": solved[1],
            "mass_error_rel": e_m, "com_error_m": e_c, "seconds_of_motion": seconds,
            "seconds_to_usable": seconds if usable(e_m, e_c) else None}


def run_real_study(robot, runs, masses=MASSES_KG, com_offsets=COM_OFFSETS_M, folds=None) -> dict:
    """Leave one run out over ``runs`` with each virtual payload: baseline and ours side by side."""
    folds = range(len(runs)) if folds is None else folds
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in folds:
            fold = make_fold(robot, runs, k, Path(tmp))
            run = fold.held_out
            for mass in masses:
                for com in com_offsets:
                    pi = dumbbell(mass, com)
                    tau = run.tau + payload_torques(fold.robot, run, pi)
                    intake, result, _ = run_pipeline(fold.robot, run, tau, UPDATE_PERIOD_S)
                    cases.append({"payload": f"{mass:g}kg@{','.join(f'{c:g}' for c in com)}", "seed": run.name,
                                  "mass_kg": float(pi[0]), "com_m": pi[1:4] / pi[0],
                                  "static_poses": baseline_on_run(fold.robot, run, tau, fold.calibration, pi),
                                  "ours": ours_entry(fold.robot, intake.history, result, pi, run.t[0],
                                                     run.t[-1] - run.t[0])})
    report = {"robot": robot.name, "sensing": "joint_torque (real recordings, virtual payloads)",
              "usable_definition": {"mass_error_rel_below": MASS_TOLERANCE,
                                    "com_error_m_below": COM_TOLERANCE_M},
              "settings": {"still_speed_rad_s": STILL_SPEED_RAD_S, "min_still_s": MIN_STILL_S,
                           "update_period_s": UPDATE_PERIOD_S, "masses_kg": list(masses),
                           "com_offsets_m": [list(c) for c in com_offsets], "held_out": [runs[k].name for k in folds]},
              "runs": {r.name: {"still_segments": len(still_segments(r.t, r.qd)),
                                "slowest_max_joint_speed_rad_s": float(np.abs(r.qd).max(axis=1).min()),
                                "longest_still_s": longest_still_s(r.t, r.qd)} for r in runs},
              "table": table(cases), "summary": summarize(cases), "cases": cases}
    missing = [c for c in cases if not c["static_poses"]["available"]]
    if missing:
        reasons = sorted({f"{c['seed']}: {c['static_poses']['reason']}" for c in missing})
        report["static_poses_unavailable"] = (f"{len(missing)} of {len(cases)} cases have no static-pose estimate "
                                              f"({'; '.join(reasons)})")
    return report
