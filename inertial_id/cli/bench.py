"""``inertial-id bench NAME``: benchmark commands (speed is measured here, not in timed tests).

Figures are taken on one core with single-threaded BLAS (the targets say "on one core", and BLAS
threads fighting over a shared machine distort ratios): the command re-runs itself pinned to the
first core it may use, with ``OMP/OPENBLAS/MKL_NUM_THREADS=1``, unless ``--all-cores`` is given.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys

from .common import add_json_option, write_json

_CHILD = "_INERTIAL_ID_BENCH_ONE_CORE"


def register(sub) -> None:
    from ..benchmarks import BENCHMARKS
    parser = sub.add_parser("bench", help="run a benchmark and report figures (optionally as JSON)")
    names = parser.add_subparsers(dest="benchmark", metavar="NAME", required=True)
    for name in BENCHMARKS:
        module = importlib.import_module(f"inertial_id.benchmarks.{name}")
        p = names.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        module.add_arguments(p)
        add_json_option(p)
        p.add_argument("--all-cores", action="store_true", help="do not pin to one core / one BLAS thread")
        p.set_defaults(func=lambda args, module=module: _run(module, args))


def _one_core_rerun(argv) -> int:
    env = dict(os.environ, **{_CHILD: "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                              "MKL_NUM_THREADS": "1"})
    core = min(os.sched_getaffinity(0))
    return subprocess.run([sys.executable, "-m", "inertial_id.cli", *argv], env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, {core})).returncode


def _run(module, args) -> int:
    pinned = not (args.all_cores or getattr(module, "ALL_CORES", False))
    if pinned and not os.environ.get(_CHILD) and hasattr(os, "sched_setaffinity"):
        return _one_core_rerun(args.argv)
    report = module.run(args)
    report["one_core"] = pinned
    for key, value in report.items():
        if isinstance(value, float):
            print(f"{key:55s} {value:14.6g}")
        elif not isinstance(value, (list, dict)):
            print(f"{key:55s} {value!s:>14}")
    write_json(args.json, report)
    return 0
