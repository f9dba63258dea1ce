"""Samples the calibrated model cannot explain: a joint held at its velocity limit, or moving faster
than any calibration run did.

On the real Gen3 a joint that reaches its velocity limit stays there at constant speed while the
logged torque swings by tens of N m (the drive's velocity loop, not the rigid-body dynamics). Such
samples, and the samples following them for ``guard_s`` (the loop settling), are flagged; momentum
windows that touch a flagged sample are excluded from calibration and estimation alike, and counted.
The detector is causal (a sample's flag depends on it and on earlier samples only), so the live
builder and the offline pipeline flag the same samples.

A plateau is recognised against the profile's velocity limit, not by its shape alone: the top of a
smooth speed peak is flat too (a sinusoid of 1 rad/s peak speed stays within 0.03 rad/s of it for
8 % of its period around each peak), and counting those excluded 40-60 % of the windows of smooth
runs that never came near the limit. The profile's limit is what the arm is commanded within, so its drive cannot saturate
below it; a flat top at or above ``PLATEAU_LIMIT_FRACTION`` of it is taken as saturation (the real
Gen3 runs go beyond the profile's 1.40 / 1.22 rad/s and hold flat tops at 1.70-1.75 rad/s on the
large and 2.0-2.09 rad/s on the small actuators).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A plateau: at least this long, |qd| within PLATEAU_BAND of the joint's largest speed in the run,
# that speed at least PLATEAU_LIMIT_FRACTION of the profile's velocity limit (a drive tracking within
# its limit does not saturate; 5 % below it covers a limit the drive enforces with a small margin).
PLATEAU_MIN_S = 0.08
PLATEAU_BAND_RAD_S = 0.03
PLATEAU_LIMIT_FRACTION = 0.95
# Flag from this far below the plateau speed (the approach already saturates the drive).
APPROACH_RAD_S = 0.08
GUARD_S = 0.2


@dataclass(frozen=True)
class PlateauDetector:
    """Per joint: ``plateau_rad_s`` (speed of an observed velocity-limit plateau, inf if none seen)
    and ``support_rad_s`` (largest speed the calibration data explain); ``guard_s`` after a flagged
    sample stays flagged."""

    plateau_rad_s: np.ndarray
    support_rad_s: np.ndarray
    approach_rad_s: float = APPROACH_RAD_S
    guard_s: float = GUARD_S

    def raw_flags(self, qd) -> np.ndarray:
        """(N,) True where some joint is at (or approaching) its plateau or beyond the support."""
        speed = np.abs(np.atleast_2d(np.asarray(qd, dtype=float)))
        return np.any((speed >= self.plateau_rad_s - self.approach_rad_s) | (speed > self.support_rad_s), axis=1)

    def flags(self, t, qd, last_flag_t: float = -np.inf) -> tuple[np.ndarray, float]:
        """(N,) flags with the guard applied, and the time of the last raw flag (carry it to the next
        call for a stream)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        raw = self.raw_flags(qd)
        # time of the latest raw flag at or before each sample
        stamps = np.where(raw, t, -np.inf)
        latest = np.maximum.accumulate(np.concatenate([[last_flag_t], stamps]))[1:]
        out = t - latest <= self.guard_s
        return out, float(latest[-1]) if latest.size else last_flag_t

    def to_dict(self) -> dict:
        """The detector as a plain dict (saved in the calibration file; inf plateaus as None)."""
        return {"plateau_rad_s": [None if not np.isfinite(v) else float(v) for v in self.plateau_rad_s],
                "support_rad_s": self.support_rad_s.tolist(), "approach_rad_s": self.approach_rad_s,
                "guard_s": self.guard_s}

    @classmethod
    def from_dict(cls, d: dict) -> PlateauDetector:
        """The detector of :meth:`to_dict`'s dict."""
        return cls(np.array([np.inf if v is None else v for v in d["plateau_rad_s"]], dtype=float),
                   np.asarray(d["support_rad_s"], dtype=float), float(d["approach_rad_s"]), float(d["guard_s"]))


def find_plateaus(t, qd, velocity_limit_rad_s, min_s: float = PLATEAU_MIN_S, band: float = PLATEAU_BAND_RAD_S,
                  limit_fraction: float = PLATEAU_LIMIT_FRACTION) -> list[tuple[int, int, int]]:
    """``(joint, start, end)`` sample ranges where a joint holds a constant speed within ``band`` of
    its largest speed in this recording for at least ``min_s``, at a speed of at least
    ``limit_fraction`` times its velocity limit (``velocity_limit_rad_s`` (nv,); a joint whose limit
    is not a positive finite number has none)."""
    t, speed = np.asarray(t, dtype=float), np.abs(np.asarray(qd, dtype=float))
    limit = np.broadcast_to(np.asarray(velocity_limit_rad_s, dtype=float), speed.shape[1:])
    out = []
    for j in range(speed.shape[1]):
        if not (np.isfinite(limit[j]) and limit[j] > 0):
            continue
        near = speed[:, j] >= max(speed[:, j].max() - band, limit_fraction * limit[j])
        edges = np.flatnonzero(np.diff(np.concatenate([[0], near.astype(int), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            if t[b - 1] - t[a] >= min_s:
                out.append((j, int(a), int(b)))
    return out


def fit_detector(runs, velocity_limit_rad_s, guard_s: float = GUARD_S) -> tuple[PlateauDetector, list[dict]]:
    """The detector for the calibration ``runs`` (objects with ``t``, ``qd``) of a robot with these
    velocity limits (the profile's, rad/s): each joint's plateau speed is the highest speed at which a
    plateau (:func:`find_plateaus`) was seen on it; the support is its largest speed. Also the
    plateaus found (run, joint, start/end time, speed)."""
    n = runs[0].qd.shape[1]
    plateau = np.full(n, np.inf)
    found = []
    for r in runs:
        for j, a, b in find_plateaus(r.t, r.qd, velocity_limit_rad_s):
            level = float(np.abs(r.qd[a:b, j]).min())
            plateau[j] = level if not np.isfinite(plateau[j]) else max(plateau[j], level)
            found.append({"run": r.name, "joint": j, "start_s": float(r.t[a]), "end_s": float(r.t[b - 1]),
                          "speed_rad_s": level})
    support = np.max([np.abs(r.qd).max(axis=0) for r in runs], axis=0)
    return PlateauDetector(plateau, support, guard_s=guard_s), found
