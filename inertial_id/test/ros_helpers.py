"""Spinning helpers of the integration tests (the ros_env fixture is in conftest.py)."""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from paths import SHARED


# messages the planner tests' status subscription keeps (the planner publishes it at 10 Hz)
STATUS_DEPTH = 1000


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


def node_counters(node, name: str = "regressor_builder", stamps: list | None = None) -> dict:
    """The /diagnostics counters (key -> value) of the node called ``name``, updated as ``node`` spins;
    ``stamps``: each of its messages' stamp (s) is appended there once its counters are in."""
    from diagnostic_msgs.msg import DiagnosticArray

    from inertial_id.core.signals.stamps import stamp_s
    counters = {}

    def on_diagnostics(msg) -> None:
        mine = [s for s in msg.status if s.name.endswith(name)]
        counters.update({v.key: v.value for s in mine for v in s.values})
        if mine and stamps is not None:
            stamps.append(stamp_s(msg.header.stamp))
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    return counters


def diagnostic_counts(node) -> dict:
    """hardware_id -> {counter: int} of every node's /diagnostics (numeric values only), updated as
    ``node`` spins."""
    from diagnostic_msgs.msg import DiagnosticArray
    counts = {}

    def on_diag(msg):
        for st in msg.status:
            counts[st.hardware_id] = {kv.key: int(kv.value) for kv in st.values if kv.value.isdigit()}
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 50)
    return counts


def final_estimate_seen(monitor, samples_used: int):
    """``(seen, predicate)``: the predicate spins ``monitor`` once and holds once the estimate that
    covers ``samples_used`` samples has arrived twice (``seen``: the receive counts it arrived at).
    The estimator runs on the replayed clock: keep it running until the estimate published after
    the last bounds update has arrived."""
    import rclpy
    seen = []

    def predicate() -> bool:
        rclpy.spin_once(monitor, timeout_sec=0.0)
        if monitor.estimate is not None and monitor.estimate.samples_used == samples_used:
            seen.append(monitor.estimates_received)
        return len(set(seen)) >= 2
    return seen, predicate


def require_launch_ros() -> None:
    """launch_ros is not on PyPI: `make test` installs it from ../shared/vendor/ros2_launch. Skip (and
    say so) only when that folder is absent; fail when it is present but was not installed."""
    import importlib.util

    import pytest
    vendor = SHARED / "vendor" / "ros2_launch"
    if importlib.util.find_spec("launch_ros") is None:
        if vendor.is_dir():
            pytest.fail(f"launch_ros is not installed although {vendor} is present: run `make test-deps`")
        pytest.skip(f"launch tests need the ROS 2 launch packages of {vendor}, which is absent")


def start_replay_pipeline(ros_env: dict, log_dir, lossless_inputs: bool = False):
    """regressor_builder and estimator (guaranteed, no state file) as processes on simulated time,
    and a monitor node; returns (processes, monitor) once the nodes listen and publish.
    ``lossless_inputs``: the builder takes reliable sensor streams reliably (keep all)."""
    from inertial_id.core.data import bags
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


def as_trajectory(msg, joint_names):
    """(start stamp s, SampledTrajectory) of a JointTrajectory, columns in ``joint_names`` order."""
    from inertial_id.core.trajectory import SampledTrajectory
    from inertial_id.core.signals.stamps import stamp_s
    order = [list(msg.joint_names).index(j) for j in joint_names]
    t = np.array([stamp_s(p.time_from_start) for p in msg.points])
    col = lambda f: np.array([getattr(p, f) for p in msg.points])[:, order]
    return stamp_s(msg.header.stamp), SampledTrajectory(t, col("positions"), col("velocities"), col("accelerations"))


