"""A listener node that keeps the latest estimate, planner status and simulator truth (used by the
``demo`` command and the integration tests)."""
from __future__ import annotations

from rclpy.node import Node

from .common import LATCHED_QOS, RELIABLE_QOS


class MonitorNode(Node):
    def __init__(self):
        super().__init__("inertial_id_monitor")
        from inertial_id.msg import ExcitationStatus, InertialEstimate
        self.estimate = None
        self.estimates_received = 0
        self.status = None
        self.truth = None
        self.create_subscription(InertialEstimate, "inertial_estimate", self._on_estimate, RELIABLE_QOS)
        self.create_subscription(ExcitationStatus, "excitation_status", self._on_status, 10)
        self.create_subscription(InertialEstimate, "/sim/payload_truth", self._on_truth, LATCHED_QOS)

    def _on_estimate(self, msg) -> None:
        self.estimate = msg
        self.estimates_received += 1

    def _on_status(self, msg) -> None:
        self.status = msg

    def _on_truth(self, msg) -> None:
        self.truth = msg
