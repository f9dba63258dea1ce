"""Simulated arm as a ROS 2 node: tracks JointTrajectory commands, publishes /joint_states and the
wrist WrenchStamped, and (latched) the hidden payload's true parameters for comparison."""
from __future__ import annotations

import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from ..core import params
from ..core.model import payload_params
from ..core.sim import Simulator
from ..core.trajectory import SampledTrajectory
from .common import LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS, DropCounter, declare, declare_robot, run_node, s_to_stamp
from rclpy.node import Node


class SimRobotNode(Node):
    def __init__(self):
        super().__init__("sim_robot")
        self.robot = declare_robot(self)
        prof = self.robot.profile
        payload = declare(self, "payload", prof.get("payload", {}).get("sim", "dumbbell_5lb"),
                          "payload the simulated arm carries (name in config/payloads.yaml)")
        self.rtf = declare(self, "real_time_factor", 1.0, "simulated seconds per wall-clock second")
        seed = declare(self, "seed", 0, "seed of the sensor noise")
        # The simulator stands in for the robot's driver: same topics, rate and frame names.
        sensing = self.robot.sensing
        publish_hz = declare(self, "publish_hz", sensing["joint_states_hz"], "sensor publishing rate, Hz")
        extra = declare(self, "extra_joints", "", "comma-separated joints the driver also reports "
                        "(e.g. a gripper's), published at rest before the arm's joints")
        self.extra_joints = [j.strip() for j in extra.split(",") if j.strip()]
        step_hz = prof["sim"]["step_hz"]
        self.truth = payload_params(payload)
        self.sim = Simulator.from_profile(self.robot, self.truth, seed)
        self.steps_per_publish = max(1, int(round(step_hz / publish_hz)))
        self.drops = DropCounter(self)
        self.pub_js = self.create_publisher(JointState, declare(
            self, "joint_states_topic", sensing["joint_states_topic"], "JointState topic"), SENSOR_QOS)
        self.pub_wrench = None
        if self.robot.ft_frame_id is not None:
            self.pub_wrench = self.create_publisher(WrenchStamped, declare(
                self, "wrench_topic", sensing["wrench_topic"], "topic of the wrist F/T sensor"), SENSOR_QOS)
            self.wrench_frame_id = declare(self, "wrench_frame_id", self.robot.wrench_frame_id,
                                           "frame_id of the published wrench (the driver's name of the F/T frame)")
        from inertial_id.msg import InertialEstimate
        truth_pub = self.create_publisher(InertialEstimate, "/sim/payload_truth", LATCHED_QOS)
        msg = InertialEstimate(body="payload", method="truth", parameter_names=params.parameter_names("payload"),
                               estimate=self.truth.tolist(), lower=self.truth.tolist(), upper=self.truth.tolist(),
                               physically_consistent=True, bounds_guaranteed=True, data_consistent=True)
        msg.header.frame_id = self.robot.payload_frame
        truth_pub.publish(msg)
        self.create_subscription(JointTrajectory, prof["controller"]["topic"], self.on_trajectory, RELIABLE_QOS)
        self.t0_wall = time.monotonic()
        self.t0_stamp = self.get_clock().now().nanoseconds * 1e-9
        self.create_timer(0.01, self.advance)
        self.get_logger().info(f"simulating {self.robot.name} carrying '{payload}' "
                               f"({step_hz:.0f} Hz steps, publishing at {step_hz / self.steps_per_publish:.0f} Hz)")

    def on_trajectory(self, msg: JointTrajectory) -> None:
        names = list(msg.joint_names)
        if sorted(names) != sorted(self.robot.joint_names):
            self.drops.drop("trajectory_joint_names", f"got {names}")
            return
        if len(msg.points) < 2:
            if len(msg.points) == 1:     # a single point: hold it (stop / hold-position command)
                order = [names.index(j) for j in self.robot.joint_names]
                self.sim.hold(np.asarray(msg.points[0].positions)[order])
            return
        order = [names.index(j) for j in self.robot.joint_names]
        t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
        n = len(names)

        def column(field):
            rows = [getattr(p, field) for p in msg.points]
            if any(len(r) != n for r in rows):
                return np.zeros((t.size, n))
            return np.asarray(rows, float)[:, order]

        q = column("positions")
        if not (np.all(np.isfinite(q)) and np.all(np.diff(t) > 0)):
            self.drops.drop("trajectory_invalid", "non-finite positions or non-increasing times")
            return
        # a set header.stamp is when the trajectory starts (joint_trajectory_controller semantics): a
        # command stamped in the past continues exactly where the previous one was, whatever the latency
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        start = stamp - self.t0_stamp if stamp > 0 else None
        self.sim.command(SampledTrajectory(t, q, column("velocities"), column("accelerations")), start_time=start)
        self.drops.ok()

    def advance(self) -> None:
        target = (time.monotonic() - self.t0_wall) * self.rtf
        while self.sim.t + 0.5 * self.sim.dt < target:
            self.sim.step()
            if int(round(self.sim.t / self.sim.dt)) % self.steps_per_publish == 0:
                self.publish(self.sim.measure())

    def publish(self, m) -> None:
        js = JointState()
        s_to_stamp(self.t0_stamp + m.t, js.header.stamp)
        rest = [0.0] * len(self.extra_joints)
        js.name = self.extra_joints + list(self.robot.joint_names)
        js.position, js.velocity, js.effort = rest + m.q.tolist(), rest + m.qd.tolist(), rest + m.tau.tolist()
        self.pub_js.publish(js)
        if self.pub_wrench is not None:
            w = WrenchStamped()
            w.header.stamp = js.header.stamp
            w.header.frame_id = self.wrench_frame_id
            (w.wrench.force.x, w.wrench.force.y, w.wrench.force.z,
             w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z) = m.wrench.tolist()
            self.pub_wrench.publish(w)


def main(args=None) -> int:
    return run_node(SimRobotNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
