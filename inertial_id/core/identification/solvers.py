"""Solvers for ``A x = b``: least squares on base parameters, weighted and iteratively reweighted
least squares, and the physically consistent problem (seed 001 eq. 32) as an SDP.

Weights (``wls``): one per actuated joint, ``w_j = 1 / sigma_j`` with ``sigma_j^2 = |r_j|^2 /
(N - n_base / na)`` the residual variance of joint ``j`` after ordinary LS (Gautier's normalisation:
joints with large torques and noise no longer dominate the fit); ``sigma_j`` is floored at 1e-6 of
the joint's torque RMS so that noise-free data keep finite weights.

IRLS (``irls``): starts from WLS; each iteration sets row weights ``w_j * h(r / sigma_j)`` with
Huber's ``h(s) = min(1, 1.345 / |s|)`` and re-solves, so outlier rows (torque spikes, contact
bumps) lose influence. Stops when the base parameters change by less than ``1e-8`` relative
(``|d theta_b| <= 1e-8 |theta_b|``) or after 50 iterations (reported as not converged).

SDP (``lmi``): minimises the WLS objective over the full free parameter vector subject to, per
body with free parameters, ``pseudo_inertia(pi_k) >= margin * I`` (seed 001's LMI, equal to its
``[[tr(L)/2 I - L, m p], [m p^T, m]]``) and ``Fc, Fv, Ia >= 0``. The data fix only the base
parameters ``theta_b = x_b + Kd x_d``; the dependent coordinates ``x_d`` are pulled towards their
nominal values by ``1e-9 * mean(diag(A^T A)) |x_d - x_d,nominal|^2``, which makes the answer unique
without biasing the base parameters (unless an LMI is active).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from ..params import pseudo_inertia
from .problem import IdentificationError, Problem

METHODS = ("ls", "wls", "irls", "lmi")
DEFAULT_LMI_MARGIN = 1e-8
HUBER_K = 1.345


@dataclass
class Estimate:
    method: str
    theta: np.ndarray             # all parameters (fixed ones at their held values)
    base_values: np.ndarray       # structural base parameters of the free part
    joint_weights: np.ndarray     # per actuated joint
    info: dict = field(default_factory=dict)


def _complete(problem: Problem, theta_b: np.ndarray) -> np.ndarray:
    """Seed 001 eq. 17 with ``theta_d`` at the nominal values: ``x = Pb (theta_b - Kd theta_d) + Pd theta_d``."""
    base = problem.base
    x_nom = problem.layout.nominal[problem.free]
    x = x_nom.copy()
    theta_d = x_nom[base.dependent]
    x[base.independent] = theta_b - base.Kd @ theta_d
    return x


def _wls(problem: Problem, row_weights: np.ndarray) -> np.ndarray:
    A_b = problem.base.reduce(problem.A)
    return np.linalg.lstsq(A_b * row_weights[:, None], problem.b * row_weights, rcond=None)[0]


def _joint_sigma(problem: Problem, theta_b: np.ndarray) -> np.ndarray:
    r = (problem.b - problem.base.reduce(problem.A) @ theta_b).reshape(-1, problem.na)
    dof = max(r.shape[0] - problem.base.rank / problem.na, 1.0)
    sigma = np.sqrt(np.sum(r**2, axis=0) / dof)
    # floor at 1e-6 of the joint's torque RMS: noise-free data would otherwise give weights ~1e13
    rms = np.sqrt(np.mean(problem.b.reshape(-1, problem.na) ** 2, axis=0))
    return np.maximum(sigma, 1e-6 * np.maximum(rms, 1e-12))


def joint_weights(problem: Problem) -> np.ndarray:
    """Per-joint weights ``1 / sigma_j`` from the ordinary LS residuals."""
    theta_b = _wls(problem, np.ones(problem.b.size))
    return 1.0 / _joint_sigma(problem, theta_b)


def solve(problem: Problem, method: str = "lmi", lmi_margin: float = DEFAULT_LMI_MARGIN) -> Estimate:
    if method not in METHODS:
        raise IdentificationError(f"unknown method '{method}' (choose from {', '.join(METHODS)})")
    ones = np.ones(problem.na)
    if method == "ls":
        theta_b = _wls(problem, np.ones(problem.b.size))
        return Estimate(method, problem.full(_complete(problem, theta_b)), theta_b, ones)
    w = joint_weights(problem)
    row_w = np.tile(w, problem.b.size // problem.na)
    if method == "wls":
        theta_b = _wls(problem, row_w)
        return Estimate(method, problem.full(_complete(problem, theta_b)), theta_b, w)
    if method == "irls":
        return _irls(problem, w)
    return _lmi(problem, row_w, w, lmi_margin)


def _irls(problem: Problem, w: np.ndarray, max_iter: int = 50, rel_tol: float = 1e-8) -> Estimate:
    n_rows = problem.b.size
    base_w = np.tile(w, n_rows // problem.na)
    theta_b = _wls(problem, base_w)
    sigma = np.tile(_joint_sigma(problem, theta_b), n_rows // problem.na)
    converged = False
    for it in range(1, max_iter + 1):
        s = (problem.b - problem.base.reduce(problem.A) @ theta_b) / sigma
        huber = np.minimum(1.0, HUBER_K / np.maximum(np.abs(s), 1e-300))
        new = _wls(problem, base_w * np.sqrt(huber))
        step = np.linalg.norm(new - theta_b)
        theta_b = new
        if step <= rel_tol * np.linalg.norm(theta_b):
            converged = True
            break
    return Estimate("irls", problem.full(_complete(problem, theta_b)), theta_b, w,
                    {"iterations": it, "converged": converged})


def _lmi(problem: Problem, row_w: np.ndarray, w: np.ndarray, margin: float) -> Estimate:
    layout = problem.layout
    A = problem.A * row_w[:, None]
    b = problem.b * row_w
    # The objective only needs R and Q^T b of A = QR: an n x n problem however many samples.
    Q, R = np.linalg.qr(A)
    c = Q.T @ b
    n = A.shape[1]
    x_nom = layout.nominal[problem.free]
    lam = 1e-9 * np.mean(np.sum(R**2, axis=0))
    x = cp.Variable(n)
    # theta = S x + theta_fixed (scattered): constraints are written on the whole vector
    S = np.zeros((layout.size, n))
    S[problem.free, np.arange(n)] = 1.0
    theta = S @ x + problem.full(np.zeros(n))
    is_free = np.zeros(layout.size, dtype=bool)
    is_free[problem.free] = True
    basis = [pseudo_inertia(e) for e in np.eye(10)]   # pseudo_inertia is linear in pi
    constraints = []
    for _, sl in layout.body_slices():
        if is_free[sl].any():   # bodies held fixed are checked, not constrained
            J = sum(theta[sl][i] * E for i, E in enumerate(basis))
            constraints.append(0.5 * (J + J.T) >> margin * np.eye(4))
    friction = np.arange(layout.n_inertial, layout.size).reshape(-1, 4)[:, :3].ravel()   # Fc, Fv, Ia
    friction = friction[is_free[friction]]
    if friction.size:
        constraints.append(theta[friction] >= 0)
    dep = problem.base.dependent
    objective = cp.Minimize(cp.sum_squares(R @ x - c) + lam * cp.sum_squares(x[dep] - x_nom[dep]))
    prob = cp.Problem(objective, constraints)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as exc:
        raise IdentificationError(f"the SDP solver failed: {exc}") from None
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        raise IdentificationError(f"the physically consistent problem has no solution (status {prob.status}); "
                                  "the held-fixed parameters may violate the constraints")
    x_val = np.asarray(x.value)
    return Estimate("lmi", problem.full(x_val), problem.base.base_map @ x_val, w,
                    {"solver_status": prob.status, "lmi_margin": margin})


def lmi_min_eigenvalues(problem_or_layout, theta) -> dict[str, float]:
    """Smallest eigenvalue of each body's pseudo-inertia (kg m^2): > 0 means physically consistent."""
    layout = getattr(problem_or_layout, "layout", problem_or_layout)
    return {body: float(np.linalg.eigvalsh(pseudo_inertia(theta[sl]))[0]) for body, sl in layout.body_slices()}
