"""Guaranteed per-parameter intervals for the bounded-noise linear model.

Model: every row satisfies ``|a_i x_true - b_i| <= e_i`` (``e_i``: the row's guaranteed error bound).
Then ``x_true`` lies in the polytope ``{x : |A x - b| <= e} ∩ box``, and its per-parameter minimum
and maximum (two LPs per parameter, scipy's HiGHS) enclose ``x_true``. Batches are intersected as
they arrive, starting from the prior box, so the box never widens.

Solver tolerance: each LP bound is moved outward by ``pad_rel * (1 + |value|)`` so that HiGHS's
optimality tolerance (1e-7 relative by default) cannot cut into the true feasible set.

If a batch together with the current box has no feasible point, the data contradict the assumed
bounds: the box is left as it was, ``data_consistent`` turns false and stays false, and the rows that
must be violated are found by an elastic LP (minimum total violation) and reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog


@dataclass
class BoundsUpdate:
    consistent: bool
    violating_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    max_violation: float = 0.0


class IntervalBounds:
    def __init__(self, lower, upper, pad_rel: float = 1e-6):
        self.lower = np.asarray(lower, dtype=float).copy()
        self.upper = np.asarray(upper, dtype=float).copy()
        if self.lower.shape != self.upper.shape or np.any(self.lower > self.upper):
            raise ValueError("prior box needs lower <= upper, same sizes")
        self.pad_rel = pad_rel
        self.data_consistent = True
        self.rows_used = 0

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def contains(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return (x >= self.lower) & (x <= self.upper)

    def update(self, A, b, e) -> BoundsUpdate:
        """Intersect the box with the polytope of one batch of rows."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        b = np.asarray(b, dtype=float).ravel()
        e = np.asarray(e, dtype=float).ravel()
        if np.any(e < 0) or not (np.all(np.isfinite(A)) and np.all(np.isfinite(b)) and np.all(np.isfinite(e))):
            raise ValueError("rows and bounds must be finite, bounds non-negative")
        A_ub = np.vstack([A, -A])
        b_ub = np.concatenate([b + e, e - b])
        box = list(zip(self.lower, self.upper))
        n = self.lower.size
        new_lo, new_hi = self.lower.copy(), self.upper.copy()
        for k in range(n):
            for sign in (1.0, -1.0):
                c = np.zeros(n)
                c[k] = sign
                res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=box, method="highs")
                if res.status == 2:   # infeasible: the data break the assumed bounds
                    return self._inconsistent(A, b, e)
                if res.status != 0:
                    continue          # no certificate from this LP: keep the old bound
                value = res.x[k]
                pad = self.pad_rel * (1.0 + abs(value))
                if sign > 0:
                    new_lo[k] = max(new_lo[k], value - pad)
                else:
                    new_hi[k] = min(new_hi[k], value + pad)
        self.lower, self.upper = new_lo, np.maximum(new_hi, new_lo)
        self.rows_used += b.size
        return BoundsUpdate(True)

    def _inconsistent(self, A, b, e) -> BoundsUpdate:
        m, n = A.shape
        # variables [x (n), s (m)]: minimise sum s subject to |A x - b| <= e + s, x in box, s >= 0
        c = np.concatenate([np.zeros(n), np.ones(m)])
        I = np.eye(m)
        A_ub = np.block([[A, -I], [-A, -I]])
        b_ub = np.concatenate([b + e, e - b])
        bounds = list(zip(self.lower, self.upper)) + [(0, None)] * m
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
        self.data_consistent = False
        if res.status != 0:
            return BoundsUpdate(False)
        s = res.x[n:]
        rows = np.flatnonzero(s > 1e-9 * (1 + np.abs(b)))
        return BoundsUpdate(False, rows, float(s.max(initial=0.0)))
