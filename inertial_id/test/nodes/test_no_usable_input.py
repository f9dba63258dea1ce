"""A node whose input all arrives unusable says so on /diagnostics (WARN with the main reason) and in
its log, instead of looking healthy while nothing reaches the estimator."""
import numpy as np
import pytest

from ros_helpers import spin_for, spin_until

pytestmark = pytest.mark.ros


def test_a_builder_fed_only_unusable_joint_states_warns(ros_env, tmp_path):
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from sensor_msgs.msg import JointState

    from inertial_id.core.robot.model import load_robot
    from inertial_id.nodes.common import SENSOR_QOS, s_to_stamp
    from inertial_id.nodes.launch import start_node_set
    robot = load_robot("kinova_gen3")
    procs = start_node_set("kinova_gen3", ros_env, str(tmp_path), nodes=("regressor_builder",))
    node = rclpy.create_node("no_usable_input_test")
    status = {}

    def on_diag(msg):
        for st in msg.status:
            if st.hardware_id == "regressor_builder":
                status["level"], status["message"] = st.level, st.message
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 50)
    pub = node.create_publisher(JointState, robot.sensing.joint_states_topic, SENSOR_QOS)
    try:
        assert spin_until(node, lambda: pub.get_subscription_count() >= 1, 60.0), f"builder not up: {tmp_path}"
        q = np.asarray(robot.spec.sim.home, float)
        t0 = node.get_clock().now().nanoseconds * 1e-9
        for k in range(200):             # torque rows need effort: NaN effort makes every sample unusable
            msg = JointState(name=list(robot.joint_names), position=q.tolist(), velocity=[0.0] * robot.nv,
                             effort=[float("nan")] * robot.nv)
            s_to_stamp(t0 + 0.001 * k, msg.header.stamp)
            pub.publish(msg)
            spin_for(node, 0.002)
        assert spin_until(node, lambda: "no usable input yet" in status.get("message", ""), 20.0), status
        assert status["level"] == DiagnosticStatus.WARN
        spin_for(node, 1.0)
    finally:
        node.destroy_node()
        procs.stop()
    assert "no usable input yet" in (tmp_path / "regressor_builder.log").read_text()
