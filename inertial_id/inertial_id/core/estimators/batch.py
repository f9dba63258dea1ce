"""Weighted batch least squares through accumulated normal equations (streaming-friendly)."""
from __future__ import annotations

import numpy as np


class WeightedLeastSquares:
    """Accumulates ``A^T W A`` and ``A^T W b``; solves on demand. ``W = diag(1/sigma^2)``."""

    def __init__(self, n: int):
        self.information = np.zeros((n, n))
        self.rhs = np.zeros(n)
        self.rows_used = 0

    def update(self, A, b, weights=None) -> None:
        """Add rows ``A x = b`` with per-row weights (default 1) to the normal equations."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        b = np.asarray(b, dtype=float).ravel()
        w = np.ones(b.size) if weights is None else np.asarray(weights, dtype=float).ravel()
        Aw = A * w[:, None]
        self.information += A.T @ Aw
        self.rhs += Aw.T @ b
        self.rows_used += b.size

    def condition_number(self) -> float:
        """Condition number of the weighted regressor (square root of that of the information)."""
        try:
            eig = np.linalg.eigvalsh(self.information)
        except np.linalg.LinAlgError:     # e.g. overflowed (non-finite) information
            return float("inf")
        return float(np.sqrt(eig[-1] / eig[0])) if eig[0] > 0 and np.isfinite(eig[-1]) else float("inf")

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, covariance). Raises ``np.linalg.LinAlgError`` when the data are rank deficient."""
        if not np.all(np.isfinite(self.information)) or not np.all(np.isfinite(self.rhs)):
            raise np.linalg.LinAlgError("information matrix is not finite")
        cov = np.linalg.inv(self.information)
        if not np.all(np.isfinite(cov)):
            raise np.linalg.LinAlgError("information matrix is singular")
        return cov @ self.rhs, cov
