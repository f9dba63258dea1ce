"""``inertial-id report``: a JSON result or a bag read into the run report's figures and index.html
(the options: :mod:`.parsers.report`)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..core.data import bags
from ..core.robot.model import load_robot
from ..studies import report
from . import UserError
from .progress import progress_bar


def run(args) -> int:
    path = Path(args.run)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UserError(f"--out '{args.out}' exists and is not a folder")
    try:
        if bags.is_bag(path):
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
