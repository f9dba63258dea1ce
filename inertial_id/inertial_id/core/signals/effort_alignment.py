"""Pair each joint sample with the effort the drive logs a little later.

On the real Gen3 the logged joint torque lags the logged positions and velocities: shifting the
torque back by 80-140 ms per joint halves the calibrated model's held-out error (see
:mod:`.calibration.fit`), as a causal low-pass on the torque channel would. The calibration measures
that lag per joint (``effort_delay_s``); the momentum rows then use, for the state stamped ``t``,
joint ``j``'s effort interpolated at ``t + delay_j``.

Streaming: a sample leaves :class:`EffortAlignment` once a sample stamped at least ``t + max
delay`` has arrived, so the rows come ``max delay`` later and the last ``max delay`` of a stream
(or of a stretch, when the row builder restarts at a gap) yields no rows. With zero delays samples
pass through unchanged. What comes out does not depend on how the stream is cut into batches.
"""
from __future__ import annotations

import numpy as np


class EffortAlignment:
    """``push`` samples ``(t, q, qd, tau)`` in increasing time; get back those whose delayed effort
    has arrived, with ``tau[:, j]`` replaced by the effort interpolated at ``t + delay_s[j]``."""

    def __init__(self, delay_s):
        self.delay_s = np.asarray(delay_s, dtype=float)
        if self.delay_s.ndim != 1 or not np.all(np.isfinite(self.delay_s)) or np.any(self.delay_s < 0):
            raise ValueError("effort delays must be finite and >= 0 s, one per joint")
        self._pending = None        # (t, q, qd, tau) not yet released, and the efforts after them

    def push(self, t, q, qd, tau):
        """The samples ready now (arrays, possibly empty), in time order."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, qd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, tau))
        if self._pending is not None:
            t, q, qd, tau = (np.concatenate([p, x]) for p, x in zip(self._pending, (t, q, qd, tau)))
        if np.any(np.diff(t) <= 0):
            raise ValueError("samples must arrive in increasing time")
        if t.size == 0 or not self.delay_s.any():
            self._pending = None
            return t, q, qd, tau
        ready = t + self.delay_s.max() <= t[-1]
        n = int(np.count_nonzero(ready))
        # samples before the first one held back are never needed again: every delay is >= 0
        self._pending = (t[n:], q[n:], qd[n:], tau[n:])
        if n == 0:
            return t[:0], q[:0], qd[:0], tau[:0]
        aligned = np.column_stack([np.interp(t[:n] + d, t, tau[:, j]) for j, d in enumerate(self.delay_s)])
        return t[:n], q[:n], qd[:n], aligned
