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

from ...benchmarks import BENCHMARKS
from .. import _Parser
from . import add_json_option

# the benchmark of the command itself lives with the command
_MODULES = {"cli": "inertial_id.cli.bench_cli"}


def benchmark_module(name: str) -> str:
    """The module of benchmark ``name``: its ``add_arguments(parser)`` and ``run(args) -> dict``."""
    return _MODULES.get(name, f"inertial_id.benchmarks.{name}")


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
    parser = sub.add_parser("bench", help="run a benchmark and report figures (optionally as JSON)")
    names = parser.add_subparsers(dest="benchmark", metavar="NAME", required=True, parser_class=_BenchmarkParser)
    for name in (*BENCHMARKS, *_MODULES):
        names.add_parser(name, help=(_docstring(benchmark_module(name)) or "").strip().splitlines()[0],
                         complete=lambda p, name=name: _add_arguments(p, benchmark_module(name)))


def _docstring(module_name: str) -> str | None:
    """The module's docstring without running it (from its source; imported when there is none)."""
    spec = importlib.util.find_spec(module_name)
    source = spec.loader.get_source(module_name) if spec and spec.loader else None
    if source is None:
        return importlib.import_module(module_name).__doc__
    return ast.get_docstring(ast.parse(source), clean=False)


def _add_arguments(p, module_name: str) -> None:
    importlib.import_module(module_name).add_arguments(p)
    add_json_option(p)
    p.add_argument("--all-cores", action="store_true",
                   help="do not pin to one core (BLAS threads: one unless OPENBLAS_NUM_THREADS etc. say otherwise)")
    p.set_defaults(handler="bench.run")
