"""/robot_description and /tf of a robot whose joint configuration a node knows (the simulated arm):
what robot_state_publisher does, with the transforms of :mod:`inertial_id.core.robot.robot_state`.

/tf needs the tf2_msgs package, which a ROS install has and the PyPI ROS wheels do not: without it
only /robot_description is published, and the node says so once."""
from __future__ import annotations

from std_msgs.msg import String

from ..core.robot.robot_state import link_transforms, link_tree, robot_description
from .common import LATCHED_QOS, s_to_stamp

TF_PERIOD_S = 1.0 / 30.0            # RViz draws at 30 Hz; more would only load the bus


class RobotStatePublisher:
    """Publishes the robot's URDF once (latched) and, through :meth:`update`, its links' TF."""

    def __init__(self, node, robot, period_s: float = TF_PERIOD_S):
        self.model, self.data = robot.model, robot.model.createData()
        self.edges = link_tree(self.model)
        self.period_s = period_s
        self.next_s = None
        # latched, as robot_state_publisher does: an RViz started later still gets the description
        pub = node.create_publisher(String, "/robot_description", LATCHED_QOS)
        pub.publish(String(data=robot_description(robot)))
        self._description_pub = pub          # kept alive: a latched message lives with its publisher
        try:
            # optional: tf2_msgs, which the PyPI ROS wheels lack
            from geometry_msgs.msg import TransformStamped
            from tf2_msgs.msg import TFMessage
        except ImportError:
            self.pub_tf = None
            node.get_logger().info("no tf2_msgs in this environment (the PyPI ROS wheels lack it): "
                                   "/robot_description only, no /tf")
            return
        self._types = TransformStamped, TFMessage
        self.pub_tf = node.create_publisher(TFMessage, "/tf", 10)

    def update(self, t_s: float, q) -> None:
        """The links' transforms at configuration ``q`` stamped ``t_s``, at most every ``period_s``."""
        if self.pub_tf is None or (self.next_s is not None and t_s < self.next_s):
            return
        self.next_s = t_s + self.period_s
        TransformStamped, TFMessage = self._types
        msg = TFMessage()
        for lt in link_transforms(self.model, self.data, q, self.edges):
            tf = TransformStamped()
            s_to_stamp(t_s, tf.header.stamp)
            tf.header.frame_id, tf.child_frame_id = lt.parent, lt.child
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = (
                float(v) for v in lt.translation_m)
            (tf.transform.rotation.x, tf.transform.rotation.y, tf.transform.rotation.z,
             tf.transform.rotation.w) = (float(v) for v in lt.rotation_xyzw)
            msg.transforms.append(tf)
        self.pub_tf.publish(msg)
