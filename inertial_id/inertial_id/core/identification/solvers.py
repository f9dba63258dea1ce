"""Solvers for ``A x = b``: least squares on base parameters, weighted and iteratively reweighted
least squares, and the physically consistent problem (the reference's eq. 32) as an SDP.

Weights (``wls``): one per actuated joint, ``w_j = 1 / sigma_j`` with ``sigma_j^2 = |r_j|^2 /
(N - n_base / na)`` the residual variance of joint ``j`` after ordinary LS (Gautier's normalisation:
joints with large torques and noise no longer dominate the fit); ``sigma_j`` is floored at 1e-6 of
the joint's torque RMS so that noise-free data keep finite weights.

IRLS (``irls``): starts from WLS; each iteration sets row weights ``w_j * h(r / sigma_j)`` with
Huber's ``h(s) = min(1, 1.345 / |s|)`` and re-solves, so outlier rows (torque spikes, contact
bumps) lose influence. Stops when the base parameters change by less than ``1e-8`` relative
(``|d theta_b| <= 1e-8 |theta_b|``) or after 50 iterations (reported as not converged).

SDP (``lmi``): minimises the WLS objective over the full free parameter vector subject to, per
body with free parameters, ``pseudo_inertia(pi_k) >= margin * I`` (the reference's LMI, equal to its
``[[tr(L)/2 I - L, m p], [m p^T, m]]``) and ``Fc, Fv, Ia >= 0``. The data fix only the base
parameters ``theta_b = x_b + Kd x_d``; the dependent coordinates ``x_d`` are pulled towards their
nominal values by ``1e-9 * mean(diag(A^T A)) |x_d - x_d,nominal|^2``, which makes the answer unique
without biasing the base parameters (unless an LMI is active).

Plausible SDP (``lmi`` with a :class:`Plausibility`): adds ``weight * sum_k d(J_k || J0_k)``, the
entropic divergence of each body's pseudo-inertia from the nominal one (``plausible.py``), to the
weighted objective, and each body's plausibility bounds (``plausible.LinkBounds``): its mass within
its stated interval and ``tr(J_k Q_k) >= 0`` (mass inside the body's bounding ellipsoid). The data
term is a chi-square (rows weighted by ``1 / sigma_j``), so ``weight`` is in units of noise
variance: where the data determine a direction they outweigh the prior as they grow, and where they
do not, the prior alone sets it (the pull of ``x_d`` above is then off). The divergence is a
barrier, so ``J_k`` stays well inside the cone. The weight is chosen on held-out training data by
``selection.py``.

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.linalg

from ...defaults import DEFAULT_LMI_MARGIN, DEFAULT_SOLVER, SOLVERS
from ..robot.params import pseudo_inertia
from .plausible import has_positive_definite_nominal
from .problem import IdentificationError, Problem

HUBER_K = 1.345


@dataclass(frozen=True)
class Plausibility:
    """Options of the plausible SDP: divergence weight (0: none) and ``plausible.LinkBounds`` per body."""

    weight: float = 0.0
    bounds: dict = field(default_factory=dict)


@dataclass
class RobotEstimate:
    """A whole-robot estimate: method, all parameters, the base values of the free part, joint weights, solver details."""
    method: str
    theta: np.ndarray             # all parameters (fixed ones at their held values)
    base_values: np.ndarray       # structural base parameters of the free part
    joint_weights: np.ndarray     # per actuated joint
    info: dict = field(default_factory=dict)


def _complete(problem: Problem, theta_b: np.ndarray) -> np.ndarray:
    """The reference's eq. 17 with ``theta_d`` at the nominal values: ``x = Pb (theta_b - Kd theta_d) + Pd theta_d``."""
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


