"""Launch files under a real LaunchService (launch + launch_ros from ../shared/vendor/ros2_launch),
through ``inertial-id launch``: the simulated arm with each robot, and the hardware launch files with
the simulator standing in for the real driver (its topics, rates, extra joints and frame names)."""
import ast
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from inertial_id.core.robot.model import load_robot

from paths import PACKAGE
from ros_helpers import diagnostic_counts, require_launch_ros, spin_until

pytestmark = pytest.mark.ros

LAUNCH_FILES = ["sim.launch.py", "kinova_gen3.launch.py", "xarm7.launch.py", "digit.launch.py"]


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_launch_file_is_one_call_to_the_shared_description(name):
    """Each file states only its profile and whether the simulator runs (what `inertial-id launch`
    reads when launch_ros is absent); robot facts live in the profile."""
    from inertial_id.cli.launch import declared_node_set
    profile, with_sim = declared_node_set(PACKAGE / "launch" / name)
    load_robot(profile)
    assert with_sim is (name == "sim.launch.py")
    tree = ast.parse((PACKAGE / "launch" / name).read_text())
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["generate_launch_description"]


def test_cmake_installs_an_executable_per_node():
    from inertial_id.nodes.launch import NODES
    cmake = (PACKAGE / "CMakeLists.txt").read_text()
    assert f"foreach(NODE {' '.join(NODES)})" in cmake


def start_launch(name: str, env: dict, *arguments: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inertial_id.cli", "launch", name, *arguments], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop(proc: subprocess.Popen, sig=signal.SIGINT, timeout_s: float = 30.0) -> tuple[int, str]:
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"did not shut down within {timeout_s} s:\n{out[-3000:]}")
    return proc.returncode, out


# What a stop must never print: a traceback, rclpy's events executor on a callback that raised
# ("[FATAL] ... Exception in 'subscriptions' callback"), a log line that could not reach /rosout
# because the context was already down ("Failed to publish log message to rosout").
UNCLEAN = ("Traceback", "FATAL", "rosout")


def assert_stopped_cleanly(code: int, out: str, nodes) -> None:
    """Exit code 0, none of :data:`UNCLEAN`, and each node's last log line saying it finished (its
    output prefixed ``[<node>-<n>]`` by the launcher) followed by the launcher saying so too."""
    assert code == 0, out[-4000:]
    for word in UNCLEAN:
        assert word not in out, f"{word!r} in the output:\n{out[-4000:]}"
    for node in nodes:
        assert re.search(rf"^\[{node}-\d+\] \[INFO\] \[[\d.]+\] \[{node}\]: finished \(SIG(INT|TERM)\)$", out, re.M), \
            f"{node} did not say it finished:\n{out[-4000:]}"
        # ros2 launch's words ([INFO] [<node>-<n>]: ...), or the process launcher's ([INFO] [launch]: <node>-<n> ...)
        assert re.search(rf"^\[INFO\] \[(launch\]: {node}-\d+|{node}-\d+\]:) process has finished cleanly", out, re.M), \
            f"the launcher did not say {node} finished cleanly:\n{out[-4000:]}"


def wait_until_each_node_spins(proc: subprocess.Popen, nodes, timeout_s: float) -> set:
    """Spin a node of this test until each of ``nodes`` has published /diagnostics (its executor
    spins: the DropCounter timer of every node publishes each second) or ``proc`` ended; the nodes
    seen."""
    import rclpy
    watch = rclpy.create_node("stop_watch")
    counts = diagnostic_counts(watch)
    try:
        spin_until(watch, lambda: set(nodes) <= set(counts) or proc.poll() is not None, timeout_s)
    finally:
        watch.destroy_node()
    return set(counts)


