"""excitation_planner: moves the arm to its home pose, then plays the profile's fixed Fourier-series
exciting trajectory. Every trajectory is checked against the position, velocity and acceleration
limits at the profile's sample rate (1 kHz) before it is published; on stale joint states while
moving it commands a hold at the last measured position."""
from __future__ import annotations

import time

import numpy as np
from builtin_interfaces.msg import Duration
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..core.trajectory import SampledTrajectory, check_limits, excitation_from_profile, quintic_ramp
from .common import LATCHED_QOS, SENSOR_QOS, DropCounter, declare, declare_robot, run_node
from .inputs import JointStateParser, Rejected


def move_to(q_from, q_to, velocity_limit, acceleration_limit, sample_hz: float) -> SampledTrajectory:
    """Quintic point-to-point move, slow enough for the velocity and acceleration limits."""
    dq = np.asarray(q_to, float) - np.asarray(q_from, float)
    # peak |s'| = 1.875/T, peak |s''| = 5.774/T^2 for the quintic ramp
    T = max(1.0, float(np.max(1.875 * np.abs(dq) / (0.5 * velocity_limit))),
            float(np.sqrt(np.max(5.774 * np.abs(dq) / (0.5 * acceleration_limit)))))
    t = np.arange(0.0, T + 0.5 / sample_hz, 1.0 / sample_hz)
    s, ds, dds = quintic_ramp(t, T)
    return SampledTrajectory(t, q_from + np.outer(s, dq), np.outer(ds, dq), np.outer(dds, dq))


class ExcitationPlannerNode(Node):
    def __init__(self):
        super().__init__("excitation_planner")
        from inertial_id.msg import ExcitationStatus
        self.ExcitationStatus = ExcitationStatus
        self.robot = declare_robot(self)
        self.duration = declare(self, "duration_s", 30.0, "length of the exciting trajectory, s")
        self.start_delay = declare(self, "start_delay_s", 1.0, "wait after the first joint state, s")
        self.stale_after = declare(self, "stale_after_s", 0.5, "joint states older than this stop the arm, s")
        self.point_hz = float(self.robot.profile["excitation"]["point_hz"])
        self.sample_hz = float(self.robot.profile["excitation"]["sample_hz"])
        self.drops = DropCounter(self)
        self.parser = JointStateParser(self.robot, need_effort=False)
        self.pub_traj = self.create_publisher(JointTrajectory, self.robot.profile["controller"]["topic"], LATCHED_QOS)
        self.pub_status = self.create_publisher(ExcitationStatus, "excitation_status", 10)
        self.create_subscription(JointState, "/joint_states", self.on_joint_state, SENSOR_QOS)
        self.state, self.message = "idle", "waiting for joint states"
        self.q = None
        self.last_js = None
        self.first_js = None
        self.end_time = None
        self.trajectory_id = 0
        self.report = None
        self.solve_time = 0.0
        self.create_timer(0.1, self.tick)

    def on_joint_state(self, msg) -> None:
        try:
            s = self.parser.parse(msg)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.q = s.q
        self.last_js = time.monotonic()
        self.first_js = self.first_js or self.last_js
        self.drops.ok()

    def tick(self) -> None:
        now = time.monotonic()
        if self.state == "idle" and self.first_js is not None and now - self.first_js >= self.start_delay:
            self.plan_and_start(now)
        elif self.state == "executing":
            if now - self.last_js > self.stale_after:
                self.hold("joint states stale: holding position")
            elif now >= self.end_time:
                self.state, self.message = "done", "exciting trajectory finished"
        self.publish_status()

    def plan_and_start(self, now: float) -> None:
        self.state = "planning"
        t0 = time.perf_counter()
        r = self.robot
        home = np.asarray(r.profile["sim"]["home"], float)
        approach = move_to(self.q, home, r.velocity_limit, r.acceleration_limit, self.sample_hz)
        excitation, _ = excitation_from_profile(r, self.duration)
        t = np.concatenate([approach.t, approach.t[-1] + excitation.t[1:]])
        traj = SampledTrajectory(t, np.vstack([approach.q, excitation.q[1:]]),
                                 np.vstack([approach.qd, excitation.qd[1:]]),
                                 np.vstack([approach.qdd, excitation.qdd[1:]]))
        report = check_limits(traj, r.position_lower, r.position_upper, r.velocity_limit, r.acceleration_limit)
        self.solve_time = time.perf_counter() - t0
        self.report = report
        if not report.ok:   # never publish what the check did not pass
            self.state, self.message = "failed", f"trajectory not certified: {report.message}"
            self.get_logger().error(self.message)
            return
        self.trajectory_id += 1
        self.pub_traj.publish(self.to_msg(traj.resample(self.point_hz)))
        self.state, self.message = "executing", f"exciting trajectory {traj.duration:.1f} s ({report.message})"
        self.end_time = now + traj.duration + 0.5

    def hold(self, why: str) -> None:
        msg = JointTrajectory()
        msg.joint_names = list(self.robot.joint_names)
        msg.points = [JointTrajectoryPoint(positions=self.q.tolist(), velocities=[0.0] * self.robot.nv)]
        self.pub_traj.publish(msg)
        self.state, self.message = "failed", why
        self.get_logger().error(why)

    def to_msg(self, traj: SampledTrajectory) -> JointTrajectory:
        msg = JointTrajectory()
        msg.joint_names = list(self.robot.joint_names)
        pts = []
        for t, q, qd, qdd in zip(traj.t, traj.q.tolist(), traj.qd.tolist(), traj.qdd.tolist()):
            sec = int(t)
            pts.append(JointTrajectoryPoint(positions=q, velocities=qd, accelerations=qdd,
                                            time_from_start=Duration(sec=sec, nanosec=min(int((t - sec) * 1e9), 999_999_999))))
        msg.points = pts
        return msg

    def publish_status(self) -> None:
        st = self.ExcitationStatus()
        st.header.stamp = self.get_clock().now().to_msg()
        st.state, st.trajectory_id, st.message = self.state, self.trajectory_id, self.message
        st.solve_time = self.solve_time
        if self.report is not None:
            st.min_joint_margin = self.report.min_position_margin
            st.min_velocity_margin = self.report.min_velocity_margin
        st.min_torque_margin = float("nan")      # torque is not certified by the fixed planner
        st.min_obstacle_clearance = float("inf")  # no obstacles are declared for the fixed planner
        st.excitation_cost = float("nan")
        self.pub_status.publish(st)


def main(args=None) -> int:
    return run_node(ExcitationPlannerNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
