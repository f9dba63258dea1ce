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


def start_replay_pipeline(ros_env: dict, log_dir, lossless_inputs: bool = False):
    """regressor_builder and estimator (guaranteed, no state file) as processes on simulated time,
    and a monitor node; returns (processes, monitor) once the nodes listen and publish.
    ``lossless_inputs``: the builder takes reliable sensor streams reliably (keep all)."""
    from inertial_id.core import bags
    from inertial_id.nodes.launch import start_node_set
    from inertial_id.nodes.monitor import MonitorNode
    sim_time = {"use_sim_time": True}
    nodes = start_node_set("kinova_gen3", ros_env, str(log_dir), nodes=("regressor_builder", "estimator"),
                           regressor_builder={**sim_time, "lossless_inputs": lossless_inputs},
                           estimator={"method": "guaranteed", "state_file": "none", **sim_time})
    monitor = MonitorNode()
    up = spin_until(monitor, lambda: monitor.count_subscribers(bags.JOINT_STATES) >= 1
                    and monitor.count_subscribers(bags.ROWS) >= 1
                    and monitor.count_publishers(bags.ESTIMATE) >= 1, 60.0)
    if not up:
        monitor.destroy_node()
        nodes.stop()
        raise AssertionError(f"nodes not up: {nodes.dead()}")
    return nodes, monitor
