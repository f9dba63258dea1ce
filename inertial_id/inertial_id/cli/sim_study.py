"""``inertial-id study sim``: the MuJoCo cases of :mod:`inertial_id.sim.harness` run and tabulated (the
options: :mod:`.parsers.sim_study`)."""
from __future__ import annotations

import tempfile
from dataclasses import replace

from ..core.robot.model import load_robot
from ..sim import harness
from . import UserError
from .output import write_json


def run(args) -> int:
    if not args.duration > 0:
        raise UserError(f"--duration must be positive, not {args.duration:g}")
    if args.rate_hz is not None:
        try:         # the fixed cases are xArm7 ones
            harness.sampled_at(load_robot("xarm7" if args.fixed else args.robot), args.rate_hz)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    cases = harness.default_cases() + harness.stress_cases() if args.fixed else \
        harness.study_cases(args.robot, args.cases, args.seed, args.duration)
    if args.rate_hz is not None:
        cases = [replace(c, rate_hz=args.rate_hz) for c in cases]
    with tempfile.TemporaryDirectory(prefix="inertial_id_sim_study_") as folder:
        results = harness.run_cases(harness.with_calibrations(cases, folder), args.workers)
    print(harness.table(results))
    figures = harness.summary(results)
    print(" ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
    write_json(args.json, {"summary": figures, "cases": results})
    return 0
