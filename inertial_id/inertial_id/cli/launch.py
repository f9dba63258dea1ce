"""``inertial-id launch``: one of this package's launch files checked and run, in a LaunchService
process of its own (:mod:`.launch_service`) when launch_ros is installed, else as the node processes
it declares (the options: :mod:`.parsers.launch`)."""
from __future__ import annotations

import ast
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..core.estimators.factory import make_estimator
from ..core.robot.model import load_payloads, load_robot
from ..defaults import SIM_ENGINES
from ..nodes.launch import NODES, NodeProcesses, StopSignals, launch_arguments, node_parameters
from ..share import share_dirs
from . import RunFailed, UserError


def find_launch_file(name: str) -> Path:
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


def prepared(args) -> tuple[Path, dict, str, bool]:
    """(launch file, its arguments, its default profile, whether it starts the simulated arm) of the
    command line; the options may also follow the file and its arguments (as with ros2 launch)."""
    path = find_launch_file(args.file)
    for flag, dest in (("-s", "show_args"), ("--show-args", "show_args"), ("--processes", "processes")):
        while flag in args.arguments:
            args.arguments.remove(flag)
            setattr(args, dest, True)
    arguments = parse_arguments(args.arguments)
    profile, with_sim = declared_node_set(path)     # one of this package's files, or one line and exit 2
    return path, arguments, profile, with_sim


def run(args) -> int:
    path, arguments, profile, with_sim = prepared(args)
    if args.show_args:
        return show_arguments(path)
    check_argument_names(path, arguments, with_sim)
    check_arguments(arguments, profile)
    if importlib.util.find_spec("launch_ros") is not None and not args.processes:
        return run_launch_service(path, arguments)
    return run_embedded(path, arguments)


def show_arguments(path: Path) -> int:
    """``--show-args``: the file's arguments, as ``ros2 launch --show-args`` lists them."""
    default_profile, with_sim = declared_node_set(path)
    print(f"Arguments of {path.name} (pass arguments as '<name>:=<value>'):")
    for name, default, description in launch_arguments(with_sim):
        print(f"\n    '{name}':\n        {description}\n        (default: "
              f"'{default_profile if default is None else default}')")
    return 0


def check_argument_names(path: Path, arguments: dict, with_sim: bool) -> None:
    """Every argument given is one the file declares (:func:`inertial_id.nodes.launch.launch_arguments`)."""
    declared = [name for name, _, _ in launch_arguments(with_sim)]
    unknown = sorted(set(arguments) - set(declared))
    if unknown:
        raise UserError(f"{path.name} has no launch argument '{unknown[0]}' (it has: {', '.join(declared)})")


def check_arguments(arguments: dict, profile: str | None) -> None:
    """Values the nodes would refuse, refused before any node starts (one line, exit 2): an unknown
    or invalid robot profile, an estimator method the profile cannot serve, an unknown payload or engine."""
    profile = arguments.get("robot_profile") or profile
    robot = load_robot(profile) if profile else None        # a ProfileError names the problem
    if arguments.get("method") and robot is not None:
        try:
            make_estimator(robot, arguments["method"])
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if arguments.get("payload") and arguments["payload"] not in load_payloads():
        raise UserError(f"unknown payload '{arguments['payload']}' (available: {', '.join(load_payloads())})")
    if arguments.get("engine") and arguments["engine"] not in SIM_ENGINES:
        raise UserError(f"unknown engine '{arguments['engine']}' (available: {', '.join(SIM_ENGINES)})")


def run_launch_service(path: Path, arguments: dict) -> int:
    """The file in a ``LaunchService``, run by a process of its own
    (:func:`.launch_service.serve_launch_description`) in a session of its own; a SIGINT or SIGTERM
    here becomes one SIGINT there, which the LaunchService (non-interactive) passes on to each node.
    Run here, a SIGTERM would end the LaunchService without stopping anything (its handler cancels the
    run: launch/launch_service.py, ``_on_sigterm``, which leaves the nodes running), and a SIGINT that
    reaches the launcher alone would reach no node (an interactive LaunchService counts on the
    terminal to have sent it to every process of the group; they get SIGTERM 5 s later)."""
    command = [sys.executable, "-m", "inertial_id.cli", "launch", "--launch-service-process", str(path.resolve()),
               *(f"{name}:={value}" for name, value in arguments.items())]
    stop = StopSignals()
    try:
        service = subprocess.Popen(command, start_new_session=True)
        forwarded = False
        while True:
            if stop.signal and not forwarded:
                print(f"[INFO] [launch]: {stop.signal}: stopping the nodes", flush=True)
                service.send_signal(signal.SIGINT)
                forwarded = True
            try:
                code = service.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                continue
    finally:
        stop.restore()
    if code < 0:
        raise RunFailed(f"the LaunchService was ended by signal {signal.Signals(-code).name}")
    return code


