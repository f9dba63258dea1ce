"""A point estimate for rows whose error is heavy-tailed: weighted least absolute deviations.

On a calibrated real arm the remaining model error of a momentum window is far from Gaussian: its
largest value is 3-5x its RMS (velocity-limit transients, friction reversals). Least squares lets
those windows pull the payload estimate; the least-absolute-deviations fit

    min sum_i |a_i x - u_i| / e_i

(weights ``1/e_i``, the rows' calibrated bounds) follows the bulk of the rows. It is solved by
iteratively reweighted least squares, not as an LP: an LP optimum is a vertex, which puts every
parameter the rows do not determine (a payload's rotational inertia on these runs) at a bound of
its box, and through them moves the determined ones whenever the box changes; least squares leaves
such directions at their minimum norm. The rows are kept per window, at most
:data:`MAX_POINT_WINDOWS`: past that every other window is dropped and only every other new one
taken (and so on), so the fit covers the whole session with bounded memory and time.
"""
from __future__ import annotations

import numpy as np

# At 0.1 s windows: 100 s of data before thinning.
MAX_POINT_WINDOWS = 1000
# Reweighting: a row's weight is 1 / (e max(|r| / e, RESIDUAL_FLOOR)) (bounded where a row fits
# exactly), iterations stop when no parameter moves by more than STEP_TOL of its size, or at MAX_ITERATIONS.
RESIDUAL_FLOOR = 1e-3
STEP_TOL = 1e-6
MAX_ITERATIONS = 100


class WindowRowStore:
    """Rows ``A x = u`` with bounds ``e``, whole windows of ``rows_per_window`` rows, thinned past
    ``max_windows`` (module docstring)."""

    def __init__(self, n_cols: int, rows_per_window: int, max_windows: int = MAX_POINT_WINDOWS):
        if max_windows < 2:
            raise ValueError("max_windows must be at least 2")
        self.n_cols, self.rows_per_window, self.max_windows = n_cols, rows_per_window, max_windows
        self.A = np.zeros((0, rows_per_window, n_cols))
        self.u = np.zeros((0, rows_per_window))
        self.e = np.zeros((0, rows_per_window))
        self.stride = 1         # windows taken: one in ``stride``
        self.seen = 0           # windows offered so far

    def add(self, A, u, e) -> None:
        """Rows of whole windows, window-major."""
        r, c = self.rows_per_window, self.n_cols
        A, u, e = (np.asarray(x, dtype=float) for x in (A, u, e))
        A, u, e = A.reshape(-1, r, c), u.reshape(-1, r), e.reshape(-1, r)
        take = (self.seen + np.arange(u.shape[0])) % self.stride == 0
        self.seen += u.shape[0]
        self.A = np.concatenate([self.A, A[take]])
        self.u = np.concatenate([self.u, u[take]])
        self.e = np.concatenate([self.e, e[take]])
        while self.u.shape[0] > self.max_windows:
            self.A, self.u, self.e = self.A[::2], self.u[::2], self.e[::2]
            self.stride *= 2

    @property
    def windows(self) -> int:
        """Windows kept."""
        return self.u.shape[0]

    def state(self) -> dict:
        """The kept rows and the thinning counters (saved with the estimator's state)."""
        return {"point_A": self.A, "point_u": self.u, "point_e": self.e, "point_stride": self.stride,
                "point_seen": self.seen}

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state`'s dict (absent keys: start empty); ValueError when it does not fit."""
        if "point_A" not in state:
            return
        A, u, e = (np.asarray(state[k], dtype=float) for k in ("point_A", "point_u", "point_e"))
        r = self.rows_per_window
        if A.shape[1:] != (r, self.n_cols) or u.shape != A.shape[:2] or e.shape != u.shape or \
                u.shape[0] > self.max_windows or np.any(e <= 0):
            raise ValueError("saved point-estimate rows do not fit this estimator")
        self.A, self.u, self.e = A, u, e
        self.stride, self.seen = max(1, int(state["point_stride"])), int(state["point_seen"])

    def fit(self) -> np.ndarray | None:
        """All columns' least-absolute-deviations estimate (module docstring); None without rows."""
        if not self.windows:
            return None
        A = self.A.reshape(-1, self.n_cols)
        u, e = self.u.ravel(), self.e.ravel()
        x = _weighted_lstsq(A, u, 1.0 / e ** 2)
        for _ in range(MAX_ITERATIONS):
            r = np.abs(A @ x - u) / e
            new = _weighted_lstsq(A, u, 1.0 / (e ** 2 * np.maximum(r, RESIDUAL_FLOOR)))
            done = np.all(np.abs(new - x) <= STEP_TOL * (1.0 + np.abs(x)))
            x = new
            if done:
                break
        return x


def _weighted_lstsq(A, u, w) -> np.ndarray:
    """Minimum-norm solution of the least-squares problem with row weights ``w``."""
    s = np.sqrt(w)
    return np.linalg.lstsq(A * s[:, None], u * s, rcond=None)[0]
