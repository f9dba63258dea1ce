"""The ``inertial-id`` command. Every command is two modules of this package:

- ``parsers/NAME.py`` holds ``register(subparsers)``, which adds the command's parser and names its
  action by a dotted string, ``handler="NAME.function"``. Building every parser is what
  ``inertial-id --help`` costs: these modules load no numerical library and no ROS package;
- ``NAME.py`` holds the action, ``function(args)`` returning the exit code, and imports all it needs
  at its top; :func:`main` imports it once the arguments are read, for the command that runs only.

The top level lists what a robot user runs; the planner's services, the bag tools and the research
studies are groups (``inertial-id GROUP NAME``) whose members are registered by their parsers as any
command is."""
from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from ..core.robot.errors import ProfileError
from ..threads import single_threaded_math

# The top level, in the order --help lists it (issue 49: at most 12 entries): a command's parser module
# (parsers/), or a name of GROUPS.
COMMANDS = ("demo", "launch", "planner", "profile", "calibrate", "bag", "estimate", "report", "export", "identify",
            "study", "bench")
# group -> (its help, the parser modules of its members, in the order its --help lists them)
GROUPS = {
    "planner": ("the excitation planner: start the exciting motion, stop it, show its status",
                ("planner_services",)),
    "bag": ("rosbag2 tools: record the simulated arm, replay a bag, convert a run folder",
            ("record_sim", "replay", "convert_run")),
    "study": ("research: the studies behind the published figures, identifiability analyses",
              ("sim_study", "realdata_study", "baseline_study", "bounds_study", "plan_study", "pmd_study",
               "identifiability", "minimal_parameters")),
}
# Top-level names from before the groups, still accepted so that users' scripts keep running: old
# name -> the words of the command now. Not in the parser, so no Python version's --help lists them.
RENAMED = {
    "start": ("planner", "start"), "stop": ("planner", "stop"), "status": ("planner", "status"),
    "record-sim": ("bag", "record-sim"), "replay": ("bag", "replay"), "convert-run": ("bag", "convert"),
    "security-policy": ("profile", "security-policy"),
    "sim-study": ("study", "sim"), "realdata-study": ("study", "realdata"), "baseline-study": ("study", "baseline"),
    "bounds-study": ("study", "bounds"), "plan-study": ("study", "plan"), "pmd-study": ("study", "pmd"),
    "identifiability": ("study", "identifiability"), "minimal-parameters": ("study", "minimal-parameters"),
}


class UserError(Exception):
    """A mistake in what the user asked for: reported in one line, exit code 2, no traceback."""


class RunFailed(Exception):
    """A run that could not complete (a node died, the simulator stalled): one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``inertial-id bench builder: error: argument --rate: ...``), exit 2;
    the subcommands' parsers are of this class too."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_group(sub, name: str) -> None:
    text, modules = GROUPS[name]
    group = sub.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}.")
    members = group.add_subparsers(dest="member", metavar="NAME", required=True)
    for module in modules:
        importlib.import_module(f"{__name__}.parsers.{module}").register(members)


def _name_commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> None:
    """Each subcommand's parser defaults ``command`` to its words (``study sim``, ``profile init``):
    argparse keeps the deepest parser's default, so a message names the whole command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                sub.set_defaults(command=" ".join((*words, name)))
                _name_commands(sub, (*words, name))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="inertial-id",
        description="Identify the inertial parameters of robots and payloads (ROS 2 node suite).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        if name in GROUPS:
            _add_group(sub, name)
        else:
            importlib.import_module(f"{__name__}.parsers.{name}").register(sub)
    _name_commands(parser)
    return parser


def _current_words(argv: list[str]) -> list[str]:
    """``argv`` with a renamed command's old name replaced by its words now, saying so on stderr."""
    if not argv or argv[0] not in RENAMED:
        return argv
    words = RENAMED[argv[0]]
    print(f"note: `inertial-id {argv[0]}` is now `inertial-id {' '.join(words)}`", file=sys.stderr)
    return [*words, *argv[1:]]


def _interrupt(number, frame):
    raise KeyboardInterrupt(signal.Signals(number).name)


def _action(handler: str):
    """The function a parser's ``handler`` names (``module.function`` of this package), its module
    imported. A third-party package it needs and this install lacks (rclpy without ROS 2) is a
    one-line error naming the package."""
    module, function = handler.rsplit(".", 1)
    try:
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == __name__.split(".")[0]:
            raise
        raise UserError(f"needs the package {exc.name}, which is not installed here") from None


def main(argv: list[str] | None = None) -> int:
    argv = _current_words(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    args.argv = argv          # lets a command re-run itself (bench: pinned to one core)
    single_threaded_math()    # before the action's imports load the numerical libraries
    # SIGTERM (a service manager, `timeout`, a CI job cancelled) stops a command as Ctrl-C does; a
    # SIGTERM handler someone else installed, or an ignored SIGTERM, stays as it is
    previous = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return int(_action(args.handler)(args) or 0)
    except (UserError, ProfileError, FileNotFoundError) as exc:
        print(f"inertial-id {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RunFailed as exc:
        print(f"inertial-id {args.command}: failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # the project's rule for SIGINT and SIGTERM: a stop asked for, exit code 0, one line
        print(f"inertial-id {args.command}: stopped by {exc.args[0] if exc.args else 'SIGINT'}", file=sys.stderr)
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
