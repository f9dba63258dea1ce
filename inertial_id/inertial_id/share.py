"""Where the packages' files are found: ``config/`` and ``launch/`` of ``inertial_id``, ``msg/`` of
``inertial_id_msgs``. Standard library only: the launch files import this in the interpreter that
runs ``ros2 launch``, which may have none of the package's dependencies."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .defaults import SOURCE_ROOT

PACKAGE = "inertial_id"
MSGS_PACKAGE = "inertial_id_msgs"


def share_dirs(package: str = PACKAGE) -> list[Path]:
    """A package's data roots, first match wins: its folder in the source tree (the repository holds
    both packages side by side), the ament index (ROS install, colcon workspace), then the
    interpreter's share directory (pip data_files, or ``make setup``'s install into the venv)."""
    dirs = [SOURCE_ROOT.parent / package]
    try:
        from ament_index_python.packages import get_package_share_directory   # optional: a ROS install only
        dirs.append(Path(get_package_share_directory(package)))
    except Exception:  # ament_index is absent without a ROS install; the other entries still serve
        pass
    return dirs + [Path(sys.prefix) / "share" / package]


def config_dirs() -> list[Path]:
    """Where profiles are looked up: $INERTIAL_ID_CONFIG, then ``config/`` of :func:`share_dirs`."""
    dirs = [Path(os.environ["INERTIAL_ID_CONFIG"])] if os.environ.get("INERTIAL_ID_CONFIG") else []
    dirs += [d / "config" for d in share_dirs()]
    return [d for d in dirs if d.is_dir()]
