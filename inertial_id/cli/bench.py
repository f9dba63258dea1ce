"""``inertial-id bench NAME``: benchmark commands (speed is measured here, not in timed tests)."""
from __future__ import annotations

import importlib

from .common import write_json


def register(sub) -> None:
    from ..benchmarks import BENCHMARKS
    parser = sub.add_parser("bench", help="run a benchmark and report figures (optionally as JSON)")
    names = parser.add_subparsers(dest="benchmark", metavar="NAME", required=True)
    for name in BENCHMARKS:
        module = importlib.import_module(f"inertial_id.benchmarks.{name}")
        p = names.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        module.add_arguments(p)
        p.add_argument("--json", metavar="FILE", help="write the report as JSON ('-' for stdout)")
        p.set_defaults(func=lambda args, module=module: _run(module, args))


def _run(module, args) -> int:
    report = module.run(args)
    for key, value in report.items():
        if isinstance(value, float):
            print(f"{key:55s} {value:14.6g}")
        elif not isinstance(value, (list, dict)):
            print(f"{key:55s} {value!s:>14}")
    write_json(args.json, report)
    return 0
