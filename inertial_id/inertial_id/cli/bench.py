"""``inertial-id bench NAME``: the benchmark run, pinned to one core unless asked otherwise, its
figures printed and written as JSON (the options: :mod:`.parsers.bench`)."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys

from ..threads import THREAD_VARIABLES
from .output import write_json
from .parsers.bench import benchmark_module

_CHILD = "_INERTIAL_ID_BENCH_ONE_CORE"


def _one_core_rerun(argv) -> int:
    env = dict(os.environ, **{_CHILD: "1"}, **{name: "1" for name in THREAD_VARIABLES})
    core = min(os.sched_getaffinity(0))
    return subprocess.run([sys.executable, "-m", "inertial_id.cli", *argv], env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, {core})).returncode


def run(args) -> int:
    # imported already: its parser added the options
    module = importlib.import_module(benchmark_module(args.benchmark))
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
