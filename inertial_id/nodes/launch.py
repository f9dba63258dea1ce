"""Start the node set of a robot profile as processes — what ``ros2 launch`` does from
``launch/*.launch.py`` on a ROS install; used where launch_ros is absent (PyPI wheels)."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

NODES = ("sim_robot", "regressor_builder", "estimator", "excitation_planner")


def isolated_ros_env(domain_id: int | None = None) -> dict:
    """Environment for a self-contained run: a DDS domain of its own and discovery on this host only
    (nothing leaves loopback), unless the caller's environment already chose."""
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    elif "ROS_DOMAIN_ID" not in os.environ:
        env["ROS_DOMAIN_ID"] = str(random.randint(1, 100))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class NodeProcesses:
    """Running node processes; ``stop()`` sends SIGINT, then SIGTERM/SIGKILL to stragglers."""

    procs: dict = field(default_factory=dict)

    def start(self, node: str, parameters: dict, env: dict, log_dir: str | None = None) -> None:
        args = [sys.executable, "-m", f"inertial_id.nodes.{node}", "--ros-args"]
        for k, v in parameters.items():
            args += ["-p", f"{k}:={v}"]
        out = open(os.path.join(log_dir, f"{node}.log"), "w") if log_dir else subprocess.DEVNULL
        self.procs[node] = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)

    def dead(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def stop(self, timeout_s: float = 5.0) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        for p in self.procs.values():
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def start_node_set(profile: str, env: dict, log_dir: str | None = None, nodes=NODES, **overrides) -> NodeProcesses:
    """Start ``nodes`` for ``profile``; ``overrides`` maps node name -> extra parameters."""
    procs = NodeProcesses()
    for node in nodes:
        params = {"robot_profile": profile, **overrides.get(node, {})}
        procs.start(node, params, env, log_dir)
    return procs


def launch_description(default_profile: str, with_sim: bool):
    """A launch_ros LaunchDescription of the node set (for ``ros2 launch inertial_id ...``).

    Arguments: ``robot_profile`` (default ``default_profile``), ``method`` (estimator),
    ``duration_s`` (exciting motion), and with the simulator ``payload``.
    """
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    args = [DeclareLaunchArgument("robot_profile", default_value=default_profile,
                                  description="robot profile name (config/robots) or YAML path"),
            DeclareLaunchArgument("method", default_value="",
                                  description="estimator method (empty: the profile's identification.method)"),
            DeclareLaunchArgument("duration_s", default_value="30.0", description="exciting motion, s")]
    profile = LaunchConfiguration("robot_profile")
    per_node = {"estimator": {"method": LaunchConfiguration("method")},
                "excitation_planner": {"duration_s": LaunchConfiguration("duration_s")}}
    if with_sim:
        args.append(DeclareLaunchArgument("payload", default_value="dumbbell_5lb",
                                          description="payload of the simulated arm (config/payloads.yaml)"))
        per_node["sim_robot"] = {"payload": LaunchConfiguration("payload")}
    nodes = [Node(package="inertial_id", executable=name, name=name, output="screen",
                  parameters=[{"robot_profile": profile, **per_node.get(name, {})}])
             for name in NODES if with_sim or name != "sim_robot"]
    return LaunchDescription(args + nodes)
