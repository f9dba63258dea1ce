"""Helpers of the integration tests: real rclpy over DDS in an isolated domain on loopback."""
from __future__ import annotations

import os
import time

import pytest

from inertial_id.nodes.launch import isolated_ros_env


@pytest.fixture
def ros_env():
    """A private DDS domain for this test's processes and for rclpy in the test process."""
    env = isolated_ros_env()
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    os.environ.update({k: env[k] for k in saved})
    import rclpy
    rclpy.init()
    yield env
    rclpy.try_shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


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
