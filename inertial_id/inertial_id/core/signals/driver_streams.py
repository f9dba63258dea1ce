"""What a robot's driver publishes, stream by stream, and how the pipeline takes it in.

**Emulation** (:class:`DriverEmulator`): the profile's ``driver`` section lists the driver's
JointState streams and its F/T wrench stream (topic, rate, stamp phase, which fields are filled,
extra joints, wrapped joints). The simulated arm (``sim_robot``) and ``record-sim`` publish exactly
these from the simulator's measurements, so every test and demo sees what a real driver sends:
ros2_kortex's 1 kHz ``/joint_states`` with positions wrapped to [-pi, pi] and a gripper joint with
NaN effort; xarm_ros2's joint_state_broadcaster stream without effort beside the driver's own
``/xarm/joint_states`` and the F/T wrench stamped like it; the Digit bridge's stream. A profile
without a ``driver`` section gets one stream from its ``sensing`` section.

**Pairing** (:func:`pair_wrenches`, :class:`WrenchBuffer`): each joint sample is paired with the
wrench linearly interpolated at its stamp between the two wrench samples around it, when these are
at most :data:`GAP_PERIODS` wrench periods apart (a tolerance derived from the rate, not a
coincidence of stamps); a stamp on a wrench sample takes it as it is. The interpolation error is
added to the row's bound: for a signal of curvature ``M``, linear interpolation at fraction ``s``
of a span ``h`` errs by at most ``s (1 - s) h^2 M / 2``. The true signal's second divided
difference over the preceding sample and the pair is bounded by the measured one plus what the
sensor's error bound can hide in it; that gives the curvature at some instant of the three
samples, and :data:`INTERPOLATION_MARGIN` covers its change across them (the stated assumption:
the wrench's curvature varies by less than that factor over two sample periods, true of the
motion-driven wrench of a payload at 100 Hz, not of impacts). The sensor's own error is not
increased by interpolating (a convex combination of two bounded errors). The live builder and the
offline pipeline both call :func:`pair_wrenches`, so they pair identically and count the same
drop reasons.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robot.profile import ProfileError
from .sensor_inputs import wrap_to_pi
from .sensors import NoiseModel

# Two wrench samples further apart than this many periods are not interpolated between (a sample
# was lost, or the stream paused): the joint samples between them are dropped and counted.
GAP_PERIODS = 1.5
# Safety factor on the curvature estimated from the preceding samples (the interpolation error bound).
INTERPOLATION_MARGIN = 2.0


@dataclass(frozen=True)
class JointStateStream:
    """One JointState stream of the driver (profile ``driver.joint_states[]``)."""

    topic: str
    hz: float
    phase_s: float = 0.0
    effort: bool = True
    extra_joints: tuple = ()
    frame_id: str = ""


@dataclass(frozen=True)
class WrenchStream:
    """The driver's F/T WrenchStamped stream (profile ``driver.wrench``)."""

    topic: str
    hz: float
    frame_id: str
    phase_s: float = 0.0


@dataclass(frozen=True)
class DriverModel:
    """The driver's streams as the profile states them."""

    name: str
    joint_states: tuple
    wrench: WrenchStream | None
    wrapped_joints: tuple

    @classmethod
    def from_robot(cls, robot) -> DriverModel:
        """The driver of ``robot``'s profile (its ``driver`` section, or one joint-state stream from ``sensing``)."""
        drv, sensing = robot.spec.driver, robot.sensing
        streams = tuple(JointStateStream(s.topic, float(s.hz), float(s.phase_s), bool(s.effort),
                                         tuple(s.extra_joints), s.frame_id or "")
                        for s in drv.joint_states)
        if not streams:
            streams = (JointStateStream(sensing.joint_states_topic, float(sensing.joint_states_hz),
                                        effort=bool(sensing.joint_torque)),)
        w = drv.wrench
        wrench = None
        if w:
            wrench = WrenchStream(w.topic, float(w.hz), w.frame_id, float(w.phase_s))
        elif sensing.wrench and robot.ft_frame_id is not None:
            wrench = WrenchStream(sensing.wrench_topic, float(sensing.wrench_hz), robot.wrench_frame_id)
        model = cls(drv.name or "sensing", streams, wrench, tuple(drv.wrapped_joints))
        model.check(robot)
        return model

    def check(self, robot) -> None:
        """The pipeline's settings (``sensing``) must name what the driver publishes."""
        sensing = robot.sensing
        where = f"profile '{robot.name}'"
        unknown = sorted(set(self.wrapped_joints) - set(robot.joint_names))
        if unknown:
            raise ProfileError(f"{where}: driver.wrapped_joints: {unknown[0]} is not one of the profile's joints")
        rows = self.stream(sensing.joint_states_topic)
        if rows is None:
            raise ProfileError(f"{where}: sensing.joint_states_topic {sensing.joint_states_topic} is not one "
                               f"of the driver's streams ({', '.join(s.topic for s in self.joint_states)})")
        if abs(rows.hz - float(sensing.joint_states_hz)) > 1e-9 * rows.hz:
            raise ProfileError(f"{where}: sensing.joint_states_hz {sensing.joint_states_hz:g} differs from "
                               f"the driver's {rows.hz:g} Hz on {rows.topic}")
        if sensing.joint_torque and not rows.effort:
            raise ProfileError(f"{where}: joint torque rows need effort, which the driver leaves NaN on {rows.topic}")
        if sensing.wrench:
            w = self.wrench
            if w is None or w.topic != sensing.wrench_topic:
                raise ProfileError(f"{where}: sensing.wrench_topic {sensing.wrench_topic} is not the driver's "
                                   "wrench stream")
            if abs(w.hz - float(sensing.wrench_hz)) > 1e-9 * w.hz:
                raise ProfileError(f"{where}: sensing.wrench_hz {sensing.wrench_hz:g} differs from the "
                                   f"driver's {w.hz:g} Hz")

    def stream(self, topic: str) -> JointStateStream | None:
        """The joint-state stream published on ``topic`` (None: the driver has none there)."""
        return next((s for s in self.joint_states if s.topic == topic), None)


