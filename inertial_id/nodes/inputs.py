"""Parsing and checking of sensor messages. Each check returns a drop reason (a short key used as
the /diagnostics counter name) and a detail, or the parsed arrays in the profile's joint order."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import stamp_to_s

# Readings beyond these multiples of the profile limits are not physical: a unit or driver fault.
ABSURD_FACTOR = 10.0


@dataclass
class JointSample:
    t: float
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray | None


class Rejected(Exception):
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class JointStateParser:
    """JointState -> JointSample in profile order; checks names, lengths, finiteness, magnitudes
    and that stamps increase."""

    def __init__(self, robot, need_effort: bool):
        self.joint_names = list(robot.joint_names)
        self.need_effort = need_effort
        self.max_q = ABSURD_FACTOR * np.maximum(np.abs(robot.position_lower), np.abs(robot.position_upper)).clip(min=np.pi)
        self.max_qd = ABSURD_FACTOR * robot.velocity_limit
        self.max_tau = ABSURD_FACTOR * robot.torque_limit
        self.last_t = -np.inf
        self._order_cache: tuple[tuple[str, ...], np.ndarray] | None = None

    def _order(self, names) -> np.ndarray:
        names = tuple(names)
        if self._order_cache and self._order_cache[0] == names:
            return self._order_cache[1]
        unknown = [n for n in names if n not in self.joint_names]
        if unknown:
            raise Rejected("unknown_joint", f"joints {unknown} are not in the profile")
        missing = [n for n in self.joint_names if n not in names]
        if missing:
            raise Rejected("missing_joint", f"joints {missing} are missing")
        if len(set(names)) != len(names):
            raise Rejected("duplicate_joint", "a joint name appears twice")
        order = np.array([names.index(n) for n in self.joint_names])
        self._order_cache = (names, order)
        return order

    def parse(self, msg) -> JointSample:
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) != n:
            raise Rejected("wrong_length", f"{n} names, {len(msg.position)} positions, {len(msg.velocity)} velocities")
        if self.need_effort and len(msg.effort) == 0:
            raise Rejected("missing_effort", "joint torque rows need the effort field")
        if len(msg.effort) not in (0, n):
            raise Rejected("wrong_length", f"{n} names, {len(msg.effort)} efforts")
        order = self._order(msg.name)
        q = np.asarray(msg.position, float)[order]
        qd = np.asarray(msg.velocity, float)[order]
        tau = np.asarray(msg.effort, float)[order] if len(msg.effort) else None
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and (tau is None or np.all(np.isfinite(tau)))):
            raise Rejected("non_finite", "NaN or Inf in the joint state")
        if np.any(np.abs(q) > self.max_q) or np.any(np.abs(qd) > self.max_qd) or (
                tau is not None and np.any(np.abs(tau) > self.max_tau)):
            raise Rejected("absurd_magnitude", f"reading beyond {ABSURD_FACTOR:g}x the profile limits")
        t = stamp_to_s(msg.header.stamp)
        if t <= self.last_t:
            raise Rejected("stamp_not_increasing", f"stamp {t:.6f} s after {self.last_t:.6f} s")
        self.last_t = t
        return JointSample(t, q, qd, tau)


def parse_wrench(msg, expected_frame: str, max_force_N: float = 1e4, max_torque_Nm: float = 1e3):
    """WrenchStamped -> (t, [f; n]); checks the frame, finiteness and magnitudes."""
    if msg.header.frame_id != expected_frame:
        raise Rejected("wrench_wrong_frame", f"frame '{msg.header.frame_id}', expected '{expected_frame}'")
    f, n = msg.wrench.force, msg.wrench.torque
    w = np.array([f.x, f.y, f.z, n.x, n.y, n.z])
    if not np.all(np.isfinite(w)):
        raise Rejected("wrench_non_finite", "NaN or Inf in the wrench")
    if np.linalg.norm(w[:3]) > max_force_N or np.linalg.norm(w[3:]) > max_torque_Nm:
        raise Rejected("wrench_absurd_magnitude", "wrench beyond the sensor's plausible range")
    return stamp_to_s(msg.header.stamp), w
