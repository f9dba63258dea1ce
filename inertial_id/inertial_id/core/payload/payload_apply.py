"""The identified payload in the forms its users take it: mass, centre of mass and inertia about the
centre of mass (geometry_msgs/Inertia, URDF ``<inertial>``, a driver's set-load call), with the
intervals the guaranteed box implies, and the rules for when ``~/apply`` may hand it to a robot.

Input is the per-body parameter vector of :mod:`inertial_id.core.robot.params` (pinocchio order, inertia
about the payload-frame origin, SI units) and its box ``[lower, upper]``.
"""
from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class ApplyLimits:
    """The profile's ``apply:`` section: interface, where it goes, and how narrow the box must be."""
    interface: str
    service: str
    topic: str
    max_mass_width_kg: float
    max_com_width_m: float
    timeout_s: float

    @classmethod
    def from_profile(cls, profile: dict) -> ApplyLimits:
        """The limits of the profile's ``apply:`` section."""
        a = profile["apply"]
        return cls(a["interface"], a["service"], a["topic"], a["max_mass_width_kg"], a["max_com_width_m"],
                   a["timeout_s"])


def refusal(estimate, lower, upper, bounds_guaranteed: bool, data_consistent: bool, limits: ApplyLimits) -> str | None:
    """Why this estimate must not be applied, or None when it may. Only a guaranteed box from
    consistent data, narrow enough on mass and centre of mass, with the estimate inside it, goes to
    a robot."""
    if limits.interface == "none":
        return "the profile's apply.interface is 'none': no interface to apply the payload through"
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
    mass_width = upper[0] - lower[0]
    if mass_width > limits.max_mass_width_kg:
        return (f"the mass interval [{lower[0]:.4g}, {upper[0]:.4g}] kg is {mass_width:.4g} kg wide, "
                f"more than apply.max_mass_width_kg = {limits.max_mass_width_kg:g}")
    if not lower[0] > 0.0:
        return "the box allows a mass of zero: the centre of mass is unbounded"
    c_lo, c_hi = com_interval(lower, upper)
    com_width = float(np.max(c_hi - c_lo))
    if com_width > limits.max_com_width_m:
        return (f"the centre-of-mass interval is {1000 * com_width:.3g} mm wide on its widest axis, more than "
                f"apply.max_com_width_m = {limits.max_com_width_m:g} m")
    return None


def xarm_tcp_load(payload: PayloadInertia) -> tuple[float, list[float]]:
    """(weight kg, centre of gravity [x, y, z] mm) for xarm_msgs/srv/SetTcpLoad. The COM is taken in
    the payload frame, which the xArm profiles set to the flange (link_eef), the frame of the SDK's
    TCP load."""
    return payload.mass_kg, (XARM_COM_MM_PER_M * payload.com_m).tolist()
