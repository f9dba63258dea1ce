"""The planner's optimisation as one CasADi graph, solved by IPOPT with exact first derivatives.

free control points x -> control points (affine, :class:`~.optimizer.PlanOptimizer`'s ``A``) ->
q, qd, qdd at the cost samples (Bernstein bases) -> weighted payload rows of each sample
(:class:`~..robot.casadi_dynamics.CasadiDynamics`, the rows of
:meth:`~.excitation.PayloadExcitation.weighted_rows`) -> information -> the scaled cost of
:func:`~.excitation.scaled_cost` (robot columns marginalised, as
:meth:`~.excitation.PayloadExcitation.payload_information`). Constraints: the Bezier hull limits
(linear) and the torque screen of :meth:`~.optimizer.PlanOptimizer._reach`, the soft minimum
(:func:`soft_min`) of its margins at every sample and joint kept >= 0, its tube terms held at the
values given (the optimiser freezes them at the start point).

Built once per robot and settings; each request passes its start state, information, box and
screen terms as parameters. IPOPT's wall time is capped by ``max_wall_time`` (the settings'
``optimize_s``). The Hessian is IPOPT's limited-memory one: on the Gen3 (4 chained plans, 4 s each,
a shared machine) the exact Hessian of this graph took about 1 s per iteration (4-5 iterations, and
2.6 s to build), the limited-memory one 15-30 iterations per second; neither converged in 4 s.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import casadi as ca
import numpy as np

from ..robot.casadi_dynamics import CasadiDynamics
from .excitation import BOX_INFORMATION, MASS_WEIGHT

# 1/N m: the screen's constraint is the soft minimum of its margins at every sample and joint, below
# the minimum by at most log(samples * joints) / SOFT_MIN_SHARPNESS (0.28 N m for 32 samples of 7
# joints): one constraint, whose gradient is one reverse sweep, where 224 had a Jacobian as costly as
# 28 evaluations of the graph
SOFT_MIN_SHARPNESS = 20.0
# IPOPT statuses that count as converged (the second: its acceptable tolerances held for a few iterations)
CONVERGED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")


class Solution(NamedTuple):
    """IPOPT's answer: the point, whether it converged, its iterations and status, its multipliers."""
    x: np.ndarray
    converged: bool
    iterations: int
    status: str
    lam_x: np.ndarray
    lam_g: np.ndarray


class _StopAt(ca.Callback):
    """IPOPT's iteration callback: asks it to stop once the wall clock passes ``stop_at`` (a
    ``time.perf_counter`` value; ``max_wall_time`` is fixed when the solver is built, a request's
    deadline may come sooner)."""

    def __init__(self, nx: int, ng: int, np_: int):
        ca.Callback.__init__(self)
        self.sizes = {"x": (nx, 1), "f": (1, 1), "g": (ng, 1), "lam_x": (nx, 1), "lam_g": (ng, 1), "lam_p": (np_, 1)}
        self.stop_at = float("inf")
        self.construct("stop_at", {})

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return ca.nlpsol_out(i)

    def get_name_out(self, i):
        return "stop"

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(*self.sizes[ca.nlpsol_out(i)])

    def eval(self, arg):
        return [1 if time.perf_counter() > self.stop_at else 0]