def first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def package_launch_files() -> list[str]:
    return sorted({p.name for root in share_dirs() for p in (root / "launch").glob("*.launch.py")})


def declared_node_set(path: Path) -> tuple[str, bool]:
    """(default profile, with simulator) of a launch file: each of this package's launch files is a
    single ``launch_description(PROFILE, with_sim=...)`` call (inertial_id.nodes.launch_description).
    Any other file is a UserError saying what it is (one line, exit code 2): not Python, not a launch
    file (no ``generate_launch_description``), or a launch file but not one of this package's."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path} cannot be read: {exc.strerror or exc}") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as exc:        # ValueError: null bytes (binary files)
        raise UserError(f"{path} is not a launch file: not Python source ({first_line(exc)})") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body):
        raise UserError(f"{path} is not a launch file: it defines no generate_launch_description()")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "launch_description":
            call = {"default_profile": None, "with_sim": None}
            try:
                call.update(zip(call, (ast.literal_eval(a) for a in node.args)))
                call.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
            except ValueError:      # not literals: not one of this package's files
                break
            if isinstance(call["default_profile"], str) and set(call) == {"default_profile", "with_sim"}:
                return call["default_profile"], bool(call["with_sim"])
            break
    raise UserError(f"{path} is not one of this package's launch files ({', '.join(package_launch_files())}); "
                    "`inertial-id launch` runs only those (`ros2 launch` runs any launch file)")


def run_embedded(path: Path, arguments: dict) -> int:
    """The file's node set as processes, each one's output prefixed ``[node-N]``. SIGINT or SIGTERM
    stops every node (SIGINT to each) and the launch ends with exit code 0 once each has finished
    cleanly, as each says; one that had to be killed or exited otherwise is one line and exit code 1. A
    node that exits by itself stops the others: with an error (exit code not 0) the launch fails (exit
    1) saying which node, its exit code and its last line; with exit code 0 it was stopped from
    outside (a signal to it alone, or to the whole process group before this process took its own)
    and the launch ends as after a signal."""
    default_profile, with_sim = declared_node_set(path)
    values = {name: default_profile if default is None else default for name, default, _ in launch_arguments(with_sim)}
    check_argument_names(path, arguments, with_sim)
    values.update(arguments)
    print(f"[INFO] [launch]: launch_ros is not used; starting the node set of {path.name} as processes", flush=True)
    procs = NodeProcesses(echo=True)
    stop = StopSignals()
    ended = []
    try:
        for name in NODES:
            if (with_sim or name != "sim_robot") and not stop.signal:
                procs.start(name, node_parameters(name, values), dict(os.environ))
        while not stop.signal and not ended:
            time.sleep(0.2)
            ended = procs.dead()
    finally:
        if stop.signal:
            print(f"[INFO] [launch]: {stop.signal}: stopping the nodes", flush=True)
        for name in ended:
            print(procs.ending(name, procs.procs[name].returncode), flush=True)
        stopped = procs.stop()
        stop.restore()
    failed = [(n, procs.procs[n].returncode, procs.last_words(n)) for n in ended if procs.procs[n].returncode != 0]
    if failed:
        raise RunFailed("; ".join(f"node {n} exited with code {code}" + (f": {why}" if why else "")
                                  for n, code, why in failed) + "; the other nodes were stopped")
    unclean = {n: code for n, code in stopped.items() if code != 0}
    if unclean:
        raise RunFailed("; ".join(f"node {n} " + ("had to be killed" if code is None else f"exited with code {code}")
                                  for n, code in unclean.items()) + " when stopped")
    return 0
