"""regressor_builder: pairs the driver's joint states (the profile's ``sensing.joint_states_topic``:
for the xArm the driver's own ``/xarm/joint_states``, stamped like its wrench) with the wrist wrench
interpolated at their stamps (:mod:`inertial_id.core.signals.driver_streams`), differentiates velocity,
and publishes rows of the payload measurement model as RegressorSample messages: joint-torque and
wrench rows per sample, and (``momentum_window`` > 0, joint torque sensing) the momentum windows of
the provably-safe online identification method with the payload columns followed by the robot's own
columns.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations


from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from inertial_id_msgs.msg import RegressorSample

from ..core.signals.driver_streams import WrenchBuffer, max_gap_s, wrench_sample_bound
from ..core.calibration import calibration_of, momentum_window as calibrated_window
from ..core.estimators.factory import METHODS, row_kinds
from ..core.signals.row_builder import RowMessage, SampleRows
from .common import KEPT_QOS, SENSOR_QOS, DropCounter, ManagedNode, declare, declare_robot, run_node, s_to_stamp
from .inputs import FUTURE_TOLERANCE_S, JointStateParser, SensorIntake, lost_message_events


LOSSLESS_INPUT_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)


class RegressorBuilderNode(SensorIntake, ManagedNode):
    """Rows from the driver's streams; managed: set up on configure, inputs taken only while active."""

    def __init__(self):
        super().__init__("regressor_builder")
        # rclpy's default executor costs ~0.4 ms of CPU per message here (a 4 kHz driver stream
        # would need 1.5 cores); the events executor about a third of that. Read before spinning,
        # so at construction rather than on configure
        self.executor_kind = declare(self, "executor", "events",
                                     "rclpy executor: 'events' (rclpy's events executor, less CPU per message, for "
                                     "kHz driver streams; single-threaded where the distribution has none, as "
                                     "Humble) or 'single_threaded'",
                                     choices=("events", "single_threaded"))

    def configure(self) -> None:
        self.RegressorSample = RegressorSample
        self.robot = declare_robot(self)
        sensing = self.robot.sensing
        use_tau = declare(self, "use_joint_torque", sensing.joint_torque,
                          "build joint-torque rows from JointState.effort")
        use_wrench = declare(self, "use_wrench", sensing.wrench,
                             "build wrench rows from the wrist F/T sensor")
        self.wrench_max_gap = declare(self, "wrench_max_gap_s", max_gap_s(sensing.wrench_hz),
                                      "widest span between two wrench samples that a joint stamp is interpolated "
                                      "across (default: 1.5 periods at the profile's sensing.wrench_hz)", low=0.0, high=60.0)
        cutoff = declare(self, "cutoff_hz", sensing.filter_cutoff_hz,
                         "causal low-pass on all signals before differencing (0: off)", low=0.0, high=1e5)
        rate_hz = float(declare(self, "joint_states_hz", float(sensing.joint_states_hz),
                                "the driver's JointState rate: differentiation, and samples missing "
                                "from the stream (stamp gaps) are counted against it", low=1e-3, high=1e5))
        momentum_window = declare(self, "momentum_window", calibrated_window(self.robot, calibration_of(self.robot)),
                                  "samples per momentum window (0: no momentum rows; default: the profile's "
                                  "momentum_window_s at the robot calibration's rate when it names one)",
                                  low=0, high=10**6)
        profile_method = self.robot.spec.identification.method
        method = declare(self, "method", profile_method,
                         "form the rows this estimator method consumes ('all': every kind the sensing allows; "
                         "empty: the profile's)", choices=("", "all", *METHODS)) or profile_method
        self.stream = SampleRows(self.robot, use_tau, use_wrench, rate_hz, cutoff or None, momentum_window,
                                 declare(self, "batch_samples", 20, "samples per published RegressorSample message",
                                         low=1, high=10**6),
                                 declare(self, "max_gap_s", 0.05, "a larger gap between samples restarts differentiation",
                                         low=1e-6, high=60.0),
                                 kinds=None if method == "all" else row_kinds(self.robot, method))
        self.future_tolerance = declare(self, "future_tolerance_s", FUTURE_TOLERANCE_S,
                                        "inputs stamped further ahead of this node's clock are dropped",
                                        low=0.0, high=3600.0)
        self.parser = JointStateParser(self.robot, need_effort=self.stream.needs_effort, clock_s=self.now_s,
                                       future_tolerance_s=self.future_tolerance)
        self.drops = DropCounter(self)
        self.setup_intake(self.parser, WrenchBuffer(self.wrench_max_gap, wrench_sample_bound(self.robot)),
                          self.stream.rows.use_wrench,
                          declare(self, "wrench_wait_s", 0.5, "longest wall time a joint sample waits for its wrench",
                                  low=0.0, high=60.0))
        if use_wrench:
            self.create_timer(0.1, self.drain)    # samples whose wrench never comes are let go
        self.process_batch = declare(self, "process_batch", 100,
                                     "samples formed into rows at once (larger: less CPU per sample, more latency)",
                                     low=1, high=10**6)
        self.create_timer(declare(self, "process_period_s", 0.02, "longest a ready sample waits for its batch",
                                  low=1e-4, high=10.0),
                          self.flush)
        # kept for late joiners: a recorder that starts after this node still records every row
        self.pub = self.create_publisher(RegressorSample, "regressor_samples", KEPT_QOS)
        # Drivers publish sensor data best effort; a replay or a test that must not lose a message
        # publishes reliably and asks for reliable, unbounded (flow-controlled) delivery here.
        input_qos = LOSSLESS_INPUT_QOS if declare(self, "lossless_inputs", False,
                                                  "subscribe reliably, keep all (publishers must be reliable)") \
            else SENSOR_QOS
        js_topic = declare(self, "joint_states_topic", sensing.joint_states_topic, "the driver's JointState topic")
        if use_wrench:
            wrench_topic = declare(self, "wrench_topic", sensing.wrench_topic,
                                   "the driver's WrenchStamped topic of the F/T sensor")
            self.wrench_frame_id = declare(self, "wrench_frame_id", self.robot.wrench_frame_id,
                                           "frame_id the driver stamps on the wrench (its name of frames.ft_sensor)")
        readers = declare(self, "wait_for_rows_subscribers", 0,
                          "subscribe to the sensor streams only once the rows publisher has this many matched "
                          "subscriptions (0: at once): a run whose rows readers must all see the first row "
                          "(demo --record) starts its simulated arm once this node listens",
                          low=0, high=1000)

        def subscribe():
            self.create_subscription(JointState, js_topic, self.on_joint_state, input_qos,
                                     event_callbacks=lost_message_events(self.drops, "lost_in_transport"))
            if use_wrench:
                self.create_subscription(WrenchStamped, wrench_topic, self.on_wrench, input_qos,
                                         event_callbacks=lost_message_events(self.drops, "wrench_lost_in_transport"))
        if readers == 0:
            subscribe()
            return
        # matched on this publisher, not in the graph: another participant may see a reader in the
        # graph before this writer has matched it, and rows published between the two are lost to it
        self.get_logger().info(f"sensor streams not subscribed until {self.pub.topic_name} has {readers} "
                               "matched subscriptions")

        def poll():
            if self.pub.get_subscription_count() >= readers:
                hold.cancel()
                subscribe()
                self.get_logger().info(f"{self.pub.topic_name} matched {self.pub.get_subscription_count()} "
                                       "subscriptions: sensor streams subscribed")
        hold = self.create_timer(0.01, poll, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def process(self, t, q, qd, tau, wrench, extra):
        """A batch of samples formed into rows and published."""
        pushed = self.stream.push_many(t, q, qd, tau, wrench, extra)
        for m in pushed.messages:
            self.publish(m)
        return pushed

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
        if m.acceleration_bound is not None:
            msg.acceleration_bound = m.acceleration_bound.ravel().tolist()
        self.pub.publish(msg)

def main(args=None) -> int:
    return run_node(RegressorBuilderNode, args)
