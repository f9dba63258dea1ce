"""The identified payload in the forms its users take it: mass, centre of mass and inertia about the
centre of mass (geometry_msgs/Inertia, URDF ``<inertial>``, a driver's set-load call), with the
intervals the guaranteed box implies, and the rules for when ``~/apply`` may hand it to a robot.

Input is the per-body parameter vector of :mod:`inertial_id.core.robot.params` (pinocchio order, inertia
about the payload-frame origin, SI units) and its box ``[lower, upper]``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

# xArm C++ SDK (xArm-Developer/xArm-CPLUS-SDK, include/xarm/wrapper/xarm_api.h, set_tcp_load):
# "weight: load weight (unit: kg); center_of_gravity: [x(mm), y(mm), z(mm)]"; xarm_ros2's
# set_tcp_load service passes both through unchanged (xarm_api/src/xarm_driver_service.cpp).
XARM_COM_MM_PER_M = 1000.0


@dataclass(frozen=True)
class PayloadInertia:
    """Mass (kg), centre of mass (m) and inertia about the centre of mass (kg m^2, axes of the
    payload frame), all in ``frame``."""
    mass_kg: float
    com_m: np.ndarray
    inertia_com_kg_m2: np.ndarray
    frame: str = ""

    @classmethod
    def from_params(cls, pi, frame: str = "") -> PayloadInertia:
        """From ``pi`` (pinocchio order, inertia about the frame origin). Requires a positive mass."""
        pi = np.asarray(pi, dtype=float)
        if not (pi.shape == (10,) and np.all(np.isfinite(pi)) and pi[0] > 0.0):
            raise ValueError(f"no centre of mass without a finite positive mass (m = {pi[0] if pi.size else 'none'})")
        inertia = pin.Inertia.FromDynamicParameters(pi)
        return cls(float(inertia.mass), np.array(inertia.lever), np.array(inertia.inertia), frame)

    def params(self) -> np.ndarray:
        """Back to ``pi`` (pinocchio order, inertia about the frame origin)."""
        return pin.Inertia(self.mass_kg, self.com_m, self.inertia_com_kg_m2).toDynamicParameters()


def com_interval(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Every centre of mass ``c = h / m`` the box allows (interval division, exact per axis); the
    whole line when the box allows a mass of zero or less."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not lower[0] > 0.0:
        return np.full(3, -np.inf), np.full(3, np.inf)
    quotients = np.array([[h / m for m in (lower[0], upper[0])] for h in (lower[1:4], upper[1:4])]).reshape(4, 3)
    return quotients.min(axis=0), quotients.max(axis=0)


def payload_levers_m(model: pin.Model, payload_frame_id: int) -> np.ndarray:
    """Per joint, an upper bound (m) of the payload frame origin's distance from the joint's axis over
    every configuration: the sum of the joint placements' lengths from that joint out to the frame;
    NaN for a joint that does not carry the payload."""
    frame = model.frames[payload_frame_id]
    levers = np.full(model.nv, np.nan)
    reach, joint = float(np.linalg.norm(frame.placement.translation)), frame.parentJoint
    while joint > 0:
        levers[model.joints[joint].idx_v] = reach
        reach += float(np.linalg.norm(model.jointPlacements[joint].translation))
        joint = model.parents[joint]
    return levers


def gravity_shares(model: pin.Model) -> np.ndarray:
    """Per joint, the largest ``|axis x g| / |g|`` over every configuration: the sine of the angle
    between gravity and the axis of a joint on the base, whose axis never moves (0 for the vertical
    first joint of an upright arm: gravity puts no torque on it), and 1 elsewhere."""
    data = model.createData()
    J = pin.computeJointJacobians(model, data, pin.neutral(model))
    g = model.gravity.linear / np.linalg.norm(model.gravity.linear)
    shares = np.ones(model.nv)
    for joint in range(1, model.njoints):
        if model.parents[joint] == 0:
            v = model.joints[joint].idx_v
            shares[v] = float(np.linalg.norm(np.cross(J[3:, v], g)))
    return shares


@dataclass(frozen=True)
class ApplyLimits:
    """The profile's ``apply:`` section: interface, where it goes, and the need the gate follows from:
    the static torque error per joint the robot's controller tolerates (N m), with each joint's lever
    to the payload (:func:`payload_levers_m`), the share of gravity its axis can feel
    (:func:`gravity_shares`) and the magnitude of gravity."""
    interface: str
    service: str | None       # the driver's set-load service (None: no driver interface)
    topic: str
    tolerated_torque_Nm: np.ndarray | None
    levers_m: np.ndarray
    gravity_shares: np.ndarray
    gravity_m_s2: float
    timeout_s: float

    @classmethod
    def from_robot(cls, robot) -> ApplyLimits:
        """The limits of ``robot``'s profile ``apply:`` section, on its model."""
        a = robot.spec.apply
        need = None if a.tolerated_torque_Nm is None else np.asarray(a.tolerated_torque_Nm, dtype=float)
        return cls(a.interface, a.driver_service(), a.topic, need, payload_levers_m(robot.model, robot.payload_frame_id),
                   gravity_shares(robot.model), float(np.linalg.norm(robot.model.gravity.linear)), a.timeout_s)

    def static_torque_error_Nm(self, mass_error_kg: float, first_moment_error_kg_m: float) -> np.ndarray:
        """Per joint, the largest change of the payload's gravity torque when its mass changes by
        ``mass_error_kg`` and its first moment ``m c`` by a vector of length ``first_moment_error_kg_m``,
        in any configuration: ``share g (|dm| lever + |d(m c)|)`` (the torque is ``axis . (p x m g + R (m c) x g)``
        ``= (axis x g) . (m p + R (m c))``, linear in both; ``|p|`` is at most the lever)."""
        error = self.gravity_shares * self.gravity_m_s2 * (abs(mass_error_kg) * self.levers_m
                                                           + abs(first_moment_error_kg_m))
        return np.nan_to_num(error, nan=0.0)

    def box_torque_error_Nm(self, estimate, lower, upper) -> np.ndarray:
        """Per joint, the largest static torque error of handing over ``estimate`` when the truth is
        any payload of the box ``[lower, upper]`` (which holds the estimate): each parameter errs by
        at most its farther distance to the box's faces, about half the box's width for an estimate
        near its centre."""
        estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
        reach = np.maximum(estimate - lower, upper - estimate)
        return self.static_torque_error_Nm(reach[0], float(np.linalg.norm(reach[1:4])))

    def tolerated(self, torque_error_Nm) -> bool:
        """Whether a per-joint torque error is within the stated need."""
        return self.tolerated_torque_Nm is not None and bool(np.all(torque_error_Nm <= self.tolerated_torque_Nm))

    def max_mass_width_kg(self) -> float:
        """The widest mass interval the need accepts (with the first moment known exactly and the
        estimate at the interval's centre)."""
        with np.errstate(divide="ignore"):
            return float(2.0 * np.nanmin(self.tolerated_torque_Nm / (self.gravity_shares * self.gravity_m_s2 * self.levers_m)))


