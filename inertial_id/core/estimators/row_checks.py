"""Which incoming rows ``A x = b`` (with error bounds ``e`` and sigmas) are physical enough to use.

Rows come over the network from a builder the estimator does not control. Finite is not enough:
one row with entries of 1e300 overflows every Gram matrix and eigen/SVD/conic solver downstream,
and its square is already infinite. A row is refused, with a reason, when any magnitude exceeds
what the robot's profile makes possible:

- measurements ``b`` and error bounds ``e``: ``ABSURD_FACTOR`` times the largest joint torque limit
  (``joint_torque`` rows, N m), the F/T sensor's plausible range (``wrench`` rows, N or N m), or
  the torque limit integrated over the window (``momentum`` rows, N m s: ``samples`` samples at
  most ``MAX_SAMPLE_INTERVAL_S`` apart, the builder's gap limit);
- regressor entries: ``MAX_REGRESSOR`` (SI: accelerations, lever arms times accelerations,
  integrated momenta; nothing a robot does comes near it).

These limits only refuse the impossible; rows that pass still carry their own error bounds.
"""
from __future__ import annotations

import numpy as np

ABSURD_FACTOR = 10.0
MAX_REGRESSOR = 1e6
MAX_WRENCH = 1e4                 # N (and N m): as the builder's wrench check
MAX_SAMPLE_INTERVAL_S = 0.05     # the builder restarts its windows after a longer gap
MAX_ROWS_PER_MESSAGE = 100_000


class RowLimits:
    """Magnitude ceilings of the rows of one robot (profile limits)."""

    def __init__(self, torque_limit_Nm):
        self.max_torque_Nm = ABSURD_FACTOR * float(np.max(torque_limit_Nm))

    def max_measurement(self, kind: str, samples: int) -> float:
        if kind == "wrench":
            return MAX_WRENCH
        if kind == "momentum":
            return self.max_torque_Nm * MAX_SAMPLE_INTERVAL_S * max(int(samples), 1)
        return self.max_torque_Nm

    def rejection(self, kind: str, cols: int, rows: int, samples: int, A, b, e, sigma) -> tuple[str, str] | None:
        """``(reason, detail)`` if the rows are unusable, else ``None``. ``A`` flat (rows * cols)."""
        if rows == 0 or rows > MAX_ROWS_PER_MESSAGE:
            return "row_count", f"{rows} rows (1..{MAX_ROWS_PER_MESSAGE})"
        if A.size != rows * cols or b.size != rows or e.size != rows or sigma.size != rows:
            return "wrong_length", f"{rows} rows x {cols} columns but {A.size} regressor entries, " \
                                   f"{b.size} measurements, {e.size} bounds, {sigma.size} sigmas"
        if not all(np.all(np.isfinite(x)) for x in (A, b, e, sigma)):
            return "non_finite", "NaN/Inf in the rows"
        if np.any(e < 0) or np.any(sigma <= 0):
            return "non_positive_noise", "negative error bound or non-positive sigma"
        limit = self.max_measurement(kind, samples)
        if np.max(np.abs(A)) > MAX_REGRESSOR:
            return "absurd_regressor", f"|regressor entry| {np.max(np.abs(A)):.3g} > {MAX_REGRESSOR:g}"
        worst = max(np.max(np.abs(b)), np.max(e), np.max(sigma))
        if worst > limit:
            return "absurd_measurement", f"|measurement or error bound| {worst:.3g} > {limit:.3g} (profile limits)"
        return None