class FakeArm:
    """Joint states that follow the last command (its stamp says when it starts); commands come on
    the controller topic, or through :meth:`on_command` from a stand-in action server."""

    def __init__(self, node, robot, q0):
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        from inertial_id.nodes.common import RELIABLE_QOS, SENSOR_QOS
        self.node, self.robot = node, robot
        self.q = np.asarray(q0, float)
        self.commands = []
        self.steps = []           # step of the reference when each command after the first arrived
        self.arrived = []         # when each command arrived (node clock, s)
        self.lead_s = float(robot.spec.planner.command_lead_s)
        self.ticks = [self.now()]  # when the arm's timer ran (node clock, s): gaps are this process starved
        self.taken_late = 0       # commands this arm took late because its own process stood still
        self.pub = node.create_publisher(JointState, robot.spec.sensing.joint_states_topic, SENSOR_QOS)
        node.create_subscription(JointTrajectory, robot.spec.controller.topic, self.on_command, RELIABLE_QOS)
        self.publishing = True
        node.create_timer(0.01, self.publish)

    def on_command(self, msg):
        """Take the command (a JointTrajectory); record the step it makes in the reference on arrival
        (a late command makes one). A command that reaches the arm more than the planner's lead after
        its stamp while the arm's own process stood still for longer than that lead (its timer did not
        run: a loaded machine starved this process, as it would starve a controller) is late by no
        fault of the planner's: its step is taken at its stamp, where the planner's command must
        continue the reference, and it is counted in ``taken_late``."""
        t = self.now()
        command = as_trajectory(msg, self.robot.joint_names)
        late = bool(self.commands) and t - command[0] > self.lead_s and self.stood_still(command[0], t)
        at = command[0] if late else t
        before = self.reference(at) if self.commands else None
        self.commands.append(command)
        self.arrived.append(t)
        self.taken_late += late
        if before is not None:
            after = self.reference(at)
            self.steps.append(max(np.max(np.abs(after[0] - before[0])), np.max(np.abs(after[1] - before[1]))))

    def stood_still(self, since: float, until: float) -> bool:
        """The arm's timer stopped for longer than the planner's lead between ``since`` and ``until``."""
        times = [x for x in self.ticks if x >= since - self.lead_s] + [until]
        return len(times) > 1 and float(np.max(np.diff(times))) > self.lead_s

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def reference(self, t):
        from inertial_id.core.trajectory import interpolate
        start, traj = self.commands[-1]
        q, qd, _ = interpolate(traj, [t - start])
        return q[0], qd[0]

    def publish(self):
        from sensor_msgs.msg import JointState

        from inertial_id.nodes.common import s_to_stamp
        t = self.now()
        self.ticks.append(t)
        if not self.publishing:
            return
        qd = np.zeros_like(self.q)
        if self.commands:
            self.q, qd = self.reference(t)
        msg = JointState(name=list(self.robot.joint_names), position=self.q.tolist(), velocity=qd.tolist(),
                         effort=[0.0] * self.robot.nv)
        s_to_stamp(t, msg.header.stamp)
        self.pub.publish(msg)


def call_idempotent(node, client, request, attempts: int = 3, wait_s: float = 10.0):
    """The reply to ``request``, sent again when none came within ``wait_s``: a request sent as the
    service appears can be answered before the server has discovered this client's reply reader, and
    that reply is lost (rmw_cyclonedds issue 74, open). Only for requests that may be served twice."""
    assert spin_until(node, client.service_is_ready, 60.0), "the service never appeared"
    for _ in range(attempts):
        future = client.call_async(request)
        if spin_until(node, future.done, wait_s):
            return future.result()
    raise AssertionError(f"no reply in {attempts} attempts of {wait_s} s")


def call(node, client, timeout=20.0):
    import rclpy
    from std_srvs.srv import Trigger
    # wait while spinning: the fake arm publishes from this node's timer, and a start refuses joint
    # states that went stale while the test waited for the service
    assert spin_until(node, client.service_is_ready, timeout)
    future = client.call_async(Trigger.Request())
    rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
    return future.result()


