"""A node's process from its first line: ``python -m inertial_id.nodes.entry NODE [--ros-args ...]``,
and the ROS executables ``lib/inertial_id/NODE`` (scripts/node_executable.py.in), both call :func:`run`.

Importing a node takes a second or more (numpy, pinocchio, rclpy, the solvers). A SIGINT or SIGTERM
in that time, before :func:`inertial_id.nodes.common.run_node` installs its own handlers, would
otherwise raise KeyboardInterrupt inside some import (a traceback, exit 1) or kill the process.
Standard library only, so that the handlers are in place before anything heavy loads."""
from __future__ import annotations

import importlib
import os
import signal
import sys

from .launch import NODES


def _stopped_while_starting(number: int, frame) -> None:
    # Nothing exists yet that a shutdown would close (no node, publisher or file): exiting is the
    # whole of it. os._exit: no exception may surface in the middle of an import.
    os.write(2, f"stopped by {signal.Signals(number).name} while starting\n".encode())
    os._exit(0)


def run(node: str, args: list[str] | None = None) -> int:
    """Import the node's module and run its ``main`` with ``args`` (None: ``sys.argv``), a stop signal
    before the node takes over being a clean exit."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, _stopped_while_starting)
    if node not in NODES:
        print(f"unknown node '{node}' (nodes: {', '.join(NODES)})", file=sys.stderr)
        return 2
    return importlib.import_module(f"inertial_id.nodes.{node}").main(args)


if __name__ == "__main__":      # the planner's worker process (spawn) imports this file again
    if len(sys.argv) < 2:
        print(f"usage: python -m inertial_id.nodes.entry NODE [--ros-args ...] (NODE: {', '.join(NODES)})",
              file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(run(sys.argv[1], [sys.argv[0], *sys.argv[2:]]))
