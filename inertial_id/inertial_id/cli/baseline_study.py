"""``inertial-id study baseline``: the static-pose baseline against the suite's pipeline, on simulated
cases or the real Gen3 recordings, as a table (the options: :mod:`.parsers.baseline_study`)."""
from __future__ import annotations

from ..core.robot.model import load_robot
from ..studies.bounds import PAYLOADS, POSTURE_SPREAD_RAD
from ..studies.static_baseline import WRIST_OFFSETS_RAD, run_study
from ..studies.static_baseline_real import run_real_study
from . import RunFailed, UserError
from .calibrate import leave_one_out_runs
from .output import write_json


def _fmt(x, scale: float = 1.0, width: int = 8, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None else f"{scale * x:{width}.{digits}f}"


def print_table(report: dict) -> None:
    """The comparison table on stdout: errors in % and mm, times in s ('-': never usable)."""
    print(f"{report['robot']} ({report['sensing']}): usable = mass error < "
          f"{100 * report['usable_definition']['mass_error_rel_below']:g} % and COM error < "
          f"{1000 * report['usable_definition']['com_error_m_below']:g} mm")
    rows = [(f"{r['payload']}/{r['seed']}", r) for r in report["table"]]
    w = max([6] + [len(name) for name, _ in rows])
    print(f"{'case':>{w}} | {'static poses: mass %':>20} {'COM mm':>8} {'motion s':>8} {'usable s':>8} | "
          f"{'ours: mass %':>12} {'COM mm':>8} {'motion s':>8} {'usable s':>8} {'apply s':>8}")
    s = report["summary"]
    medians = {f"{m}.{k}": s[m][f"median_{k}"] for m in ("static_poses", "ours")
               for k in ("mass_error_rel", "com_error_m", "seconds_of_motion", "seconds_to_usable")}
    medians["ours.seconds_to_apply_ready"] = s["ours"]["median_seconds_to_apply_ready"]
    for name, r in rows + [("median", medians)]:
        print(f"{name:>{w}} | {_fmt(r['static_poses.mass_error_rel'], 100, 20, 3)} "
              f"{_fmt(r['static_poses.com_error_m'], 1000)} {_fmt(r['static_poses.seconds_of_motion'])} "
              f"{_fmt(r['static_poses.seconds_to_usable'])} | {_fmt(r['ours.mass_error_rel'], 100, 12, 3)} "
              f"{_fmt(r['ours.com_error_m'], 1000)} {_fmt(r['ours.seconds_of_motion'])} "
              f"{_fmt(r['ours.seconds_to_usable'])} {_fmt(r['ours.seconds_to_apply_ready'])}")


def run(args) -> int:
    unknown = [x for x in args.payloads if x not in PAYLOADS]
    if unknown or not args.payloads:
        raise UserError(f"unknown payloads {unknown} (choose from {', '.join(PAYLOADS)})")
    if not 2 <= args.poses <= len(WRIST_OFFSETS_RAD):
        raise UserError(f"--poses must be 2..{len(WRIST_OFFSETS_RAD)}")
    robot = load_robot(args.robot)
    s = robot.sensing
    if not (s.wrench or s.joint_torque):
        raise UserError(f"robot '{robot.name}' senses neither a wrist wrench nor joint torques: no payload rows")
    if robot.nv != len(POSTURE_SPREAD_RAD):
        raise UserError(f"the study's postures are those of the 7-joint arms (xarm7, kinova_gen3); "
                        f"robot '{robot.name}' has {robot.nv} joints")
    if args.real:
        if not s.joint_torque:
            raise UserError("--real uses the Gen3 recordings (joint torques): choose a joint torque sensing robot")
        report = run_real_study(robot, leave_one_out_runs(args.data, robot.nv))
    else:
        try:
            report = run_study(args.robot, args.cases, args.payloads, args.seed, args.poses, args.workers)
        except RuntimeError as exc:      # no trajectory or poses within this profile's limits
            raise RunFailed(str(exc)) from None
    print_table(report)
    if "static_poses_unavailable" in report:
        print(f"static poses: {report['static_poses_unavailable']}")
    write_json(args.json, report)
    return 0
