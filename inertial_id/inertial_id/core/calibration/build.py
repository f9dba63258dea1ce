"""``calibrate``: recordings without payload in, a :class:`~.file.Calibration` out (see :mod:`.fit`)."""
from __future__ import annotations

import datetime as _dt
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...defaults import HELD_OUT_MARGIN, MAX_EFFORT_DELAY_S, OFFSET_MARGIN_NM, SAFETY_FACTOR, SINGLE_RUN_FACTOR
from ..data.data_io import Run
from . import fit as F
from .apply import robot_with_calibration, run_pipeline
from .file import Calibration
from .plateaus import fit_detector

WINDOWS_S = (0.05, 0.1, 0.2)
EFFORT_DELAY_GRID_S = tuple(np.round(np.arange(0.0, MAX_EFFORT_DELAY_S + 0.001, 0.01), 3))   # s, per joint


def calibrate(robot, runs: list[Run], validate: Sequence[Run] = (), safety_factor: float = SAFETY_FACTOR,
              windows_s=WINDOWS_S, offset_margin_Nm: float = OFFSET_MARGIN_NM, sources=None,
              payload_bias: bool = True, effort_delay_grid_s=EFFORT_DELAY_GRID_S, structure_keys=None) -> Calibration:
    """Fit friction, torque sign, effort delay and offsets on ``runs`` (windows of the profile's
    ``momentum_window_s``, else 0.1 s), bound the remaining error per window length, validate on
    ``validate``. ``sources``: paths of the runs for the provenance. ``payload_bias``: with two
    runs or more, the run-to-run bias of the payload estimate (:func:`payload_bias_rms`).
    ``effort_delay_grid_s``: the effort delays tried per joint (``(0,)``: none). ``structure_keys``:
    the features to fit per joint, as selected by another calibration (``report`` key
    ``structure_keys``), instead of selecting them on ``runs`` (:func:`.fit.refit_structure`).

    Nothing beyond the profile's model is kept without held-out support (:func:`.fit.select_structure`):
    per joint, a sign flip, an effort delay and an armature beyond the profile's are each kept only
    when the held-out error (each run left out in turn; a single run in thirds) falls by their
    margin (:data:`.fit.FEATURE_MARGIN`: sign 25 %, delay 10 %, armature 5 %), and a delay only when
    its best value lies inside the grid (one at the grid's largest value is not identified).
    Otherwise the profile's value stays: sign +1, no delay, the profile's armature. Coulomb and
    viscous friction are always fitted, within >= 0. Velocity-limit plateaus are flat speed tops
    at 95 % of the profile's velocity limit or beyond (:mod:`.plateaus`)."""
    if not runs:
        raise ValueError("calibration needs at least one run")
    if safety_factor < 1:
        raise ValueError("the safety factor must be at least 1")
    grid = np.unique(np.concatenate([[0.0], np.asarray(effort_delay_grid_s, dtype=float)]))
    if grid[0] < 0:
        raise ValueError("effort delays must be >= 0 s")
    rate = float(1.0 / np.median(np.concatenate([np.diff(r.t) for r in runs])))
    detector, plateaus = fit_detector(runs, robot.velocity_limit)
    primary_s = robot.spec.identification.momentum_window_s or 0.1
    lengths = sorted({max(1, int(round(w * rate))) for w in (*windows_s, primary_s)})
    primary = max(1, int(round(primary_s * rate)))
    # every delay is compared on the windows whose effort the largest delay still finds in the run
    aligned = [F.joint_windows(robot, r, primary, detector, np.full(robot.nv, grid[-1]), grid) for r in runs]
    empty = [d.run for d in aligned if d.windows == 0]
    if empty:
        raise ValueError(f"runs {empty}: no momentum window left outside velocity-limit plateaus"
                         + (f" with the effort {grid[-1]:g} s later" if grid[-1] > 0 else ""))
    default = F.profile_friction(robot)
    structure = (F.select_structure(F.held_out_units(aligned), aligned, grid, default) if structure_keys is None
                 else F.refit_structure(aligned, structure_keys, grid, default))
    delay = structure.delay_s
    data = {h: [F.joint_windows(robot, r, h, detector, delay) for r in runs] for h in lengths}
    used = data[primary]
    fit = F.fit_friction(used, structure.sign, structure.terms, default)
    # Per joint and window length: how far one calibration run's largest error went beyond the
    # others' (each run left out in turn, friction fitted on the others) is the evidence the runs
    # themselves give of how far a new run may go on that joint. Each joint's bound is its own
    # largest error x that ratio (at least 1) x HELD_OUT_MARGIN, at least x the stated factor: a
    # joint the held-out data contradict is widened, the others are not.
    exceedance = (F.internal_exceedance(used, fit.sign, structure.terms, default, others=data)
                  if len(used) > 1 else None)
    windows = {}
    for h, d in data.items():
        _, half = F.residual_ranges(d, fit.sign, fit.friction)
        worst = half.max(axis=0)
        factor = joint_factors(None if exceedance is None else exceedance[h], safety_factor, robot.nv)
        windows[h] = {"duration_s": h / rate, "max_error_Nm_s": worst, "bound_Nm_s": factor * worst, "factor": factor}
    spread_lo, spread_hi = fit.offsets.min(axis=0), fit.offsets.max(axis=0)
    center = 0.5 * (spread_lo + spread_hi)
    half_width = 0.5 * (spread_hi - spread_lo) + offset_margin_Nm
    report = {
        "train_rms_Nm": F.rms_with_offsets(used, fit.sign, fit.friction).tolist(),
        "run_offsets_Nm": {d.run: fit.offsets[k].tolist() for k, d in enumerate(used)},
        "windows_used": {d.run: d.windows for d in used},
        "windows_excluded": {d.run: d.excluded for d in used},
        "plateaus": plateaus,
        "term_support": structure.report(),
        "structure_keys": [[bool(a), bool(b), [bool(x) for x in t]] for a, b, t in structure.keys],
        "internal_exceedance": None if exceedance is None else exceedance[primary].tolist(),
        "internal_exceedance_per_window": None if exceedance is None else
        {int(h): e.tolist() for h, e in sorted(exceedance.items())},
        "effort_delay": {"grid_s": grid.tolist(), "rms_Nm": structure.train_rms_Nm.tolist()},
    }
    cal = Calibration(robot.name, list(robot.joint_names), rate, fit.sign, fit.friction, center, half_width,
                      windows, max(float(w["factor"].max()) for w in windows.values()), detector, report=report,
                      effort_delay_s=delay,
                      torque_range_Nm=torque_range(data.values()))
    cal.provenance = provenance(runs, sources, safety_factor, offset_margin_Nm, primary / rate)
    cal.provenance["safety_factor_applied"] = {f"{w['duration_s']:g} s": w["factor"].tolist()
                                               for _, w in sorted(windows.items())}
    cal.provenance["held_out_widening"] = widening(windows, exceedance, robot.joint_names, safety_factor)
    if payload_bias and len(runs) > 1:
        cal.payload_bias_rms = payload_bias_rms(robot, runs, safety_factor, windows_s, offset_margin_Nm,
                                                effort_delay_grid_s, structure.keys)
        cal.payload_bias_runs = len(runs)
    if validate:
        cal.provenance["validation"] = validation(robot, cal, validate)
    return cal