@dataclass
class JointStateOut:
    """A JointState to publish: stamp ``t`` (s of simulated time), fields in ``names`` order."""

    topic: str
    t: float
    names: list
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    frame_id: str = ""


@dataclass
class WrenchOut:
    """One wrench message the emulated driver publishes: topic, stamp (s), frame and ``[f (N), tau (N m)]``."""
    topic: str
    t: float
    frame_id: str
    wrench: np.ndarray


class DriverEmulator:
    """Turns the simulator's measurement at each step into what the driver publishes at that
    instant (:meth:`outputs`); call it at every simulator step. ``extra_joints`` adds joints to
    every JointState stream (a gripper the profile does not state)."""

    def __init__(self, robot, step_hz: float, extra_joints=()):
        self.model = DriverModel.from_robot(robot)
        self.joint_names = list(robot.joint_names)
        self.step_hz = float(step_hz)
        self.extra = tuple(extra_joints)
        for s in self.model.joint_states + ((self.model.wrench,) if self.model.wrench else ()):
            if s.hz > self.step_hz * (1 + 1e-9) or not _divides(self.step_hz, s.hz):
                raise ProfileError(f"driver stream {s.topic} at {s.hz:g} Hz: the simulator's step rate "
                                   f"{self.step_hz:g} Hz must be a multiple of it")
        self.wrap = np.array([n in set(self.model.wrapped_joints) for n in self.joint_names], dtype=bool)

    def topics(self) -> dict:
        """topic -> 'joint_state' | 'wrench' of every stream this driver publishes."""
        out = {s.topic: "joint_state" for s in self.model.joint_states}
        if self.model.wrench is not None:
            out[self.model.wrench.topic] = "wrench"
        return out

    def _due(self, t: float, hz: float, phase_s: float) -> bool:
        k = (t - phase_s) * hz
        return k > -0.5 * hz / self.step_hz and abs(k - round(k)) < 0.5 * hz / self.step_hz

    def due(self, t: float) -> bool:
        """Whether any stream publishes at simulated time ``t`` (measure only then)."""
        streams = self.model.joint_states + ((self.model.wrench,) if self.model.wrench else ())
        return any(self._due(t, s.hz, s.phase_s) for s in streams)

    def outputs(self, m) -> list:
        """The messages due at the measurement ``m`` (``core.sim.Measurement``)."""
        out: list[JointStateOut | WrenchOut] = []
        q = np.where(self.wrap, wrap_to_pi(m.q), m.q) if self.wrap.any() else m.q
        for s in self.model.joint_states:
            if not self._due(m.t, s.hz, s.phase_s):
                continue
            extra = list(dict.fromkeys(j for j in self.extra + s.extra_joints if j not in self.joint_names))
            rest, nan = np.zeros(len(extra)), np.full(len(extra), np.nan)
            effort = m.tau if s.effort else np.full(len(self.joint_names), np.nan)
            # a gripper's joint first, as the broadcaster lists it: consumers select by name
            out.append(JointStateOut(s.topic, m.t, extra + self.joint_names, np.concatenate([rest, q]),
                                     np.concatenate([rest, m.qd]), np.concatenate([nan, effort]), s.frame_id))
        w = self.model.wrench
        if w is not None and self._due(m.t, w.hz, w.phase_s):
            out.append(WrenchOut(w.topic, m.t, w.frame_id, np.asarray(m.wrench, dtype=float)))
        return out


def _divides(step_hz: float, hz: float) -> bool:
    k = step_hz / hz
    return abs(k - round(k)) < 1e-9 * k


# --- wrench pairing ---------------------------------------------------------------------------------

@dataclass
class WrenchPairs:
    """Per joint stamp: the wrench at it, the bound of its interpolation error (added to the rows'
    bounds) and why it could not be paired (``None``: paired)."""

    wrench: np.ndarray          # (N, 6)
    extra_bound: np.ndarray     # (N, 6)
    reason: list                # str | None per stamp

    @property
    def ok(self) -> np.ndarray:
        """(N,) bool: the joint stamps that were paired with a wrench."""
        return np.array([r is None for r in self.reason], dtype=bool)

    @property
    def interpolated(self) -> int:
        """How many paired stamps got their wrench by interpolation (a nonzero added bound)."""
        return int(np.count_nonzero(self.ok & np.any(self.extra_bound > 0, axis=1)))


