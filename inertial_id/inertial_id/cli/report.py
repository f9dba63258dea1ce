"""``inertial-id report RUN.json|BAG --out DIR``: an index.html (robot, payload frame, outcome,
planner outcome, final intervals with units and truth inside/outside) and PNG plots of a run: bounds
over time per parameter, residuals over their bound, condition number, joint trajectories and
measured torques against the limits, planner margins while executing (each when the input has the
data). A bag is read with the profile ``--robot``; a JSON result of ``demo`` or ``estimate`` gives
the bounds and the history it holds."""
from __future__ import annotations

import sys
from pathlib import Path

from . import UserError


def register(sub) -> None:
    p = sub.add_parser("report", help="plots and index.html of a run (JSON result or bag)", description=__doc__)
    p.add_argument("run", metavar="RUN.json|BAG", help="result JSON of demo/estimate, or a rosbag2 folder")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the PNGs and index.html")
    p.add_argument("--robot", default="kinova_gen3", help="profile of a bag (limits, estimator)")
    p.add_argument("--method", default=None, help="estimator for a bag without recorded estimates")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.data import bags
    from ..studies import report
    path = Path(args.run)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UserError(f"--out '{args.out}' exists and is not a folder")
    try:
        if bags.is_bag(path):
            from ..core.robot.model import load_robot
            from .progress import progress_bar
            with progress_bar(desc="reading", unit="sample") as bar:
                data = report.from_bag(path, load_robot(args.robot), args.method, bar.update)
        elif path.is_file():
            data = report.from_json(path)
        else:
            raise UserError(f"'{path}' is neither a JSON result nor a rosbag2 folder")
        files = report.write_report(data, args.out)
    except (bags.BagError, ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {len(files)} files to {args.out}: " + ", ".join(f.name for f in files), file=sys.stderr)
    return 0
