"""``inertial-id launch FILE [NAME:=VALUE ...]``: run one of this package's launch files.

The same launch files as ``ros2 launch inertial_id FILE``, for installs without ros2cli (the PyPI
wheel route): with ``launch_ros`` importable they run in a real ``LaunchService``; without it (it is
not on PyPI) the node set the file declares is started as processes from the same profile and the
same arguments. Ctrl-C or SIGTERM stops every node; the exit code is 0 after a clean shutdown.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import signal
import sys
import time
from pathlib import Path

from . import UserError, defaults


def arguments_help(source=defaults) -> str:
    """The launch arguments of this package's launch files, for ``--help``: from ``source``, a module
    with ``SIM_ARGUMENTS`` and ``launch_arguments``; by default the restatement in :mod:`.defaults`,
    since importing :mod:`inertial_id.nodes.launch` loads the robot profile machinery (seconds)."""
    lines = ["launch arguments (NAME:=VALUE; an empty default is the profile's value):"]
    for (name, default, description), (_, robot_default, _) in zip(source.launch_arguments(True),
                                                                   source.launch_arguments(False)
                                                                   + source.SIM_ARGUMENTS):
        shown = "the file's robot" if default is None else repr(default)
        if default != robot_default:
            shown += f" with sim.launch.py, {robot_default!r} otherwise"
        lines.append(f"  {name:20s} {description} (default {shown})"
                     + ("; sim.launch.py only" if (name, default, description) in source.SIM_ARGUMENTS else ""))
    lines += ["", "The robot moves only after `inertial-id start` (the planner's ~/start service);",
              "`inertial-id status` shows the planner's state, `inertial-id stop` brakes."]
    return "\n".join(lines)


def register(sub) -> None:
    p = sub.add_parser("launch", help="run a launch file of this package (ros2 launch without ros2cli)",
                       description="Run a launch file of this package: in a LaunchService when launch_ros is "
                                   "installed, otherwise as node processes (their output prefixed [node-N]).",
                       epilog=arguments_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="sim.launch.py, kinova_gen3.launch.py, xarm7.launch.py, digit.launch.py, or a path")
    p.add_argument("arguments", nargs=argparse.REMAINDER, metavar="NAME:=VALUE", help="launch arguments")
    p.add_argument("-s", "--show-args", action="store_true", help="list the file's launch arguments and exit")
    p.add_argument("--processes", action="store_true",
                   help="start the node set as processes even when launch_ros is installed")
    p.set_defaults(func=run)


def find_launch_file(name: str) -> Path:
    from ..core.model import share_dirs
    path = Path(name)
    if path.is_file():
        return path
    for root in share_dirs():
        if (root / "launch" / name).is_file():
            return root / "launch" / name
    raise UserError(f"launch file '{name}' not found (looked in {', '.join(str(d / 'launch') for d in share_dirs())})")


def parse_arguments(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise UserError(f"launch argument '{item}' is not of the form NAME:=VALUE")
        out[name] = value
    return out


def run(args) -> int:
    path = find_launch_file(args.file)
    # the options may also follow the file and its arguments (as with ros2 launch)
    for flag, dest in (("-s", "show_args"), ("--show-args", "show_args"), ("--processes", "processes")):
        while flag in args.arguments:
            args.arguments.remove(flag)
            setattr(args, dest, True)
    arguments = parse_arguments(args.arguments)
    if args.show_args:
        return show_arguments(path)
    check_arguments(arguments, default_profile(path))
    if importlib.util.find_spec("launch_ros") is not None and not args.processes:
        return run_launch_service(path, arguments)
    return run_embedded(path, arguments)


def show_arguments(path: Path) -> int:
    """``--show-args``: the file's arguments, as ``ros2 launch --show-args`` lists them."""
    from ..nodes.launch import launch_arguments
    default_profile, with_sim = declared_node_set(path)
    print(f"Arguments of {path.name} (pass arguments as '<name>:=<value>'):")
    for name, default, description in launch_arguments(with_sim):
        print(f"\n    '{name}':\n        {description}\n        (default: "
              f"'{default_profile if default is None else default}')")
    return 0