def _sample_function(robot, excitation, friction, robot_relative) -> ca.Function:
    """``(q, qd, qdd, c, h) -> (weighted rows (nv, size), screened reach (nv,))`` at one sample."""
    ex, n = excitation, robot.nv
    dyn = CasadiDynamics(robot.model)
    q, qd, qdd = (ca.SX.sym(name, n) for name in ("q", "qd", "qdd"))
    c, h = ca.SX.sym("c", 10), ca.SX.sym("h", 10)
    Y = dyn.regressor(q, qd, qdd)
    W = ca.mtimes(Y[:, ex.cols], ca.DM(ex.T_JP))
    tau = dyn.rnea(q, qd, qdd)
    tau_w = tau + ca.mtimes(W, ca.DM(ex.payload_guess))
    rel = ex.torque_relative
    bound = rel * (ca.fabs(tau_w) + ex.torque_absolute_Nm) / (1.0 - rel) + ex.torque_absolute_Nm + ex.model_error_Nm
    w = 1.0 / ca.fmax(bound, ex.floor_Nm)
    if ex.robot_prior is None:
        A = W
    else:
        friction_cols = ca.SX.zeros(n, 4 * n)
        for j in range(n):
            friction_cols[j, 4 * j:4 * j + 4] = ca.horzcat(ca.sign(qd[j]), qd[j], qdd[j], 1.0)
        A = ca.horzcat(W, Y, friction_cols)
    fr = friction
    reach = (ca.fabs(tau + ca.mtimes(W, c)) + ca.mtimes(ca.fabs(W), h) + robot_relative * ca.fabs(tau)
             + fr[:, 0] + fr[:, 1] * ca.fabs(qd) + fr[:, 2] * ca.fabs(qdd) + fr[:, 3])
    return ca.Function("sample", [q, qd, qdd, c, h], [ca.diag(w) @ A, reach])


def _scaled_cost_function() -> ca.Function:
    """``M (10, 10) -> -log det M + MASS_WEIGHT log [M^-1]_mm`` (symbolic Cholesky: an SX graph)."""
    M = ca.SX.sym("M", 10, 10)
    R = ca.chol(0.5 * (M + M.T))                       # M = R^T R
    e0 = ca.DM.zeros(10)
    e0[0] = 1.0
    z = ca.solve(R.T, e0)                              # [M^-1]_mm = |R^-T e_m|^2
    cost = -2.0 * ca.sum1(ca.log(ca.diag(R))) + MASS_WEIGHT * ca.log(ca.sumsqr(z))
    return ca.Function("scaled_cost", [M], [cost])


def _cost_function(size: int, robot_prior) -> ca.Function:
    """``(F_total (size, size), half-widths (10,)) -> scaled cost`` (:func:`~.excitation.scaled_cost`)."""
    F = ca.MX.sym("F", size, size)
    s = ca.MX.sym("s", 10)
    P = F
    if robot_prior is not None:
        K = F[10:, 10:] + ca.DM(robot_prior)
        P = F[:10, :10] - ca.mtimes(F[:10, 10:], ca.solve(K, F[10:, :10], "qr"))
    M = ca.diag(s) @ P @ ca.diag(s) + BOX_INFORMATION * ca.DM.eye(10)
    return ca.Function("cost", [F, s], [_scaled_cost_function()(M)])


def soft_min(values, sharpness: float = SOFT_MIN_SHARPNESS):
    """``-log(sum exp(-sharpness v)) / sharpness``: smooth, never above ``min(v)``, at most
    ``log(len(v)) / sharpness`` below it (shifted by the minimum: no overflow)."""
    low = ca.mmin(values)
    return low - ca.log(ca.sum1(ca.exp(-sharpness * (values - low)))) / sharpness


