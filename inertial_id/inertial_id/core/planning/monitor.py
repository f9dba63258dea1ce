"""The certified tracking tube and the joint limits, watched on every measured sample.

The certificate assumes the measured state stays within the tube ``(position, velocity,
acceleration)`` around the reference, and the limits hold whatever the reference. Position and
velocity errors are measured directly. The acceleration is not measured: its error is estimated
causally as the mean over the last ``window_s`` of the acceleration error,

    e_a_mean(t) = (e_v(t) - e_v(t - w)) / w,     e_v = measured velocity - reference velocity,

which the tube bounds too (a mean of values within +-a lies within +-a), and whose own error is at
most ``2 * velocity_noise / w`` (the stated bound of the velocity sensor). A breach is reported only
when the estimate exceeds the tube by more than that error: it is then certain.
"""
from __future__ import annotations

from collections import deque

import numpy as np


# what TubeMonitor.max_error holds, in order (the planner node's /diagnostics keys: "tracking.max_" + name)
ERROR_NAMES = ("position_error_rad", "velocity_error_rad_s", "acceleration_error_rad_s2")


class TubeMonitor:
    """Per-sample check of the tube (around a reference) and of the joint limits (always)."""

    def __init__(self, tube, position_lower, position_upper, velocity_limit, velocity_noise_rad_s: float = 0.0,
                 window_s: float = 0.05):
        self.position_tube, self.velocity_tube, self.acceleration_tube = (np.asarray(x, float) for x in tube)
        self.lower, self.upper = np.asarray(position_lower, float), np.asarray(position_upper, float)
        self.velocity_limit = np.asarray(velocity_limit, float)
        self.window_s = float(window_s)
        self.acceleration_error_bound = 2.0 * velocity_noise_rad_s / self.window_s
        self._history: deque = deque()      # (t, velocity error) of the samples within the window
        # largest |error| seen per joint (rows: rad, rad/s, rad/s^2 as ERROR_NAMES); the acceleration's
        # row is the windowed estimate, its error bound included (a tube is sized from these)
        self.joint_max_error = np.zeros((3, self.lower.size))
        self.max_tube_share = 0.0           # largest |error| / its tube (acceleration: tube + error bound)

    @property
    def max_error(self) -> np.ndarray:
        """Largest |error| seen (rad, rad/s, rad/s^2), max over joints."""
        return self.joint_max_error.max(axis=1)

    def reset(self) -> None:
        """A new reference (or none): the acceleration estimate starts again."""
        self._history.clear()

    def check_limits(self, q, qd) -> str:
        """Why (q, qd) breaks the joint limits ('' if it does not)."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        out = np.maximum(self.lower - q, q - self.upper)
        if np.any(out > 0):
            j = int(np.argmax(out))
            return f"joint {j + 1} at {q[j]:.4f} rad, {out[j]:.4f} rad outside its limits"
        over = np.abs(qd) - self.velocity_limit
        if np.any(over > 0):
            j = int(np.argmax(over))
            return f"joint {j + 1} at {qd[j]:.4f} rad/s, beyond its velocity limit {self.velocity_limit[j]:.4f}"
        return ""

    def check_tube(self, t: float, q, qd, reference) -> str:
        """Why the sample (t, q, qd) lies outside the tube around ``reference = (q_d, qd_d)`` ('' if
        inside); samples must come in time order."""
        q_d, qd_d = reference
        e_q, e_v = np.asarray(q, float) - q_d, np.asarray(qd, float) - qd_d
        self._history.append((t, e_v))
        while len(self._history) > 1 and t - self._history[1][0] >= self.window_s:
            self._history.popleft()
        e_a = None
        t_old, e_v_old = self._history[0]
        if t - t_old >= self.window_s:
            e_a = (e_v - e_v_old) / (t - t_old)
        abs_q, abs_v = np.abs(e_q), np.abs(e_v)
        abs_a = np.zeros_like(abs_q) if e_a is None else np.abs(e_a)
        np.maximum(self.joint_max_error, (abs_q, abs_v, abs_a), out=self.joint_max_error)
        self.max_tube_share = max(self.max_tube_share, _share(abs_q, self.position_tube),
                                  _share(abs_v, self.velocity_tube),
                                  _share(abs_a, self.acceleration_tube + self.acceleration_error_bound))
        if np.any(abs_q > self.position_tube):
            j = int(np.argmax(abs_q - self.position_tube))
            return f"tracking error {abs_q[j]:.4f} rad on joint {j + 1} beyond the certified {self.position_tube[j]:.4f} rad"
        if np.any(abs_v > self.velocity_tube):
            j = int(np.argmax(abs_v - self.velocity_tube))
            return (f"tracking error {abs_v[j]:.4f} rad/s on joint {j + 1} beyond the certified "
                    f"{self.velocity_tube[j]:.4f} rad/s")
        excess = abs_a - self.acceleration_tube - self.acceleration_error_bound
        if np.any(excess > 0):
            j = int(np.argmax(excess))
            return (f"tracking error {abs_a[j]:.3f} rad/s^2 on joint {j + 1} (mean over {self.window_s:.3f} s, "
                    f"+-{self.acceleration_error_bound:.3f}) beyond the certified {self.acceleration_tube[j]:.3f} rad/s^2")
        return ""


def _share(error, tube) -> float:
    """The largest ``error / tube`` over joints (a zero tube: any error is infinitely far out)."""
    return float(np.max(np.divide(error, tube, out=np.where(error > 0, np.inf, 0.0), where=tube > 0)))
