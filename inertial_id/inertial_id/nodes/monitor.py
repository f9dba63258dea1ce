"""A listener node that keeps the latest estimate, planner status and simulator truth, the history
of estimates and statuses for the run's report and, when asked, every rows message the builder
publishes (used by the ``demo`` command and the integration tests)."""
from __future__ import annotations

import time
from collections import deque

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from inertial_id_msgs.msg import ExcitationStatus, InertialEstimate, RegressorSample

from ..core.signals.stamps import stamp_ns, stamp_s
from ..core.planning.monitor import ERROR_NAMES
from ..core.estimators.session import MOTION_END
from .common import FINAL_ESTIMATE_REASON, FINAL_ESTIMATE_STAMP, LATCHED_QOS, RELIABLE_QOS, ROWS_IN_QOS

# the planner's /diagnostics values: plans its optimiser made, and how many converged in their time
OPTIMIZER_COUNTS = ("optimizer.plans", "optimizer.converged")
# ... and which code its optimiser evaluates (core.planning.native's status)
OPTIMIZER_CODE = "optimizer.code"
# estimates kept for the final one: the estimator publishes a few a second, its diagnostics once a second
RECENT_ESTIMATES = 100
STATUS_MARGINS = ("min_joint_margin", "min_velocity_margin", "min_torque_margin", "min_obstacle_clearance")


class MonitorNode(Node):
    """``keep_rows``: keep every RegressorSample in ``rows``, received as the estimator receives them
    (reliable, all kept), so that the run's rows can be scored after it."""

    def __init__(self, keep_rows: bool = False):
        super().__init__("inertial_id_monitor")
        self.rows: list = []
        self.estimate = None
        self.estimates_received = 0
        self.status = None
        self.truth = None
        self.estimate_history = {k: [] for k in ("t", "estimate", "lower", "upper", "condition_number",
                                                 "samples_used")}
        self.status_history = {k: [] for k in ("t", "state", "message", *STATUS_MARGINS)}
        self.clock_start_s = None        # first /clock seen (the simulation's start), s
        self.clock_s = None              # latest /clock (simulated time), s
        self.clock_advanced_at = None    # monotonic wall time it last advanced
        self.tracking = {}               # the planner's largest tracking errors (/diagnostics "tracking.*")
        self.optimizer = {}              # the planner's OPTIMIZER_COUNTS
        self.optimizer_code = None       # the planner's OPTIMIZER_CODE, once said
        # header stamp (ns) of the newest estimate the estimator's diagnostics said came from its final
        # update after a motion ended (FINAL_ESTIMATE_STAMP, FINAL_ESTIMATE_REASON)
        self.motion_end_stamp_ns = None
        self.diagnostics_received = 0
        # the newest estimates, for the one that stamp names (the diagnostics may come after them)
        self.recent_estimates: deque = deque(maxlen=RECENT_ESTIMATES)
        self.create_subscription(InertialEstimate, "inertial_estimate", self._on_estimate, RELIABLE_QOS)
        self.create_subscription(ExcitationStatus, "excitation_status", self._on_status, 10)
        self.create_subscription(InertialEstimate, "/sim/payload_truth", self._on_truth, LATCHED_QOS)
        self.create_subscription(Clock, "/clock", self._on_clock,
                                 QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 50)
        if keep_rows:
            self.create_subscription(RegressorSample, "regressor_samples", self.rows.append, ROWS_IN_QOS)

    def _on_estimate(self, msg) -> None:
        self.estimate = msg
        self.estimates_received += 1
        self.recent_estimates.append(msg)
        h = self.estimate_history
        h["t"].append(stamp_s(msg.header.stamp))
        for k in ("estimate", "lower", "upper"):
            h[k].append(list(getattr(msg, k)))
        h["condition_number"].append(msg.condition_number)
        h["samples_used"].append(msg.samples_used)

    def _on_status(self, msg) -> None:
        self.status = msg
        h = self.status_history
        h["t"].append(stamp_s(msg.header.stamp))
        for k in ("state", "message", *STATUS_MARGINS):
            h[k].append(getattr(msg, k))

    def history(self) -> dict:
        """The estimates and planner statuses received so far (stamps in s), as plain lists: the
        ``history`` of a demo result, from which ``inertial-id report`` draws the run."""
        return {**self.estimate_history, "status": self.status_history}

    def _on_diagnostics(self, msg) -> None:
        self.diagnostics_received += 1
        for status in msg.status:
            said = {kv.key: kv.value for kv in status.values}
            tracking = {key: value for key, value in said.items() if key.startswith("tracking.")}
            if tracking:
                self.tracking = tracking
            optimizer = {key: said[key] for key in OPTIMIZER_COUNTS if key in said}
            if optimizer:
                self.optimizer = optimizer
            self.optimizer_code = said.get(OPTIMIZER_CODE, self.optimizer_code)
            stamp = said.get(FINAL_ESTIMATE_STAMP, "")
            if said.get(FINAL_ESTIMATE_REASON) == MOTION_END and stamp.isdigit():
                self.motion_end_stamp_ns = int(stamp)

    @property
    def final_estimate(self):
        """The estimate the estimator made in its final update after the motion ended, or the newest
        it published after that one whose guaranteed box still rests on no unchecked F/T offset box
        (``offset_checked``; a box not guaranteed has nothing to check); None before it arrived. Not a
        provisional final update's (a stream's pause), nor an online box after it: their F/T offset
        rests on its stated box unchecked again."""
        final = self.motion_end_stamp_ns
        if final is None:
            return None
        for msg in reversed(self.recent_estimates):
            stamp = stamp_ns(msg.header.stamp)
            if stamp < final:
                return None
            if stamp == final or msg.offset_checked or not msg.bounds_guaranteed:
                return msg
        return None

    def max_tracking_error(self) -> dict | None:
        """The planner's largest tracking errors so far (``ERROR_NAMES`` and ``tube_share``: the largest
        share of its tube, 1 on its edge), or None before the planner said any."""
        if not self.tracking:
            return None
        return {name: float(self.tracking[f"tracking.max_{name}"]) for name in (*ERROR_NAMES, "tube_share")}

    def optimizer_counts(self) -> dict | None:
        """The planner's optimised plans so far and how many converged within their budget, or None
        before it said any."""
        if not self.optimizer:
            return None
        return {key.split(".")[1]: int(self.optimizer[key]) for key in OPTIMIZER_COUNTS}

    def _on_truth(self, msg) -> None:
        self.truth = msg

    def _on_clock(self, msg) -> None:
        t = stamp_s(msg.clock)
        if self.clock_s is None or t > self.clock_s:
            self.clock_s, self.clock_advanced_at = t, time.monotonic()
        if self.clock_start_s is None:
            self.clock_start_s = t

    def sim_elapsed_s(self) -> float:
        """Simulated seconds since the first /clock (0 before it)."""
        return 0.0 if self.clock_s is None else self.clock_s - self.clock_start_s

    def clock_stalled_s(self) -> float:
        """Wall seconds since /clock last advanced (0 before the first /clock)."""
        return 0.0 if self.clock_advanced_at is None else time.monotonic() - self.clock_advanced_at
