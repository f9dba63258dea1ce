"""Parsing and checking of the drivers' sensor messages, ROS-free: the live nodes (rclpy messages)
and the offline converters (rosbags messages) run this one path, so a recording is accepted
exactly as the live stream would be.

Each check raises :class:`Rejected` with a drop reason (a short key used as the /diagnostics and
offline counter name) and a detail; a parsed joint state is returned in the profile's joint order,
with the continuous joints the driver wraps to [-pi, pi] unwrapped (:class:`Unwrapper`) and only
the fields the consumer uses checked (a driver that leaves effort NaN is fine for wrench rows).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robot.profile import RobotProfile
from .stamps import stamp_s

# Readings beyond these multiples of the profile limits are not physical: a unit or driver fault.
ABSURD_FACTOR = 10.0
# How far ahead of the node's clock a stamp may be (clock offset between hosts, sender jitter). A
# stamp beyond it is dropped without becoming the reference for later stamps: one bad stamp must
# not make every following valid message look old.
FUTURE_TOLERANCE_S = 0.25
TWO_PI = 2.0 * np.pi


@dataclass
class JointSample:
    """One joint-state sample in the model's joint order: stamp (s), ``q`` (rad), ``qd`` (rad/s), ``tau`` (N m, None without effort)."""
    t: float
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray | None


@dataclass
class ParsedBlock:
    """What :meth:`JointStateParser.parse_block` made of a block of messages: the accepted ones'
    ``index`` (into the block) and samples, and how many of the others each reason dropped."""
    index: np.ndarray
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray | None
    dropped: dict

    @classmethod
    def of(cls, reason: np.ndarray, t, q, qd, tau) -> ParsedBlock:
        """From each message's drop reason ("" for accepted) and the accepted samples."""
        why, count = np.unique(reason[reason != ""].astype(str), return_counts=True)
        return cls(np.flatnonzero(reason == ""), t, q, qd, tau, dict(zip(why.tolist(), count.tolist())))


