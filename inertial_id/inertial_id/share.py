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


def ament_share_directory(package: str) -> Path | None:
    """A package's share directory in the ament index (a ROS install, a colcon workspace), or None."""
    try:
        from ament_index_python.packages import get_package_share_directory   # optional: a ROS install only
        return Path(get_package_share_directory(package))
    except Exception:  # no ament_index without a ROS install, or the package is not in its index
        return None


def share_dirs(package: str = PACKAGE) -> list[Path]:
    """A package's data roots, first match wins: its folder in the source tree (the repository holds
    both packages side by side), the ament index (ROS install, colcon workspace), then the
    interpreter's share directory (pip data_files, or ``make setup``'s install into the venv)."""
    ament = ament_share_directory(package)
    return [SOURCE_ROOT.parent / package, *([ament] if ament else []), Path(sys.prefix) / "share" / package]


def config_dirs() -> list[Path]:
    """Where profiles are looked up: $INERTIAL_ID_CONFIG, then ``config/`` of :func:`share_dirs`."""
    dirs = [Path(os.environ["INERTIAL_ID_CONFIG"])] if os.environ.get("INERTIAL_ID_CONFIG") else []
    dirs += [d / "config" for d in share_dirs()]
    return [d for d in dirs if d.is_dir()]
