"""``inertial-id bag replay``: a bag published onto live topics with /clock (the options:
:mod:`.parsers.replay`)."""
from __future__ import annotations

import sys

import rclpy

from ..core.data import bags
from ..nodes.replay import replay
from . import UserError
from .progress import progress_bar


def run(args) -> int:
    try:
        bags.check_readable(args.bag)        # a damaged or truncated bag: one line, before any node starts
    except bags.BagError as exc:
        raise UserError(str(exc)) from None
    rclpy.init()
    try:
        with progress_bar(desc="replaying", unit="msg") as bar:
            counts = replay(args.bag, args.topics, args.rate, not args.no_clock, args.tail, progress=bar.update)
    except bags.BagError as exc:
        raise UserError(str(exc)) from None
    finally:
        rclpy.try_shutdown()
    print("published " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
    return 0
