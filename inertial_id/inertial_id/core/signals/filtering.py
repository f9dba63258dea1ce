"""Filtering and differentiation of sampled signals.

Live (causal) use: :class:`StreamingDifferentiator` turns a stream of (t, q, qd, tau) samples into
(t, q, qd, qdd, tau) with a fixed latency of ``delay`` samples: qdd by a central difference on the
window, optionally after the same causal low-pass on every signal (so they stay time-aligned).
Offline use: zero-phase Butterworth (``filtfilt``), 4th-order central differences (the whole-robot
identification pipeline) and downsampling. Time is in seconds; arrays are ``(samples, channels)``.
"""
from __future__ import annotations

from collections import deque

import numpy as np


def _scipy_signal():
    """scipy.signal, imported the first time a filter is used: most runs filter nothing, and where
    nothing has loaded scipy yet (a bag conversion, a run folder read) it costs over half a second."""
    import scipy.signal     # optional: scipy.signal, loaded by the runs that filter only
    return scipy.signal


def butterworth_sos(cutoff_hz: float, fs_hz: float, order: int = 4) -> np.ndarray:
    """Second-order sections of a low-pass Butterworth filter (cutoff and sampling rate in Hz)."""
    if not 0 < cutoff_hz < fs_hz / 2:
        raise ValueError(f"cutoff {cutoff_hz} Hz must lie in (0, {fs_hz / 2}) Hz (Nyquist)")
    return _scipy_signal().butter(order, cutoff_hz, fs=fs_hz, output="sos")


def zero_phase_lowpass(x, fs_hz: float, cutoff_hz: float, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass along axis 0 (forward-backward, so the order doubles)."""
    x = np.asarray(x, dtype=float)
    return _scipy_signal().sosfiltfilt(butterworth_sos(cutoff_hz, fs_hz, order), x, axis=0)


def central_difference(x, t) -> np.ndarray:
    """Derivative along axis 0: 4th-order central difference inside, 2nd-order one-sided at the ends.

    Uses the mean sample period; ``t`` must be strictly increasing and close to uniform.
    """
    x = np.asarray(x, dtype=float)
    t = np.asarray(t, dtype=float)
    if x.shape[0] != t.shape[0]:
        raise ValueError("x and t have different numbers of samples")
    if x.shape[0] < 5:
        raise ValueError("need at least 5 samples to differentiate")
    dt_all = np.diff(t)
    if np.any(dt_all <= 0):
        raise ValueError("time stamps must be strictly increasing")
    dt = dt_all.mean()
    d = np.empty_like(x)
    d[2:-2] = (-x[4:] + 8 * x[3:-1] - 8 * x[1:-3] + x[:-4]) / (12 * dt)
    d[:2] = (-3 * x[:2] + 4 * x[1:3] - x[2:4]) / (2 * dt)
    d[-2:] = (3 * x[-2:] - 4 * x[-3:-1] + x[-4:-2]) / (2 * dt)
    return d


def downsample(x, factor: int) -> np.ndarray:
    """Every ``factor``-th sample (apply a low-pass first to avoid aliasing)."""
    if factor < 1:
        raise ValueError("downsampling factor must be >= 1")
    return np.asarray(x)[::factor]


class StreamingDifferentiator:
    """Causal estimate of joint acceleration from a stream of velocity samples.

    ``push(t, q, qd, tau)`` returns ``None`` until the window is full, then the sample from
    ``delay = 1`` step ago with its acceleration ``(qd[k+1] - qd[k-1]) / (t[k+1] - t[k-1])``. With
    ``cutoff_hz`` set, every signal first passes the same causal Butterworth low-pass, which keeps
    them aligned with each other (all share the filter's group delay).
    """

    delay = 1

    def __init__(self, n: int, fs_hz: float | None = None, cutoff_hz: float | None = None, order: int = 2):
        self.n = n
        self._window: deque = deque(maxlen=3)
        if cutoff_hz and fs_hz is None:
            raise TypeError("a cutoff_hz needs fs_hz")
        self._sos = butterworth_sos(cutoff_hz, fs_hz, order) if cutoff_hz and fs_hz is not None else None
        self._zi = None

    def reset(self) -> None:
        """Forget the window and the filter state (e.g. after a gap)."""
        self._window.clear()
        self._zi = None

    def _lowpass(self, x: np.ndarray) -> np.ndarray:
        if self._sos is None:
            return x
        signal = _scipy_signal()
        if self._zi is None:
            # start from steady state at the first sample: no start-up transient
            self._zi = signal.sosfilt_zi(self._sos)[:, :, None] * x[None, None, :]
        y, self._zi = signal.sosfilt(self._sos, x[None, :], axis=0, zi=self._zi)
        return y[0]

    def push(self, t: float, q, qd, tau):
        """Add a sample; None until the window is full, then ``(t, q, qd, qdd, tau)`` of the previous sample."""
        x = self._lowpass(np.concatenate([q, qd, tau]).astype(float))
        n = self.n
        self._window.append((t, x[:n], x[n:2 * n], x[2 * n:]))
        if len(self._window) < 3:
            return None
        (t0, _, v0, _), (t1, q1, v1, tau1), (t2, _, v2, _) = self._window
        return t1, q1, v1, (v2 - v0) / (t2 - t0), tau1

    @property
    def filtered(self) -> bool:
        """Whether the signals pass the low-pass before differencing."""
        return self._sos is not None

    def velocity_window(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t (3,), v (3, n))``: the stamps and (filtered) velocities the last acceleration came from."""
        return np.array([w[0] for w in self._window]), np.array([w[2] for w in self._window])
