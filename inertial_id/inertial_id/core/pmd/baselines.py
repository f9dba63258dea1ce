"""The baselines of point-mass discretization's reference on stacked wrench rows ``A pi = b`` (pinocchio order, sensor frame):
ordinary least squares, recursive total least squares (Kubus et al. 2008) and the entropic-distance
regularized estimate (GEO, Lee, Wensing and Park 2019). Rows may be scaled by their noise first
(:func:`.samples.stack_rows`).

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..robot import params

# Weight of the entropic divergence against the squared residual in newtons: light, as the paper's GEO
# results (inertia errors of hundreds of percent at ~150 samples) indicate.
GEO_GAMMA = 1e-2


def ols(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Ordinary least squares solution of ``A pi = b``."""
    return np.linalg.lstsq(A, b, rcond=None)[0]


class RecursiveTls:
    """Total least squares updated sample by sample (scratch: the 11 x 11 augmented information).

    Kubus et al. track the smallest right singular vector of ``[A b]`` recursively; here the augmented
    Gram matrix is accumulated exactly and its smallest eigenvector taken on demand, which is the same
    estimate at every step. Columns are equilibrated to unit RMS first, as errors in the columns of
    ``A`` (noisy kinematics) and in ``b`` (noisy wrench) are of comparable size only after scaling.
    """

    def __init__(self, n: int = 10):
        self.gram = np.zeros((n + 1, n + 1))

    def update(self, A: np.ndarray, b: np.ndarray) -> None:
        """Add rows ``A pi = b`` to the augmented information."""
        C = np.column_stack([A, b])
        self.gram += C.T @ C

    def estimate(self) -> np.ndarray:
        """The total-least-squares solution of the rows so far (columns equilibrated first)."""
        scale = 1.0 / np.sqrt(np.maximum(np.diag(self.gram), 1e-300))
        _, V = np.linalg.eigh(scale[:, None] * self.gram * scale[None, :])
        v = V[:, 0] * scale
        return -v[:-1] / v[-1]


def rtls(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Recursive total least squares over ``A pi = b``, fed one wrench sample (six rows) at a time."""
    estimator = RecursiveTls(A.shape[1])
    for k in range(0, len(A), 6):
        estimator.update(A[k:k + 6], b[k:k + 6])
    return estimator.estimate()


def _params_of_pseudo_inertia(J):
    """cvxpy expression of ``pi`` (pinocchio order) from a pseudo-inertia variable."""
    Sigma = J[:3, :3]
    I_O = cp.trace(Sigma) * np.eye(3) - Sigma
    return cp.hstack([J[3, 3], J[0, 3], J[1, 3], J[2, 3], I_O[0, 0], I_O[0, 1], I_O[1, 1], I_O[0, 2], I_O[1, 2], I_O[2, 2]])


def geo(A: np.ndarray, b: np.ndarray, pi_prior: np.ndarray, gamma: float = GEO_GAMMA) -> np.ndarray:
    """``min ||A pi - b||^2 + gamma d(J, J0)``, ``d`` the entropic (log-det Bregman) divergence from the
    prior's pseudo-inertia ``J0``; ``J`` positive semidefinite, so the estimate is always consistent."""
    J0 = params.pseudo_inertia(pi_prior)
    J = cp.Variable((4, 4), PSD=True)
    divergence = -cp.log_det(J) + cp.trace(np.linalg.inv(J0) @ J)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(A @ _params_of_pseudo_inertia(J) - b) + gamma * divergence))
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"GEO solve failed: {problem.status}")
    return params.params_from_pseudo_inertia(J.value)