class Output:
    """A process's output (text, stdout with stderr), read by a thread as it comes, so that a test
    can wait for a line (:meth:`wait_for`) instead of for a fixed time."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self.ended = False
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout_s: float) -> bool:
        """Whether a line matching ``pattern`` (re.search) came within ``timeout_s``."""
        seen = 0
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                if any(re.search(pattern, line) for line in self.lines[seen:]):
                    return True
                seen = len(self.lines)
                if self.ended or not self._changed.wait(timeout=max(0.0, deadline - time.monotonic())):
                    return any(re.search(pattern, line) for line in self.lines[seen:])

    def text(self, timeout_s: float = 30.0) -> str:
        """All of it, once the process has closed its output (or after ``timeout_s``)."""
        self._reader.join(timeout=timeout_s)
        with self._changed:
            return "".join(self.lines)


@pytest.mark.parametrize("robot", ["kinova_gen3", "xarm7"])
def test_sim_launch_publishes_estimates_and_shuts_down_cleanly(robot, ros_env):
    require_launch_ros()
    from inertial_id.nodes.monitor import MonitorNode
    proc = start_launch("sim.launch.py", ros_env, f"robot_profile:={robot}")
    monitor = MonitorNode()
    try:
        got = spin_until(monitor, lambda: monitor.estimates_received >= 3 and proc.poll() is None, 90.0)
    finally:
        monitor.destroy_node()
        code, out = stop(proc)
    assert got, f"no estimates from the launched nodes:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert code == 0, out[-3000:]
    for node in ("sim_robot", "regressor_builder", "estimator", "excitation_planner", "payload_compensator"):
        assert f"[{node}-" in out, f"{node} was not started by the LaunchService"


def start_simulated_driver(robot: str, env: dict, **parameters) -> subprocess.Popen:
    args = [sys.executable, "-m", "inertial_id.nodes.entry", "sim_robot", "--ros-args", "-p", f"robot_profile:={robot}"]
    for k, v in parameters.items():
        args += ["-p", f"{k}:={v}"]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


# "Identified": the guaranteed mass interval shrank from the 5.2 kg prior to below this (typically
# 0.5-0.6 kg after a minute of certified excitation on the Gen3, far less with the xArm's F/T sensor).
# the box's mass width the test waits for, and the point estimate's relative mass error then: the
# xArm7's F/T offset is an unknown of the run, which the first (mostly static) rows do not separate
# from the mass, so its early point estimate is looser (measured: 14 % at 1.0 kg wide)
MASS_WIDTH_KG = {"kinova_gen3": 1.0, "xarm7": 0.6}
MASS_ERROR = {"kinova_gen3": 0.02, "xarm7": 0.15}


# The drivers as they publish: ros2_kortex /joint_states at 1 kHz with the Robotiq 2F-85 gripper's
# joint first; xarm_ros2 the external F/T wrench on /xarm/uf_ftsensor_ext_states in frame
# uf_ft_sensor_ext_data (both from the profiles: the launch files take no robot-specific argument).
@pytest.mark.parametrize("robot, driver, expect", [
    ("kinova_gen3", {"extra_joints": "robotiq_85_left_knuckle_joint"},
     {"joint_states_hz": 1000.0, "wrench_topic": None}),
    ("xarm7", {}, {"wrench_topic": "/xarm/uf_ftsensor_ext_states", "wrench_frame_id": "uf_ft_sensor_ext_data"}),
])
def test_hardware_launch_identifies_the_payload_from_the_driver_topics(robot, driver, expect, ros_env):
    require_launch_ros()
    sensing = load_robot(robot).sensing
    for key, value in expect.items():
        if value is not None:
            assert getattr(sensing, key) == value
    from std_srvs.srv import Trigger
    from inertial_id.nodes.monitor import MonitorNode
    sim = start_simulated_driver(robot, ros_env, **driver)
    proc = start_launch(f"{robot}.launch.py", ros_env)
    monitor = MonitorNode()
    try:
        client = monitor.create_client(Trigger, "/excitation_planner/start")
        assert client.wait_for_service(timeout_sec=60.0), "planner start service not offered"
        spin_until(monitor, lambda: monitor.status is not None, 30.0)
        assert monitor.status.state in ("idle", "planning"), "the arm must not move before the start call"
        def start(refusals: tuple[str, ...]):
            """Ask for a start until it is accepted, as an operator would, while the planner refuses
            for one of ``refusals`` (within 60 s)."""
            deadline = time.monotonic() + 60.0
            while True:
                future = client.call_async(Trigger.Request())
                assert spin_until(monitor, future.done, 30.0), "no answer from the start service"
                if future.result().success or time.monotonic() > deadline:
                    break
                assert any(r in future.result().message for r in refusals), future.result()
                spin_until(monitor, lambda: False, 1.0)
            assert future.result().success, future.result()

        def narrow() -> bool:
            return monitor.estimate is not None and monitor.truth is not None and \
                monitor.estimate.upper[0] - monitor.estimate.lower[0] < MASS_WIDTH_KG[robot]
        # refused until the planner has recent joint states (the driver may still be coming up)
        start(("joint states",))
        t0 = time.monotonic()
        restarts = 0
        # a motion braked on a tracking error beyond its certified tube (the simulated driver starved
        # of CPU on a loaded machine) ends failed, and the box its rows leave may be wide: the operator
        # starts again once the arm is at rest
        while spin_until(monitor, lambda: narrow() or monitor.status.state == "failed", 150.0 - (time.monotonic() - t0)) \
                and not narrow() and restarts < 3:
            restarts += 1
            start(("moving", "joint states"))
            spin_until(monitor, lambda: monitor.status.state != "failed", 30.0)
        est, truth = monitor.estimate, monitor.truth
        elapsed = time.monotonic() - t0
    finally:
        monitor.destroy_node()
        code, out = stop(proc)
        sim_code, sim_out = stop(sim)
    assert est is not None and truth is not None, out[-3000:]
    x, lo, hi, t = (np.asarray(v) for v in (est.estimate, est.lower, est.upper, truth.estimate))
    assert est.bounds_guaranteed and est.data_consistent
    assert np.all((t >= lo) & (t <= hi)), f"truth outside bounds: {t} vs [{lo}, {hi}]"
    assert hi[0] - lo[0] < MASS_WIDTH_KG[robot], \
        f"mass interval still {hi[0] - lo[0]:.2f} kg wide after {elapsed:.0f} s and {restarts} restarts: {out[-3000:]}"
    assert abs(x[0] - t[0]) / t[0] < MASS_ERROR[robot]
    assert code == 0 and sim_code == 0 and "Traceback" not in out + sim_out, (out + sim_out)[-3000:]


# What the venv of the ROS-install route brings and the interpreter of `ros2 launch` (/usr/bin/python3
# there) lacks, or has in another major version (apt's pydantic is 1.x on Ubuntu 22.04 and 24.04).
VENV_ONLY = ("pydantic", "pinocchio", "scipy", "casadi", "cvxpy", "clarabel", "highspy", "mujoco", "rosbags",
             "trimesh", "matplotlib", "dask")
FORM_NODES = """
import sys
from launch import LaunchContext
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.launch_description_sources import get_launch_description_from_python_launch_file
for name in sys.argv[2:]:
    sys.modules[name] = None        # importing it raises ImportError
