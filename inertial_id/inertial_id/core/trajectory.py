"""Joint trajectories: the fixed Fourier-series excitation, sampling, limit checks, interpolation.

A trajectory is a :class:`SampledTrajectory` (times, q, qd, qdd on a grid); controllers interpolate
between its points with quintic Hermite splines (what joint_trajectory_controller does when
positions, velocities and accelerations are given).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SampledTrajectory:
    """A joint trajectory sampled at times ``t``."""
    t: np.ndarray      # (N,) seconds from the trajectory start
    q: np.ndarray      # (N, n) rad
    qd: np.ndarray     # (N, n) rad/s
    qdd: np.ndarray    # (N, n) rad/s^2

    @property
    def duration(self) -> float:
        """Duration (s)."""
        return float(self.t[-1])

    def resample(self, hz: float) -> SampledTrajectory:
        """The trajectory resampled at ``hz`` (the last sample at the end)."""
        t = np.arange(0.0, self.duration + 0.5 / hz, 1.0 / hz)
        t[-1] = min(t[-1], self.duration)
        q, qd, qdd = interpolate(self, t)
        return SampledTrajectory(t, q, qd, qdd)


@dataclass(frozen=True)
class LimitReport:
    """Whether a trajectory keeps the joint limits, its smallest margins, and a message."""
    ok: bool
    min_position_margin: float     # rad, over the samples (negative = violated)
    min_velocity_margin: float     # rad/s
    min_acceleration_margin: float  # rad/s^2
    message: str


def quintic_ramp(t, T):
    """0 -> 1 over [0, T] with zero first and second derivatives at both ends; (s, s', s'')."""
    x = np.clip(np.asarray(t, float) / T, 0.0, 1.0)
    s = 10 * x**3 - 15 * x**4 + 6 * x**5
    ds = (30 * x**2 - 60 * x**3 + 30 * x**4) / T
    dds = (60 * x - 180 * x**2 + 120 * x**3) / T**2
    inside = (np.asarray(t) > 0) & (np.asarray(t) < T)
    return s, np.where(inside, ds, 0.0), np.where(inside, dds, 0.0)


def fourier_excitation(home, amplitude_rad, period_s: float, harmonics: int, duration_s: float,
                       sample_hz: float, seed: int = 0, ramp_s: float = 1.5) -> SampledTrajectory:
    """``q = home + s(t) f(t)``: a random finite Fourier series ``f`` with per-joint peak amplitude
    ``amplitude_rad``, faded in and out by a quintic ramp ``s`` so the robot starts and ends at rest
    at ``home``. Deterministic for a given ``seed``."""
    home = np.asarray(home, float)
    amp = np.asarray(amplitude_rad, float)
    n = home.size
    rng = np.random.default_rng(seed)
    w = 2 * np.pi / period_s
    k = np.arange(1, harmonics + 1)
    a = rng.normal(size=(n, harmonics)) / k   # 1/k keeps velocities and accelerations moderate
    b = rng.normal(size=(n, harmonics)) / k
    t = np.arange(0.0, duration_s + 0.5 / sample_hz, 1.0 / sample_hz)
    phase = np.outer(t, k * w)                                 # (N, H)
    s_, c_ = np.sin(phase), np.cos(phase)
    f = s_ @ a.T + c_ @ b.T
    fd = (c_ * (k * w)) @ a.T - (s_ * (k * w)) @ b.T
    fdd = -(s_ * (k * w) ** 2) @ a.T - (c_ * (k * w) ** 2) @ b.T
    scale = amp / np.maximum(np.abs(f).max(axis=0), 1e-12)
    f, fd, fdd = f * scale, fd * scale, fdd * scale
    s_up, ds_up, dds_up = quintic_ramp(t, ramp_s)
    s_dn, ds_dn, dds_dn = quintic_ramp(duration_s - t, ramp_s)
    s, ds, dds = s_up * s_dn, ds_up * s_dn - s_up * ds_dn, dds_up * s_dn - 2 * ds_up * ds_dn + s_up * dds_dn
    q = home + s[:, None] * f
    qd = ds[:, None] * f + s[:, None] * fd
    qdd = dds[:, None] * f + 2 * ds[:, None] * fd + s[:, None] * fdd
    return SampledTrajectory(t, q, qd, qdd)


def check_limits(traj: SampledTrajectory, lower, upper, velocity, acceleration=None) -> LimitReport:
    """Margins of the sampled trajectory to the position, velocity (and acceleration) limits."""
    pos_margin = float(min((traj.q - lower).min(), (upper - traj.q).min()))
    vel_margin = float((np.asarray(velocity) - np.abs(traj.qd)).min())
    acc_margin = float("inf") if acceleration is None else float((np.asarray(acceleration) - np.abs(traj.qdd)).min())
    problems = [name for name, m in (("position", pos_margin), ("velocity", vel_margin),
                                      ("acceleration", acc_margin)) if m < 0]
    msg = "within limits" if not problems else "violates " + ", ".join(problems) + " limits"
    return LimitReport(not problems, pos_margin, vel_margin, acc_margin, msg)


def interpolate(traj: SampledTrajectory, t):
    """Quintic Hermite interpolation of (q, qd, qdd) at times ``t`` (clamped to the trajectory)."""
    t = np.clip(np.atleast_1d(np.asarray(t, float)), traj.t[0], traj.t[-1])
    i = np.clip(np.searchsorted(traj.t, t, side="right") - 1, 0, traj.t.size - 2)
    h = (traj.t[i + 1] - traj.t[i])[:, None]
    x = ((t - traj.t[i])[:, None]) / h
    p0, p1 = traj.q[i], traj.q[i + 1]
    v0, v1 = traj.qd[i] * h, traj.qd[i + 1] * h
    a0, a1 = traj.qdd[i] * h**2, traj.qdd[i + 1] * h**2
    # quintic Hermite basis on [0, 1] and its derivatives
    x2, x3, x4, x5 = x**2, x**3, x**4, x**5
    H = [1 - 10 * x3 + 15 * x4 - 6 * x5, x - 6 * x3 + 8 * x4 - 3 * x5, 0.5 * x2 - 1.5 * x3 + 1.5 * x4 - 0.5 * x5,
         0.5 * x3 - x4 + 0.5 * x5, -4 * x3 + 7 * x4 - 3 * x5, 10 * x3 - 15 * x4 + 6 * x5]
    dH = [-30 * x2 + 60 * x3 - 30 * x4, 1 - 18 * x2 + 32 * x3 - 15 * x4, x - 4.5 * x2 + 6 * x3 - 2.5 * x4,
          1.5 * x2 - 4 * x3 + 2.5 * x4, -12 * x2 + 28 * x3 - 15 * x4, 30 * x2 - 60 * x3 + 30 * x4]
    ddH = [-60 * x + 180 * x2 - 120 * x3, -36 * x + 96 * x2 - 60 * x3, 1 - 9 * x + 18 * x2 - 10 * x3,
           3 * x - 12 * x2 + 10 * x3, -24 * x + 84 * x2 - 60 * x3, 60 * x - 180 * x2 + 120 * x3]
    coeffs = (p0, v0, a0, a1, v1, p1)
    q = sum(c * b for c, b in zip(coeffs, H))
    qd = sum(c * b for c, b in zip(coeffs, dH)) / h
    qdd = sum(c * b for c, b in zip(coeffs, ddH)) / h**2
    return q, qd, qdd


# A profile without excitation.amplitude_rad swings each joint by this share of its position range
# (at most DEFAULT_AMPLITUDE_CAP_RAD): the Fourier series then shrinks it to the velocity and
# acceleration limits.
DEFAULT_AMPLITUDE_SHARE = 0.25
DEFAULT_AMPLITUDE_CAP_RAD = 1.0


def excitation_amplitude_rad(robot) -> np.ndarray:
    """Per joint, the peak amplitude (rad) of the Fourier excitation: the profile's
    ``excitation.amplitude_rad``, else :data:`DEFAULT_AMPLITUDE_SHARE` of the position range."""
    stated = robot.spec.excitation.amplitude_rad
    if stated is not None:
        return np.asarray(stated, dtype=float)
    span = np.asarray(robot.position_upper, dtype=float) - np.asarray(robot.position_lower, dtype=float)
    return np.minimum(DEFAULT_AMPLITUDE_SHARE * np.nan_to_num(span, posinf=np.inf), DEFAULT_AMPLITUDE_CAP_RAD)


def excitation_from_profile(robot, duration_s: float) -> tuple[SampledTrajectory, LimitReport]:
    """The profile's fixed Fourier excitation, shrunk in amplitude until its samples (at the
    profile's sample rate) pass the position, velocity and acceleration limits."""
    ex = robot.spec.excitation
    home = np.asarray(robot.spec.sim.home, float)
    amp = excitation_amplitude_rad(robot)
    for _ in range(40):
        traj = fourier_excitation(home, amp, ex.period_s, ex.harmonics, duration_s,
                                  ex.sample_hz, ex.seed)
        report = check_limits(traj, robot.position_lower, robot.position_upper,
                              robot.velocity_limit, robot.acceleration_limit)
        if report.ok:
            return traj, report
        amp = 0.9 * amp
    return traj, report
