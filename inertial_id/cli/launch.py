"""``inertial-id launch FILE [NAME:=VALUE ...]``: run one of this package's launch files.

The same launch files as ``ros2 launch inertial_id FILE``, for installs without ros2cli (the PyPI
wheel route): with ``launch_ros`` importable they run in a real ``LaunchService``; without it (it is
not on PyPI) the node set the file declares is started as processes from the same profile and the
same arguments. Ctrl-C or SIGTERM stops every node; the exit code is 0 after a clean shutdown.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import signal
import sys
import time
from pathlib import Path

from . import UserError


def register(sub) -> None:
    p = sub.add_parser("launch", help="run a launch file of this package (ros2 launch without ros2cli)")
    p.add_argument("file", help="sim.launch.py, kinova_gen3.launch.py, xarm7.launch.py, digit.launch.py, or a path")
    p.add_argument("arguments", nargs="*", metavar="NAME:=VALUE", help="launch arguments")
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
    arguments = parse_arguments(args.arguments)
    if importlib.util.find_spec("launch_ros") is not None:
        return run_launch_service(path, arguments)
    return run_embedded(path, arguments)


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
    from ..nodes.launch import LAUNCH_ARGUMENTS, NODES, SIM_ARGUMENTS, NodeProcesses, node_parameters
    default_profile, with_sim = declared_node_set(path)
    declared = LAUNCH_ARGUMENTS + (SIM_ARGUMENTS if with_sim else ())
    values = {name: default_profile if default is None else default for name, default, _ in declared}
    unknown = sorted(set(arguments) - set(values))
    if unknown:
        raise UserError(f"{path.name} has no launch argument '{unknown[0]}' (it has: {', '.join(values)})")
    values.update(arguments)
    print(f"inertial-id launch: launch_ros is not installed; starting the node set of {path.name} as processes",
          file=sys.stderr)
    procs = NodeProcesses()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        for name in NODES:
            if with_sim or name != "sim_robot":
                procs.start(name, node_parameters(name, values), dict(os.environ))
        while not stop:
            dead = procs.dead()
            if dead:
                print(f"inertial-id launch: node(s) {', '.join(dead)} exited; stopping the others", file=sys.stderr)
                return 1
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        procs.stop()
    return 0
