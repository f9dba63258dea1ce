"""estimator: folds RegressorSample rows into an estimate with guaranteed bounds and streams
InertialEstimate (plus an RViz MarkerArray of the payload's centre of mass and inertia box)."""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.node import Node
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray

from ..core import params
from ..core.estimators.factory import METHODS, make_estimator
from .common import RELIABLE_QOS, DropCounter, declare, declare_robot, run_node


class EstimatorNode(Node):
    def __init__(self):
        super().__init__("estimator")
        from inertial_id.msg import InertialEstimate, RegressorSample
        self.InertialEstimate = InertialEstimate
        self.robot = declare_robot(self)
        profile_method = self.robot.profile.get("identification", {}).get("method", "lmi")
        self.method = declare(self, "method", profile_method,
                              f"estimation method: {' | '.join(METHODS)}; empty: the profile's") or profile_method
        self.max_rows = declare(self, "max_bound_rows", 3000, "rows per bounds update (LP size)")
        bounds_period = declare(self, "bounds_period_s", 2.0, "period of the guaranteed-bounds update, s")
        publish_period = declare(self, "publish_period_s", 0.5, "period of InertialEstimate publication, s")
        self.names = params.parameter_names("payload")
        self.drops = DropCounter(self)
        self.estimator = self._new_estimator()
        self.pub = self.create_publisher(InertialEstimate, "inertial_estimate", RELIABLE_QOS)
        self.pub_markers = self.create_publisher(MarkerArray, "inertial_estimate/markers", 10)
        self.create_subscription(RegressorSample, "regressor_samples", self.on_rows, RELIABLE_QOS)
        self.create_service(Trigger, "~/reset", self.on_reset)
        self.create_timer(bounds_period, self.update_bounds)
        self.create_timer(publish_period, self.publish)
        self.dirty = False

    def _new_estimator(self):
        return make_estimator(self.robot, self.method, self.max_rows)

    def on_reset(self, request, response):
        self.estimator = self._new_estimator()
        response.success, response.message = True, "estimator reset to the prior box"
        return response

    def on_rows(self, msg) -> None:
        est = self.estimator
        if msg.kind not in est.kinds:
            self.drops.ignore(f"{msg.kind}_rows")     # another estimator may use them
            return
        cols = len(msg.parameter_names)
        if list(msg.parameter_names) != est.column_names:
            self.drops.drop("parameter_names", f"columns {list(msg.parameter_names)[:3]}... do not match")
            return
        A = np.asarray(msg.regressor, float)
        b = np.asarray(msg.measurement, float)
        e = np.asarray(msg.noise_bound, float)
        sigma = np.asarray(msg.noise_sigma, float)
        if A.size != msg.rows * cols or b.size != msg.rows or e.size != msg.rows or sigma.size != msg.rows:
            self.drops.drop("wrong_length", f"{msg.rows} rows but {A.size} regressor entries")
            return
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b)) and np.all(np.isfinite(e))
                and np.all(np.isfinite(sigma)) and np.all(e >= 0) and np.all(sigma > 0)):
            self.drops.drop("non_finite", "NaN/Inf or non-positive noise in the rows")
            return
        kinematics = None
        if self.method == "pmd":
            if len(msg.kinematics) != 2 * msg.rows or not np.all(np.isfinite(msg.kinematics)):
                self.drops.drop("pmd_needs_wrench_kinematics", "wrench rows without valid sensor kinematics")
                return
            kinematics = np.asarray(msg.kinematics, float)
        est.add(msg.kind, A.reshape(msg.rows, cols), b, e, sigma, int(msg.samples), kinematics)
        self.drops.ok()
        self.dirty = True

    def update_bounds(self) -> None:
        t0 = time.perf_counter()
        self.estimator.update_bounds()
        self.get_logger().debug(f"bounds update {time.perf_counter() - t0:.3f} s")

    def publish(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        r = self.estimator.result()
        if not r.data_consistent:
            self.drops.set_status(DiagnosticStatus.WARN, r.message)
        if not np.all(np.isfinite(r.estimate)) or not (np.all(np.isfinite(r.lower)) and np.all(np.isfinite(r.upper))):
            self.drops.drop("non_finite_estimate", "estimate not finite yet; not published")
            return
        msg = self.InertialEstimate()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.robot.payload_frame
        msg.body = "payload"
        msg.method = r.method
        msg.parameter_names = r.parameter_names
        msg.estimate, msg.lower, msg.upper = r.estimate.tolist(), r.lower.tolist(), r.upper.tolist()
        msg.covariance = r.covariance.ravel().tolist()
        msg.physically_consistent = r.physically_consistent
        msg.bounds_guaranteed = r.bounds_guaranteed
        msg.data_consistent = r.data_consistent
        msg.samples_used = r.samples_used
        msg.condition_number = float(r.condition_number) if np.isfinite(r.condition_number) else -1.0
        self.pub.publish(msg)
        self.pub_markers.publish(self.markers(r.estimate, msg.header))

    def markers(self, pi, header) -> MarkerArray:
        """COM sphere and the box of uniform density with the estimated mass and inertia."""
        out = MarkerArray()
        if not (pi[0] > 0 and params.is_physically_consistent(pi)):
            return out
        m, c, I_C = params.com_from_params(pi)
        eig, R = np.linalg.eigh(I_C)
        if np.linalg.det(R) < 0:
            R[:, 0] = -R[:, 0]
        # box with principal moments eig: side_i^2 = 6/m (sum(eig) - 2 eig_i)
        sides = np.sqrt(np.clip(6.0 / m * (eig.sum() - 2 * eig), 1e-8, None))
        quat = pin.Quaternion(R)
        for k, (mtype, scale, rgba) in enumerate(((Marker.SPHERE, [0.03] * 3, (1.0, 0.2, 0.2, 1.0)),
                                                   (Marker.CUBE, sides.tolist(), (0.2, 0.6, 1.0, 0.4)))):
            mk = Marker()
            mk.header = header
            mk.ns, mk.id, mk.type, mk.action = "payload", k, mtype, Marker.ADD
            mk.pose.position.x, mk.pose.position.y, mk.pose.position.z = c.tolist()
            mk.pose.orientation.x, mk.pose.orientation.y, mk.pose.orientation.z, mk.pose.orientation.w = (
                (0.0, 0.0, 0.0, 1.0) if k == 0 else (quat.x, quat.y, quat.z, quat.w))
            mk.scale.x, mk.scale.y, mk.scale.z = scale
            mk.color.r, mk.color.g, mk.color.b, mk.color.a = rgba
            out.markers.append(mk)
        return out


def main(args=None) -> int:
    return run_node(EstimatorNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