def solve(problem: Problem, method: str = DEFAULT_SOLVER, lmi_margin: float = DEFAULT_LMI_MARGIN,
          plausibility: Plausibility | None = None, weights: np.ndarray | None = None,
          sdp: ConsistentSDP | None = None) -> RobotEstimate:
    """``weights``: per-joint row weights to use instead of :func:`joint_weights` (e.g. those of the
    whole data set when solving on a part of it); ``plausibility`` applies to ``lmi`` only, and so
    does ``sdp``, the compiled :class:`ConsistentSDP` of this problem and weights, to reuse."""
    if method not in SOLVERS:
        raise IdentificationError(f"unknown method '{method}' (choose from {', '.join(SOLVERS)})")
    if plausibility is not None and method != "lmi":
        raise IdentificationError(f"regularisation and plausibility bounds need method 'lmi', not '{method}'")
    ones = np.ones(problem.na)
    if method == "ls":
        theta_b = _wls(problem, np.ones(problem.b.size))
        return RobotEstimate(method, problem.full(_complete(problem, theta_b)), theta_b, ones)
    w = joint_weights(problem) if weights is None else np.asarray(weights, dtype=float)
    row_w = np.tile(w, problem.b.size // problem.na)
    if method == "wls":
        theta_b = _wls(problem, row_w)
        return RobotEstimate(method, problem.full(_complete(problem, theta_b)), theta_b, w)
    if method == "irls":
        return _irls(problem, w)
    return _lmi(problem, row_w, w, lmi_margin, plausibility or Plausibility(), sdp)


def _irls(problem: Problem, w: np.ndarray, max_iter: int = 50, rel_tol: float = 1e-8) -> RobotEstimate:
    n_rows = problem.b.size
    base_w = np.tile(w, n_rows // problem.na)
    theta_b = _wls(problem, base_w)
    sigma = np.tile(_joint_sigma(problem, theta_b), n_rows // problem.na)
    converged = False
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        s = (problem.b - problem.base.reduce(problem.A) @ theta_b) / sigma
        huber = np.minimum(1.0, HUBER_K / np.maximum(np.abs(s), 1e-300))
        new = _wls(problem, base_w * np.sqrt(huber))
        step = np.linalg.norm(new - theta_b)
        theta_b = new
        if step <= rel_tol * np.linalg.norm(theta_b):
            converged = True
            break
    return RobotEstimate("irls", problem.full(_complete(problem, theta_b)), theta_b, w,
                    {"iterations": it, "converged": converged})


def _bound_constraints(bounds, pi, vec_J) -> list:
    """A body's plausibility bounds on its parameters ``pi`` (cvxpy): mass interval, ``tr(J Q) >= 0``."""
    lower_kg, upper_kg = bounds.mass_kg
    return [pi[0] >= lower_kg, pi[0] <= upper_kg, vec_J.T @ bounds.ellipsoid.Q.ravel() @ pi >= 0]


class ConsistentSDP:
    """The ``lmi`` problem of one data set (``problem`` with row weights ``row_w``), compiled once:
    the prior weight is a cvxpy parameter, so a weight grid re-solves without re-compiling.

    The data enter as the constant quadratic ``|R x - c|^2`` of ``diag(row_w) A = Q R``, ``c = Q^T
    diag(row_w) b`` (an ``n x n`` problem however many samples). Without a prior, a faint pull
    ``lam |x_d - x_d,nominal|^2``, ``lam = 1e-9 mean(diag(R^T R))``, of the dependent coordinates
    picks one answer. It stays on beside the divergence: at a small prior weight the divergence is
    below Clarabel's tolerance on the data term, and alone it left the unidentifiable directions
    loose (a Gen3 shoulder mass of 300 times nominal at weight 0.01 with single-threaded BLAS).
    Clarabel solves it as posed; if it fails (it can on noise-free data, whose row weights reach
    ~1e6), the objective divided by ``max|R|^2`` is solved again with tight tolerances.
    """

    def __init__(self, problem: Problem, row_w: np.ndarray, margin: float = DEFAULT_LMI_MARGIN,
                 bounds=None, divergence: bool = False):
        layout, n = problem.layout, problem.free.size
        # R of [A b] holds both: its first n columns are R, its last column is Q^T b (Q never formed)
        R_ab = scipy.linalg.qr(np.column_stack([problem.A, problem.b]) * row_w[:, None], mode="r")[0]
        R, c = R_ab[:n, :n], R_ab[:n, n]
        self.lam_data = 1e-9 * np.mean(np.sum(R**2, axis=0))
        self.rescale = 1.0 / max(np.abs(R).max(), 1e-300) ** 2
        self.x = x = cp.Variable(n)
        self.k, self.weight, self.lam = (cp.Parameter(nonneg=True) for _ in range(3))
        # theta = S x + theta_fixed (scattered): constraints are written on the whole vector
        S = np.zeros((layout.size, n))
        S[problem.free, np.arange(n)] = 1.0
        theta = S @ x + problem.full(np.zeros(n))
        is_free = np.zeros(layout.size, dtype=bool)
        is_free[problem.free] = True
        vec_J = np.column_stack([pseudo_inertia(e).ravel() for e in np.eye(10)])   # linear in pi
        constraints, div = [], 0
        for body, sl in layout.body_slices():
            if not is_free[sl].any():   # bodies held fixed are checked, not constrained
                continue
            J = cp.reshape(vec_J @ theta[sl], (4, 4), order="C")
            constraints.append(0.5 * (J + J.T) >> margin * np.eye(4))
            if bounds and body in bounds:
                constraints += _bound_constraints(bounds[body], theta[sl], vec_J)
            if divergence and has_positive_definite_nominal(layout.nominal[sl]):
                # in the nominal's own coordinates, J~ = L0^-1 J L0^-T with J0 = L0 L0^T, the divergence
                # is -log det J~ + tr J~ - 4: entries near one however small or large the link
                L0_inv = np.linalg.inv(np.linalg.cholesky(pseudo_inertia(layout.nominal[sl])))
                J_n = cp.reshape(np.kron(L0_inv, L0_inv) @ vec_J @ theta[sl], (4, 4), order="C")
                div = div - cp.log_det(0.5 * (J_n + J_n.T)) + cp.trace(J_n)
        friction = np.arange(layout.n_inertial, layout.size).reshape(-1, 4)[:, :3].ravel()   # Fc, Fv, Ia
        friction = friction[is_free[friction]]
        if friction.size:
            constraints.append(theta[friction] >= 0)
        dep = problem.base.dependent
        x_nom = layout.nominal[problem.free]
        objective = self.k * cp.sum_squares(R @ x - c)
        if len(dep):        # cvxpy 1.7 (the Jazzy lock) refuses an empty index
            objective = objective + self.lam * cp.sum_squares(x[dep] - x_nom[dep])
        if divergence:
            objective = objective + self.weight * div
        self.problem = cp.Problem(cp.Minimize(objective), constraints)

    def solve(self, weight: float) -> tuple[np.ndarray, str]:
        """``(x, solver status)`` at prior weight ``weight``, retried with rescaled data and tight tolerances when the first solve fails."""
        lam = self.lam_data
        failure = None
        for k, tight in ((1.0, False), (self.rescale, True)):
            self.k.value, self.weight.value, self.lam.value = k, k * weight, k * lam
            tolerances = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10) if tight else {}
            try:
                with warnings.catch_warnings():   # an inaccurate solution is reported in the status instead
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    self.problem.solve(solver=cp.CLARABEL, **tolerances)
            except cp.error.SolverError as exc:
                failure = f"the SDP solver failed: {exc}"
                continue
            if self.problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and self.x.value is not None:
                return np.asarray(self.x.value), self.problem.status
            failure = (f"the physically consistent problem has no solution (status {self.problem.status}); "
                       "the held-fixed parameters may violate the constraints")
        raise IdentificationError(failure)


def _lmi(problem: Problem, row_w: np.ndarray, w: np.ndarray, margin: float, plaus: Plausibility,
         sdp: ConsistentSDP | None) -> RobotEstimate:
    if sdp is None:
        sdp = ConsistentSDP(problem, row_w, margin, plaus.bounds, plaus.weight > 0)
    x_val, status = sdp.solve(plaus.weight)
    return RobotEstimate("lmi", problem.full(x_val), problem.base.base_map @ x_val, w,
                    {"solver_status": status, "lmi_margin": margin, "regularization_weight": plaus.weight,
                     "plausibility_bounds": bool(plaus.bounds)})


def lmi_min_eigenvalues(problem_or_layout, theta) -> dict[str, float]:
    """Smallest eigenvalue of each body's pseudo-inertia (kg m^2): > 0 means physically consistent."""
    layout = getattr(problem_or_layout, "layout", problem_or_layout)
    return {body: float(np.linalg.eigvalsh(pseudo_inertia(theta[sl]))[0]) for body, sl in layout.body_slices()}
