"""payload_compensator: the identified payload taken out of the sensors' readings, live.

Takes the driver's joint states and wrist wrench (the inputs of the regressor_builder, parsed and
paired the same way) and the estimator's InertialEstimate, and publishes per sample
(:mod:`inertial_id.core.signals.payload_wrench`):

- F/T sensing: ``~/wrench_compensated`` (WrenchStamped, the input wrench's frame_id and the sample's
  stamp): measured wrench minus the payload's gravity and inertial wrench, and
  ``~/wrench_compensated_bound`` (WrenchStamped, same stamp and frame): the bound of each component;
- joint torque sensing: ``~/external_effort`` (JointState, effort in N m): measured torques minus the
  nominal robot and the payload's share, and ``~/external_effort_bound`` (JointState, effort: bounds).

Bounds are published only while the estimate's box is guaranteed and its data consistent (then every
component is inside its bound while nothing touches the robot); otherwise the bound topics are
silent and /diagnostics says why."""
from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState

from inertial_id_msgs.msg import InertialEstimate

from ..core.data import topics
from ..core.signals.driver_streams import WrenchBuffer, max_gap_s, wrench_sample_bound
from ..core.signals.payload_wrench import EstimateRejected, PayloadBox, PayloadCompensator
from ..core.robot.profile import ProfileError
from .common import (KEPT_QOS, RELIABLE_QOS, SENSOR_QOS, DropCounter, ManagedNode, declare, declare_robot, run_node,
                     s_to_stamp)
from .inputs import FUTURE_TOLERANCE_S, JointStateParser, SensorIntake, lost_message_events


