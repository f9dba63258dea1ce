"""regressor_builder: synchronizes /joint_states (and the wrist wrench), differentiates velocity,
and publishes rows of the payload measurement model as RegressorSample messages: joint-torque and
wrench rows per sample, and (``momentum_window`` > 0, joint torque sensing) momentum windows of
seed 003 with the payload columns followed by the robot's own columns."""
from __future__ import annotations

import bisect
import time
from collections import deque

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from ..core.estimators.factory import row_kinds
from ..core.profile import ProfileError
from ..core.row_builder import RowMessage, SampleRows
from .common import KEPT_QOS, SENSOR_QOS, DropCounter, declare, declare_robot, run_node, s_to_stamp
from .inputs import FUTURE_TOLERANCE_S, JointStateParser, Rejected, StampOrder, lost_message_events, parse_wrench


LOSSLESS_INPUT_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)
# Wrenches kept for matching with joint samples (seconds at the sensor rate; the stream is trimmed
# to this length when it reaches twice it).
WRENCH_BUFFER = 400


class RegressorBuilderNode(Node):
    def __init__(self):
        super().__init__("regressor_builder")
        from inertial_id.msg import RegressorSample
        self.RegressorSample = RegressorSample
        self.robot = declare_robot(self)
        sensing = self.robot.sensing
        use_tau = declare(self, "use_joint_torque", sensing["joint_torque"],
                          "build joint-torque rows from JointState.effort")
        use_wrench = declare(self, "use_wrench", sensing["wrench"],
                             "build wrench rows from the wrist F/T sensor")
        self.sync_tol = declare(self, "sync_tolerance_s", 0.0005, "max stamp difference joint state <-> wrench")
        cutoff = declare(self, "cutoff_hz", sensing["filter_cutoff_hz"],
                         "causal low-pass on all signals before differencing (0: off)")
        rate_hz = float(declare(self, "joint_states_hz", float(sensing["joint_states_hz"]),
                                "the driver's JointState rate: differentiation, and samples missing "
                                "from the stream (stamp gaps) are counted against it"))
        momentum_window = declare(self, "momentum_window", self.robot.momentum_window_samples,
                                  "samples per momentum window (0: no momentum rows)")
        profile_method = self.robot.profile["identification"]["method"]
        method = declare(self, "method", profile_method,
                         "form the rows this estimator method consumes ('all': every kind the sensing allows; "
                         "empty: the profile's)") or profile_method
        self.stream = SampleRows(self.robot, use_tau, use_wrench, rate_hz, cutoff or None, momentum_window,
                                 declare(self, "batch_samples", 20, "samples per published RegressorSample message"),
                                 declare(self, "max_gap_s", 0.05, "a larger gap between samples restarts differentiation"),
                                 kinds=None if method == "all" else row_kinds(self.robot, method))
        # rclpy's default executor costs ~0.4 ms of CPU per message here (a 4 kHz driver stream
        # would need 1.5 cores); the events executor about a third of that
        self.executor_kind = declare(self, "executor", "events",
                                     "rclpy executor: 'events' (rclpy.experimental.EventsExecutor, less CPU per "
                                     "message, for kHz driver streams) or 'single_threaded'")
        if self.executor_kind not in ("events", "single_threaded"):
            raise ProfileError(f"executor must be 'events' or 'single_threaded', not '{self.executor_kind}'")
        self.future_tolerance = declare(self, "future_tolerance_s", FUTURE_TOLERANCE_S,
                                        "inputs stamped further ahead of this node's clock are dropped")
        self.parser = JointStateParser(self.robot, need_effort=use_tau, clock_s=self.now_s,
                                       future_tolerance_s=self.future_tolerance)
        self.drops = DropCounter(self)
        self.wrench_t: list[float] = []      # increasing stamps (StampOrder) for bisection
        self.wrench_w: list[np.ndarray] = []
        self.wrench_wait = declare(self, "wrench_wait_s", 0.5,
                                   "longest wall time a joint sample waits for its wrench")
        if use_wrench:
            self.create_timer(0.1, self.drain)    # samples whose wrench never comes are let go
        self.wrench_order = StampOrder("wrench_stamp_not_increasing")
        self.joint_samples: deque = deque(maxlen=100)
        self.ready: list = []     # (sample, wrench) in stamp order, not yet formed into rows
        self.process_batch = declare(self, "process_batch", 100,
                                     "samples formed into rows at once (larger: less CPU per sample, more latency)")
        self.create_timer(declare(self, "process_period_s", 0.02, "longest a ready sample waits for its batch"),
                          self.flush)
        # kept for late joiners: a recorder that starts after this node still records every row
        self.pub = self.create_publisher(RegressorSample, "regressor_samples", KEPT_QOS)
        # Drivers publish sensor data best effort; a replay or a test that must not lose a message
        # publishes reliably and asks for reliable, unbounded (flow-controlled) delivery here.
        input_qos = LOSSLESS_INPUT_QOS if declare(self, "lossless_inputs", False,
                                                  "subscribe reliably, keep all (publishers must be reliable)") \
            else SENSOR_QOS
        self.create_subscription(JointState, declare(self, "joint_states_topic", sensing["joint_states_topic"],
                                                     "the driver's JointState topic"),
                                 self.on_joint_state, input_qos,
                                 event_callbacks=lost_message_events(self.drops, "lost_in_transport"))
        if use_wrench:
            self.create_subscription(WrenchStamped, declare(self, "wrench_topic", sensing["wrench_topic"],
                                                            "the driver's WrenchStamped topic of the F/T sensor"),
                                     self.on_wrench, input_qos,
                                     event_callbacks=lost_message_events(self.drops, "wrench_lost_in_transport"))
            self.wrench_frame_id = declare(self, "wrench_frame_id", self.robot.wrench_frame_id,
                                           "frame_id the driver stamps on the wrench (its name of frames.ft_sensor)")

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def on_wrench(self, msg: WrenchStamped) -> None:
        try:
            t, w = parse_wrench(msg, self.wrench_frame_id, now_s=self.now_s(), future_tolerance_s=self.future_tolerance)
            if self.wrench_order.check(t):
                self.wrench_t, self.wrench_w = [], []
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.wrench_t.append(t)
        self.wrench_w.append(w)
        if len(self.wrench_t) > 2 * WRENCH_BUFFER:
            del self.wrench_t[:-WRENCH_BUFFER], self.wrench_w[:-WRENCH_BUFFER]
        self.drops.ok()
        self.drain()

    def on_joint_state(self, msg: JointState) -> None:
        try:
            sample = self.parser.parse(msg)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        if not self.stream.rows.use_wrench:       # nothing to wait for
            self.ready.append((sample, None))
            self.flush_if_full()
            return
        if self.joint_samples and sample.t <= self.joint_samples[-1][0].t:
            # the stream went back in time (the parser followed it): what waits belongs to the old one
            self.drop_waiting("stream_restarted")
        self.joint_samples.append((sample, time.monotonic()))
        self.drain()

    def drop_waiting(self, why: str) -> None:
        while self.joint_samples:
            s, _ = self.joint_samples.popleft()
            self.drops.drop("no_matching_wrench", f"sample at {s.t:.4f} s: {why}")

    def _matching_wrench(self, t: float):
        """The wrench nearest to ``t`` within the sync tolerance, or None."""
        k = bisect.bisect_left(self.wrench_t, t)
        near = [j for j in (k - 1, k) if 0 <= j < len(self.wrench_t) and abs(self.wrench_t[j] - t) <= self.sync_tol]
        return min(near, key=lambda j: abs(self.wrench_t[j] - t), default=None)

    def drain(self) -> None:
        """Process queued joint samples in order; with wrench rows, each waits for its wrench (the
        two topics arrive in any order) until the wrench stream has passed its stamp, or for at most
        ``wrench_wait_s`` of wall time."""
        while self.joint_samples:
            s, arrived = self.joint_samples[0]
            wrench = None
            if self.stream.rows.use_wrench:
                j = self._matching_wrench(s.t)
                if j is None:
                    newest = self.wrench_t[-1] if self.wrench_t else -np.inf
                    if (newest <= s.t + self.sync_tol and len(self.joint_samples) < self.joint_samples.maxlen
                            and time.monotonic() - arrived < self.wrench_wait):
                        return   # its wrench may still come
                    self.joint_samples.popleft()
                    self.drops.drop("no_matching_wrench", f"no wrench within {self.sync_tol} s of {s.t:.4f} s")
                    continue
                wrench = self.wrench_w[j]
            self.joint_samples.popleft()
            self.ready.append((s, wrench))
        self.flush_if_full()

    def flush_if_full(self) -> None:
        if len(self.ready) >= self.process_batch:
            self.flush()

    def flush(self) -> None:
        """Form the ready samples into rows, in one batch (cheaper per sample than one by one)."""
        if not self.ready:
            return
        ready, self.ready = self.ready, []
        samples = [s for s, _ in ready]
        tau = None if any(s.tau is None for s in samples) else [s.tau for s in samples]
        wrench = [w for _, w in ready] if self.stream.rows.use_wrench else None
        pushed = self.stream.push_many([s.t for s in samples], [s.q for s in samples], [s.qd for s in samples],
                                       tau, wrench)
        # samples the driver sent that never reached this node (a full DDS queue under load) show as
        # stamp gaps at the driver's rate: counted, not silently lost
        if pushed.missed:
            self.drops.counts["missed_samples"] += pushed.missed
        for reason, detail in pushed.drops:
            self.drops.drop(reason, detail)
        if pushed.accepted:
            self.drops.ok(pushed.accepted)
        for m in pushed.messages:
            self.publish(m)

    def publish(self, m: RowMessage) -> None:
        msg = self.RegressorSample(kind=m.kind, body="payload", parameter_names=list(m.parameter_names),
                                   rows=m.A.shape[0], samples=m.samples)
        s_to_stamp(m.t, msg.header.stamp)
        msg.header.frame_id = self.robot.ft_frame if m.kind == "wrench" else self.robot.payload_frame
        msg.regressor = m.A.ravel().tolist()
        msg.measurement = m.b.tolist()
        msg.noise_bound = m.noise_bound.tolist()
        msg.noise_sigma = m.noise_sigma.tolist()
        if m.kinematics is not None:
            msg.kinematics = m.kinematics.ravel().tolist()
        self.pub.publish(msg)

def main(args=None) -> int:
    return run_node(RegressorBuilderNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
