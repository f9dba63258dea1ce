"""``inertial-id profile init|tube``: a profile written from a URDF (and calibrated on runs), the
simulated arm's tracking tube measured and written into a profile (the options:
:mod:`.parsers.profile`)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..core.robot.model import load_robot
from ..core.robot.profile_edit import (read_profile_text, tube_yaml, with_calibration, with_tracking_tube,
                                      write_profile_text)
from ..core.robot.profile_init import init_profile
from ..sim.tube import ROUNDS, TUBE_MARGIN, measure_tube
from . import UserError
from .calibrate import calibration_of


def _measure(robot, seconds: float, seed: int):
    """The tube of ``robot``'s simulated arm, each round reported on stderr, and its file note."""

    def report(r) -> None:
        share = (r.max_error / r.planned_tube).max()
        print(f"  round: {r.plans} plans over {r.motion_s:.1f} s, largest error {share:.2f} of the tube planned with"
              + (f"; braked: {r.faults[0]}" if r.faults else ""), file=sys.stderr)

    print(f"measuring the tracking tube of {robot.name} on MuJoCo (at most {ROUNDS} rounds of {seconds:g} s)",
          file=sys.stderr)
    tube, rounds = measure_tube(robot, seconds, seed, progress=report)
    note = (f"measured: inertial-id profile tube, simulated controller, {len(rounds)} rounds of {seconds:g} s, "
            f"{TUBE_MARGIN:g}x the largest error")
    return tube, note


def run_init(args) -> int:
    if args.validate and not args.runs:
        raise UserError("--validate checks the calibration of --runs: give the runs to calibrate on")
    out = Path(args.out) if args.out else Path(Path(args.urdf).stem + ".yaml")
    if args.runs and args.sensing != "joint_torque":
        raise UserError("--runs calibrates the joint torque rows: a profile with --sensing wrench has no joint "
                        "torque sensing to calibrate")
    written = init_profile(args.urdf, args.payload_link, args.rated_payload_kg, out, sensing=args.sensing,
                           ft_frame=args.ft_frame, force=args.force)
    try:
        if args.runs:
            cal, runs = calibration_of(load_robot(str(written)), args.runs, args.validate)
            cal_path = written.with_name(f"{written.stem}_calibration.yaml")
            cal.write(cal_path)
            validated = cal.provenance.get("validation", {}).get("passed")
            note = (f"inertial-id calibrate on {len(runs)} payload-free runs"
                    + ("" if validated is None else ", held-out validation " + ("passed" if validated else "FAILED")))
            write_profile_text(written, with_calibration(read_profile_text(written), cal_path.name, note))
            print(f"calibrated on {', '.join(r.name for r in runs)}: wrote {cal_path}", file=sys.stderr)
        if args.tube_seconds > 0:
            tube, note = _measure(load_robot(str(written)), args.tube_seconds, 1)
            write_profile_text(written, with_tracking_tube(read_profile_text(written), tube, note))
    except BaseException:
        # a profile whose calibration or tube failed is not the one asked for: none is left behind
        written.unlink(missing_ok=True)
        raise
    print(f"wrote {written}: replace the placeholders its comments name"
          + ("" if args.runs else " (sensor bounds: inertial-id calibrate, or --runs)"), file=sys.stderr)
    return 0


def run_tube(args) -> int:
    if args.write and not os.path.isfile(args.robot):
        raise UserError(f"--write takes a profile file, not '{args.robot}': copy the profile and pass its path")
    robot = load_robot(args.robot)
    tube, note = _measure(robot, args.seconds, args.seed)
    print(f"tracking_error: {tube_yaml(tube)}")
    if args.write:
        write_profile_text(args.robot, with_tracking_tube(read_profile_text(args.robot), tube, note))
        print(f"wrote planner.tracking_error into {args.robot}", file=sys.stderr)
    return 0
