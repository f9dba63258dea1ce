"""``inertial-id bench cli``: CPU and wall time of ``inertial-id --help``, the start-up every command pays.

Compared with ``python -c pass`` (the interpreter's own start, the floor), timed in the same run with
the runs interleaved, so that both see the same machine load. Also names the heavy modules that
building the parser imports (none expected: a command loads its numerics when it runs).
"""
from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time

from .parsers import positive_int

# each costs from 0.2 s (numpy) to 1.5 s (cvxpy) of CPU to import; none is needed to parse arguments
HEAVY_MODULES = ("numpy", "scipy.stats", "cvxpy", "casadi", "matplotlib", "pinocchio", "pydantic", "rclpy")
TARGET_CPU_S = 0.3          # issue 31: `inertial-id --help` at most this much CPU


def add_arguments(p) -> None:
    p.add_argument("--runs", type=positive_int, default=7, help="processes timed per command (interleaved)")


def _timed(argv) -> tuple[float, float]:
    """(CPU seconds, user + system, and wall seconds) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def heavy_modules_imported() -> list[str]:
    """Which of :data:`HEAVY_MODULES` building the whole parser imports, in a fresh interpreter."""
    code = ("import sys; from inertial_id.cli import build_parser; build_parser(); "
            f"print(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))")
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()


def run(args) -> dict:
    commands = {"help": [sys.executable, "-m", "inertial_id.cli", "--help"], "floor": [sys.executable, "-c", "pass"]}
    times = {name: [] for name in commands}
    _timed(commands["help"])                # warm-up: bytecode caches written, files in the page cache
    for _ in range(args.runs):
        for name, argv in commands.items():
            times[name].append(_timed(argv))
    cpu = {name: [c for c, _ in t] for name, t in times.items()}
    wall = {name: [w for _, w in t] for name, t in times.items()}
    heavy = heavy_modules_imported()
    help_cpu = statistics.median(cpu["help"])
    return {
        "runs": args.runs,
        "help_cpu_s_median": help_cpu, "help_cpu_s_min": min(cpu["help"]),
        "help_wall_s_median": statistics.median(wall["help"]),
        "floor_cpu_s_median": statistics.median(cpu["floor"]),
        "floor_wall_s_median": statistics.median(wall["floor"]),
        "help_cpu_over_floor_s": help_cpu - statistics.median(cpu["floor"]),
        "target_cpu_s": TARGET_CPU_S, "meets_target": help_cpu <= TARGET_CPU_S,
        "heavy_modules_imported_count": len(heavy), "heavy_modules_imported": heavy,
        "help_cpu_s": cpu["help"], "floor_cpu_s": cpu["floor"],
    }
