"""The safe online identification estimator: log-Cholesky least squares (CasADi + IPOPT, exact derivatives) and its
Mean Value Form bounds.

Estimate: ``min_eta ||Y P(eta) - (U - Y_r theta_r0)||^2`` with ``P`` the log-Cholesky map
(:func:`~..params.log_cholesky_to_params`), so every estimate is physically consistent. The
objective only needs the Gram matrices ``Y^T Y``, ``Y^T u``, ``u^T u``: one small NLP, whatever the
number of rows.

Bounds (the reference's Mean Value Form with the implicit-function sensitivity): at the optimum,
``d theta*/d U = P' Htil^{-1} P'^T Y^T =: S`` with ``Htil = P'^T Y^T Y P' + sum_k (Y^T (Y P - u))_k
P''_k`` (half the Hessian of the objective), and the box is
``theta* ± (|S| e + |S Y_r| dtheta_r)``: the row error bounds ``e`` and the robot-parameter half
widths ``dtheta_r`` pushed through the sensitivity.

What this guarantees: nothing, strictly. ``S`` is evaluated at the nominal data only, not enclosed
over all data the bounds allow, so the first-order box can miss the truth where ``theta*`` depends
nonlinearly on the data (near the boundary of the consistent set, where ``P'`` is ill-conditioned).
Where the optimum is interior and ``P'`` well conditioned, ``theta*`` is locally the linear least
squares solution and the box is its exact linear error propagation. ``bounds_guaranteed`` is
therefore always false for this method.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..robot import params
from ..robot.model import Robot
from ..signals.momentum import WindowRows
from .guaranteed import MomentumEstimatorBase, concatenate_rows
from .payload import PayloadEstimate


def log_cholesky_casadi(eta):
    """:func:`~..params.log_cholesky_to_params` on a CasADi 10-vector (pinocchio order)."""
    a, d1, d2, d3, s12, s13, s23, s14, s24, s34 = (eta[k] for k in range(10))
    L = ca.exp(a) * ca.vertcat(ca.horzcat(ca.exp(d1), 0, 0, 0),
                               ca.horzcat(s12, ca.exp(d2), 0, 0),
                               ca.horzcat(s13, s23, ca.exp(d3), 0),
                               ca.horzcat(s14, s24, s34, 1))
    J = L @ L.T
    tr = J[0, 0] + J[1, 1] + J[2, 2]
    # J = [[Sigma, h], [h^T, m]], I_O = tr(Sigma) 1 - Sigma
    return ca.vertcat(J[3, 3], J[0, 3], J[1, 3], J[2, 3], tr - J[0, 0], -J[0, 1], tr - J[1, 1],
                      -J[0, 2], -J[1, 2], tr - J[2, 2])


ETA_LIMIT = 20.0


class _LogCholeskyLeastSquares:
    """The NLP, built once: parameters are the (scaled) Gram matrix and vector."""

    def __init__(self):
        eta = ca.SX.sym("eta", 10)
        G = ca.SX.sym("G", 10, 10)
        g = ca.SX.sym("g", 10)
        P = log_cholesky_casadi(eta)
        half_cost = 0.5 * ca.dot(P, G @ P) - ca.dot(g, P)    # 0.5 ||Y P - u||^2 - 0.5 u^T u
        p = ca.vertcat(ca.vec(G), g)
        self.solver = ca.nlpsol("lc_ls", "ipopt", {"x": eta, "p": p, "f": half_cost},
                                {"ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes",
                                 "ipopt.tol": 1e-12, "ipopt.max_iter": 500})
        self.P = ca.Function("P", [eta], [P, ca.jacobian(P, eta)])
        self.hessian = ca.Function("H", [eta, p], [ca.hessian(half_cost, eta)[0]])

    def solve(self, G, g, eta0):
        p = np.concatenate([G.ravel(order="F"), g])
        # |eta| <= 20 keeps exp() finite in IPOPT's line search; it spans mass scales of e^40
        sol = self.solver(x0=np.clip(eta0, -ETA_LIMIT, ETA_LIMIT), p=p, lbx=-ETA_LIMIT, ubx=ETA_LIMIT)
        eta = np.asarray(sol["x"]).ravel()
        P, dP = (np.asarray(x) for x in self.P(eta))
        return eta, P.ravel(), dP, np.asarray(self.hessian(eta, p)), self.solver.stats()["success"]


_NLP: _LogCholeskyLeastSquares | None = None


def _nlp() -> _LogCholeskyLeastSquares:
    global _NLP
    if _NLP is None:
        _NLP = _LogCholeskyLeastSquares()
    return _NLP


class LogCholeskyEstimator(MomentumEstimatorBase):
    """The reference's SysID step: consistent estimate from all rows so far, MVF box around it (clipped to the
    prior box, which the truth is assumed to lie in). Not guaranteed (see the module docstring)."""

    method = "log_cholesky"

    def __init__(self, robot: Robot, prior_lower, prior_upper, **kwargs):
        super().__init__(robot, prior_lower, prior_upper, **kwargs)
        centre = 0.5 * (self.prior_lower + self.prior_upper)
        m0 = centre[0] if centre[0] > 0 else 1.0
        # a consistent start: the prior centre's mass and first moment, a small sphere's inertia
        self._eta = params.params_to_log_cholesky(
            params.params_from_com(m0, centre[1:4] / m0, 1e-3 * m0 * np.eye(3)))
        self.estimate = params.log_cholesky_to_params(self._eta)
        self.lower, self.upper = self.prior_lower.copy(), self.prior_upper.copy()
        self.solver_ok = True
        # the MVF radius |S| e needs every row: this method keeps them all (its cost grows with the run)
        self._all_rows: list[WindowRows] = []

    def add_rows(self, batch: WindowRows) -> None:
        """Take a batch of window rows (kept: every update refits all rows so far)."""
        super().add_rows(batch)
        if batch.rows:
            self._all_rows = [concatenate_rows(self._all_rows + [batch], self.robot_nominal.size)]

    @property
    def rows(self) -> WindowRows:
        """All window rows so far, stacked."""
        return concatenate_rows(self._all_rows, self.robot_nominal.size)

    def final_update_bounds(self) -> None:
        """As :meth:`update_bounds`: every update already takes all rows."""
        self.update_bounds()

    def update_bounds(self) -> None:
        """Refit the consistent estimate on all rows and recompute its Mean Value Form box (needs 10 rows)."""
        self._take_new_rows()
        rows = self.rows
        if rows.rows < 10:
            return
        u = rows.U - rows.Y_r @ self.robot_nominal
        scale = 1.0 / max(np.linalg.norm(rows.Y) ** 2, 1e-300)   # keeps IPOPT's tolerances meaningful
        G, g = rows.Y.T @ rows.Y, rows.Y.T @ u
        eta, P, dP, H, ok = _nlp().solve(scale * G, scale * g, self._eta)
        if not (np.all(np.isfinite(eta)) and np.all(np.isfinite(P))):
            self.message = "IPOPT returned a non-finite estimate: estimate and bounds not updated"
            return
        self.solver_ok = bool(ok)
        self._eta, self.estimate = eta, P
        # S = dP Htil^{-1} dP^T Y^T (the scale cancels: H was computed on the scaled objective)
        try:
            K = dP @ np.linalg.solve(H, dP.T) * scale
        except np.linalg.LinAlgError:
            self.message = "singular Hessian at the estimate: bounds not updated"
            return
        S = K @ rows.Y.T
        dtheta_r = 0.5 * (self.robot_upper - self.robot_lower)
        radius = np.abs(S) @ rows.noise_bound + np.abs(K @ (rows.Y.T @ rows.Y_r)) @ dtheta_r
        if not np.all(np.isfinite(radius)):
            self.message = "non-finite Mean-Value-Form radius: bounds not updated"
            return
        self.lower = np.maximum(P - radius, self.prior_lower)
        self.upper = np.minimum(P + radius, self.prior_upper)
        self.message = "" if ok else "IPOPT did not converge; the estimate is its last iterate"

    def state(self) -> None:
        """None: this method keeps every row (its Mean-Value-Form radius needs them), so its state is not saved."""
        return None

    def restore(self, state: dict) -> None:
        """Always ValueError: no saved state fits this method (see :meth:`state`)."""
        raise ValueError("method 'log_cholesky' keeps no saved state")

    def support(self, C) -> None:
        """None: its box is a Mean-Value-Form box at the nominal point, not an LP over its rows."""
        return None

    def result(self) -> PayloadEstimate:
        """The last estimate with its Mean Value Form box (not guaranteed)."""
        return PayloadEstimate(
            parameter_names=self.names, method=self.method, estimate=self.estimate.copy(),
            lower=self.lower.copy(), upper=np.maximum(self.upper, self.lower), covariance=np.zeros((0, 0)),
            physically_consistent=params.is_physically_consistent(self.estimate),
            bounds_guaranteed=False, data_consistent=True, samples_used=self.samples_used,
            condition_number=self.condition_number(), message=self.message)
