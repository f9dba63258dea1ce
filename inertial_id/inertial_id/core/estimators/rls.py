"""Recursive least squares in covariance form, for rows arriving one batch at a time."""
from __future__ import annotations

import numpy as np


class RecursiveLeastSquares:
    """Minimises ``sum_k lambda^(N-k) w_k (a_k x - b_k)^2 + (x - x0)^T P0^-1 (x - x0)``.

    ``P0`` is the prior covariance (large = weak prior), ``forgetting`` = lambda in (0, 1].
    With row weights ``1 / sigma^2`` the covariance ``P`` is that of the estimate.
    """

    def __init__(self, x0, P0, forgetting: float = 1.0):
        self.x = np.asarray(x0, dtype=float).copy()
        self.P = np.asarray(P0, dtype=float).copy()
        if not 0 < forgetting <= 1:
            raise ValueError("forgetting factor must be in (0, 1]")
        self.forgetting = forgetting
        self.rows_used = 0

    def update(self, A, b, weights=None) -> None:
        """Fold in the rows of ``A x = b`` (block update: one gain per batch, exact for lambda = 1)."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        b = np.asarray(b, dtype=float).ravel()
        w = np.ones(b.size) if weights is None else np.asarray(weights, dtype=float).ravel()
        P = self.P / self.forgetting
        PAt = P @ A.T
        S = A @ PAt + np.diag(1.0 / w)
        K = np.linalg.solve(S, PAt.T).T
        self.x = self.x + K @ (b - A @ self.x)
        P = P - K @ A @ P
        self.P = 0.5 * (P + P.T)
        self.rows_used += b.size
