"""excitation_planner: the certified receding-horizon excitation planner (seed 003) as a thin node
over :class:`~inertial_id.core.planning.receding.RecedingHorizon`.

- Nothing moves until ``~/start`` (std_srvs/Trigger); ``~/stop`` brakes on a certified plan.
- Plans are optimised and certified in a worker thread; a plan is published only with a certificate
  (for every payload in the box of the newest estimate whose bounds are guaranteed and data
  consistent, robot parameters in their box, states in the tracking tube).
- Commands go out on the controller topic, reliable and VOLATILE (a late joiner must not replay an
  old trajectory), as JointTrajectory points sampled from the Bezier timeline, stamped with the time
  they start; a command is stamped at or before the time it is sent, so a controller honouring the
  stamp continues without a step.
- Joint states older than ``planner.stale_after_s`` or a tracking error beyond the certified tube
  brake on a certified braking plan from the current desired state; a new start is needed to move again.
- ``excitation_status`` carries the state, the certificate's finite margins and clearance, the
  excitation cost and seed 003's cond(W_e) of the last plan.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from builtin_interfaces.msg import Duration
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..core.planning.certifier import CertifierSettings
from ..core.planning.config import PlannerSettings
from ..core.planning.optimizer import PlanOptimizer, PlanResult, cached_certify
from ..core.planning.receding import RecedingHorizon
from .common import RELIABLE_QOS, SENSOR_QOS, DropCounter, declare, declare_robot, run_node, s_to_stamp
from .inputs import JointStateParser, Rejected

# Commands: every message matters and none may be replayed to a late joiner.
COMMAND_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                         depth=10, durability=DurabilityPolicy.VOLATILE)
# commands start this far in the past (repeating what was already commanded), so a receiver whose
# clock lags ours (a simulator falling behind under load) never sees a step
BACKDATE_S = 2.0


class PlanWorker:
    """One background thread running the optimiser on the newest request."""

    def __init__(self, optimizer: PlanOptimizer):
        self.optimizer = optimizer
        self._lock = threading.Condition()
        self._job = None
        self._done = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def submit(self, request_id, request) -> None:
        with self._lock:
            self._job = (request_id, request)
            self._lock.notify()

    def take(self):
        with self._lock:
            done, self._done = self._done, None
            return done

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._job is None:
                    self._lock.wait()
                request_id, request = self._job
                self._job = None
            try:
                result = self.optimizer.plan(request)
            except Exception as exc:     # a bug must not leave the loop waiting: no plan, said why
                result = PlanResult(None, None, reason=f"planner error: {type(exc).__name__}: {exc}")
            with self._lock:
                self._done = (request_id, result)


class ExcitationPlannerNode(Node):
    def __init__(self):
        super().__init__("excitation_planner")
        from inertial_id.msg import ExcitationStatus, InertialEstimate
        self.ExcitationStatus = ExcitationStatus
        self.robot = declare_robot(self)
        self.budget = declare(self, "duration_s", 30.0, "time budget of the exciting motion after a start, s")
        self.point_hz = declare(self, "point_hz", 100.0, "points per second of the published trajectories")
        topic = declare(self, "joint_states_topic", self.robot.profile["sensing"]["joint_states_topic"],
                        "JointState topic")
        self.settings = PlannerSettings.from_profile(self.robot)
        cert = CertifierSettings.from_profile(self.robot)
        # separate certifier contexts: the worker thread and this thread certify concurrently
        self.rh = RecedingHorizon(self.robot, self.settings, cert, cached_certify(self.robot, cert))
        self.worker = PlanWorker(PlanOptimizer(self.robot, self.settings, cert, cached_certify(self.robot, cert)))
        self.submitted = None
        self.drops = DropCounter(self)
        self.parser = JointStateParser(self.robot, need_effort=False, clock_s=self.now)
        self.pub_traj = self.create_publisher(JointTrajectory, self.robot.profile["controller"]["topic"], COMMAND_QOS)
        self.pub_status = self.create_publisher(ExcitationStatus, "excitation_status", 10)
        # joint states in a group of their own: they keep arriving (and staleness stays meaningful)
        # while the main group certifies a braking plan or a hold
        self.create_subscription(JointState, topic, self.on_joint_state, SENSOR_QOS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self.create_subscription(InertialEstimate, "inertial_estimate", self.on_estimate, RELIABLE_QOS)
        self.create_service(Trigger, "~/start", self.on_start)
        self.create_service(Trigger, "~/stop", self.on_stop)
        self.last_js = None          # (receipt, monotonic s; sample)
        self.last_said = None
        self.create_timer(0.02, self.tick)
        self.create_timer(0.1, self.publish_status)

    def now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # --- inputs ----------------------------------------------------------------------------------

    def on_joint_state(self, msg) -> None:
        try:
            s = self.parser.parse(msg)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.last_js = (time.monotonic(), s)
        self.drops.ok()

    def on_estimate(self, msg) -> None:
        if msg.header.frame_id != self.robot.payload_frame or len(msg.lower) != 10 or len(msg.upper) != 10:
            self.drops.drop("estimate_frame_or_size", f"frame '{msg.header.frame_id}', {len(msg.lower)} bounds")
            return
        self.rh.update_box(msg.lower, msg.upper, msg.bounds_guaranteed, msg.data_consistent)

    def on_start(self, request, response):
        if self.last_js is None or time.monotonic() - self.last_js[0] > self.settings.stale_after_s:
            response.success, response.message = False, "no recent joint states: not starting"
            return response
        sample = self.last_js[1]
        if np.max(np.abs(sample.qd)) > 0.05:
            response.success, response.message = False, "the arm is moving: a start needs it at rest"
            return response
        response.success = self.rh.start(self.now(), sample.q, float(self.budget))
        response.message = self.rh.message
        return response

    def on_stop(self, request, response):
        self.send(self.rh.stop(self.now()))
        response.success, response.message = True, self.rh.message
        return response

    # --- loop ------------------------------------------------------------------------------------

    def tick(self) -> None:
        rh = self.rh
        req = rh.request(self.now())
        if req is not None and self.submitted != req[0]:
            self.submitted = req[0]
            self.worker.submit(*req)
        done = self.worker.take()
        if done is not None:
            self.send(rh.offer(self.now(), *done))
        age = None if self.last_js is None else time.monotonic() - self.last_js[0]
        if age is None and rh.state in ("planning", "executing", "braking"):
            age = np.inf
        measured = None
        if self.last_js is not None:
            s = self.last_js[1]
            measured = (s.t, s.q, s.qd)
        self.send(rh.tick(self.now(), age, measured))
        if (rh.state, rh.message) != self.last_said:      # every change of state or reason, once
            self.last_said = (rh.state, rh.message)
            if rh.state in ("failed", "braking"):
                self.get_logger().error(f"{rh.state}: {rh.message}")
            else:
                self.get_logger().info(f"{rh.state}: {rh.message}")

    def send(self, cmd) -> None:
        if cmd is None:
            return
        t_from = min(cmd.t_from, self.now() - BACKDATE_S)
        t, q, qd, qdd = self.rh.sample(t_from, cmd.t_to, float(self.point_hz))
        msg = JointTrajectory()
        s_to_stamp(t_from, msg.header.stamp)
        msg.joint_names = list(self.robot.joint_names)
        points = []
        for tk, a, b, c in zip(t, q.tolist(), qd.tolist(), qdd.tolist()):
            sec = int(tk)
            points.append(JointTrajectoryPoint(positions=a, velocities=b, accelerations=c, time_from_start=Duration(
                sec=sec, nanosec=min(int(round((tk - sec) * 1e9)), 999_999_999))))
        msg.points = points
        self.pub_traj.publish(msg)
        self.get_logger().info(f"published {len(points)} points from {t_from:.3f} s: {cmd.reason}")

    def publish_status(self) -> None:
        rh = self.rh
        st = self.ExcitationStatus()
        st.header.stamp = self.get_clock().now().to_msg()
        st.state, st.trajectory_id, st.message = rh.state, rh.plans, rh.message
        result = rh.last_result
        cert = rh.segments[-1].certificate if rh.segments else rh.last_certificate
        if result is not None:
            st.solve_time = float(result.total_s)
            if result.certified:
                st.excitation_cost = float(result.cost)
        if cert is not None:
            st.min_joint_margin = float(cert.min_joint_margin_rad)
            st.min_velocity_margin = float(cert.min_velocity_margin_rad_s)
            st.min_torque_margin = float(cert.min_torque_margin_Nm)
            st.min_obstacle_clearance = float(cert.min_obstacle_clearance_m)
        st.certified = bool(cert is not None and cert.certified)
        if result is not None and result.certified:
            st.condition_number = float(result.condition_number)
        self.pub_status.publish(st)


def main(args=None) -> int:
    return run_node(ExcitationPlannerNode, args, threads=2)


if __name__ == "__main__":
    raise SystemExit(main())