class Rejected(Exception):
    """An input that cannot be used: ``reason`` (the counter's key) and a human-readable ``detail``."""
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def checked_stamp(stamp, now_s: float | None, future_tolerance_s: float = FUTURE_TOLERANCE_S,
                  prefix: str = "") -> float:
    """Seconds of a header stamp; rejects invalid ones and ones ahead of ``now_s`` (the receiving
    node's clock; ``None`` or 0, e.g. simulated time not started yet or offline: no check)."""
    if not 0 <= stamp.nanosec < 1_000_000_000:
        raise Rejected(f"{prefix}invalid_stamp", f"nanosec {stamp.nanosec} out of range")
    t = stamp_s(stamp)
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

    def check_many(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`check` of each of ``t`` in turn: ``(accepted, restarts)`` masks."""
        if t.size and t[0] > self.last_t and np.all(t[1:] > t[:-1]):      # the usual case, at once
            self.last_t, self._run = t[-1], 0
            return np.ones(t.size, dtype=bool), np.zeros(t.size, dtype=bool)
        accepted, restarts = np.zeros(t.size, dtype=bool), np.zeros(t.size, dtype=bool)
        for k, tk in enumerate(t.tolist()):
            try:
                restarts[k] = self.check(tk)
                accepted[k] = True
            except Rejected:
                pass
        return accepted, restarts


def wrap_to_pi(q):
    """Angles wrapped to [-pi, pi), as ros2_kortex publishes its joint positions."""
    return np.mod(np.asarray(q, dtype=float) + np.pi, TWO_PI) - np.pi


class Unwrapper:
    """Joint positions a driver wraps to [-pi, pi] made continuous again: each reading of a wrapped
    joint is moved by whole turns to the branch nearest the previous accepted reading (the joint
    turns less than half a turn between two samples: at 1.4 rad/s, for 2 s). The first reading
    after :meth:`reset` is kept as published; a continuous joint's dynamics do not depend on the
    branch."""

    def __init__(self, wrapped_mask):
        self.mask = np.asarray(wrapped_mask, dtype=bool)
        self.any = bool(self.mask.any())
        self.last: np.ndarray | None = None

    def reset(self) -> None:
        """Forget the previous reading (the next one is kept as published)."""
        self.last = None

    def __call__(self, q: np.ndarray) -> np.ndarray:
        if not self.any:
            return q
        if self.last is not None:
            q = q.copy()
            m = self.mask
            q[m] += TWO_PI * np.round((self.last[m] - q[m]) / TWO_PI)
        self.last = q
        return q

    def many(self, Q: np.ndarray) -> np.ndarray:
        """This called on each row of ``Q`` in turn, to the bit: the whole turns each row is moved by
        come from the rows' differences at once and are kept if each is what the row-by-row rule
        gives from the row before (it is, unless a step lands within rounding of half a turn)."""
        if not self.any or Q.shape[0] == 0:
            return Q
        m = self.mask
        q = Q[:, m]
        anchor = q[:1] if self.last is None else self.last[None, m]     # the first reading: turns 0
        turns = np.cumsum(np.vstack([np.round((anchor - q[:1]) / TWO_PI), np.round((q[:-1] - q[1:]) / TWO_PI)]), axis=0)
        moved = q + TWO_PI * turns
        if not np.array_equal(np.round((np.vstack([anchor, moved[:-1]]) - q) / TWO_PI), turns):
            return np.array([self(row) for row in Q])
        out = Q.copy()
        out[:, m] = moved
        if self.last is None:
            out[0] = Q[0]           # kept as published (adding no turn would turn -0.0 into 0.0)
        self.last = out[-1]
        return out


def wrapped_mask(profile: RobotProfile, joint_names) -> np.ndarray:
    """Which of ``joint_names`` the profile's driver publishes wrapped (``driver.wrapped_joints``)."""
    wrapped = set(profile.driver.wrapped_joints)
    return np.array([n in wrapped for n in joint_names], dtype=bool)


class JointStateParser:
    """JointState -> JointSample in profile order; checks names, lengths, finiteness and magnitudes
    of the fields used (effort only when ``need_effort``: a driver may leave it NaN, and wrench rows
    do not use it), that stamps increase without running ahead of ``clock_s()`` (seconds of the
    receiving clock; ``None``: no check), and unwraps the joints the driver wraps. Joints the profile
    does not name (a gripper's ``robotiq_85_left_knuckle_joint`` with NaN effort) are ignored.

    ``need_effort=None`` (readers without a consumer, e.g. converting a recording): effort is
    taken and checked when the message has it."""

    def __init__(self, robot, need_effort: bool | None, clock_s=None, future_tolerance_s: float = FUTURE_TOLERANCE_S):
        self.joint_names = list(robot.joint_names)
        self.need_effort = need_effort
        self.clock_s = clock_s
        self.future_tolerance_s = future_tolerance_s
        # largest plausible |q|, |qd|, |tau| per joint (rows), in the order of the message fields
        self.max_reading = ABSURD_FACTOR * np.array([
            np.maximum(np.abs(robot.position_lower), np.abs(robot.position_upper)).clip(min=np.pi),
            robot.velocity_limit, robot.torque_limit])
        self.unwrap = Unwrapper(wrapped_mask(robot.spec, self.joint_names))
        self.order = StampOrder()
        self._order_cache: tuple[tuple[str, ...], np.ndarray] | None = None

    @classmethod
    def for_names(cls, joint_names, need_effort: bool | None = None, wrapped=()) -> JointStateParser:
        """A parser without a robot model: no magnitude limits, ``wrapped`` joints unwrapped."""
        self = cls.__new__(cls)
        self.joint_names = list(joint_names)
        self.need_effort = need_effort
        self.clock_s, self.future_tolerance_s = None, FUTURE_TOLERANCE_S
        self.max_reading = np.full((3, len(self.joint_names)), np.inf)
        self.unwrap = Unwrapper([n in set(wrapped) for n in self.joint_names])
        self.order = StampOrder()
        self._order_cache = None
        return self

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
        """A JointState message as a :class:`JointSample` in the model's joint order; :class:`Rejected` with the reason when it cannot be used."""
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) != n:
            raise Rejected("wrong_length", f"{n} names, {len(msg.position)} positions, {len(msg.velocity)} velocities")
        n_effort = len(msg.effort)
        if self.need_effort and n_effort == 0:
            raise Rejected("missing_effort", "joint torque rows need the effort field")
        use_effort = n_effort > 0 and self.need_effort is not False
        if use_effort and n_effort != n:
            raise Rejected("wrong_length", f"{n} names, {n_effort} efforts")
        order = self._order(msg.name)
        # one array and two reductions: this runs for every message of a kHz driver stream
        fields = (msg.position, msg.velocity, msg.effort) if use_effort else (msg.position, msg.velocity)
        x = np.array(fields, dtype=float)[:, order]
        if not np.isfinite(x).all():
            raise Rejected("non_finite", "NaN or Inf in the joint state"
                           + (" (effort included: joint torque rows use it)" if use_effort else ""))
        if (np.abs(x) > self.max_reading[:len(fields)]).any():
            raise Rejected("absurd_magnitude", f"reading beyond {ABSURD_FACTOR:g}x the profile limits")
        t = checked_stamp(msg.header.stamp, self.clock_s() if self.clock_s else None, self.future_tolerance_s)
        if self.order.check(t):
            self.unwrap.reset()       # a restarted stream: no continuity with what came before
        return JointSample(t, self.unwrap(x[0]), x[1], x[2] if use_effort else None)

    def parse_block(self, block) -> ParsedBlock:
        """:meth:`parse` of each message of a recorded :class:`~..data.joint_state_cdr.JointStateBlock`
        in turn, at once: the same samples, the same reasons, the same state afterwards (stamp order,
        unwrapping). For recordings: a parser with a receiving clock checks each message as it comes."""
        if self.clock_s is not None:
            raise ValueError("parse_block reads recordings: the parser must have no receiving clock")
        N, n = len(block), len(block.names)
        reason = np.full(N, "", dtype=object)

        def rejected(why: str) -> ParsedBlock:
            reason[:] = why
            none = np.zeros((0, len(self.joint_names)))
            return ParsedBlock.of(reason, np.zeros(0), none, none, None)

        if block.position.shape[1] != n or block.velocity.shape[1] != n:
            return rejected("wrong_length")
        n_effort = block.effort.shape[1]
        if self.need_effort and n_effort == 0:
            return rejected("missing_effort")
        use_effort = n_effort > 0 and self.need_effort is not False
        if use_effort and n_effort != n:
            return rejected("wrong_length")
        try:
            order = self._order(block.names)
        except Rejected as r:
            return rejected(r.reason)
        fields = (block.position, block.velocity, block.effort) if use_effort else (block.position, block.velocity)
        x = np.stack(fields, axis=1)[:, :, order]
        finite = np.isfinite(x).all(axis=(1, 2))
        reason[~finite] = "non_finite"
        absurd = finite & (np.abs(x) > self.max_reading[:len(fields)]).any(axis=(1, 2))
        reason[absurd] = "absurd_magnitude"
        stamp_ok = (block.nanosec >= 0) & (block.nanosec < 1_000_000_000)
        reason[(reason == "") & ~stamp_ok] = "invalid_stamp"
        candidates = np.flatnonzero(reason == "")
        t = block.sec[candidates] + 1e-9 * block.nanosec[candidates]
        in_order, restarts = self.order.check_many(t)
        reason[candidates[~in_order]] = self.order.reason
        kept, restarts = candidates[in_order], restarts[in_order]
        q = x[kept, 0]
        pieces = np.split(np.arange(kept.size), np.flatnonzero(restarts))
        for k, piece in enumerate(pieces):
            if k:       # a restarted stream: no continuity with what came before
                self.unwrap.reset()
            q[piece] = self.unwrap.many(q[piece])
        return ParsedBlock.of(reason, t[in_order], q, x[kept, 1], x[kept, 2] if use_effort else None)

    def effort_of(self, msg) -> np.ndarray | None:
        """The effort of a message :meth:`parse` accepted, in profile order, for a reader that does not
        need it to use the message; None when it is absent, not finite or beyond the plausible."""
        if len(msg.effort) != len(msg.name):
            return None
        effort = np.array(msg.effort, dtype=float)[self._order(msg.name)]
        if not np.isfinite(effort).all() or (np.abs(effort) > self.max_reading[2]).any():
            return None
        return effort


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
