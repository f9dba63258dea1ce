"""Bad input never crashes a node and never comes out as a wrong or non-finite answer: each bad
message is dropped with a counted reason on /diagnostics and the nodes keep working."""
import time

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState

from inertial_id.core.robot import model as robot_model
from inertial_id.core.sim import Simulator
from inertial_id.nodes.common import RELIABLE_QOS, SENSOR_QOS, s_to_stamp
from inertial_id.nodes.launch import start_node_set
from ros_helpers import diagnostic_counts, spin_for, spin_until

pytestmark = pytest.mark.ros


def test_bad_sensor_input_is_dropped_counted_and_survived(ros_env, tmp_path):
    import rclpy
    from inertial_id_msgs.msg import InertialEstimate, RegressorSample
    robot = robot_model.load_robot("xarm7")
    sensing = robot.sensing
    procs = start_node_set("xarm7", ros_env, str(tmp_path), nodes=("regressor_builder", "estimator"),
                           # every row kind: joint torque rows use the effort (checked only then)
                           regressor_builder={"use_joint_torque": True, "use_wrench": True, "method": "all"},
                           estimator={"bounds_period_s": 1.0, "publish_period_s": 0.25, "state_file": "none"})
    node = rclpy.create_node("bad_input_test")
    try:
        pub_js = node.create_publisher(JointState, sensing.joint_states_topic, SENSOR_QOS)
        pub_w = node.create_publisher(WrenchStamped, sensing.wrench_topic, SENSOR_QOS)
        pub_rows = node.create_publisher(RegressorSample, "regressor_samples", RELIABLE_QOS)
        diag, rows_out, estimates = diagnostic_counts(node), [], []
        node.create_subscription(RegressorSample, "regressor_samples", rows_out.append, RELIABLE_QOS)
        node.create_subscription(InertialEstimate, "inertial_estimate", estimates.append, RELIABLE_QOS)
        assert spin_until(node, lambda: pub_js.get_subscription_count() >= 1 and pub_w.get_subscription_count() >= 1
                          and pub_rows.get_subscription_count() >= 2, 30.0), "nodes did not come up"

        sim = Simulator.from_profile(robot, robot_model.payload_params("dumbbell_5lb"), seed=1)
        t0 = time.time() - 5.0          # stamps trail the clock: only stamps ahead of it are refused
        names = list(robot.joint_names)

        def joint_state(t, q, qd, tau, names=names):
            msg = JointState(name=names, position=list(q), velocity=list(qd), effort=list(tau))
            s_to_stamp(t0 + t, msg.header.stamp)
            return msg

        def wrench(t, w, frame=robot.wrench_frame_id):
            msg = WrenchStamped()
            s_to_stamp(t0 + t, msg.header.stamp)
            msg.header.frame_id = frame
            f, n = msg.wrench.force, msg.wrench.torque
            f.x, f.y, f.z, n.x, n.y, n.z = (float(x) for x in w)
            return msg

        # the real Kinova driver adds the gripper's joint: ignored by name, the rest is used
        names_with_gripper = names + ["finger_joint"]

        def play(seconds, with_gripper: bool = False):
            for k in range(int(seconds * 1000)):
                sim.step()
                if k % 2 == 0:
                    m = sim.measure()
                    pub_w.publish(wrench(m.t, m.wrench))
                    if with_gripper:
                        pub_js.publish(joint_state(m.t, np.r_[m.q, 0.1], np.r_[m.qd, 0.0], np.r_[m.tau, 0.0],
                                                   names=names_with_gripper))
                    else:
                        pub_js.publish(joint_state(m.t, m.q, m.qd, m.tau))
                    if k % 20 == 0:
                        spin_for(node, 0.002)
            return m

        m = play(1.0)
        bad_joint_states = {
            "non_finite": joint_state(m.t + 1e-4, np.r_[np.nan, m.q[1:]], m.qd, m.tau),
            "wrong_length": joint_state(m.t + 2e-4, m.q[:5], m.qd, m.tau),
            "missing_joint": joint_state(m.t + 3e-4, m.q, m.qd, m.tau, names=names[:6] + ["elbow_of_someone_else"]),
            "stamp_not_increasing": joint_state(m.t - 0.5, m.q, m.qd, m.tau),
            "missing_effort": joint_state(m.t + 4e-4, m.q, m.qd, []),
            "stamp_in_future": joint_state(m.t + 1e6, m.q, m.qd, m.tau),
            "invalid_stamp": joint_state(m.t + 5e-4, m.q, m.qd, m.tau),
        }
        bad_joint_states["invalid_stamp"].header.stamp.nanosec = 4294967295
        bad_rows = RegressorSample(kind="wrench", parameter_names=[f"payload.{n}" for n in
                                   ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")],
                                   rows=1, regressor=[np.nan] * 10, measurement=[1.0], noise_bound=[0.1],
                                   noise_sigma=[0.1])
        # finite but absurd: one row of 1e300 used to kill the estimator's eigen/SVD/conic solvers
        huge_rows = RegressorSample(kind="wrench", parameter_names=bad_rows.parameter_names, rows=1,
                                    regressor=[1e300] * 10, measurement=[1e300], noise_bound=[0.1], noise_sigma=[0.1])
        short_rows = RegressorSample(kind="wrench", parameter_names=bad_rows.parameter_names, rows=2,
                                     regressor=[1.0] * 10, measurement=[1.0], noise_bound=[0.1], noise_sigma=[0.1])
        for _ in range(5):
            for msg in bad_joint_states.values():
                pub_js.publish(msg)
            pub_w.publish(wrench(m.t + 1e-4, [np.inf, 0, 0, 0, 0, 0]))
            pub_w.publish(wrench(m.t + 1e-4, m.wrench, frame="some_other_frame"))
            pub_w.publish(wrench(m.t + 1e6, m.wrench))
            pub_rows.publish(huge_rows)
            pub_rows.publish(bad_rows)
            pub_rows.publish(short_rows)
            spin_for(node, 0.05)

        accepted_before = {}
        spin_until(node, lambda: accepted_before.update(diag.get("regressor_builder", {})) or False, 1.5)
        play(1.0, with_gripper=True)

        def all_counted():
            b, e = diag.get("regressor_builder", {}), diag.get("estimator", {})
            return (all(b.get(f"dropped.{r}", 0) > 0 for r in bad_joint_states)
                    and b.get("dropped.wrench_non_finite", 0) > 0 and b.get("dropped.wrench_wrong_frame", 0) > 0
                    and b.get("dropped.wrench_stamp_in_future", 0) > 0
                    and e.get("dropped.non_finite", 0) > 0 and e.get("dropped.wrong_length", 0) > 0
                    and e.get("dropped.absurd_regressor", 0) > 0
                    and b.get("accepted", 0) > accepted_before.get("accepted", 0) + 400
                    and len(estimates) > 0)

        assert spin_until(node, all_counted, 15.0), f"diagnostics: {diag}, estimates: {len(estimates)}"
        assert procs.dead() == [], "a node died on bad input"
        assert diag["regressor_builder"]["accepted"] > 500          # good data still flows through
        built = [r for r in rows_out if r.header.frame_id == robot.ft_frame]   # not the test's own bad rows
        assert built and all(np.all(np.isfinite(r.regressor)) and np.all(np.isfinite(r.measurement)) for r in built)
        for est in estimates:
            assert np.all(np.isfinite(est.estimate)) and np.all(np.isfinite(est.lower)) and np.all(np.isfinite(est.upper))
    finally:
        node.destroy_node()
        procs.stop()
