"""The builder node asked to wait for its rows' readers (``wait_for_rows_subscribers``, as ``demo
--record`` asks) does not take the sensor streams until its rows publisher has matched them: a row it
published before a reader matched would be lost to that reader."""
import pytest

from ros_helpers import spin_for, spin_until

pytestmark = pytest.mark.ros


def test_the_builder_listens_only_once_its_rows_publisher_has_matched_its_readers(ros_env, tmp_path):
    import rclpy
    from sensor_msgs.msg import JointState

    from inertial_id.core.data import bags
    from inertial_id.core.robot.model import load_robot
    from inertial_id_msgs.msg import RegressorSample
    from inertial_id.nodes.common import KEPT_QOS, SENSOR_QOS
    from inertial_id.nodes.launch import start_node_set
    robot = load_robot("kinova_gen3")
    procs = start_node_set("kinova_gen3", ros_env, str(tmp_path), nodes=("regressor_builder",),
                           regressor_builder={"wait_for_rows_subscribers": 1})
    node = rclpy.create_node("builder_hold_test")
    joint_states = node.create_publisher(JointState, robot.sensing.joint_states_topic, SENSOR_QOS)
    log = tmp_path / "regressor_builder.log"
    try:
        assert spin_until(node, lambda: log.exists() and "not subscribed until" in log.read_text(), 60.0), \
            f"builder not up: {tmp_path}"
        spin_for(node, 0.5)
        assert joint_states.get_subscription_count() == 0, "subscribed before any rows reader matched"
        node.create_subscription(RegressorSample, bags.ROWS, lambda _: None, KEPT_QOS)
        assert spin_until(node, lambda: joint_states.get_subscription_count() >= 1, 60.0), log.read_text()
    finally:
        node.destroy_node()
        procs.stop()
    assert "matched 1 subscriptions: sensor streams subscribed" in log.read_text()
