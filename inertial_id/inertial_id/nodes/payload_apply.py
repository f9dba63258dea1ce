"""The estimator's payload outputs: ``inertia`` (geometry_msgs/InertiaStamped: mass, centre of mass,
inertia about the centre of mass, in the payload frame) with every estimate, and the ``~/apply``
service (std_srvs/Trigger), which hands the newest estimate to the robot through the profile's
``apply.interface`` only when asked and only when :func:`~inertial_id.core.payload.payload_apply.refusal`
finds nothing against it (with the support of the estimator's last final LP, when it has one)."""
from __future__ import annotations

import importlib

from geometry_msgs.msg import InertiaStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_srvs.srv import Trigger

from ..core.payload.payload_apply import DRIVER_SERVICES, ApplyLimits, PayloadInertia, refusal
from ..core.data.topics import INERTIA, relative
from .common import KEPT_QOS, LATCHED_QOS


def inertia_message(payload: PayloadInertia, header) -> InertiaStamped:
    """InertiaStamped of ``payload``: kg, m, kg m^2 about the centre of mass, axes of ``header.frame_id``."""
    msg = InertiaStamped()
    msg.header = header
    msg.inertia.m = payload.mass_kg
    msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z = (float(x) for x in payload.com_m)
    I = payload.inertia_com_kg_m2
    msg.inertia.ixx, msg.inertia.ixy, msg.inertia.ixz = float(I[0, 0]), float(I[0, 1]), float(I[0, 2])
    msg.inertia.iyy, msg.inertia.iyz, msg.inertia.izz = float(I[1, 1]), float(I[1, 2]), float(I[2, 2])
    return msg


class PayloadOutputs:
    """Publishes ``inertia`` for each estimate and serves ``~/apply`` on ``node``."""

    def __init__(self, node: Node, robot, drops):
        self.node, self.drops = node, drops
        self.limits = ApplyLimits.from_robot(robot)
        self.latest = None              # the newest published estimate (EstimatorResult) and its header
        self.pub = node.create_publisher(InertiaStamped, relative(INERTIA), KEPT_QOS)
        self.pub_applied = node.create_publisher(InertiaStamped, self.limits.topic, LATCHED_QOS) \
            if self.limits.interface == "inertia_topic" else None
        self._client_node = self._client = None
        node.create_service(Trigger, "~/apply", self.on_apply)

    def publish(self, result, header) -> None:
        """``inertia`` of this estimate; an estimate without a positive mass has no centre of mass
        and is not published there (an event on /diagnostics, not a dropped input)."""
        self.latest = (result, header)
        try:
            payload = PayloadInertia.from_params(result.estimate)
        except ValueError as exc:
            self.drops.event("inertia_not_published")
            self.node.get_logger().warning(f"inertia not published: {exc}", throttle_duration_sec=5.0)
            return
        self.pub.publish(inertia_message(payload, header))

    def on_apply(self, request, response):
        result, header = self.latest if self.latest is not None else (None, None)
        if result is None:
            why = refusal(None, None, None, False, False, self.limits)
        else:
            # the support of the last final LP in the gate's directions (the node's session asks for it)
            why = refusal(result.estimate, result.lower, result.upper, result.bounds_guaranteed,
                          result.data_consistent, self.limits, result.final_support, result.offset_checked)
        if why is None:
            payload = PayloadInertia.from_params(result.estimate, header.frame_id)
            ok, what = self._topic(payload, header) if self.limits.interface == "inertia_topic" else \
                self._driver(payload)
        else:
            ok, what = False, f"refused: {why}"
        response.success, response.message = ok, what
        # rclpy ties a severity to each call site: one line per severity
        if ok:
            self.node.get_logger().info(f"~/apply: {what}")
        else:
            self.node.get_logger().warning(f"~/apply: {what}")
        return response

    def _topic(self, payload: PayloadInertia, header):
        self.pub_applied.publish(inertia_message(payload, header))
        return True, (f"published on {self.pub_applied.topic_name} (latched): {payload.mass_kg:.4g} kg, "
                      f"COM {[round(x, 5) for x in payload.com_m]} m in {header.frame_id}")

    def _driver(self, payload: PayloadInertia):
        """Call the driver's set-load service (:data:`~inertial_id.core.payload.payload_apply.DRIVER_SERVICES`)
        and wait for its reply. The client lives on a node of its own, spun here, so the estimator's
        executor is not re-entered from its own callback."""
        driver, service = DRIVER_SERVICES[self.limits.interface], self.limits.service
        try:
            srv_type = getattr(importlib.import_module(f"{driver.package}.srv"), driver.type_name)
        except (ImportError, AttributeError):
            return False, (f"refused: {driver.package} is not installed, cannot call the driver's "
                           f"{driver.type_name} service {service}")
        if self._client is None:
            self._client_node = Node("estimator_apply_client", context=self.node.context)
            self._client = self._client_node.create_client(srv_type, service)
        if not self._client.wait_for_service(timeout_sec=min(1.0, self.limits.timeout_s)):
            return False, f"refused: the driver's service {service} is not available"
        request = srv_type.Request()
        sent = driver.fill(request, payload)
        future = self._client.call_async(request)
        executor = SingleThreadedExecutor(context=self.node.context)
        executor.add_node(self._client_node)
        try:
            executor.spin_until_future_complete(future, timeout_sec=self.limits.timeout_s)
        finally:
            executor.remove_node(self._client_node)
            executor.shutdown()
        if not future.done():
            self._client.remove_pending_request(future)
            return False, f"sent to {service} ({sent}), no reply within {self.limits.timeout_s:g} s"
        ok, said = driver.verdict(future.result())
        return ok, f"{service} ({sent}): {said}"

    def destroy(self) -> None:
        if self._client_node is not None:
            self._client_node.destroy_node()