def joint_factors(exceedance, safety_factor: float, nv: int) -> np.ndarray:
    """(nv,) the factor each joint's largest calibration error is multiplied by: its held-out
    exceedance ``exceedance`` (nv,) (at least 1) x :data:`HELD_OUT_MARGIN`, at least
    ``safety_factor``; without held-out evidence (one run: None) :data:`SINGLE_RUN_FACTOR`."""
    if exceedance is None:
        return np.full(nv, max(safety_factor, SINGLE_RUN_FACTOR))
    return np.maximum(safety_factor, HELD_OUT_MARGIN * np.maximum(1.0, np.asarray(exceedance, dtype=float)))


def widening(windows: dict, exceedance, joints, safety_factor: float) -> dict:
    """What the provenance says of the bounds: the rule, and per window length the joints whose bound
    the held-out data widened (exceedance above 1: a run left out went beyond the others' largest
    error) with that ratio and the factor applied."""
    out: dict[str, Any] = {"rule": f"bound = largest calibration error x max(1, held-out exceedance) x {HELD_OUT_MARGIN:g} "
                   f"(margin), at least x {safety_factor:g} (stated); one run: x {max(safety_factor, SINGLE_RUN_FACTOR):g}",
           "margin": HELD_OUT_MARGIN, "widened": []}
    if exceedance is None:
        out["note"] = "one calibration run: no held-out exceedance measured"
        return out
    for h, w in sorted(windows.items()):
        for j in np.flatnonzero(exceedance[h] > 1.0):
            out["widened"].append({"window_s": round(float(w["duration_s"]), 6), "samples": int(h), "joint": str(joints[j]),
                                   "held_out_exceedance": float(exceedance[h][j]), "factor": float(w["factor"][j])})
    return out