def max_gap_s(wrench_hz: float) -> float:
    """Widest span between two wrench samples that a joint stamp may be interpolated across."""
    return GAP_PERIODS / float(wrench_hz)


def wrench_sample_bound(robot) -> np.ndarray:
    """The profile's bound on the error of one wrench sample (6,), force then torque."""
    noise = NoiseModel.from_profile(robot.spec)
    return noise.bound_sigmas * noise.wrench_sigma()


def pair_wrenches(t_joint, t_wrench, wrench, max_gap: float, sample_bound=0.0) -> WrenchPairs:
    """The wrench at each of ``t_joint`` from the samples ``(t_wrench (M,) increasing, wrench (M, 6))``
    whose errors are within ``sample_bound`` (6,) (:func:`wrench_sample_bound`)."""
    t = np.atleast_1d(np.asarray(t_joint, dtype=float))
    tw = np.asarray(t_wrench, dtype=float)
    w = np.asarray(wrench, dtype=float).reshape(-1, 6)
    n, m = t.size, tw.size
    out_w, extra = np.zeros((n, 6)), np.zeros((n, 6))
    reason: list = [None] * n
    if m == 0:
        return WrenchPairs(out_w, extra, ["no_matching_wrench"] * n)
    k = np.searchsorted(tw, t, side="right") - 1          # last wrench at or before the stamp
    exact = (k >= 0) & (tw[np.clip(k, 0, m - 1)] == t)
    kc = np.clip(k, 0, m - 1)
    out_w[exact] = w[kc[exact]]
    inner = ~exact & (k >= 0) & (k + 1 < m)
    for i in np.flatnonzero(~exact & ~inner):
        reason[i] = "no_matching_wrench"
    if inner.any():
        a = k[inner]
        h = tw[a + 1] - tw[a]
        h_prev = np.where(a >= 1, tw[a] - tw[np.maximum(a - 1, 0)], np.inf)
        usable = (h <= max_gap) & (h_prev <= max_gap)
        s = ((t[inner] - tw[a]) / h)[:, None]
        w0, w1 = w[a], w[a + 1]
        # second divided difference over (a-1, a, a+1) (half the curvature at some instant of them),
        # plus the most the samples' errors can have taken off it
        wp = w[np.maximum(a - 1, 0)]
        span = (h + h_prev)[:, None]
        hidden = 2.0 * np.asarray(sample_bound, dtype=float) * (1.0 / h + 1.0 / h_prev)[:, None] / span
        dd = np.abs((w1 - w0) / h[:, None] - (w0 - wp) / h_prev[:, None]) / span + hidden
        idx = np.flatnonzero(inner)
        out_w[idx] = (1.0 - s) * w0 + s * w1
        extra[idx] = INTERPOLATION_MARGIN * s * (1.0 - s) * (h ** 2)[:, None] * dd
        for j, i in enumerate(idx):
            if not usable[j]:     # a wrench lost around the stamp, or none before the pair (the stream's start)
                reason[i] = "wrench_gap" if a[j] >= 1 else "no_matching_wrench"
    bad = [i for i, r in enumerate(reason) if r is not None]
    out_w[bad], extra[bad] = 0.0, 0.0
    return WrenchPairs(out_w, extra, reason)


class WrenchBuffer:
    """The live side of :func:`pair_wrenches`: the recent wrench samples of one stream."""

    def __init__(self, max_gap: float, sample_bound=0.0, keep: int = 400):
        self.max_gap = max_gap
        self.sample_bound = sample_bound
        self.keep = keep
        self.t: list[float] = []
        self.w: list[np.ndarray] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def reset(self) -> None:
        """Forget every sample (e.g. after a gap or a clock jump)."""
        self.t, self.w, self._arrays = [], [], None

    def add(self, t: float, w) -> None:
        """A wrench sample ``w`` (6,) stamped ``t`` (s); keeps the newest ``keep`` samples."""
        self.t.append(t)
        self.w.append(np.asarray(w, dtype=float))
        if len(self.t) > 2 * self.keep:
            del self.t[:-self.keep], self.w[:-self.keep]
        self._arrays = None

    @property
    def newest(self) -> float:
        """Stamp (s) of the newest sample (-inf: none yet)."""
        return self.t[-1] if self.t else -np.inf

    def ready(self, t: float) -> bool:
        """Whether the samples that decide the pairing at ``t`` have arrived."""
        return self.newest >= t

    def pair(self, t: float):
        """``(wrench, extra_bound, reason)`` at ``t``."""
        if self._arrays is None:
            self._arrays = (np.array(self.t), np.array(self.w).reshape(-1, 6))
        p = pair_wrenches([t], *self._arrays, self.max_gap, self.sample_bound)
        return p.wrench[0], p.extra_bound[0], p.reason[0]
