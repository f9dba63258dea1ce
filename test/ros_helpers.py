"""Spinning helpers of the integration tests (the ros_env fixture is in conftest.py)."""
from __future__ import annotations

import time


def spin_until(node, predicate, timeout_s: float) -> bool:
    import rclpy
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
        if predicate():
            return True
    return False


def spin_for(node, seconds: float) -> None:
    spin_until(node, lambda: False, seconds)


def require_launch_ros() -> None:
    """launch_ros is not on PyPI: `make test` installs it from ../shared/vendor/ros2_launch. Skip (and
    say so) only when that folder is absent; fail when it is present but was not installed."""
    import importlib.util
    from pathlib import Path

    import pytest
    vendor = Path(__file__).resolve().parents[2] / "shared" / "vendor" / "ros2_launch"
    if importlib.util.find_spec("launch_ros") is None:
        if vendor.is_dir():
            pytest.fail(f"launch_ros is not installed although {vendor} is present: run `make test-deps`")
        pytest.skip(f"launch tests need the ROS 2 launch packages of {vendor}, which is absent")
