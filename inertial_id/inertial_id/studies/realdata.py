"""Real-data study: payload bounds on real Kinova Gen3 recordings with known virtual payloads.

Leave one run out: the robot is calibrated (:func:`~..calibration.calibrate`) on the other runs only,
then the held-out run, with the exact joint torques of a known payload on the last link added to its
real torques (pinocchio RNEA with the payload minus without, along the recorded motion, accelerations
by central differences of the recorded velocities, lagged by the calibrated effort delay as the
drive's torque channel lags the real torque), goes through the estimator pipeline the
``estimate`` command runs (builder rows with the calibration, the guaranteed LP bounds, the run's
torque offsets as unknowns; the point estimate by least absolute deviations,
:mod:`..estimators.robust_point`). Per case: containment of each of the 10 parameters, whether the
true payload with some admissible robot offsets satisfies every row's bound, data_consistent,
widths, point-estimate errors and the statistical (bootstrap, not guaranteed) interval's coverage.
Plus the case without payload (its mass interval must contain 0 kg).

Nothing is tuned on the held-out run: the calibration, its per-joint factors, its run-to-run bias and
the bootstrap block length are fixed before it is read. The statistical interval is called by its
nominal level only when the held-out runs covered the truth at least that often
(:func:`label_statistical`); otherwise by the coverage they showed.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from scipy.optimize import linprog

from ..defaults import BOUNDS_PERIOD_S
from ..defaults import REALDATA_BOOTSTRAP_REPLICATES as BOOTSTRAP_REPLICATES
from ..defaults import REALDATA_MASSES_KG as MASSES_KG
from ..core.robot import params
from ..core.calibration import calibration_of, momentum_window
from ..core.calibration.apply import robot_with_calibration, run_pipeline
from ..core.calibration.build import SAFETY_FACTOR, calibrate, validation
from ..core.estimators.bootstrap import interval_label
from ..core.data.data_io import Run, split_at_gaps
from ..core.signals.filtering import central_difference
from ..core.signals.momentum import MomentumWindows
from ..core.robot.model import model_with_payload

# Dumbbells of 4, 6 and 8 lb (1.81-3.63 kg) and three COM offsets in the payload (flange) frame, m.
COM_OFFSETS_M = ((0.0, 0.0, 0.05), (0.04, -0.03, 0.08), (-0.05, 0.04, 0.12))
BOOTSTRAP_BLOCK_S = 1.0
# The parameters the statistical coverage is summarised over: mass and first moments (rotational
# inertia is not identifiable from these runs; its coverage is reported per parameter too).
COVERAGE_PARAMETERS = slice(0, 4)
# A box's mass bound within this share of the prior's mass width of one of the prior's limits stays
# at that limit; a sound witness as close to it says the samples cannot move it (mass_at_prior).
AT_PRIOR_SHARE = 0.02


def read_downsampled_runs(folder) -> list[Run]:
    """The runs of a folder in the shared recordings' layout (``t_downsampled_N.csv``,
    ``q_downsampled_N.csv``, ``q_d_...``, ``q_dd_...``, ``tau_...``), by run number."""
    folder = Path(folder)
    numbers = sorted(int(p.stem.rsplit("_", 1)[1]) for p in folder.glob("t_downsampled_*.csv"))
    runs = []
    for i in numbers:
        def load(stem: str, i: int = i) -> np.ndarray:
            return np.loadtxt(folder / f"{stem}_downsampled_{i}.csv")
        runs.append(Run(f"run{i}", load("t"), load("q"), load("q_d"), load("tau"), load("q_dd")))
    return runs


def dumbbell(mass_kg: float, com_m) -> np.ndarray:
    """A solid cylinder (radius 4 cm, 15 cm long, axis along the flange x) at ``com_m``: pinocchio
    order, payload frame."""
    R = pin.SE3(pin.rpy.rpyToMatrix(0.0, np.pi / 2, 0.0), np.zeros(3))
    pi = params.transform_params(params.cylinder_inertia_params(mass_kg, 0.04, 0.15), R)
    return params.transform_params(pi, pin.SE3(np.eye(3), np.asarray(com_m, dtype=float)))


def payload_torques(robot, run: Run, pi_payload) -> np.ndarray:
    """(N, nv) joint torques the payload adds along the run: RNEA with it minus without (each stretch
    between time gaps differentiated on its own)."""
    model_p = model_with_payload(robot, pi_payload)
    data, data_p = robot.model.createData(), model_p.createData()
    out = []
    for seg in split_at_gaps(run):
        qdd = central_difference(seg.qd, seg.t) if seg.n_samples >= 5 else np.zeros_like(seg.qd)
        out.append(np.array([pin.rnea(model_p, data_p, q, v, a) - pin.rnea(robot.model, data, q, v, a)
                             for q, v, a in zip(seg.q, seg.qd, qdd)]))
    return np.vstack(out)


@dataclass
class Fold:
    """One held-out run with the calibration made on the others."""

    held_out: Run
    robot: object            # the robot with the calibration named in its profile
    calibration: object
    calibration_path: str


def make_fold(robot, runs: list[Run], k: int, workdir: Path, safety_factor: float = SAFETY_FACTOR) -> Fold:
    """Calibrate on every run but ``k``; the robot's profile names the calibration written to ``workdir``."""
    cal = calibrate(robot, [r for i, r in enumerate(runs) if i != k], safety_factor=safety_factor)
    path = workdir / f"calibration_without_{runs[k].name}.yaml"
    return Fold(runs[k], robot_with_calibration(robot, cal, path), cal, str(path))


