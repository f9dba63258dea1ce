"""``inertial-id calibrate``: recordings without payload read, the robot calibrated on them and
validated on held-out ones, the calibration file written and reported (the options:
:mod:`.parsers.calibrate`)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..core.calibration.build import calibrate
from ..core.calibration.file import LARGEST_EFFORT_DELAY_S
from ..core.calibration.fit import FEATURE_MARGIN
from ..core.data.data_io import DataError, read_run
from ..core.robot.model import load_robot
from ..defaults import MAX_EFFORT_DELAY_S, OFFSET_MARGIN_NM, SAFETY_FACTOR
from ..studies.realdata import read_downsampled_runs
from . import UserError
from .output import write_json


def read_recordings(paths, n_joints: int):
    """Runs and their source paths; a folder of the shared ``*_downsampled_N.csv`` layout gives all its runs."""
    runs, sources = [], []
    for p in paths:
        if Path(p).is_dir() and any(Path(p).glob("t_downsampled_*.csv")):
            found = read_downsampled_runs(p)
            runs += found
            sources += [p] * len(found)
        else:
            runs.append(read_run(p, n_joints))
            sources.append(p)
    return runs, sources


def leave_one_out_runs(paths, n_joints: int) -> list:
    """The runs of a leave-one-run-out study (at least two); a user error says what is wrong."""
    try:
        runs, _ = read_recordings(paths, n_joints)
    except DataError as exc:
        raise UserError(str(exc)) from None
    if len(runs) < 2:
        raise UserError(f"leave-one-run-out needs at least 2 runs, got {len(runs)}")
    return runs


def calibration_of(robot, paths, validate=(), safety_factor: float = SAFETY_FACTOR,
                   offset_margin_Nm: float = OFFSET_MARGIN_NM, max_effort_delay_s: float = MAX_EFFORT_DELAY_S):
    """``(calibration, runs)`` of ``robot`` from the recordings at ``paths`` (held-out: ``validate``);
    what cannot be calibrated is a user error."""
    if not robot.sensing.joint_torque:
        raise UserError(f"robot '{robot.name}' has no joint torque sensing: nothing to calibrate the momentum rows with")
    try:
        runs, sources = read_recordings(paths, robot.nv)
        held, _ = read_recordings(validate, robot.nv)
        cal = calibrate(robot, runs, held, safety_factor, offset_margin_Nm=offset_margin_Nm, sources=sources,
                        effort_delay_grid_s=np.round(np.arange(0.0, max_effort_delay_s + 1e-9, 0.01), 3))
    except (DataError, ValueError) as exc:
        raise UserError(str(exc)) from None
    return cal, runs


def run(args) -> int:
    if not (np.isfinite(args.safety_factor) and args.safety_factor >= 1):
        raise UserError("--safety-factor must be a finite number >= 1")
    if not (np.isfinite(args.offset_margin) and args.offset_margin >= 0):
        raise UserError("--offset-margin must be a finite number >= 0")
    if not 0 <= args.max_effort_delay <= LARGEST_EFFORT_DELAY_S:
        raise UserError(f"--max-effort-delay must be between 0 and {LARGEST_EFFORT_DELAY_S:g} s")
    robot = load_robot(args.robot)
    cal, runs = calibration_of(robot, args.runs, args.validate, args.safety_factor, args.offset_margin,
                               args.max_effort_delay)
    cal.write(args.out)
    write_json(args.json, cal.to_dict())
    joints = cal.joints
    rep = cal.report
    print(f"calibrated {robot.name} on {', '.join(r.name for r in runs)} ({cal.sample_rate_hz:.1f} Hz): "
          f"windows used {rep['windows_used']}, excluded at velocity-limit plateaus {rep['windows_excluded']} "
          f"({len(rep['plateaus'])} plateaus)")
    print("logged effort lags the states by " + " ".join(f"{1000 * d:.0f}" for d in cal.delays())
          + " ms per joint (rows pair each state with the effort that much later)")
    support = rep["term_support"]
    h = min(cal.windows, key=lambda k: abs(cal.windows[k]["duration_s"] - cal.provenance["friction_window_s"]))
    widened = cal.provenance.get("held_out_widening", {})
    print(f"row bound per joint: {widened.get('rule', '')}")
    here = [w for w in widened.get("widened", []) if w.get("samples") == h]
    if here:
        print(f"  widened by held-out data ({cal.windows[h]['duration_s']:.2f} s windows; a run left out went this far "
              "beyond the others' largest error): " + ", ".join(f"{w['joint']} {w['held_out_exceedance']:.2f}x"
                                                                 for w in here))
    factor = cal.factors(h)
    print(f"{'joint':10} {'sign':>4} {'Fc':>7} {'Fv':>7} {'Ia':>7} {'offset box':>17} {'rms':>6} {'factor':>6} "
          f"{'bound':>7} (N m s, {cal.windows[h]['duration_s']:.2f} s windows)")
    for j, name in enumerate(joints):
        lo = cal.offset_center_Nm[j] - cal.offset_half_width_Nm[j]
        hi = cal.offset_center_Nm[j] + cal.offset_half_width_Nm[j]
        print(f"{name:10} {int(cal.torque_sign[j]):4d} {cal.friction[j, 0]:7.3f} {cal.friction[j, 1]:7.3f} "
              f"{cal.friction[j, 2]:7.3f} [{lo:6.2f}, {hi:6.2f}] {rep['train_rms_Nm'][j]:6.2f} {factor[j]:6.2f} "
              f"{cal.windows[h]['bound_Nm_s'][j]:7.3f}")
    if support:
        # what the held-out comparison kept beyond the profile's model (sign +1, no delay, the
        # profile's armature), with the held-out error kept vs with that one feature switched
        label = {"sign": "torque sign flipped", "delay": "effort delay", "Ia": "armature beyond the profile's"}
        held = support["held_out_rms_Nm"]
        print(f"kept only with held-out support ({support['folds']} held-out parts; margins: "
              + ", ".join(f"{f} {100 * m:g} %" for f, m in FEATURE_MARGIN.items()) + "); Fc and Fv fitted on every "
              "joint within >= 0; held-out RMS kept vs without:")
        for f in label:
            ok = [f"{n} ({held[j]:.3g} vs {support[f'held_out_rms_toggling_{f}_Nm'][j]:.3g} N m)"
                  if support[f"held_out_rms_toggling_{f}_Nm"][j] is not None else n
                  for j, (n, on) in enumerate(zip(joints, support[f"{f}_supported"])) if on]
            print(f"  {label[f]}: {', '.join(ok) or 'none'}")
        for r in support.get("refused", []):
            print(f"  not kept on {joints[r['joint']]}: {r['structure']} ({r['why']})")
    if cal.payload_bias_rms is not None:
        print(f"run-to-run bias of the payload estimate (RMS, calibrated on the other runs, no payload): mass "
              f"{cal.payload_bias_rms[0]:.3f} kg, first moments " + " ".join(f"{x:.3f}" for x in cal.payload_bias_rms[1:4])
              + " kg m (added to the statistical interval)")
    validation = cal.provenance.get("validation")
    print(f"wrote {args.out}", file=sys.stderr)
    if validation is None:
        print("not validated on held-out runs (--validate): the factors are unchecked", file=sys.stderr)
        return 0
    v = validation["per_window"][h]
    print(f"held-out {', '.join(validation['runs'])}: largest error / calibration largest per joint "
          + " ".join(f"{x:.2f}" for x in v["exceedance_ratio"]) + " (factors " + " ".join(f"{x:.2f}" for x in factor)
          + "); "
          f"offsets inside the box: {'yes' if v['offsets_inside_box'] else 'NO'}")
    if not validation["passed"]:
        for w in validation["per_window"].values():
            if not w["passed"]:
                n = min(cal.windows, key=lambda k: abs(cal.windows[k]["duration_s"] - w["duration_s"]))
                over = np.array(w["exceedance_ratio"]) / cal.factors(n)
                worst = int(np.argmax(over))
                print(f"NOT VALIDATED for {w['duration_s']:.2f} s windows: largest error / calibration largest "
                      f"{w['exceedance_ratio'][worst]:.2f} on {joints[worst]} (its factor {cal.factors(n)[worst]:.2f}), "
                      f"offsets inside the box: {'yes' if w['offsets_inside_box'] else 'NO'}", file=sys.stderr)
        print("a held-out run exceeds the calibrated bound or offset box: bounds using this calibration may exclude "
              "the truth", file=sys.stderr)
        return 1
    return 0