def planner_test_profile(tmp_path):
    """(profile path, robot, planner settings) of the planner tests: a Gen3 whose prior box lets it
    hold still, and a command lead a test process standing in for the arm can meet."""
    from inertial_id.core.robot.model import load_robot
    from inertial_id.core.robot.profile_edit import write_profile
    from inertial_id.core.planning.config import PlannerSettings
    gen3 = load_robot("kinova_gen3")
    # no estimator runs here, so the box stays the prior one: excite around a pose where holding
    # still with it is certified (leaning back, wrist turned), for a payload known to be light (at most
    # 1.5 kg, first moment a quarter of the profile's): with the robot box, friction and acceleration
    # tube the certifier covers, the wrist actuators cannot hold the Gen3's whole prior still anywhere
    lower, upper = gen3.payload_prior()
    upper[0] = 1.5
    lower[1:4] *= 0.25
    upper[1:4] *= 0.25
    payload = gen3.spec.payload.model_copy(update={"prior_lower": lower.tolist(), "prior_upper": upper.tolist()})
    planner = gen3.spec.planner.model_copy(update={
        "centre": [0.0, -0.4, 0.0, 1.3, 0.0, -0.9, 0.0],
        # this test's process stands in for the arm and may take its commands late on a loaded machine:
        # a longer command lead than a controller needs (the arm not following is a tube breach, rightly)
        "command_lead_s": 0.3,
        # ... taken from the plan's time (command_lead_s + deadline_s stays within replan_s)
        "deadline_s": 1.1, "optimize_s": 0.8, "search_s": 0.95})
    path = tmp_path / "gen3.yaml"
    write_profile(gen3.with_profile(payload=payload, planner=planner).spec, path)
    robot = load_robot(str(path))
    return path, robot, PlannerSettings.from_profile(robot)


@contextmanager
def planner_with_fake_arm(ros_env, tmp_path, **planner_parameters):
    """The planner node as a process (with ``planner_parameters``), and a node of this test standing in
    for the arm: yields (node, arm, status messages, ~/start client, robot, settings)."""
    import rclpy
    from std_srvs.srv import Trigger

    from inertial_id_msgs.msg import ExcitationStatus
    from inertial_id.nodes.launch import start_node_set
    path, robot, settings = planner_test_profile(tmp_path)
    # no estimator here: the planner moves on the prior box without waiting for an estimate
    procs = start_node_set(str(path), ros_env, str(tmp_path), nodes=("excitation_planner",),
                           excitation_planner={"wait_for_estimate": False, **planner_parameters})
    node = rclpy.create_node("planner_test")
    try:
        arm = FakeArm(node, robot, settings.centre)      # at rest where holding still certifies
        status = []
        # deep enough that no status is lost while this process stands still on a loaded machine (at
        # 10 Hz, a depth of 10 kept one second)
        node.create_subscription(ExcitationStatus, "excitation_status", status.append, STATUS_DEPTH)
        topic = robot.spec.controller.topic
        on_topic = planner_parameters.get("command_interface", "topic") == "topic"
        counters = node_counters(node, "excitation_planner")
        # up, and holding joint states: a start is refused until the planner has recent ones (on a
        # loaded machine they arrive well after its status does)
        assert spin_until(node, lambda: len(status) > 0 and (node.count_publishers(topic) >= 1 or not on_topic)
                          and int(counters.get("accepted", 0)) > 0, 90.0), f"planner did not come up; logs in {tmp_path}"
        yield node, arm, status, node.create_client(Trigger, "/excitation_planner/start"), robot, settings
    finally:
        node.destroy_node()
        procs.stop()


