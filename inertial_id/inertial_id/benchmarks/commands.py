"""``inertial-id bench commands``: demos back to back on a machine kept busy, until ``--plans`` plans
have been commanded; counts every command the planner published (by kind, with the slack it had
before it took effect), every command it withheld as late, and every step a command made in the
simulated controller's reference (what a command arriving after it took effect does). Each demo is
the user's ``inertial-id demo`` in its own processes; ``--busy-loops`` processes spin on the CPU
meanwhile (one per core reproduces "two busy loops" on this 2-core machine).

Runs on every core: the load is the point (``--all-cores`` is implied)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..cli.parsers import positive_float

ALL_CORES = True

PUBLISHED = re.compile(r"published (\d+) points \((\w+), (-?\d+) ms before it takes effect\)")
WITHHELD = re.compile(r"withheld a (\w+) command")
STEP = re.compile(r"a command made the reference step by ([0-9.]+) rad, ([0-9.]+) rad/s")


def add_arguments(p) -> None:
    p.add_argument("--robot", default="xarm7", help="robot profile of the simulated arm")
    p.add_argument("--plans", type=int, default=200, help="stop once this many plans were commanded")
    p.add_argument("--busy-loops", type=int, default=2, help="processes spinning on the CPU meanwhile")
    p.add_argument("--duration", type=positive_float, default=30.0, help="seconds of exciting motion per demo")
    p.add_argument("--max-demos", type=int, default=40, help="give up after this many demos")
    p.add_argument("--log-dir", default=None, help="keep each demo's logs and JSON here")


def run(args) -> dict:
    root = Path(args.log_dir or tempfile.mkdtemp(prefix="inertial_id_bench_commands_"))
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy_loops)]
    demos, started = [], time.monotonic()
    try:
        while sum(d["plans"] for d in demos) < args.plans and len(demos) < args.max_demos:
            demos.append(_one_demo(args, root / f"demo{len(demos) + 1:03d}"))
            print(f"demo {len(demos)}: {json.dumps({k: v for k, v in demos[-1].items() if k != 'slack_ms'})}",
                  file=sys.stderr, flush=True)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    slack = sorted(s for d in demos for s in d["slack_ms"])
    total = {key: sum(d[key] for d in demos) for key in
             ("plans", "commands", "first", "next", "brake", "withheld", "reference_steps")}
    return {
        "robot": args.robot, "busy_loops": args.busy_loops, "demos": len(demos), **total,
        "demos_exit_0": sum(d["exit"] == 0 for d in demos),
        "truth_inside": sum(bool(d["truth_inside"]) for d in demos),
        "excitation_complete": sum(bool(d["excitation_complete"]) for d in demos),
        "largest_step_rad": max((d["largest_step_rad"] for d in demos), default=0.0),
        "min_slack_ms": slack[0] if slack else None,
        "median_slack_ms": slack[len(slack) // 2] if slack else None,
        "wall_s": time.monotonic() - started, "log_dir": str(root), "per_demo": demos,
    }


def _one_demo(args, log_dir: Path) -> dict:
    log_dir.mkdir(parents=True, exist_ok=True)
    result = log_dir / "result.json"
    proc = subprocess.run([sys.executable, "-m", "inertial_id.cli", "demo", "--quiet", "--robot", args.robot,
                           "--duration", str(args.duration), "--log-dir", str(log_dir), "--json", str(result)],
                          capture_output=True, text=True)
    planner = (log_dir / "excitation_planner.log").read_text(errors="replace") \
        if (log_dir / "excitation_planner.log").exists() else ""
    sim = (log_dir / "sim_robot.log").read_text(errors="replace") if (log_dir / "sim_robot.log").exists() else ""
    published = PUBLISHED.findall(planner)
    kinds = [k for _, k, _ in published]
    steps = [float(q) for q, _ in STEP.findall(sim)]
    outcome = json.loads(result.read_text()) if result.exists() else {}
    return {
        "exit": proc.returncode, "plans": kinds.count("first") + kinds.count("next"),
        "commands": len(published), "first": kinds.count("first"), "next": kinds.count("next"),
        "brake": kinds.count("brake"), "withheld": len(WITHHELD.findall(planner)),
        "reference_steps": len(steps), "largest_step_rad": max(steps, default=0.0),
        "slack_ms": [int(s) for _, _, s in published],
        "truth_inside": outcome.get("truth_inside_bounds"), "excitation_complete": outcome.get("excitation_complete"),
        "error": proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else "",
    }
