"""``inertial-id launch FILE [NAME:=VALUE ...]``: run one of this package's launch files.

The same launch files as ``ros2 launch inertial_id FILE``, for installs without ros2cli (the PyPI
wheel route): with ``launch_ros`` importable they run in a real ``LaunchService``; without it (it is
not on PyPI) the node set the file declares is started as processes from the same profile and the
same arguments. Ctrl-C or SIGTERM stops every node; the exit code is 0 after a clean shutdown.
Only this package's launch files run (each one a ``launch_description(PROFILE, with_sim=...)`` call);
any other file is one line and exit code 2.
"""
from __future__ import annotations

import argparse

from ...nodes import launch as node_launch


def arguments_help() -> str:
    """The launch arguments of this package's launch files, for ``--help``."""
    lines = ["launch arguments (NAME:=VALUE; an empty default is the profile's value):"]
    sim_only = node_launch.SIM_ARGUMENTS
    for (name, default, description), (_, robot_default, _) in zip(node_launch.launch_arguments(True),
                                                                   node_launch.launch_arguments(False) + sim_only):
        shown = "the file's robot" if default is None else repr(default)
        if default != robot_default:
            shown += f" with sim.launch.py, {robot_default!r} otherwise"
        lines.append(f"  {name:20s} {description} (default {shown})"
                     + ("; sim.launch.py only" if (name, default, description) in sim_only else ""))
    lines += ["", "The robot moves only after `inertial-id planner start` (the planner's ~/start service);",
              "`inertial-id planner status` shows the planner's state, `inertial-id planner stop` brakes."]
    return "\n".join(lines)


def register(sub) -> None:
    p = sub.add_parser("launch", help="run a launch file of this package (ros2 launch without ros2cli)",
                       description="Run a launch file of this package: in a LaunchService when launch_ros is "
                                   "installed, otherwise as node processes (their output prefixed [node-N]).",
                       epilog=arguments_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="sim.launch.py, kinova_gen3.launch.py, xarm7.launch.py, digit.launch.py, or the path "
                                "of one (of this package's launch files only)")
    p.add_argument("arguments", nargs=argparse.REMAINDER, metavar="NAME:=VALUE", help="launch arguments")
    p.add_argument("-s", "--show-args", action="store_true", help="list the file's launch arguments and exit")
    p.add_argument("--processes", action="store_true",
                   help="start the node set as processes even when launch_ros is installed")
    # the LaunchService's own process, started by cli.launch.run_launch_service (not for users): its
    # own action, the one that needs the launch packages
    p.add_argument("--launch-service-process", dest="handler", action="store_const", const="launch_service.run",
                   help=argparse.SUPPRESS)
    p.set_defaults(handler="launch.run")      # after the option of that destination, whose default it sets