class PlanNLP:
    """The planner's NLP for one robot and settings (module docstring)."""

    def __init__(self, optimizer, budget_s: float, hessian: str = "limited-memory"):
        """``optimizer``: the :class:`~.optimizer.PlanOptimizer` whose maps, limits and screen constants
        the graph uses; ``budget_s``: IPOPT's ``max_wall_time``."""
        o, s = optimizer, optimizer.settings
        n, m, d, N = o.n, o.m, o.d, s.cost_samples
        self.size = o.excitation.size
        maps = o.sample_maps()                                   # 3 x (B A (N, m), B (N, d+1))
        sample = _sample_function(o.robot, o.excitation, o._friction, o._robot_relative).map(N)
        cost = _cost_function(self.size, o.excitation.robot_prior)
        x = ca.MX.sym("x", m * n)
        P0 = ca.MX.sym("P0", d + 1, n)                           # control points at x = 0
        F_prev = ca.MX.sym("F_prev", self.size, self.size)
        half, c = ca.MX.sym("half", 10), ca.MX.sym("c", 10)
        room = ca.MX.sym("room", n)                              # torque room less tube terms and need
        X = ca.reshape(x, n, m).T                                # x raveled as (m, n)
        q, qd, qdd = (ca.DM(BA) @ X + ca.DM(BP) @ P0 for BA, BP in maps)
        rows, reach = sample(q.T, qd.T, qdd.T, c, half)
        R = ca.vertcat(*ca.horzsplit(rows, self.size))          # (N n, size)
        F = F_prev + (s.horizon_s / N) * ca.mtimes(R.T, R)
        p = ca.vertcat(ca.vec(P0), ca.vec(F_prev), half, c, room)
        cost_x = ca.Function("cost", [x, p], [cost(F, half)])
        screen_x = ca.Function("screen", [x, p], [soft_min(ca.vec(ca.repmat(room, 1, N) - reach))])
        self.G = o.G_moving                                     # hull rows with some x dependence
        g = ca.vertcat(ca.mtimes(ca.DM(self.G), x), screen_x(x, p))
        # "ad_weight": reverse mode for the constraint Jacobian (one nonlinear row, the screen, among
        # the linear hull rows), not a forward sweep per variable (measured: 8 ms against 60 ms)
        options = {"oracle_options": {"ad_weight": 1.0}, "ipopt.hessian_approximation": hessian, "ipopt.max_wall_time": float(budget_s),
                   "ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes", "ipopt.tol": 1e-4,
                   "ipopt.acceptable_tol": 1e-2, "ipopt.acceptable_iter": 3, "ipopt.max_iter": 500,
                   "ipopt.mu_strategy": "adaptive", "ipopt.warm_start_init_point": "yes"}
        self._stop = _StopAt(x.numel(), g.numel(), p.numel())
        options["iteration_callback"] = self._stop
        self.solver = ca.nlpsol("plan", "ipopt", {"x": x, "p": p, "f": cost_x(x, p), "g": g}, options)
        self.graph = ca.Function("graph", [x, p], [cost(F, half), reach])
        self._warm = None                  # (lam_x, lam_g) of the last solution

    def parameters(self, P0, F_prev, half, centre, room) -> np.ndarray:
        """The parameter vector of a request (column-major, as CasADi's ``vec``)."""
        return np.concatenate([np.ravel(P0, order="F"), np.ravel(F_prev, order="F"), half, centre, room])

    def evaluate(self, x, p) -> tuple[float, np.ndarray]:
        """(cost, screened reach (N, nv)) of the graph: the check against the numpy objective."""
        cost, reach = self.graph(x, p)
        return float(cost), np.asarray(reach).T

    def solve(self, x0, p, x_lo, x_hi, g_lo, g_hi, warm: bool, stop_at: float = float("inf")) -> Solution:
        """IPOPT from ``x0`` (with the last solution's multipliers when ``warm``), no iteration past
        ``stop_at`` (``time.perf_counter``); ``g_lo``/``g_hi``: the hull rows' bounds (the screen's soft
        minimum is kept >= 0)."""
        self._stop.stop_at = stop_at
        lbg, ubg = np.append(g_lo, 0.0), np.append(g_hi, np.inf)
        args = dict(x0=x0, p=p, lbx=x_lo, ubx=x_hi, lbg=lbg, ubg=ubg)
        if warm and self._warm is not None:
            args["lam_x0"], args["lam_g0"] = self._warm
        out = self.solver(**args)
        stats = self.solver.stats()
        lam_x, lam_g = np.asarray(out["lam_x"]).ravel(), np.asarray(out["lam_g"]).ravel()
        self._warm = (lam_x, lam_g)
        status = str(stats.get("return_status", "unknown"))
        return Solution(np.asarray(out["x"]).ravel(), status in CONVERGED, int(stats.get("iter_count", 0)),
                        status, lam_x, lam_g)
