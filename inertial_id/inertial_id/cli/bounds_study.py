"""``inertial-id study bounds``: the Monte Carlo of :mod:`inertial_id.studies.bounds`, checked options
in, a table out (the options: :mod:`.parsers.bounds_study`)."""
from __future__ import annotations

from ..core.robot.model import load_robot
from ..studies.bounds import BOUND_METHODS, PAYLOADS, run_study
from . import UserError
from .output import write_json


def run(args) -> int:
    unknown = [x for x in args.payloads if x not in PAYLOADS]
    if unknown or not args.payloads:
        raise UserError(f"unknown payloads {unknown} (choose from {', '.join(PAYLOADS)})")
    if args.trials < 1 or args.workers < 1 or args.overnoise_every < 0 or not args.update_period > 0:
        raise UserError("--trials and --workers must be at least 1, --overnoise-every >= 0, --update-period > 0")
    if not 1.0 < args.overnoise_factor < float("inf") or not args.update_period < float("inf"):
        raise UserError("--overnoise-factor must exceed 1 (it multiplies the noise bound), "
                        "--update-period must be finite")
    robot = load_robot(args.robot)
    if not robot.spec.sensing.joint_torque:
        raise UserError(f"robot '{robot.name}' has no joint torque sensing: the study's momentum rows need it")
    try:
        report = run_study(args.robot, args.payloads, args.trials, args.seed, args.overnoise_every,
                           args.overnoise_factor, args.update_period, args.workers, scheduler=args.scheduler)
    except OSError as exc:
        if not args.scheduler:
            raise
        raise UserError(f"cannot reach the Dask scheduler at {args.scheduler}: {exc}") from None
    print(f"trials {report['trials']} (within noise bounds {report['trials_within_noise_bounds']}, "
          f"over-noise {report['trials_overnoise']}); largest row error / bound {report['max_row_error_ratio']:.3f}")
    print(f"{'method':11} {'contain':>8} {'mass w':>8} {'p50 s':>7} {'p95 s':>7} {'consist':>8} "
          f"{'over: flagged':>14} {'excluded unflagged':>19}")
    for m in BOUND_METHODS:
        r = report[m]
        print(f"{m:11} {r['containment_rate']:8.3f} {r['final_mass_width']:8.3f} {r['update_time_p50_s']:7.3f} "
              f"{r['update_time_p95_s']:7.3f} {r['physically_consistent_rate']:8.3f} {r['overnoise_flagged']:14d} "
              f"{r['overnoise_excluded_unflagged']:19d}")
    names = [n.split(".")[-1] for n in report["parameter_names"]]
    print("median width " + " ".join(f"{n:>7}" for n in names))
    for m in BOUND_METHODS:
        print(f"{m:12} " + " ".join(f"{w:7.4f}" for w in report[m]["median_width"]))
    if "guaranteed_narrower_than_mvf" in report:
        print(f"guaranteed narrower than MVF for {report['guaranteed_narrower_than_mvf']} of 10 parameters")
    write_json(args.json, report)
    return 0
