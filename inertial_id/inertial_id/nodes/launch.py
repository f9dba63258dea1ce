"""Start the node set of a robot profile as processes — what ``ros2 launch`` does from
``launch/*.launch.py`` on a ROS install; used where launch_ros is absent (PyPI wheels)."""
from __future__ import annotations

import atexit
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..defaults import SIM_ENGINES
from ..share import config_dirs


DOMAINS_ENV = "INERTIAL_ID_ROS_DOMAINS"
NODES = ("sim_robot", "regressor_builder", "estimator", "excitation_planner", "payload_compensator")
TAIL_LINES = 30         # lines of each node's output kept to say why it exited
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")    # the last line of a traceback
# How long a stopped node may take to finish after its SIGINT before it is killed: a node stops within
# a second or two; a machine loaded many times over its cores has taken over 10 s.
STOP_TIMEOUT_S = 30.0


class StopSignals:
    """SIGINT and SIGTERM, each time they come, as a request to stop: the first one's name in
    :attr:`signal`, never an exception (no KeyboardInterrupt in the middle of a shutdown, however many
    signals arrive: a Ctrl-C at a terminal reaches the launcher and each node). Installed over whatever
    was there (a background job of a shell starts with SIGINT ignored), from the main thread only (the
    one Python runs handlers in; elsewhere nothing is installed); :meth:`restore` puts it back."""

    NUMBERS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signal: str | None = None
        self._previous = {}
        if threading.current_thread() is threading.main_thread():      # where Python runs signal handlers
            self._previous = {number: signal.signal(number, self._received) for number in self.NUMBERS}

    def _received(self, number, frame) -> None:
        self.signal = self.signal or signal.Signals(number).name

    def restore(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)


def domain_range() -> tuple[int, int]:
    """The ``ROS_DOMAIN_ID`` values (inclusive) a self-contained run picks from: ``$DOMAINS_ENV``
    (``first-last``), else 1-100. Sets of runs on one host (e.g. parallel test workers) stay apart
    by taking disjoint ranges."""
    text = os.environ.get(DOMAINS_ENV, "1-100")
    try:
        first, last = (int(x) for x in text.split("-"))
    except ValueError:
        raise ValueError(f"{DOMAINS_ENV}={text!r}: expected first-last, e.g. 1-100") from None
    if not 0 <= first <= last <= 232:       # ROS 2's largest domain id
        raise ValueError(f"{DOMAINS_ENV}={text!r}: expected 0 <= first <= last <= 232")
    return first, last


def params_file(node: str) -> Path | None:
    """``params/<node>.yaml`` of the first config directory that has it (None: none has)."""
    return next((d / "params" / f"{node}.yaml" for d in config_dirs() if (d / "params" / f"{node}.yaml").is_file()),
                None)


def isolated_ros_env(domain_id: int | None = None) -> dict:
    """Environment for a self-contained run: a DDS domain of its own and discovery on this host only
    (nothing leaves loopback), unless the caller's environment already chose; and a ROS_HOME of its
    own, so that no state a node saves (the estimator's box) carries over from another run; it is
    removed when this process exits (the runs it serves are this process's children)."""
    ros_home = tempfile.mkdtemp(prefix="inertial_id_ros_home_")
    atexit.register(shutil.rmtree, ros_home, ignore_errors=True)
    env = dict(os.environ, ROS_HOME=ros_home)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    elif "ROS_DOMAIN_ID" not in os.environ:
        env["ROS_DOMAIN_ID"] = str(random.randint(*domain_range()))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class NodeProcesses:
    """Running node processes; :meth:`stop` sends SIGINT and kills what has not finished in time. With
    ``echo``, each node's output goes to this process's stdout line by line, prefixed with
    ``[<node>-<n>]`` as ``ros2 launch`` does, and its last lines are kept (:meth:`last_words`)."""

    procs: dict = field(default_factory=dict)
    echo: bool = False
    tails: dict = field(default_factory=dict)
    pumps: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)      # node -> "<node>-<n>"

    def start(self, node: str, parameters: dict, env: dict, log_dir: str | None = None) -> None:
        args = [sys.executable, "-m", "inertial_id.nodes.entry", node, "--ros-args"]
        defaults = params_file(node)
        if defaults is not None:        # first: the -p that follow override it, as in the launch files
            args += ["--params-file", str(defaults)]
        for k, v in parameters.items():
            args += ["-p", f"{k}:={v}"]
        self.labels[node] = f"{node}-{len(self.procs) + 1}"
        if self.echo:
            proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
            self.tails[node] = deque(maxlen=TAIL_LINES)
            prefix = f"[{self.labels[node]}]"
            self.pumps[node] = threading.Thread(target=self._pump, args=(proc, prefix, self.tails[node]), daemon=True)
            self.pumps[node].start()
            print(f"[INFO] [launch]: {self.labels[node]} started with pid [{proc.pid}]", flush=True)
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
        # a long traceback's first line may have left the tail: its frames ('File "...') still say it is one
        if any(ln.startswith(("Traceback", 'File "')) for ln in lines):
            return next((ln for ln in reversed(lines) if EXCEPTION_LINE.match(ln)), lines[-1])
        return lines[-1] if lines else ""

    def dead(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> dict:
        """SIGINT to each node still running (a node stops on it: :func:`inertial_id.nodes.common.run_node`),
        SIGKILL to those not finished ``timeout_s`` later. Returns node -> exit code of the nodes it
        stopped (None: killed); with ``echo``, says how each one ended, after its last output."""
        running = {n: p for n, p in self.procs.items() if p.poll() is None}
        for p in running.values():
            p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        codes = {}
        for node, p in running.items():
            try:
                codes[node] = p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                codes[node] = None
        for node in running:
            if node in self.pumps:
                self.pumps[node].join(timeout=5.0)      # until the node's output ends
            if self.echo:
                print(self.ending(node, codes[node], timeout_s), flush=True)
        return codes

    def ending(self, node: str, code: int | None, timeout_s: float = STOP_TIMEOUT_S) -> str:
        """How a node ended, in a line as ``ros2 launch`` says it."""
        label, pid = self.labels.get(node, node), self.procs[node].pid
        if code is None:
            return f"[ERROR] [launch]: {label} did not finish within {timeout_s:g} s of its SIGINT: killed [pid {pid}]"
        if code == 0:
            return f"[INFO] [launch]: {label} process has finished cleanly [pid {pid}]"
        return f"[ERROR] [launch]: {label} process has died [pid {pid}, exit code {code}]"


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
SIM_ARGUMENTS = (("payload", "", "payload of the simulated arm, config/payloads.yaml (empty: the profile's)"),
                 ("engine", "", f"physics of the simulated arm, {' or '.join(SIM_ENGINES)} (empty: {SIM_ENGINES[0]}, the "
                                "estimator's own model; on mujoco an arm that senses joint torque needs a profile "
                                "naming a calibration)"))


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
                "sim_robot": ("joint_states_topic", "wrench_topic", "wrench_frame_id", "payload", "engine")}
    sim_time = values.get("use_sim_time", "false").lower() in ("true", "1")
    # the simulated arm is the source of /clock, never its follower
    out = {"robot_profile": values["robot_profile"], "use_sim_time": sim_time and node != "sim_robot"}
    if node == "sim_robot":
        out["publish_clock"] = sim_time
    out.update({k: values[k] for k in per_node.get(node, ()) if values.get(k)})
    return out