def live_estimate_of_bag(launch_file: str, profile: str, robot, bag, offline_result, info: dict, rate: float, ros_env):
    """The last estimate of ``launch_file`` (``robot_profile:=profile use_sim_time:=true``) while
    ``bag`` plays with /clock at ``rate``, once it covers the samples the offline run
    (``offline.estimate_from_bag``'s ``result, info``) used; checked on the way: the builder drops
    exactly what the offline path drops, nothing lost in transport."""
    from inertial_id.core.data import bags
    from inertial_id.nodes.monitor import MonitorNode
    from inertial_id.nodes.replay import replay
    from test_launch import start_launch, stop

    from inertial_id.core.signals.stamps import stamp_s
    proc = start_launch(launch_file, ros_env, f"robot_profile:={profile}", "use_sim_time:=true")
    monitor = MonitorNode()
    builder_stamps: list[float] = []
    builder = node_counters(monitor, stamps=builder_stamps)
    try:
        js_topic = robot.sensing.joint_states_topic
        assert spin_until(monitor, lambda: monitor.count_subscribers(js_topic) >= 1
                          and monitor.count_publishers(bags.ESTIMATE) >= 1, 90.0), "launched nodes not up"
        spin_for(monitor, 3.0)
        seen, final_seen = final_estimate_seen(monitor, offline_result.samples_used)

        def counted() -> bool:
            # the final estimate, and the builder's counters published a diagnostics period (1 s of the
            # replayed clock) after it: its drops are all in (they publish on that clock, which stops
            # with the replay; a run that stopped at the estimate alone once read counters from before
            # the bag's gap on a loaded machine)
            return final_seen() and bool(builder_stamps) and \
                max(builder_stamps) >= stamp_s(monitor.estimate.header.stamp) + 1.0
        counts = replay(bag, rate=rate, tail_s=30.0, stop_when=counted)
        spin_for(monitor, 1.0)
        # e.g. the first broadcaster sample: no wrench before its pair; a sample whose wrench rows are
        # withheld (a possible velocity reversal) is used, and counted by the node as an event
        lost = {k: int(v) for k, v in builder.items()
                if (k.startswith("dropped.") or k == "event.velocity_reversal") and int(v) > 0}
        expected = {("event." if k == "velocity_reversal" else "dropped.") + k: v
                    for k, v in {**info["joint_states_dropped"], **info["sample_counts"]}.items()
                    if k not in ("paired", "interpolated", "accepted") and v > 0}
        assert lost == expected, f"the builder dropped {lost}, offline {expected}"
        assert len(set(seen)) >= 2, f"last live estimate: {monitor.estimate and monitor.estimate.samples_used} " \
                                    f"samples, offline {offline_result.samples_used}"
        return monitor.estimate, counts
    finally:
        monitor.destroy_node()
        stop(proc)


def largest_relative_difference(estimate, result) -> float:
    """Largest difference of the bounds of an Estimate message and an offline result, relative to
    each parameter's largest bound magnitude."""
    lo, hi = np.asarray(estimate.lower), np.asarray(estimate.upper)
    scale = np.maximum(np.abs(np.stack([lo, hi, result.lower, result.upper])).max(axis=0), 1e-12)
    return float(np.max(np.abs(np.r_[lo - result.lower, hi - result.upper]) / np.r_[scale, scale]))


def signalled_demo(args: list[str], sig, when: str, within_s: float,
                   stop_within_s: float) -> tuple[bool, int | None, str]:
    """``inertial-id demo ARGS`` sent ``sig`` once a line of its output matches ``when`` (or after
    ``within_s``): (whether that line came, its exit code, None if it still ran ``stop_within_s``
    later, its output). The demo and its nodes form their own process group, killed should the demo
    not end (a demo killed alone leaves its nodes running, and the rest of the suite beside them)."""
    import os
    import signal
    import subprocess
    import sys

    from test_launch import Output
    proc = subprocess.Popen([sys.executable, "-m", "inertial_id.cli", "demo", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    output = Output(proc)
    try:
        came = output.wait_for(when, within_s)
        proc.send_signal(sig)
        try:
            code = proc.wait(timeout=stop_within_s)
        except subprocess.TimeoutExpired:
            code = None                  # still running: its output says where
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return came, code, output.text()


def assert_demo_stopped(code: int | None, out: str, sig, ending: str) -> None:
    """A demo stopped by ``sig``: exit code 0, its last line says so and ends with ``ending``, and its
    output holds no traceback, FATAL or /rosout failure."""
    from test_launch import UNCLEAN
    assert code == 0, out[-3000:]
    assert out.strip().splitlines()[-1] == \
        f"inertial-id demo: stopped by {sig.name} before the result; {ending}", out[-3000:]
    for word in UNCLEAN:
        assert word not in out, out[-3000:]