class PayloadCompensatorNode(SensorIntake, ManagedNode):
    """Joint states (and wrench) in, paired and compensated in batches with the newest estimate's box.
    Managed: set up on configure; sensor inputs taken only while active."""

    def __init__(self):
        super().__init__("payload_compensator")
        self.executor_kind = "events"          # kHz joint states: the cheaper executor, as the builder

    def configure(self) -> None:
        self.robot = declare_robot(self)
        sensing = self.robot.sensing
        use_tau = declare(self, "use_joint_torque", sensing.joint_torque,
                          "publish ~/external_effort from JointState.effort (joint torque sensing)")
        use_wrench = declare(self, "use_wrench", sensing.wrench and self.robot.ft_frame_id is not None,
                             "publish ~/wrench_compensated from the wrist F/T sensor")
        if not (use_tau or use_wrench):
            raise ProfileError(f"profile '{self.robot.name}' has neither joint torque nor wrench sensing: "
                               "nothing to compensate")
        offset = declare(self, "wrench_offset", [0.0] * 6,
                         "known sensor offset subtracted from every measured wrench, [fx fy fz (N) tx ty tz (N m)] in "
                         "the sensor frame; what is left unknown lies in the profile's noise.wrench.offset_N/_Nm box, "
                         "which the bound includes")
        if len(offset) != 6 or not np.all(np.isfinite(offset)):
            raise ProfileError(f"parameter wrench_offset: expected 6 finite numbers, got {list(offset)}")
        rate_hz = declare(self, "joint_states_hz", float(sensing.joint_states_hz),
                          "the driver's JointState rate (differentiation)", low=1e-3, high=1e5)
        cutoff = declare(self, "cutoff_hz", sensing.filter_cutoff_hz,
                         "causal low-pass before differencing, as the regressor_builder (0: off)", low=0.0, high=1e5)
        self.compensator = PayloadCompensator(
            self.robot, use_tau, use_wrench, rate_hz, cutoff or None,
            declare(self, "max_gap_s", 0.05, "a larger gap between samples restarts differentiation",
                    low=1e-6, high=60.0),
            offset)
        self.future_tolerance = declare(self, "future_tolerance_s", FUTURE_TOLERANCE_S,
                                        "inputs stamped further ahead of this node's clock are dropped",
                                        low=0.0, high=3600.0)
        self.parser = JointStateParser(self.robot, need_effort=self.compensator.needs_effort, clock_s=self.now_s,
                                       future_tolerance_s=self.future_tolerance)
        self.drops = DropCounter(self)
        self.drops.set_status(DiagnosticStatus.OK, "waiting for an estimate")
        self.process_batch = declare(self, "process_batch", 10,
                                     "samples compensated at once (larger: less CPU per sample at kHz rates, more "
                                     "latency)", low=1, high=10**5)
        self.create_timer(declare(self, "process_period_s", 0.01, "longest a ready sample waits for its batch, s",
                                  low=1e-4, high=10.0), self.flush)
        self.box: PayloadBox | None = None
        self.pub = {}
        wrenches = None
        if use_wrench:
            self.wrench_frame_id = declare(self, "wrench_frame_id", self.robot.wrench_frame_id,
                                           "frame_id the driver stamps on the wrench (its name of frames.ft_sensor)")
            wrenches = WrenchBuffer(declare(self, "wrench_max_gap_s", max_gap_s(sensing.wrench_hz),
                                            "widest span between two wrench samples that a joint stamp is "
                                            "interpolated across", low=0.0, high=60.0),
                                    wrench_sample_bound(self.robot))
            self.pub["wrench"] = (self.create_publisher(WrenchStamped, "~/wrench_compensated", RELIABLE_QOS),
                                  self.create_publisher(WrenchStamped, "~/wrench_compensated_bound", RELIABLE_QOS))
            self.create_subscription(WrenchStamped, declare(self, "wrench_topic", sensing.wrench_topic,
                                                            "the driver's WrenchStamped topic of the F/T sensor"),
                                     self.on_wrench, SENSOR_QOS,
                                     event_callbacks=lost_message_events(self.drops, "wrench_lost_in_transport"))
        # no wall-time limit: a joint sample waits until the wrench stream passes it or newer ones push it out
        self.setup_intake(self.parser, wrenches, use_wrench, float("inf"))
        if use_tau:
            self.pub["joint_torque"] = (self.create_publisher(JointState, "~/external_effort", RELIABLE_QOS),
                                        self.create_publisher(JointState, "~/external_effort_bound", RELIABLE_QOS))
        self.create_subscription(InertialEstimate, topics.relative(topics.ESTIMATE), self.on_estimate, KEPT_QOS)
        self.create_subscription(JointState, declare(self, "joint_states_topic", sensing.joint_states_topic,
                                                     "the driver's JointState topic"),
                                 self.on_joint_state, SENSOR_QOS,
                                 event_callbacks=lost_message_events(self.drops, "lost_in_transport"))

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def on_estimate(self, msg) -> None:
        if msg.header.frame_id != self.robot.payload_frame:
            self.drops.drop("estimate_wrong_frame",
                            f"frame '{msg.header.frame_id}', expected '{self.robot.payload_frame}'")
            return
        try:
            box = PayloadBox.checked(msg.estimate, msg.lower, msg.upper, msg.bounds_guaranteed and msg.data_consistent,
                                     msg.parameter_names)
        except EstimateRejected as exc:
            self.drops.drop(exc.reason, str(exc))
            return
        self.box = box
        if box.guaranteed:
            # its own error bound assumes the F/T offset inside the stated box (wrench_offset) whether or
            # not a final update checked it: an unchecked box adds no assumption, so it is said, not refused
            unchecked = "" if msg.offset_checked else \
                " (its box assumes the F/T offset inside its stated box: not yet checked by a final update)"
            self.drops.set_status(DiagnosticStatus.OK,
                                  f"compensating with the estimate of {msg.samples_used} samples{unchecked}")
        else:
            why = "not guaranteed" if not msg.bounds_guaranteed else "contradicted by the data"
            self.drops.set_status(DiagnosticStatus.WARN, f"bounds not published: the estimate's box is {why}")

    def take(self, s, wrench, extra) -> None:
        """A paired sample into the batch, once an estimate is in."""
        if self.box is None:
            self.drops.ignore("no_estimate_yet")
            return
        SensorIntake.take(self, s, wrench, extra)

    def process(self, t, q, qd, tau, wrench, extra):
        """A batch of samples compensated with the newest box and published."""
        out, pushed = self.compensator.push_many(t, q, qd, tau, self.box,
                                                 *((wrench, extra) if self.compensator.uses_wrench else ()))
        for c in out:
            self.publish(c)
        return pushed

    def publish(self, c) -> None:
        value_pub, bound_pub = self.pub[c.kind]
        messages = [(value_pub, c.residual)] + ([(bound_pub, c.bound)] if c.guaranteed else [])
        for pub, x in messages:
            if c.kind == "wrench":
                msg = WrenchStamped()
                msg.header.frame_id = self.wrench_frame_id
                f, n = msg.wrench.force, msg.wrench.torque
                f.x, f.y, f.z, n.x, n.y, n.z = (float(v) for v in x)
            else:
                msg = JointState(name=list(self.robot.joint_names), effort=x.tolist())
            s_to_stamp(c.t, msg.header.stamp)
            pub.publish(msg)


def main(args=None) -> int:
    return run_node(PayloadCompensatorNode, args)
