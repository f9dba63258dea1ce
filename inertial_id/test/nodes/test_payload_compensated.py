"""Over DDS, the simulated xArm7 (no contact) running the profile's Fourier excitation and the node
processes regressor_builder, estimator and payload_compensator: once the payload is identified, every
compensated wrench sample, moving and held still, is inside the bound published with it, bad input is
dropped and counted, and ``inertia`` carries the estimate."""
import time

import numpy as np
import pytest

pytestmark = pytest.mark.ros

ROBOT = "xarm7"
EXCITATION_S = 12.0
HELD_S = 5.0
# a bound this wide on the force says little: the identification must have narrowed the box first
# (from the 5.2 kg prior's ~50 N; the box's share, the unknown F/T offset's 0.5 N and the
# differentiated acceleration's error leave ~2-4 N once identified)
IDENTIFIED_FORCE_BOUND_N = 5.0


def test_compensated_wrench_stays_inside_its_bound_after_identification(ros_env, tmp_path):
    import rclpy
    from geometry_msgs.msg import InertiaStamped, WrenchStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Header
    from trajectory_msgs.msg import JointTrajectory

    from inertial_id.cli.demo import wait_for_graph
    from inertial_id.core.robot import params
    from inertial_id.core.data import topics
    from inertial_id.core.robot.model import load_robot
    from inertial_id_msgs.msg import InertialEstimate
    from inertial_id.core.signals.stamps import stamp_s
    from inertial_id.nodes.common import KEPT_QOS, RELIABLE_QOS, SENSOR_QOS
    from inertial_id.nodes.launch import start_node_set
    from ros_helpers import diagnostic_counts, spin_until

    robot = load_robot(ROBOT)
    sim_time = {"use_sim_time": True}
    procs = start_node_set(ROBOT, ros_env, str(tmp_path),
                           nodes=("regressor_builder", "estimator", "payload_compensator"),
                           regressor_builder=sim_time, payload_compensator=sim_time,
                           estimator={"method": "guaranteed", "state_file": "none", **sim_time})
    node = rclpy.create_node("compensation_check")
    values, bounds, speed, estimates, inertias = {}, {}, {}, [], []
    key = lambda m: round(stamp_s(m.header.stamp), 6)
    as_array = lambda m: np.array([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z,
                                   m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z])
    frames = set()

    def on_value(m):
        values[key(m)] = as_array(m)
        frames.add(m.header.frame_id)
    node.create_subscription(WrenchStamped, topics.WRENCH_COMPENSATED, on_value, RELIABLE_QOS)
    node.create_subscription(WrenchStamped, topics.WRENCH_COMPENSATED + "_bound",
                             lambda m: bounds.__setitem__(key(m), as_array(m)), RELIABLE_QOS)
    node.create_subscription(JointState, robot.sensing.joint_states_topic,
                             lambda m: speed.__setitem__(key(m), float(np.max(np.abs(m.velocity)))), SENSOR_QOS)
    node.create_subscription(InertialEstimate, topics.relative(topics.ESTIMATE), estimates.append, KEPT_QOS)
    node.create_subscription(InertiaStamped, topics.relative(topics.INERTIA), inertias.append, KEPT_QOS)
    command = node.create_publisher(JointTrajectory, robot.spec.controller.topic, RELIABLE_QOS)
    counts = diagnostic_counts(node)
    bad_wrench = node.create_publisher(WrenchStamped, robot.sensing.wrench_topic, SENSOR_QOS)
    bad_joints = node.create_publisher(JointState, robot.sensing.joint_states_topic, SENSOR_QOS)
    try:
        deadline = time.monotonic() + 90.0
        wait_for_graph(node, procs, topics.ROWS, 1, deadline, str(tmp_path))
        wait_for_graph(node, procs, topics.WRENCH_COMPENSATED, 1, deadline, str(tmp_path))
        # the simulated arm starts once the builder, the compensator and this test listen
        procs.start("sim_robot", {"robot_profile": ROBOT, "publish_clock": True, "wait_for_joint_state_subscribers": 3,
                                  "wait_for_wrench_subscribers": 2}, ros_env, str(tmp_path))
        assert spin_until(node, lambda: command.get_subscription_count() >= 1 and speed, 60.0), procs.dead()
        # the profile's Fourier excitation from home (where the simulated arm starts), then held still
        command.publish(excitation_command(robot, EXCITATION_S))
        t_start = max(speed)
        # until the compensator's output (not only the arm) has reached the end: a loaded machine delays it
        end = t_start + EXCITATION_S + HELD_S
        assert spin_until(node, lambda: (values and max(values) > end) or procs.dead(), 300.0), \
            f"the arm reached {max(speed) - t_start:.1f} s, the output {max(values, default=0) - t_start:.1f} s"
        # bad input is dropped and counted, the node keeps running
        for _ in range(3):
            bad_wrench.publish(WrenchStamped(header=Header(frame_id="elsewhere")))
            bad_joints.publish(JointState(name=list(robot.joint_names), position=[0.0] * 7,
                                          velocity=[float("nan")] * 7))
        dropped = lambda: counts.get("payload_compensator", {})
        assert spin_until(node, lambda: dropped().get("dropped.wrench_wrong_frame", 0) >= 3
                          and dropped().get("dropped.non_finite", 0) >= 3, 60.0), counts
        assert procs.dead() == [], procs.dead()
    finally:
        node.destroy_node()
        procs.stop()

    assert frames == {robot.wrench_frame_id}
    # the estimator's inertia topic carries the estimate (same stamp): the last estimate whose inertia
    # arrived before the nodes were stopped (the newest one's may still have been on its way)
    stamp = lambda m: (m.header.stamp.sec, m.header.stamp.nanosec)
    with_inertia = [e for e in estimates if stamp(e) in {stamp(i) for i in inertias}]
    assert with_inertia and len(with_inertia) >= len(estimates) - 1
    final = with_inertia[-1]
    truth_inside = np.all((np.array(final.lower) <= truth()) & (truth() <= np.array(final.upper)))
    assert final.bounds_guaranteed and final.data_consistent and truth_inside
    same = [i for i in inertias if stamp(i) == stamp(final)]
    assert same[-1].header.frame_id == robot.payload_frame
    i = same[-1].inertia
    got = params.params_from_com(i.m, [i.com.x, i.com.y, i.com.z],
                                 [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
    assert np.allclose(got, final.estimate, rtol=1e-9, atol=1e-12)

    # every sample published with a bound, after identification narrowed it
    paired = sorted(t for t in bounds if t in values and t in speed)
    identified = [t for t in paired if np.max(bounds[t][:3]) < IDENTIFIED_FORCE_BOUND_N]
    assert len(paired) > 500 and len(identified) > 200, (len(paired), len(identified))
    report = {}
    for moving in (True, False):
        ts = [t for t in identified if (speed[t] > 0.05) is moving]
        assert len(ts) > 100, (moving, len(ts))
        ratio = np.array([np.abs(values[t]) / bounds[t] for t in ts])
        report["moving" if moving else "held still"] = (len(ts), float(ratio.max()),
                                                        float(np.median([np.max(bounds[t][:3]) for t in ts])))
        assert ratio.max() <= 1.0, (moving, ratio.max())
    for name, (n, ratio, force_bound) in report.items():
        print(f"{name}: {n} samples, max |residual| / bound = {ratio:.3f}, median force bound {force_bound:.3f} N")
    # all samples with a bound, the early wide ones included
    assert max(np.max(np.abs(values[t]) / bounds[t]) for t in paired) <= 1.0


def excitation_command(robot, seconds: float):
    """The profile's Fourier excitation from home (where the simulated arm starts) as a JointTrajectory
    starting on arrival, at the profile's point rate; the arm holds its end (home) afterwards."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from inertial_id.core.trajectory import excitation_from_profile
    traj, limits = excitation_from_profile(robot, seconds)
    assert limits.ok
    traj = traj.resample(float(robot.spec.excitation.point_hz))
    at = lambda t: Duration(**dict(zip(("sec", "nanosec"), divmod(int(round(t * 1e9)), 10**9))))
    return JointTrajectory(joint_names=list(robot.joint_names), points=[
        JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist(),
                             time_from_start=at(t)) for t, q, qd, qdd in zip(traj.t, traj.q, traj.qd, traj.qdd)])


def truth():
    """The simulated arm's payload (the profile's payload.sim)."""
    from inertial_id.core.robot.model import load_profile, payload_params
    return payload_params(load_profile(ROBOT)["payload"]["sim"])


def test_gen3_external_effort_stays_inside_its_bound_over_dds(ros_env, tmp_path):
    """The simulated Gen3 (joint torque sensors, 1 kHz, wrapped joints and a gripper joint as
    ros2_kortex publishes them) and the payload_compensator process; this test stands in for the
    estimator with a guaranteed box around the payload: every external-effort sample, moving and
    held still, is inside its bound; once the box is no longer guaranteed no bound goes out."""
    import rclpy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from inertial_id.core.robot import params
    from inertial_id.core.data import topics
    from inertial_id.core.robot.model import load_robot, payload_params
    from inertial_id_msgs.msg import InertialEstimate
    from inertial_id.core.signals.stamps import stamp_s
    from inertial_id.nodes.common import KEPT_QOS, RELIABLE_QOS, SENSOR_QOS
    from inertial_id.nodes.launch import start_node_set
    from ros_helpers import spin_until

    robot = load_robot("kinova_gen3")
    truth = payload_params(robot.spec.payload.sim)
    procs = start_node_set("kinova_gen3", ros_env, str(tmp_path), nodes=("payload_compensator",),
                           payload_compensator={"use_sim_time": True})
    node = rclpy.create_node("external_effort_check")
    values, bounds, speed = {}, {}, {}
    newest = {"value": -np.inf, "bound": -np.inf}      # stamps (s), kept as they arrive
    key = lambda m: round(stamp_s(m.header.stamp), 6)

    def keep(into, which):
        def on_message(m):
            t = key(m)
            into[t] = np.array(m.effort)
            newest[which] = max(newest[which], t)
        return on_message
    node.create_subscription(JointState, topics.EXTERNAL_EFFORT, keep(values, "value"), RELIABLE_QOS)
    node.create_subscription(JointState, topics.EXTERNAL_EFFORT + "_bound", keep(bounds, "bound"), RELIABLE_QOS)
    arm = list(robot.joint_names)
    node.create_subscription(JointState, robot.sensing.joint_states_topic, lambda m: speed.__setitem__(
        key(m), max(abs(m.velocity[list(m.name).index(j)]) for j in arm)), SENSOR_QOS)
    half = 0.01 * (1 + np.abs(truth))
    estimate = InertialEstimate(body="payload", method="stand-in", parameter_names=params.parameter_names("payload"),
                                estimate=(truth + 0.3 * half).tolist(), lower=(truth - half).tolist(),
                                upper=(truth + half).tolist(), bounds_guaranteed=True, offset_checked=True,
                                data_consistent=True)
    estimate.header.frame_id = robot.payload_frame
    estimates = node.create_publisher(InertialEstimate, topics.relative(topics.ESTIMATE), KEPT_QOS)
    estimates.publish(estimate)
    command = node.create_publisher(JointTrajectory, robot.spec.controller.topic, RELIABLE_QOS)
    try:
        assert spin_until(node, lambda: node.count_subscribers(robot.sensing.joint_states_topic) >= 2
                          or procs.dead(), 60.0), procs.dead()
        procs.start("sim_robot", {"robot_profile": "kinova_gen3", "publish_clock": True,
                                  "wait_for_joint_state_subscribers": 2}, ros_env, str(tmp_path))
        # the compensator's first values can come before this process took a joint state of its own
        # (best effort, another subscription): wait for both
        assert spin_until(node, lambda: command.get_subscription_count() >= 1 and values and speed, 60.0), \
            procs.dead()
        command.publish(excitation_command(robot, 4.0))
        end = max(speed) + 6.0
        assert spin_until(node, lambda: newest["value"] > end or procs.dead(), 300.0), \
            f"external effort reached {newest['value'] - end + 6.0:.1f} s of 6"
        # a box no longer guaranteed: the bounds stop at one sample and do not come back, while the
        # values go on. No clock decides where: the node may still work through samples received
        # before the switch, and this process's view of the simulator lags it by a second or more on
        # a loaded machine. The node publishes each sample's value, then its bound, and this process
        # takes the two topics in turn: half a simulated second of values past the newest bound is
        # a stop, not a topic running behind (a node that ignores the switch never stops its bounds)
        estimate.bounds_guaranteed = False
        estimates.publish(estimate)
        assert spin_until(node, lambda: newest["value"] > newest["bound"] + 0.5 or procs.dead(), 120.0), \
            (newest, "the bounds of a box not guaranteed went on")
        # and they do not come back over the next simulated second
        last_bound = newest["bound"]
        assert spin_until(node, lambda: newest["value"] > last_bound + 1.2 or procs.dead(), 120.0), procs.dead()
        assert newest["bound"] == last_bound, (newest, "bounds of a box not guaranteed came back")
        assert procs.dead() == [], procs.dead()
    finally:
        node.destroy_node()
        procs.stop()
    paired = [t for t in values if t in bounds and t in speed]
    for moving in (True, False):
        ts = [t for t in paired if (speed[t] > 0.05) is moving]
        assert len(ts) > 100, (moving, len(ts))
        ratio = max(np.max(np.abs(values[t]) / bounds[t]) for t in ts)
        print(f"Gen3 {'moving' if moving else 'held still'}: {len(ts)} samples, max |residual| / bound = {ratio:.3f}")
        assert ratio <= 1.0
