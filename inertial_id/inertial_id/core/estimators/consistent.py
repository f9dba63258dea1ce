"""Physically consistent estimate: the parameter vector nearest (in the metric of the data) to a
least-squares estimate whose pseudo-inertia is positive semidefinite, as an SDP (cvxpy + Clarabel).

``min ||R (pi - pi_ls)||^2  s.t.  J(pi) >= eps*I,  lower <= pi <= upper``, ``R^T R = information``.
This is exactly the constrained least-squares problem on the accumulated data, since
``||A pi - b||^2 = ||R (pi - pi_ls)||^2 + const``.
"""
from __future__ import annotations

import functools
import threading
import warnings

import cvxpy as cp
import numpy as np


class InfeasibleError(RuntimeError):
    """No physically consistent parameter vector lies inside the given box."""


class SolverFailure(RuntimeError):
    """The conic solver gave no answer (numerical trouble); the data may still be fine."""


def pseudo_inertia_expr(pi):
    """Pseudo-inertia of a cvxpy 10-vector in pinocchio order (affine in ``pi``)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (pi[k] for k in range(10))
    half_tr = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half_tr - ixx, -ixy, -ixz, hx],
                    [-ixy, half_tr - iyy, -iyz, hy],
                    [-ixz, -iyz, half_tr - izz, hz],
                    [hx, hy, hz, m]])


@functools.cache
def _problem(n: int, boxed: bool):
    """The SDP with its data as cvxpy Parameters, compiled once per shape and reused: an estimator
    re-solves it at every bounds update. (The lock: the nodes solve in worker threads.)"""
    x = cp.Variable(n)
    par = {"R": cp.Parameter((n, n)), "r": cp.Parameter(n), "eps": cp.Parameter(nonneg=True)}
    J = pseudo_inertia_expr(x)
    cons = [0.5 * (J + J.T) >> par["eps"] * np.eye(4)]
    if boxed:
        par["lower"], par["upper"] = cp.Parameter(n), cp.Parameter(n)
        cons += [x >= par["lower"], x <= par["upper"]]
    return cp.Problem(cp.Minimize(cp.sum_squares(par["R"] @ x - par["r"])), cons), x, par, threading.Lock()


def consistent_estimate(pi_ls, information, lower=None, upper=None, eps: float = 0.0) -> np.ndarray:
    """Solve the SDP above; raises :class:`InfeasibleError` if the box holds no consistent vector."""
    pi_ls = np.asarray(pi_ls, dtype=float)
    n = pi_ls.size
    info = np.asarray(information, dtype=float)
    if not (np.all(np.isfinite(pi_ls)) and np.all(np.isfinite(info))):
        raise SolverFailure("least-squares estimate or information not finite")
    # Square root of the information scaled to a largest eigenvalue of 1 (the minimiser does not
    # change): an information of order 1e-8, as the first rows of a run give, left the objective so
    # flat that Clarabel's step search failed inside its PSD cone (a panic, "Eigval error"). A tiny
    # relative ridge keeps the metric defined where the data leave directions free.
    try:
        w, V = np.linalg.eigh(0.5 * (info + info.T))
    except np.linalg.LinAlgError as exc:
        raise SolverFailure(f"information matrix: {exc}") from None
    w = np.maximum(w / w.max(), 1e-12) if w.max() > 0 else np.ones(n)
    R = (V * np.sqrt(w)).T
    if (lower is None) != (upper is None):
        raise ValueError("give both bounds of the box or neither")
    boxed = lower is not None
    prob, x, par, lock = _problem(n, boxed)
    with lock:
        par["R"].value, par["r"].value, par["eps"].value = R, R @ pi_ls, float(eps)
        if boxed:
            par["lower"].value, par["upper"].value = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        try:
            with warnings.catch_warnings():
                # an inaccurate solution is accepted below by its status; cvxpy's warning would only
                # reach the user's console
                warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
                # a fresh solver object each time: after a panic, the one cvxpy keeps for a warm
                # start is left half-updated and every later solve panics too
                prob.solve(solver=cp.CLARABEL, warm_start=False)
        except cp.error.SolverError as exc:
            raise SolverFailure(f"Clarabel: {exc}") from None
        except BaseException as exc:
            # a panic inside the Rust solver arrives as pyo3's PanicException, a BaseException
            if type(exc).__name__ != "PanicException":
                raise
            raise SolverFailure(f"Clarabel panicked: {exc}") from None
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise InfeasibleError(f"no physically consistent parameters in the box (solver: {prob.status})")
        return np.array(x.value, dtype=float)


def payload_estimate(information, rhs, n_payload: int, lower=None, upper=None):
    """Consistent payload estimate from normal equations over payload + nuisance columns: least
    squares jointly, then the payload's consistent vector nearest to it in the metric of its
    marginal information (nuisance eliminated, Schur complement). Raises as
    :func:`~.consistent.consistent_estimate`."""
    x = np.linalg.lstsq(information, rhs, rcond=None)[0]
    return consistent_estimate(x[:n_payload], marginal_information(information, n_payload), lower, upper)


def marginal_information(information, n_payload: int) -> np.ndarray:
    """The payload's information with the nuisance columns eliminated (Schur complement)."""
    P, N = slice(0, n_payload), slice(n_payload, information.shape[0])
    marginal = information[P, P]
    if information.shape[0] > n_payload:
        marginal = marginal - information[P, N] @ np.linalg.pinv(information[N, N]) @ information[N, P]
    return marginal