def default_profile(path: Path) -> str | None:
    try:
        return declared_node_set(path)[0]
    except UserError:        # not one of this package's files: its own arguments, unchecked here
        return None


def check_arguments(arguments: dict, profile: str | None) -> None:
    """Values the nodes would refuse, refused before any node starts (one line, exit 2): an unknown
    or invalid robot profile, an estimator method the profile cannot serve, an unknown payload."""
    from ..core.estimators.factory import make_estimator
    from ..core.model import load_payloads, load_robot
    profile = arguments.get("robot_profile") or profile
    robot = load_robot(profile) if profile else None        # a ProfileError names the problem
    if arguments.get("method") and robot is not None:
        try:
            make_estimator(robot, arguments["method"])
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if arguments.get("payload") and arguments["payload"] not in load_payloads():
        raise UserError(f"unknown payload '{arguments['payload']}' (available: {', '.join(load_payloads())})")


def _ament_prefix_with_this_package() -> None:
    """On the wheel route the venv is the package's install prefix (``make setup`` installs the node
    executables to <venv>/lib/inertial_id); let launch_ros find it there."""
    marker = Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "packages" / "inertial_id"
    paths = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    if marker.exists() and sys.prefix not in paths:
        os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(paths + [sys.prefix])


def run_launch_service(path: Path, arguments: dict) -> int:
    from launch import LaunchService
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    _ament_prefix_with_this_package()
    source = PythonLaunchDescriptionSource(str(path))
    declared = {a.name for a in source.try_get_launch_description_without_context().get_launch_arguments()}
    unknown = sorted(set(arguments) - declared)
    if unknown:
        raise UserError(f"{path.name} has no launch argument '{unknown[0]}' (it has: {', '.join(sorted(declared))})")
    service = LaunchService()
    service.include_launch_description(IncludeLaunchDescription(source, launch_arguments=list(arguments.items())))
    return service.run()


def declared_node_set(path: Path) -> tuple[str, bool]:
    """(default profile, with simulator) of a launch file: each of this package's launch files is a
    single ``launch_description(PROFILE, with_sim=...)`` call (inertial_id.nodes.launch)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "launch_description":
            call = {"default_profile": None, "with_sim": None}
            call.update(zip(call, (ast.literal_eval(a) for a in node.args)))
            call.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
            return call["default_profile"], bool(call["with_sim"])
    raise UserError(f"{path.name} is not one of this package's launch files; without launch_ros only "
                    "those can run (install the ROS 2 launch packages to run any launch file)")


def run_embedded(path: Path, arguments: dict) -> int:
    """The file's node set as processes, each one's output prefixed ``[node-N]``; a node that exits
    stops the others and the launch fails (exit 1) saying which node, its exit code and its last line."""
    from . import RunFailed
    from ..nodes.launch import NODES, NodeProcesses, launch_arguments, node_parameters
    default_profile, with_sim = declared_node_set(path)
    declared = launch_arguments(with_sim)
    values = {name: default_profile if default is None else default for name, default, _ in declared}
    unknown = sorted(set(arguments) - set(values))
    if unknown:
        raise UserError(f"{path.name} has no launch argument '{unknown[0]}' (it has: {', '.join(values)})")
    values.update(arguments)
    print(f"[INFO] [launch]: launch_ros is not used; starting the node set of {path.name} as processes", flush=True)
    procs = NodeProcesses(echo=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    failed = None
    try:
        for name in NODES:
            if with_sim or name != "sim_robot":
                procs.start(name, node_parameters(name, values), dict(os.environ))
        while not stop:
            dead = procs.dead()
            if dead:
                failed = [(n, procs.procs[n].returncode, procs.last_words(n)) for n in dead]
                break
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        procs.stop()
    if failed:
        raise RunFailed("; ".join(f"node {n} exited with code {code}" + (f": {why}" if why else "")
                                  for n, code, why in failed) + "; the other nodes were stopped")
    return 0
