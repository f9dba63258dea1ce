"""How the excitation planner's trajectories reach the robot's joint_trajectory_controller.

- ``topic``: ``trajectory_msgs/JointTrajectory`` on the controller's ``~/joint_trajectory`` topic
  (reliable, volatile). No acceptance, no feedback: what the simulated arm takes.
- ``action``: ``control_msgs/FollowJointTrajectory`` goals on the controller's
  ``~/follow_joint_trajectory`` action, with ``path_tolerance`` and ``goal_tolerance`` per joint
  set from the certified tracking tube, so that the controller itself aborts a motion that leaves
  the tube. A goal the controller rejects, or the newest goal ending with an error, is reported to
  ``on_fault`` (the planner brakes); goals preempted by a newer one are not faults.

control_msgs is not among the PyPI ROS 2 wheels: without it the action interface is a one-line
configuration error (:class:`~inertial_id.core.robot.profile.ProfileError`).
"""
from __future__ import annotations

from builtin_interfaces.msg import Duration
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory

from ..core.robot.profile import ProfileError

# Commands: every message matters and none may be replayed to a late joiner.
COMMAND_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                         depth=10, durability=DurabilityPolicy.VOLATILE)
INTERFACES = ("topic", "action")


def duration(seconds: float) -> Duration:
    sec = int(seconds)
    return Duration(sec=sec, nanosec=min(int(round((seconds - sec) * 1e9)), 999_999_999))


class TopicCommands:
    """JointTrajectory messages on the controller topic."""

    def __init__(self, node, topic: str):
        self.pub = node.create_publisher(JointTrajectory, topic, COMMAND_QOS)

    def send(self, msg: JointTrajectory) -> None:
        self.pub.publish(msg)


class ActionCommands:
    """FollowJointTrajectory goals with the tube as path and goal tolerances."""

    def __init__(self, node, action_name: str, joint_names, tube, goal_time_tolerance_s: float, on_fault):
        try:
            # optional: control_msgs, needed by command_interface 'action' only
            from control_msgs.action import FollowJointTrajectory
            from control_msgs.msg import JointTolerance
        except ImportError:
            raise ProfileError("command_interface 'action' needs control_msgs (FollowJointTrajectory), which is not "
                               "installed here: install it, or use command_interface:=topic") from None
        self.Goal = FollowJointTrajectory.Goal
        self.node = node
        self.client = ActionClient(node, FollowJointTrajectory, action_name)
        pos, vel, acc = tube
        self.tolerances = [JointTolerance(name=j, position=float(p), velocity=float(v), acceleration=float(a))
                           for j, p, v, a in zip(joint_names, pos, vel, acc)]
        self.goal_time_tolerance = duration(goal_time_tolerance_s)
        self.on_fault = on_fault
        self.newest = 0              # sequence number of the newest goal sent
        self.sent = self.accepted = self.rejected = self.aborted = 0

    def send(self, msg: JointTrajectory) -> None:
        if not self.client.server_is_ready():
            self.rejected += 1
            self.on_fault("the controller's FollowJointTrajectory action is not available")
            return
        goal = self.Goal(trajectory=msg, path_tolerance=self.tolerances, goal_tolerance=self.tolerances,
                         goal_time_tolerance=self.goal_time_tolerance)
        self.newest += 1
        seq = self.newest
        self.sent += 1
        self.client.send_goal_async(goal).add_done_callback(lambda f: self._on_response(seq, f))

    def _on_response(self, seq: int, future) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self.rejected += 1
            self.on_fault("the controller rejected the trajectory goal")
            return
        self.accepted += 1
        handle.get_result_async().add_done_callback(lambda f: self._on_result(seq, f))

    def _on_result(self, seq: int, future) -> None:
        response = future.result()
        if seq != self.newest or response is None:      # preempted by a newer goal: not a fault
            return
        result = response.result
        if result.error_code != 0:
            self.aborted += 1
            self.on_fault(f"the controller ended the trajectory with error {result.error_code}"
                          f"{': ' + result.error_string if result.error_string else ''}")