def torque_range(window_sets) -> np.ndarray:
    """(nv,) the torque up to which every window length's bound was measured: per length the largest
    |effort| its windows integrated over the runs, the smallest of those over the lengths (a window
    excluded at a plateau measured nothing, so its torque does not count)."""
    return np.min([np.max([d.peak_tau_Nm for d in runs], axis=0) for runs in window_sets], axis=0)


def payload_bias_rms(robot, runs: list[Run], safety_factor: float, windows_s, offset_margin_Nm: float,
                     effort_delay_grid_s=EFFORT_DELAY_GRID_S, structure_keys=None) -> np.ndarray:
    """(10,) RMS over the runs of the payload point estimate on a run without payload (the truth is
    zero) when the robot is calibrated on the other runs: the model error a run's own data cannot
    reveal, which a bootstrap within one run misses. ``structure_keys``: the features the
    calibration on all the runs kept (sign flip, delay, terms per joint), refitted on the other
    runs rather than selected again: fewer runs support less structure (a 14 s real Gen3 run in
    thirds kept no delay on four joints where two runs halve the error with one), and the bias
    is that of the calibration's values, not of a sparser model."""
    estimates = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, run in enumerate(runs):
            sub = calibrate(robot, [r for i, r in enumerate(runs) if i != k], safety_factor=safety_factor,
                            windows_s=windows_s, offset_margin_Nm=offset_margin_Nm, payload_bias=False,
                            effort_delay_grid_s=effort_delay_grid_s, structure_keys=structure_keys)
            calibrated = robot_with_calibration(robot, sub, Path(tmp) / f"without_{k}.yaml")
            estimates.append(run_pipeline(calibrated, run)[1].estimate)
    return np.sqrt(np.mean(np.square(estimates), axis=0))


def validation(robot, cal: Calibration, runs: Sequence[Run]) -> dict:
    """Held-out check: per run and window length, the largest remaining error (each run with its own
    minimax offset) relative to the calibration's largest; passed when every joint's ratio stays
    within that joint's factor and every offset within the offset box."""
    out: dict[str, Any] = {"runs": [r.name for r in runs], "per_window": {}, "passed": True}
    for h, w in cal.windows.items():
        data = [F.joint_windows(robot, r, h, cal.detector, cal.delays()) for r in runs]
        offsets, half = F.residual_ranges(data, cal.torque_sign, cal.friction)
        ratio = half.max(axis=0) / np.maximum(w["max_error_Nm_s"], 1e-12)
        inside = np.abs(offsets - cal.offset_center_Nm) <= cal.offset_half_width_Nm
        ok = bool(np.all(ratio <= cal.factors(h)) and inside.all())
        out["per_window"][int(h)] = {"duration_s": w["duration_s"], "exceedance_ratio": ratio.tolist(),
                                     "offsets_Nm": offsets.tolist(), "offsets_inside_box": bool(inside.all()),
                                     "held_out_rms_Nm": F.rms_with_offsets(data, cal.torque_sign, cal.friction).tolist(),
                                     "windows_used": [d.windows for d in data],
                                     "windows_excluded": [d.excluded for d in data], "passed": ok}
        out["passed"] &= ok
    return out


def provenance(runs, sources, safety_factor: float, offset_margin_Nm: float, window_s: float) -> dict:
    """Runs used (name, path, samples, span, the data's date: the newest file time of the run), when
    and how the calibration was made."""
    sources = list(sources) if sources is not None else [None] * len(runs)
    entries = []
    for r, src in zip(runs, sources):
        e = {"name": r.name, "samples": int(r.n_samples), "duration_s": float(r.t[-1] - r.t[0])}
        if src is not None:
            p = Path(src)
            e["path"] = str(p.resolve())
            files = [f for f in p.iterdir() if f.is_file()] if p.is_dir() else [p]
            if files:
                e["data_date_utc"] = _dt.datetime.fromtimestamp(max(f.stat().st_mtime for f in files),
                                                                 _dt.timezone.utc).isoformat(timespec="seconds")
                e["data_date_source"] = "newest file modification time of the run"
        entries.append(e)
    return {"runs": entries, "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "safety_factor": safety_factor, "offset_margin_Nm": offset_margin_Nm, "friction_window_s": window_s,
            "method": "momentum windows, nominal link inertials; per joint the torque sign, the effort delay (on a "
                      "grid) and the armature kept only with held-out support, else the profile's value "
                      f"({F.selection_rule()}); least-squares terms shared by the runs, one offset per run; "
                      "bound per joint = largest minimax residual x max(1, that joint's held-out exceedance "
                      "among the runs) x margin"}
