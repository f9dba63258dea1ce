"""``inertial-id bench NAME``: benchmark commands (speed is measured here, not in timed tests).

Figures are taken on one core with single-threaded BLAS (the targets say "on one core", and BLAS
threads fighting over a shared machine distort ratios): the command re-runs itself pinned to the
first core it may use, with ``OMP/OPENBLAS/MKL_NUM_THREADS=1`` whatever the environment says, unless
``--all-cores`` is given (then the suite's own rule: :mod:`inertial_id.threads`).

A benchmark's module imports what it measures (pinocchio, cvxpy, ...), so it is imported only when
that benchmark's parser is used: its one-line help is read from the module's source.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys

from ..threads import THREAD_VARIABLES
from . import _Parser
from .common import add_json_option, write_json

_CHILD = "_INERTIAL_ID_BENCH_ONE_CORE"
# the benchmark of the command itself lives with the command
_MODULES = {"cli": "inertial_id.cli.bench_cli"}


class _BenchmarkParser(_Parser):
    """The parser of one benchmark, its options added by ``complete(parser)`` the first time it
    parses or formats help or usage (argparse reaches a subcommand's parser only through these)."""

    def __init__(self, *args, complete=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._complete = complete

    def _completed(self) -> None:
        complete, self._complete = self._complete, None
        if complete is not None:
            complete(self)

    def parse_known_args(self, args=None, namespace=None):
        self._completed()
        return super().parse_known_args(args, namespace)

    def format_usage(self):
        self._completed()
        return super().format_usage()

    def format_help(self):
        self._completed()
        return super().format_help()


def register(sub) -> None:
    from ..benchmarks import BENCHMARKS
    parser = sub.add_parser("bench", help="run a benchmark and report figures (optionally as JSON)")
    names = parser.add_subparsers(dest="benchmark", metavar="NAME", required=True, parser_class=_BenchmarkParser)
    for name in (*BENCHMARKS, *_MODULES):
        module_name = _MODULES.get(name, f"inertial_id.benchmarks.{name}")
        names.add_parser(name, help=(_docstring(module_name) or "").strip().splitlines()[0],
                         complete=lambda p, module_name=module_name: _add_arguments(p, module_name))


def _docstring(module_name: str) -> str | None:
    """The module's docstring without running it (from its source; imported when there is none)."""
    spec = importlib.util.find_spec(module_name)
    source = spec.loader.get_source(module_name) if spec and spec.loader else None
    if source is None:
        return importlib.import_module(module_name).__doc__
    return ast.get_docstring(ast.parse(source), clean=False)


def _add_arguments(p, module_name: str) -> None:
    module = importlib.import_module(module_name)
    module.add_arguments(p)
    add_json_option(p)
    p.add_argument("--all-cores", action="store_true",
                   help="do not pin to one core (BLAS threads: one unless OPENBLAS_NUM_THREADS etc. say otherwise)")
    p.set_defaults(func=lambda args: _run(module, args))


def _one_core_rerun(argv) -> int:
    env = dict(os.environ, **{_CHILD: "1"}, **{name: "1" for name in THREAD_VARIABLES})
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