def refusal(estimate, lower, upper, bounds_guaranteed: bool, data_consistent: bool, limits: ApplyLimits) -> str | None:
    """Why this estimate must not be applied, or None when it may. Only a guaranteed box from
    consistent data, with the estimate inside it, whose static torque error the controller tolerates
    on every joint (:meth:`ApplyLimits.box_torque_error_Nm`), goes to a robot."""
    if limits.interface == "none":
        return "the profile's apply.interface is 'none': no interface to apply the payload through"
    if limits.tolerated_torque_Nm is None:
        return "the profile states no apply.tolerated_torque_Nm: no need to check the box against"
    if estimate is None:
        return "no estimate yet"
    estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
    if not (np.all(np.isfinite(estimate)) and np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return "the estimate or its bounds are not finite"
    if not data_consistent:
        return "the data contradict the assumed noise bounds (data_consistent false)"
    if not bounds_guaranteed:
        return "the bounds are not guaranteed"
    if not np.all((lower <= estimate) & (estimate <= upper)):
        return "the estimate lies outside its guaranteed box"
    if not estimate[0] > 0.0:
        return "the estimate's mass is not positive: it has no centre of mass"
    error = limits.box_torque_error_Nm(estimate, lower, upper)
    if not limits.tolerated(error):
        j = int(np.argmax(error / limits.tolerated_torque_Nm))
        return (f"with the truth anywhere in the box (mass [{lower[0]:.4g}, {upper[0]:.4g}] kg), the estimate's "
                f"static torque error reaches {error[j]:.3g} N m on joint {j + 1}, more than apply.tolerated_torque_Nm = "
                f"{limits.tolerated_torque_Nm[j]:g} there")
    return None


def apply_verdict(limits: ApplyLimits, estimate, lower, upper, bounds_guaranteed: bool, data_consistent: bool) -> dict:
    """What ``~/apply`` would answer on this result, for reports: accepted or why not, the box's
    static torque error per joint and the need it is held against."""
    why = refusal(estimate, lower, upper, bounds_guaranteed, data_consistent, limits)
    need = limits.tolerated_torque_Nm
    return {"accepted": why is None, "refusal": why,
            "torque_error_Nm": limits.box_torque_error_Nm(estimate, lower, upper).tolist()
            if estimate is not None else None,
            "tolerated_torque_Nm": None if need is None else need.tolist()}


def xarm_tcp_load(payload: PayloadInertia) -> tuple[float, list[float]]:
    """(weight kg, centre of gravity [x, y, z] mm) for xarm_msgs/srv/SetTcpLoad. The COM is taken in
    the payload frame, which the xArm profiles set to the flange (link_eef), the frame of the SDK's
    TCP load."""
    return payload.mass_kg, (XARM_COM_MM_PER_M * payload.com_m).tolist()


def _fill_xarm(request, payload: PayloadInertia) -> str:
    request.weight, request.center_of_gravity = xarm_tcp_load(payload)
    return (f"weight {request.weight:.4g} kg, center_of_gravity "
            f"{[round(x, 2) for x in request.center_of_gravity]} mm")


def _fill_ur(request, payload: PayloadInertia) -> str:
    # ur_msgs 2.0.0 (ros-industrial/ur_msgs): float32 mass (kg), geometry_msgs/Vector3
    # center_of_gravity (m, tool flange frame); this version takes no inertia
    request.mass = payload.mass_kg
    cog = request.center_of_gravity
    cog.x, cog.y, cog.z = (float(x) for x in payload.com_m)
    return f"mass {payload.mass_kg:.4g} kg, center_of_gravity {[round(float(x), 5) for x in payload.com_m]} m"


def _fill_franka(request, payload: PayloadInertia) -> str:
    # franka_msgs 0.1.13 SetLoad: float64 mass (kg), float64[3] center_of_mass (m, flange frame),
    # float64[9] load_inertia (kg m^2, about the centre of mass, column-major)
    request.mass = payload.mass_kg
    request.center_of_mass = [float(x) for x in payload.com_m]
    request.load_inertia = [float(x) for x in payload.inertia_com_kg_m2.ravel(order="F")]
    return (f"mass {payload.mass_kg:.4g} kg, center_of_mass {[round(float(x), 5) for x in payload.com_m]} m, "
            f"load_inertia about the COM")


@dataclass(frozen=True)
class DriverLoadService:
    """A driver's set-load service: its type (package, name), how a payload fills its request
    (returns what was sent, for the reply), and what its reply says (``verdict(reply) -> (success,
    message)``). Where the driver serves it: the profile's ``apply.service``
    (:meth:`~inertial_id.core.robot.profile.Apply.driver_service`)."""
    package: str
    type_name: str
    fill: Callable[[Any, PayloadInertia], str]
    verdict: Callable[[Any], tuple[bool, str]]


# The set-load services of the drivers ~/apply calls (profile apply.interface).
DRIVER_SERVICES = {
    "xarm_set_tcp_load": DriverLoadService("xarm_msgs", "SetTcpLoad", _fill_xarm,
                                           lambda r: (r.ret == 0, f"driver ret {r.ret} {r.message}".strip())),
    "ur_set_payload": DriverLoadService("ur_msgs", "SetPayload", _fill_ur,
                                        lambda r: (bool(r.success), f"success {bool(r.success)}")),
    "franka_set_load": DriverLoadService("franka_msgs", "SetLoad", _fill_franka,
                                         lambda r: (bool(r.success), f"success {bool(r.success)} {r.error}".strip())),
}

