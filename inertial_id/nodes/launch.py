"""Start the node set of a robot profile as processes — what ``ros2 launch`` does from
``launch/*.launch.py`` on a ROS install; used where launch_ros is absent (PyPI wheels)."""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from .params_files import params_file

NODES = ("sim_robot", "regressor_builder", "estimator", "excitation_planner", "payload_compensator")
TAIL_LINES = 30         # lines of each node's output kept to say why it exited
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")    # the last line of a traceback


def isolated_ros_env(domain_id: int | None = None) -> dict:
    """Environment for a self-contained run: a DDS domain of its own and discovery on this host only
    (nothing leaves loopback), unless the caller's environment already chose; and a ROS_HOME of its
    own, so that no state a node saves (the estimator's box) carries over from another run."""
    env = dict(os.environ, ROS_HOME=tempfile.mkdtemp(prefix="inertial_id_ros_home_"))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    elif "ROS_DOMAIN_ID" not in os.environ:
        env["ROS_DOMAIN_ID"] = str(random.randint(1, 100))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class NodeProcesses:
    """Running node processes; ``stop()`` sends SIGINT, then SIGTERM/SIGKILL to stragglers. With
    ``echo``, each node's output goes to this process's stdout line by line, prefixed with
    ``[<node>-<n>]`` as ``ros2 launch`` does, and its last lines are kept (:meth:`last_words`)."""

    procs: dict = field(default_factory=dict)
    echo: bool = False
    tails: dict = field(default_factory=dict)
    pumps: dict = field(default_factory=dict)

    def start(self, node: str, parameters: dict, env: dict, log_dir: str | None = None) -> None:
        args = [sys.executable, "-m", f"inertial_id.nodes.{node}", "--ros-args"]
        defaults = params_file(node)
        if defaults is not None:        # first: the -p that follow override it, as in the launch files
            args += ["--params-file", str(defaults)]
        for k, v in parameters.items():
            args += ["-p", f"{k}:={v}"]
        if self.echo:
            proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
            self.tails[node] = deque(maxlen=TAIL_LINES)
            prefix = f"[{node}-{len(self.procs) + 1}]"
            self.pumps[node] = threading.Thread(target=self._pump, args=(proc, prefix, self.tails[node]), daemon=True)
            self.pumps[node].start()
            print(f"[INFO] [launch]: {prefix[1:-1]} started with pid [{proc.pid}]", flush=True)
        else:
            out = open(os.path.join(log_dir, f"{node}.log"), "w") if log_dir else subprocess.DEVNULL
            proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.procs[node] = proc

    @staticmethod
    def _pump(proc, prefix: str, tail: deque) -> None:
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            print(f"{prefix} {line}", flush=True)

    def last_words(self, node: str) -> str:
        """Why a node exited, from its output (with ``echo``): the exception line of a traceback,
        otherwise its last non-empty line (a node's own one-line error)."""
        if node in self.pumps:
            self.pumps[node].join(timeout=5.0)     # until the node's output ends
        lines = [ln.strip() for ln in self.tails.get(node, ()) if ln.strip()]
        if any(ln.startswith("Traceback") for ln in lines):
            return next((ln for ln in reversed(lines) if EXCEPTION_LINE.match(ln)), lines[-1])
        return lines[-1] if lines else ""

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


# Launch arguments of every launch file: (name, default, description). An empty default means "the
# profile's value" (the profile names the real driver's topics and frames).
LAUNCH_ARGUMENTS = (
    ("robot_profile", None, "robot profile: a name in config/robots or a YAML path"),
    ("method", "", "estimator method (empty: the profile's identification.method)"),
    ("use_sim_time", "false", "run on /clock (rosbag replay, simulators) instead of the system clock"),
    ("joint_states_topic", "", "the driver's JointState topic (empty: profile sensing.joint_states_topic)"),
    ("wrench_topic", "", "the driver's F/T WrenchStamped topic (empty: profile sensing.wrench_topic)"),
    ("wrench_frame_id", "", "frame_id the driver stamps on the wrench (empty: profile sensing.wrench_frame_id)"),
)
SIM_ARGUMENTS = (("payload", "", "payload of the simulated arm, config/payloads.yaml (empty: the profile's)"),)


def launch_arguments(with_sim: bool) -> tuple:
    """The arguments of a launch file: with the simulated arm, its payload too, and the nodes on the
    simulation's /clock by default (a loaded machine then slows the simulation down instead of
    making the arm's samples late for the planner)."""
    if not with_sim:
        return LAUNCH_ARGUMENTS
    return tuple((name, "true", description) if name == "use_sim_time" else (name, default, description)
                 for name, default, description in LAUNCH_ARGUMENTS) + SIM_ARGUMENTS


def node_parameters(node: str, values: dict) -> dict:
    """Parameters of ``node`` from launch argument values; empty values keep the node's default
    (the profile's). ``use_sim_time`` goes to every node but the simulated arm, which then publishes
    /clock."""
    per_node = {"estimator": ("method",),
                "regressor_builder": ("method", "joint_states_topic", "wrench_topic", "wrench_frame_id"),
                "excitation_planner": ("joint_states_topic",),
                "payload_compensator": ("joint_states_topic", "wrench_topic", "wrench_frame_id"),
                "sim_robot": ("joint_states_topic", "wrench_topic", "wrench_frame_id", "payload")}
    sim_time = values.get("use_sim_time", "false").lower() in ("true", "1")
    # the simulated arm is the source of /clock, never its follower
    out = {"robot_profile": values["robot_profile"], "use_sim_time": sim_time and node != "sim_robot"}
    if node == "sim_robot":
        out["publish_clock"] = sim_time
    out.update({k: values[k] for k in per_node.get(node, ()) if values.get(k)})
    return out


def launch_description(default_profile: str, with_sim: bool):
    """A launch_ros LaunchDescription of the node set, for ``ros2 launch inertial_id ...`` and
    ``inertial-id launch``: the inertial_id nodes (builder, estimator, planner, payload compensator),
    plus the simulated arm standing in for the robot's driver when ``with_sim``. Arguments: :func:`launch_arguments`.
    The excitation planner does not move the robot until its ``~/start`` service is called."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    arguments = launch_arguments(with_sim)

    def nodes(context):
        values = {name: context.perform_substitution(LaunchConfiguration(name)) for name, _, _ in arguments}
        # the node's params file first: the launch arguments override it
        return [Node(package="inertial_id", executable=name, name=name, output="screen",
                     parameters=[*(str(f) for f in [params_file(name)] if f is not None), node_parameters(name, values)])
                for name in NODES if with_sim or name != "sim_robot"]

    declared = [DeclareLaunchArgument(name, default_value=default_profile if default is None else default,
                                      description=description) for name, default, description in arguments]
    return LaunchDescription(declared + [OpaqueFunction(function=nodes)])