context = LaunchContext()
nodes = []
for entity in get_launch_description_from_python_launch_file(sys.argv[1]).entities:
    if isinstance(entity, DeclareLaunchArgument):
        entity.visit(context)       # the argument's default into the context
    elif isinstance(entity, OpaqueFunction):
        nodes += entity.visit(context)
print(len(nodes), "nodes")
"""


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_the_launch_files_need_nothing_of_the_venv(name):
    """Each launch file forms its node actions (profile and params files found) with every package of
    :data:`VENV_ONLY` blocked: it runs in the interpreter of ``ros2 launch`` on a ROS install, where
    only the nodes run in the route's venv (their executables name its interpreter)."""
    require_launch_ros()
    done = subprocess.run([sys.executable, "-c", FORM_NODES, str(PACKAGE / "launch" / name), *VENV_ONLY],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = 5 if name == "sim.launch.py" else 4
    assert done.stdout.split() == [str(expected), "nodes"], done.stdout + done.stderr[-3000:]


NODES = ["sim_robot", "regressor_builder", "estimator", "excitation_planner", "payload_compensator"]
SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("node", NODES)
def test_a_signal_ends_each_node_with_exit_0_and_no_traceback(node, sig, ros_env):
    """The signal twice, as a Ctrl-C at a terminal reaches a launched node: from the terminal and from
    the launcher. rclpy's own handling raised KeyboardInterrupt for each SIGINT, the second one inside
    ``destroy_node``."""
    proc = subprocess.Popen([sys.executable, "-m", "inertial_id.nodes.entry", node, "--ros-args",
                             "-p", "robot_profile:=kinova_gen3"], env=ros_env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = wait_until_each_node_spins(proc, [node], 120.0)
    if node not in seen:
        proc.kill()
        pytest.fail(f"{node} did not come up:\n{proc.communicate()[0][-3000:]}")
    proc.send_signal(sig)
    code, out = stop(proc, sig)
    assert code == 0, out[-3000:]
    for word in UNCLEAN:
        assert word not in out, out[-3000:]
    assert re.search(rf"\[{node}\]: finished \({sig.name}\)$", out, re.M), out[-3000:]


# A node whose interpreter teardown would never end: an exit handler that waits forever stands in
# for a native library's teardown that hangs (CI, Jazzy: an estimator 20 s past its last log line)
HANGS_AT_EXIT = """
import atexit, threading
from rclpy.node import Node
from inertial_id.nodes.common import run_node
atexit.register(threading.Event().wait)
class Idle(Node):
    def __init__(self):
        super().__init__("idle")
        self.get_logger().info("spinning")
run_node(Idle, args=["idle"])
"""


def test_a_stopped_node_ends_without_the_interpreter_teardown(ros_env):
    """After the node said it finished, nothing is left that the teardown would do: the process ends
    with exit 0 at once, however long the teardown would take."""
    proc = subprocess.Popen([sys.executable, "-c", HANGS_AT_EXIT], env=ros_env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    early = []
    for line in proc.stdout:
        early.append(line)
        if "spinning" in line:
            break
    code, out = stop(proc)
    out = "".join(early) + out
    assert code == 0, out[-3000:]
    assert re.search(r"\[idle\]: finished \(SIGINT\)$", out, re.M), out[-3000:]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_a_node_starts_ends_it_with_exit_0_and_no_traceback(sig, ros_env):
    """The signal while the node's module is still importing (seconds on a loaded machine): sent when
    ``-X importtime`` reports numpy imported, which the planner needs long before its handlers are
    in place. Before: a KeyboardInterrupt traceback from inside an import."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "inertial_id.nodes.entry", "excitation_planner",
                             "--ros-args", "-p", "robot_profile:=kinova_gen3"], env=ros_env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    early = []
    for line in proc.stdout:
        early.append(line)
        if line.rstrip().endswith("| numpy"):
            break
    code, out = stop(proc, sig)
    out = "".join(early) + out
    assert code == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert f"stopped by {sig.name} while starting" in out, out[-3000:]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("mode", ["launch_service", "processes"])
def test_a_signal_to_the_launch_stops_every_node_cleanly(mode, sig, ros_env):
    """``inertial-id launch sim.launch.py`` in either mode, stopped once every node spins: exit code 0,
    no traceback, no FATAL, no /rosout failure, and each node says it finished. (Before: the
    LaunchService passed a SIGINT on to no node and a SIGTERM ended it with the nodes left running;
    the events-executor nodes logged FATAL on a callback that the signal interrupted.)"""
    if mode == "launch_service":
        require_launch_ros()
    proc = start_launch("sim.launch.py", ros_env, *(["--processes"] if mode == "processes" else []))
    seen = wait_until_each_node_spins(proc, NODES, 180.0)
    started = time.monotonic()
    code, out = stop(proc, sig, timeout_s=120.0)
    print(f"stopped in {time.monotonic() - started:.1f} s")
    assert set(NODES) <= seen, f"not up: {sorted(set(NODES) - seen)}\n{out[-4000:]}"
    assert_stopped_cleanly(code, out, NODES)


def test_a_bad_profile_stops_a_node_with_one_line_naming_the_field(tmp_path, ros_env):
    text = (PACKAGE / "config" / "robots" / "kinova_gen3.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("torque: [39.0, 39.0, 39.0, 39.0, 9.0, 9.0, 9.0]", "torque: [39.0, 39.0]"))
    env = dict(ros_env, INERTIAL_ID_CONFIG=str(PACKAGE / "config"))
    proc = subprocess.run([sys.executable, "-m", "inertial_id.nodes.entry", "estimator", "--ros-args",
                           "-p", f"robot_profile:={bad}"], env=env, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "limits.torque" in lines[0] and "7" in lines[0]


def test_without_launch_ros_the_declared_node_set_runs_as_processes(ros_env):
    """What `inertial-id launch` does on a pure wheel install (launch_ros is not on PyPI)."""
    from inertial_id.nodes.monitor import MonitorNode
    code = ("import sys; from pathlib import Path; from inertial_id.cli.launch import run_embedded; "
            f"sys.exit(run_embedded(Path({str(PACKAGE / 'launch' / 'sim.launch.py')!r}), {{'robot_profile': 'xarm7'}}))")
    proc = subprocess.Popen([sys.executable, "-c", code], env=ros_env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    monitor = MonitorNode()
    try:
        got = spin_until(monitor, lambda: monitor.estimates_received >= 2 and proc.poll() is None, 90.0)
    finally:
        monitor.destroy_node()
        code, out = stop(proc, signal.SIGTERM)
    assert got and code == 0 and "Traceback" not in out, out[-3000:]
