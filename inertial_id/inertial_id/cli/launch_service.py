"""The process of ``inertial-id launch`` that holds the ``LaunchService`` (started by
:func:`.launch.run_launch_service` with the hidden option ``--launch-service-process``): the one
place of the command that needs the ROS 2 launch packages."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

from launch import LaunchDescription, LaunchService
from launch.actions import IncludeLaunchDescription, RegisterEventHandler, SetLaunchConfiguration
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import (PythonLaunchDescriptionSource,
                                               get_launch_description_from_python_launch_file)

from . import RunFailed, UserError
from .launch import check_argument_names, first_line, prepared


def run(args) -> int:
    path, arguments, _, with_sim = prepared(args)
    check_argument_names(path, arguments, with_sim)
    return serve_launch_description(path, arguments)


def _ament_prefix_with_this_package() -> None:
    """On the wheel route the venv is the package's install prefix (``make setup`` installs the node
    executables to <venv>/lib/inertial_id); let launch_ros find it there."""
    marker = Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "packages" / "inertial_id"
    paths = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    if marker.exists() and sys.prefix not in paths:
        os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(paths + [sys.prefix])


# A node of this package stops on SIGINT (inertial_id.nodes.common.run_node) and takes SIGTERM the
# same way: the LaunchService's escalation to SIGTERM 5 s after SIGINT is only noise, its SIGKILL
# the real limit (sigterm_timeout + sigkill_timeout, launch/actions/execute_local.py).
SIGTERM_AFTER_S = 20.0
SIGKILL_AFTER_SIGTERM_S = 10.0


def serve_launch_description(path: Path, arguments: dict) -> int:
    """The process :func:`run_launch_service` starts: the file in a non-interactive ``LaunchService``
    (a SIGINT to this process is passed on to every node). Ends with the parent. Exit code 0 when
    every node finished cleanly; a node that exited otherwise is one line and exit code 1."""
    _end_with_parent()
    _ament_prefix_with_this_package()
    try:
        get_launch_description_from_python_launch_file(str(path))
    except Exception as exc:        # noqa: BLE001 -- whatever the file raises, said in one line
        raise UserError(f"{path} could not be loaded as a launch file: {first_line(exc)}") from None
    exits = []
    service = LaunchService(noninteractive=True)
    service.include_launch_description(LaunchDescription([
        SetLaunchConfiguration("sigterm_timeout", str(SIGTERM_AFTER_S)),
        SetLaunchConfiguration("sigkill_timeout", str(SIGKILL_AFTER_SIGTERM_S)),
        RegisterEventHandler(OnProcessExit(on_exit=lambda event, context: exits.append(
            (event.process_name, event.returncode)))),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(path)), launch_arguments=list(arguments.items())),
    ]))
    code = service.run()
    failed = [(name, returncode) for name, returncode in exits if returncode != 0]
    if failed:
        raise RunFailed("; ".join(f"{name} exited with code {returncode}" for name, returncode in failed))
    return code


def _end_with_parent() -> None:
    """SIGINT to this process when its parent dies (Linux): the nodes stop even if the launcher is killed."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)       # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
