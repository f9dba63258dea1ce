"""The ``inertial-id`` command. Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a function of the parsed args
returning the exit code."""
from __future__ import annotations

import argparse
import importlib
import sys

from ..threads import single_threaded_math

# Subcommand modules, in the order they are listed by --help.
COMMANDS = ("demo", "launch", "planner_services", "bench", "identifiability", "pmd_study", "identify", "minimal_parameters", "bounds_study", "baseline_study",
            "record_sim", "estimate", "plan_study", "replay", "convert_run", "calibrate", "profile", "realdata_study", "sim_study", "report",
            "security_policy", "export")


class UserError(Exception):
    """A mistake in what the user asked for: reported in one line, exit code 2, no traceback."""


class RunFailed(Exception):
    """A run that could not complete (a node died, the simulator stalled): one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``inertial-id bench builder: error: argument --rate: ...``), exit 2;
    the subcommands' parsers are of this class too."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="inertial-id",
        description="Identify the inertial parameters of robots and payloads (ROS 2 node suite).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv          # lets a command re-run itself (bench: pinned to one core)
    single_threaded_math()
    from ..core.robot.model import ProfileError
    try:
        return int(args.func(args) or 0)
    except (UserError, ProfileError, FileNotFoundError) as exc:
        print(f"inertial-id {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RunFailed as exc:
        print(f"inertial-id {args.command}: failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"inertial-id {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
