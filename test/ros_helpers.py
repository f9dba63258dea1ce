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
