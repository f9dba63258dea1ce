"""Parsing and checking of sensor messages. Each check returns a drop reason (a short key used as
the /diagnostics counter name) and a detail, or the parsed arrays in the profile's joint order."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# Readings beyond these multiples of the profile limits are not physical: a unit or driver fault.
ABSURD_FACTOR = 10.0
# How far ahead of the node's clock a stamp may be (clock offset between hosts, sender jitter). A
# stamp beyond it is dropped without becoming the reference for later stamps: one bad stamp must
# not make every following valid message look old.
FUTURE_TOLERANCE_S = 0.25


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


def checked_stamp(stamp, now_s: float | None, future_tolerance_s: float = FUTURE_TOLERANCE_S,
                  prefix: str = "") -> float:
    """Seconds of a header stamp; rejects invalid ones and ones ahead of ``now_s`` (the receiving
    node's clock; ``None`` or 0, e.g. simulated time not started yet: no check)."""
    if not 0 <= stamp.nanosec < 1_000_000_000:
        raise Rejected(f"{prefix}invalid_stamp", f"nanosec {stamp.nanosec} out of range")
    t = stamp.sec + 1e-9 * stamp.nanosec
    if now_s and t > now_s + future_tolerance_s:
        raise Rejected(f"{prefix}stamp_in_future", f"stamp {t:.6f} s is {t - now_s:.3g} s ahead of the clock")
    return t


class StampOrder:
    """Stamps of one stream must increase. A stamp ahead of the stream (within the clock
    tolerance) would otherwise make every later valid message look old: after ``resync_after``
    consecutive older stamps that do not decrease among themselves, the stream is followed from there (the
    one ahead was the outlier, or the source restarted)."""

    def __init__(self, reason: str = "stamp_not_increasing", resync_after: int = 10):
        self.reason = reason
        self.resync_after = resync_after
        self.last_t = -np.inf
        self._run, self._run_last = 0, -np.inf

    def check(self, t: float) -> bool:
        """True if ``t`` restarts the stream (it is not after the previous stamp); raises
        :class:`Rejected` for a stamp that is not increasing."""
        if t > self.last_t:
            self.last_t, self._run = t, 0
            return False
        self._run = self._run + 1 if (self._run and t >= self._run_last) else 1
        self._run_last = t
        if self._run < self.resync_after:
            raise Rejected(self.reason, f"stamp {t:.6f} s after {self.last_t:.6f} s")
        self.last_t, self._run = t, 0
        return True


class JointStateParser:
    """JointState -> JointSample in profile order; checks names, lengths, finiteness, magnitudes
    and that stamps increase without running ahead of ``clock_s()`` (seconds of the node's clock;
    ``None``: no check). Joints the profile does not name (a gripper's ``finger_joint`` in the
    driver's message) are ignored."""

    def __init__(self, robot, need_effort: bool, clock_s=None, future_tolerance_s: float = FUTURE_TOLERANCE_S):
        self.joint_names = list(robot.joint_names)
        self.need_effort = need_effort
        self.clock_s = clock_s
        self.future_tolerance_s = future_tolerance_s
        # largest plausible |q|, |qd|, |tau| per joint (rows), in the order of the message fields
        self.max_reading = ABSURD_FACTOR * np.array([
            np.maximum(np.abs(robot.position_lower), np.abs(robot.position_upper)).clip(min=np.pi),
            robot.velocity_limit, robot.torque_limit])
        self.order = StampOrder()
        self._order_cache: tuple[tuple[str, ...], np.ndarray] | None = None

    def _order(self, names) -> np.ndarray:
        names = tuple(names)
        if self._order_cache and self._order_cache[0] == names:
            return self._order_cache[1]
        if len(set(names)) != len(names):
            raise Rejected("duplicate_joint", "a joint name appears twice")
        missing = [n for n in self.joint_names if n not in names]
        if missing:
            raise Rejected("missing_joint", f"joints {missing} are missing")
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
        # one array and two reductions: this runs for every message of a kHz driver stream
        fields = (msg.position, msg.velocity, msg.effort) if len(msg.effort) else (msg.position, msg.velocity)
        x = np.array(fields, dtype=float)[:, order]
        if not np.isfinite(x).all():
            raise Rejected("non_finite", "NaN or Inf in the joint state")
        if (np.abs(x) > self.max_reading[:len(fields)]).any():
            raise Rejected("absurd_magnitude", f"reading beyond {ABSURD_FACTOR:g}x the profile limits")
        q, qd, tau = x[0], x[1], (x[2] if len(fields) == 3 else None)
        t = checked_stamp(msg.header.stamp, self.clock_s() if self.clock_s else None, self.future_tolerance_s)
        self.order.check(t)
        return JointSample(t, q, qd, tau)


def parse_wrench(msg, expected_frame: str, max_force_N: float = 1e4, max_torque_Nm: float = 1e3,
                 now_s: float | None = None, future_tolerance_s: float = FUTURE_TOLERANCE_S):
    """WrenchStamped -> (t, [f; n]); checks the frame, the stamp (against ``now_s``, the node's
    clock), finiteness and magnitudes."""
    if msg.header.frame_id != expected_frame:
        raise Rejected("wrench_wrong_frame", f"frame '{msg.header.frame_id}', expected '{expected_frame}'")
    f, n = msg.wrench.force, msg.wrench.torque
    w = np.array([f.x, f.y, f.z, n.x, n.y, n.z])
    if not np.all(np.isfinite(w)):
        raise Rejected("wrench_non_finite", "NaN or Inf in the wrench")
    # the largest component first: the norm of values near 1e300 overflows
    if (np.max(np.abs(w[:3])) > max_force_N or np.max(np.abs(w[3:])) > max_torque_Nm
            or np.linalg.norm(w[:3]) > max_force_N or np.linalg.norm(w[3:]) > max_torque_Nm):
        raise Rejected("wrench_absurd_magnitude", "wrench beyond the sensor's plausible range")
    return checked_stamp(msg.header.stamp, now_s, future_tolerance_s, prefix="wrench_"), w


def lost_message_events(drops, reason: str):
    """Event callbacks that count, under ``reason``, the messages DDS reports lost on a
    subscription (sequence gaps from a writer, samples overwritten before this node took them):
    input lost to load is counted like any other drop."""
    from rclpy.event_handler import SubscriptionEventCallbacks

    def on_lost(info) -> None:
        if info.total_count_change > 0:
            drops.counts[reason] += info.total_count_change
            drops.node.get_logger().warning(f"{info.total_count_change} messages lost before this node "
                                            f"took them ({info.total_count} so far)", throttle_duration_sec=2.0)
    return SubscriptionEventCallbacks(message_lost=on_lost)