def run_case(fold: Fold, pi_true, bounds_period_s: float = BOUNDS_PERIOD_S, replicates: int = BOOTSTRAP_REPLICATES) -> dict:
    """The pipeline on the held-out run plus the payload ``pi_true`` (zeros: no payload)."""
    robot, run = fold.robot, fold.held_out
    pi_true = np.asarray(pi_true, dtype=float)
    delay_s = fold.calibration.delays()
    tau_payload = (lagged(run.t, payload_torques(robot, run, pi_true), delay_s) if pi_true[0] > 0
                   else np.zeros_like(run.tau))
    tau = run.tau + tau_payload
    intake, r, messages = run_pipeline(robot, run, tau, bounds_period_s)
    est = intake.estimator.estimator
    stat = est.statistical_interval(block_s=BOOTSTRAP_BLOCK_S, replicates=replicates)
    lo, hi = r.lower, r.upper
    inside = (pi_true >= lo) & (pi_true <= hi)
    truth_rows = truth_satisfies_rows(est, messages, pi_true)
    out = {
        "payload": pi_true.tolist(), "mass_kg": float(pi_true[0]),
        "lower": lo.tolist(), "upper": hi.tolist(), "estimate": r.estimate.tolist(),
        "contained": inside.tolist(), "all_contained": bool(inside.all()),
        "truth_satisfies_rows": truth_rows, "data_consistent": bool(r.data_consistent),
        "bounds_guaranteed": bool(r.bounds_guaranteed), "message": r.message,
        "windows_used": int(est.statistics.rows // robot.nv), "windows_excluded": int(excluded_windows(messages, run, robot)),
        "mass_width_kg": float(hi[0] - lo[0]),
        "com_width_m": com_widths(lo, hi).tolist(),
        "mass_error_kg": float(r.estimate[0] - pi_true[0]),
        "dropped_messages": intake.dropped,
        # what the payload's own torques add to a row beyond Y pi (sampled-and-held torque, accelerations
        # by differences): the calibration saw no payload, so only its factors' margin covers this
        "virtual_payload_row_error_max_Nm_s": payload_row_error(robot, run, tau_payload, pi_true, delay_s),
    }
    out["silent_wrong_answer"] = bool(r.data_consistent and not (out["all_contained"] and truth_rows))
    if pi_true[0] > 0:
        # what no sound box beats on these rows (error-free, the nominal robot): width over floor,
        # and where the box stays at the prior, whether the rows could have moved it
        witnesses = est.sound_witnesses_kg(pi_true)
        out["sound_mass_witnesses_kg"] = list(witnesses)
        out["sound_mass_width_floor_kg"] = witnesses[1] - witnesses[0]
        out["width_over_floor"] = out["mass_width_kg"] / out["sound_mass_width_floor_kg"]
        prior_lower, prior_upper = robot.payload_prior()
        out["mass_at_prior"] = mass_at_prior(lo[0], hi[0], prior_lower[0], prior_upper[0], witnesses)
        out["mass_error_rel"] = abs(out["mass_error_kg"]) / pi_true[0]
        com_est = r.estimate[1:4] / r.estimate[0] if r.estimate[0] > 0 else np.full(3, np.nan)
        out["com_error_m"] = float(np.linalg.norm(com_est - pi_true[1:4] / pi_true[0]))
    else:
        out["contains_zero_mass"] = bool(lo[0] <= 0.0 <= hi[0])
    if stat is not None:
        covered = (pi_true >= stat["lower"]) & (pi_true <= stat["upper"])
        # the label waits for the study's held-out coverage (label_statistical)
        out["statistical"] = {"level": stat["level"], "lower": stat["lower"].tolist(), "upper": stat["upper"].tolist(),
                              "covered": covered.tolist(), "block_windows": stat["block_windows"],
                              "replicates": stat["replicates"], "bias_runs": stat.get("bias_runs")}
    return out


def mass_at_prior(lower, upper, prior_lower, prior_upper, witnesses) -> list[dict]:
    """The prior's mass limits a box (mass bounds ``lower``, ``upper``, kg) did not leave, each with
    the sound witness on its side (:meth:`~..core.estimators.guaranteed.GuaranteedEstimator.sound_witnesses_kg`):
    ``undetermined`` when that witness is at the limit too (within AT_PRIOR_SHARE of the prior's
    width): a payload at the limit then explains every row of the error-free realization (the
    floor's) within its stated bound, so no box sound on these samples leaves it, whatever the
    estimator: the samples cannot determine the mass there, which is the reason the box stays."""
    tol = AT_PRIOR_SHARE * (prior_upper - prior_lower)
    out = []
    for side, bound, limit, witness in (("lower", lower, prior_lower, witnesses[0]),
                                        ("upper", upper, prior_upper, witnesses[1])):
        if abs(bound - limit) <= tol:
            out.append({"limit": side, "prior_kg": float(limit), "witness_kg": float(witness),
                        "undetermined": bool(abs(witness - limit) <= tol)})
    return out


def lagged(t, tau, delay_s) -> np.ndarray:
    """``tau`` (N, nv) as a channel lagging by ``delay_s`` (nv,) logs it: joint ``j`` at ``t`` shows
    its value at ``t - delay_j`` (the first value before the start)."""
    return np.column_stack([np.interp(t - d, t, tau[:, j]) for j, d in enumerate(delay_s)])


def payload_row_error(robot, run: Run, tau_payload, pi, delay_s) -> float:
    """Largest ``|sum(tau_payload dt) - Y pi|`` over the run's momentum windows (no exclusions; the
    effort taken ``delay_s`` later, as the calibrated rows take it), N m s."""
    h = momentum_window(robot, calibration_of(robot))
    worst, start = 0.0, 0
    for seg in split_at_gaps(run):
        n = seg.n_samples
        windows = MomentumWindows(robot, h, 0.0, 0.0, 0.0, effort_delay_s=delay_s)
        windows.add_samples(seg.t, seg.q, seg.qd, tau_payload[start:start + n])
        start += n
        rows = windows.take_rows()
        if rows.rows:
            worst = max(worst, float(np.abs(rows.U - rows.Y @ pi).max()))
    return worst


def excluded_windows(messages, run, robot) -> int:
    """Windows dropped at plateaus: those the run would give minus those formed (a window per
    ``window`` samples of each stretch between gaps; the last ones of a stretch, whose delayed
    effort never arrives, count too)."""
    h = momentum_window(robot, calibration_of(robot))
    possible = sum((seg.n_samples - 1) // h for seg in split_at_gaps(run))
    return possible - len([m for m in messages if m.kind == "momentum"])


def truth_satisfies_rows(estimator, messages, pi_true) -> bool:
    """Whether some robot parameters in the estimator's box make every row hold with the true payload:
    ``|Y pi_true + Y_r theta_r - U| <= e`` for all rows, an LP in the free robot parameters."""
    rows = [m for m in messages if m.kind == "momentum"]
    if not rows:
        return True
    A = np.vstack([m.A for m in rows])
    U = np.concatenate([m.b for m in rows])
    e = np.concatenate([m.noise_bound for m in rows])
    Y, Yr = A[:, :10], A[:, 10:]
    free = estimator.robot_upper > estimator.robot_lower
    b = U - Y @ pi_true - Yr[:, ~free] @ estimator.robot_nominal[~free]
    N = Yr[:, free]
    if N.shape[1] == 0:
        return bool(np.all(np.abs(b) <= e))
    res = linprog(np.zeros(N.shape[1]), A_ub=np.vstack([N, -N]), b_ub=np.concatenate([b + e, e - b]),
                  bounds=list(zip(estimator.robot_lower[free], estimator.robot_upper[free])), method="highs")
    return res.status == 0


def com_widths(lo, hi) -> np.ndarray:
    """Width per axis of the COM interval ``h / m`` over the box (inf when the box allows m <= 0)."""
    if lo[0] <= 0:
        return np.full(3, np.inf)
    ratios = np.array([[a / m for a in (lo[k], hi[k]) for m in (lo[0], hi[0])] for k in (1, 2, 3)])
    return ratios.max(axis=1) - ratios.min(axis=1)


def study(robot, runs: list[Run], masses=MASSES_KG, com_offsets=COM_OFFSETS_M, folds=None,
          safety_factor: float = SAFETY_FACTOR, replicates: int = BOOTSTRAP_REPLICATES, progress=None) -> dict:
    """Leave one run out over ``runs`` (``folds``: the held-out run indices, default all); returns the
    cases, per-fold calibration facts and the summary."""
    t0 = time.perf_counter()
    folds = range(len(runs)) if folds is None else folds
    payloads = [dumbbell(m, c) for m in masses for c in com_offsets]
    cases, fold_info = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in folds:
            fold = make_fold(robot, runs, k, Path(tmp), safety_factor)
            fold_info.append({"held_out": runs[k].name, "calibrated_on": [r.name for i, r in enumerate(runs) if i != k],
                              "torque_sign": fold.calibration.torque_sign.tolist(),
                              "effort_delay_s": fold.calibration.delays().tolist(),
                              # reported, never used to tune: the calibration's own check on the held-out run
                              "held_out_validation": validation(robot, fold.calibration, [runs[k]]),
                              "friction": fold.calibration.friction.tolist(),
                              "offset_box_Nm": [(fold.calibration.offset_center_Nm - fold.calibration.offset_half_width_Nm).tolist(),
                                                (fold.calibration.offset_center_Nm + fold.calibration.offset_half_width_Nm).tolist()],
                              "report": fold.calibration.report})
            for pi in [np.zeros(10), *payloads]:
                case = run_case(fold, pi, replicates=replicates)
                case["held_out"] = runs[k].name
                cases.append(case)
                if progress is not None:
                    progress(1)
    summary = summarise(cases)
    label_statistical(cases, summary)
    summary["held_out_validation_passed"] = [f["held_out_validation"]["passed"] for f in fold_info]
    summary["held_out_max_exceedance_ratio"] = max(max(w["exceedance_ratio"]) for f in fold_info
                                                   for w in f["held_out_validation"]["per_window"].values())
    return {"cases": cases, "folds": fold_info, "summary": summary,
            "settings": {"masses_kg": list(masses), "com_offsets_m": [list(c) for c in com_offsets],
                         "safety_factor": safety_factor, "bootstrap_block_s": BOOTSTRAP_BLOCK_S,
                         "bootstrap_replicates": replicates,
                         "point_estimate": "least absolute deviations of the calibrated rows (weights 1/bound, "
                                           "IRLS), then the nearest consistent vector in the guaranteed box",
                         "statistical_coverage_over": params.PARAMETER_NAMES[COVERAGE_PARAMETERS]},
            "wall_time_s": time.perf_counter() - t0}


def statistical_coverage(cases: list[dict]) -> dict:
    """Coverage of the statistical intervals: over the claimed parameters (mass and first moments),
    over all ten, per parameter and per held-out run (the cases of one run share its model error,
    so the runs, not the cases, are the independent trials)."""
    stat = [c for c in cases if "statistical" in c]
    if not stat:
        return {"statistical_coverage": None, "statistical_coverage_all_parameters": None,
                "statistical_coverage_per_parameter": [], "statistical_coverage_per_run": {}}
    covered = np.array([c["statistical"]["covered"] for c in stat], dtype=bool)
    runs = [c.get("held_out") for c in stat]
    claimed = covered[:, COVERAGE_PARAMETERS]
    return {"statistical_coverage": float(claimed.mean()),
            "statistical_coverage_all_parameters": float(covered.mean()),
            "statistical_coverage_per_parameter": covered.mean(axis=0).tolist(),
            "statistical_coverage_per_run": {str(r): float(claimed[[x == r for x in runs]].mean())
                                             for r in dict.fromkeys(runs)}}


def label_statistical(cases: list[dict], summary: dict) -> None:
    """Name every statistical interval by what the held-out runs showed
    (:func:`~..core.estimators.bootstrap.interval_label`): its level only when the coverage over the
    claimed parameters reached it."""
    levels = {c["statistical"]["level"] for c in cases if "statistical" in c}
    if not levels:
        summary.update(statistical_level=None, statistical_validated=None, statistical_label=None)
        return
    level = min(levels)
    summary.update(statistical_level=level, statistical_validated=summary["statistical_coverage"] >= level,
                   statistical_label=interval_label(level, summary["statistical_coverage"]))
    for c in cases:
        if "statistical" in c:
            c["statistical"]["label"] = summary["statistical_label"]


def summarise(cases: list[dict]) -> dict:
    """The figures of the issue's Done-when line (and a few more), over all cases."""
    loaded = [c for c in cases if c["mass_kg"] > 0]
    empty = [c for c in cases if c["mass_kg"] == 0]
    contained = np.array([c["contained"] for c in cases])
    out = {
        "cases": len(cases), "payload_cases": len(loaded),
        "containment_rate": float(contained.mean()) if cases else None,
        "containment_rate_per_parameter": contained.mean(axis=0).tolist() if cases else [],
        "truth_satisfies_rows_rate": float(np.mean([c["truth_satisfies_rows"] for c in cases])),
        "silent_wrong_answers": int(sum(c["silent_wrong_answer"] for c in cases)),
        "data_consistent_rate": float(np.mean([c["data_consistent"] for c in cases])),
        "median_mass_width_kg": float(np.median([c["mass_width_kg"] for c in loaded])) if loaded else None,
        "median_sound_mass_width_floor_kg": float(np.median([c["sound_mass_width_floor_kg"] for c in loaded]))
        if loaded else None,
        "median_width_over_floor": float(np.median([c["width_over_floor"] for c in loaded])) if loaded else None,
        # payload cases whose mass box kept a limit of the prior, and of those, the ones whose rows
        # would have allowed a sound box to leave it (the Done-when line allows none)
        "cases_at_prior": sum(bool(c["mass_at_prior"]) for c in loaded),
        "cases_at_prior_determined": sum(any(not a["undetermined"] for a in c["mass_at_prior"]) for c in loaded),
        "median_com_width_m": float(np.median([max(c["com_width_m"]) for c in loaded])) if loaded else None,
        "median_mass_error_rel": float(np.median([c["mass_error_rel"] for c in loaded])) if loaded else None,
        "median_com_error_m": float(np.median([c["com_error_m"] for c in loaded])) if loaded else None,
        **statistical_coverage(cases),
        "statistical_intervals": sum("statistical" in c for c in cases),
        "max_virtual_payload_row_error_Nm_s": float(max(c["virtual_payload_row_error_max_Nm_s"] for c in cases)),
        "median_statistical_mass_width_kg": float(np.median([c["statistical"]["upper"][0] - c["statistical"]["lower"][0]
                                                             for c in loaded if "statistical" in c])) if loaded else None,
        "no_payload_contains_zero_mass": [c["contains_zero_mass"] for c in empty],
    }
    return out
