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
``optimize_s``). The Hessian is IPOPT's limited-memory one (the exact Hessian of this graph took
about 1 s per iteration on the Gen3). What kept IPOPT from converging was not the Hessian but kinks:
|tau| in the row weights and every magnitude of the screen (now smoothed: ``WEIGHT_SMOOTHING_NM``,
:func:`smooth_abs`), with which it ran 300-500 iterations on Gen3 rest requests without converging,
30-60 with them smoothed. The screen is one soft minimum per joint (fewer iterations than one over
every joint). IPOPT's cost is :class:`_Cost`: numpy's products of the rows with a hand-derived
gradient (:func:`cost_and_gradient`), where CasADi's dense products took most of an iteration;
:attr:`PlanNLP.graph` keeps the whole cost in CasADi, the reference the tests compare with. The
screen, its Jacobian and the rows with their reverse sweep are compiled (:mod:`.native`), the rows
called on numpy buffers: an iteration on the Gen3 takes 6-9 ms instead of 25.
"""
from __future__ import annotations

import time
from typing import Any, NamedTuple

import casadi as ca
import numpy as np

from ..robot.casadi_dynamics import CasadiDynamics
from .excitation import BOX_INFORMATION, MASS_WEIGHT
from .native import BufferedCall, NativeFunctions, dense

# 1/N m: the screen's constraint is the soft minimum of its margins at every sample and joint, below
# the minimum by at most log(samples * joints) / SOFT_MIN_SHARPNESS (0.28 N m for 32 samples of 7
# joints): one constraint, whose gradient is one reverse sweep, where 224 had a Jacobian as costly as
# 28 evaluations of the graph
SOFT_MIN_SHARPNESS = 20.0
# N m: every torque-valued magnitude of the screen is smoothed, |v| -> sqrt(v^2 + e^2) - e (never
# above |v|, at most e below it): kinks in the screen's one constraint (its samples' torques, payload
# columns, speeds crossing zero) kept IPOPT's iterates from converging
SCREEN_SMOOTHING_NM = 0.05
# pairs kept by IPOPT's limited-memory Hessian (its default: 6; the free points: 3 per joint, 21 on the
# Gen3). 43 Gen3 requests of 12 `bench planner` chains, each solved from a cold start: with 6 kept,
# iterations median 52, up to 237, 86 % converged within 1 s; with 12: 51, up to 173, 95 %; with 20:
# 50, up to 102, 100 %, and the lowest median cost (-62.0 against -60.3); 5.7, 6.3 and 6.7 ms per
# iteration
LBFGS_HISTORY = 20
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


def smooth_abs(v, e: float = SCREEN_SMOOTHING_NM):
    """``sqrt(v^2 + e^2) - e``: |v| smoothed, never above it, at most ``e`` below (numpy or CasADi)."""
    sqrt = np.sqrt if isinstance(v, np.ndarray | float) else ca.sqrt
    return sqrt(v * v + e * e) - e


def _sample_function(robot, excitation, friction, robot_relative) -> tuple[ca.Function, ca.Function, ca.Function]:
    """At one sample: ``(q, qd, qdd, c, h) -> (weighted rows (nv, size), screened reach (nv,))``, and the
    same two outputs as functions of their own (``(q, qd, qdd) -> rows``, ``(q, qd, qdd, c, h) -> reach``)."""
    ex, n = excitation, robot.nv
    dyn = CasadiDynamics(robot.model)
    q, qd, qdd = (ca.SX.sym(name, n) for name in ("q", "qd", "qdd"))
    c, h = ca.SX.sym("c", 10), ca.SX.sym("h", 10)
    Y = dyn.regressor(q, qd, qdd)
    W = ca.mtimes(Y[:, ex.cols], ca.DM(ex.T_JP))
    tau = dyn.rnea(q, qd, qdd)
    tau_w = tau + ca.mtimes(W, ca.DM(ex.payload_guess))
    w = 1.0 / ca.fmax(ex.row_bound(tau_w, ca.DM), ex.floor_Nm)
    if ex.robot_prior is None:
        A = W
    else:
        friction_cols = ca.SX.zeros(n, 4 * n)
        for j in range(n):
            friction_cols[j, 4 * j:4 * j + 4] = ca.horzcat(ca.sign(qd[j]), qd[j], qdd[j], 1.0)
        A = ca.horzcat(W, ca.horzcat(Y, friction_cols)[:, ex.robot_free.tolist()])
    fr = friction
    reach = (smooth_abs(tau + ca.mtimes(W, c)) + ca.sum2(smooth_abs(W @ ca.diag(h))) + smooth_abs(robot_relative * tau)
             + fr[:, 0] + smooth_abs(fr[:, 1] * qd) + smooth_abs(fr[:, 2] * qdd) + fr[:, 3])
    return (ca.Function("sample", [q, qd, qdd, c, h], [ca.diag(w) @ A, reach]),
            ca.Function("rows", [q, qd, qdd], [ca.diag(w) @ A]), ca.Function("reach", [q, qd, qdd, c, h], [reach]))


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


def cost_and_gradient(R, F_prev, half, dt: float, robot_prior=None, gradient: bool = True):
    """The scaled cost (:func:`~.excitation.scaled_cost`) of the information ``F = F_prev + dt R^T R``
    (the robot's parameters marginalised with their prior information ``robot_prior``), and its
    gradient with respect to the rows ``R`` (N nv, size), derived by hand:

    with ``K = F_rr + prior``, ``L = K^-1 F_re``, the payload information ``P = F_ee - F_er L``, ``M =
    S P S + I`` and ``u = M^-1 e_m``: ``d cost / d M = -M^-1 - MASS_WEIGHT u u^T / u_m``, ``G = S (d
    cost / d M) S``; ``dP = dF_ee - dF_er L - L^T dF_re + L^T dF_rr L``, so ``d cost / d F = [I; -L] G
    [I, -L^T]`` and ``d cost / d R = 2 dt (R_e - R_r L) G [I, -L^T]``. ``(inf, None)`` when ``M`` is
    not positive definite."""
    F = F_prev + dt * (R.T @ R)
    L = None
    P = F
    if robot_prior is not None:
        K = F[10:, 10:] + robot_prior
        L = np.linalg.solve(K, F[10:, :10])
        P = F[:10, :10] - F[:10, 10:] @ L
    s = np.asarray(half, dtype=float)
    M = P * np.outer(s, s) + BOX_INFORMATION * np.eye(10)
    try:
        C = np.linalg.cholesky(0.5 * (M + M.T))
    except np.linalg.LinAlgError:
        return float("inf"), None
    Minv = np.linalg.inv(M)
    u = Minv[:, 0]
    cost = -2.0 * np.sum(np.log(np.diag(C))) + MASS_WEIGHT * np.log(u[0])
    if not gradient:
        return float(cost), None
    G = np.outer(s, s) * (-Minv - MASS_WEIGHT * np.outer(u, u) / u[0])
    if L is None:
        return float(cost), 2.0 * dt * (R @ G)
    Z = R[:, :10] - R[:, 10:] @ L                      # R [I; -L]
    ZG = Z @ G
    return float(cost), 2.0 * dt * np.hstack([ZG, -ZG @ L.T])


class _Cost(ca.Callback):
    """``x -> cost`` (:func:`cost_and_gradient` of the plan's rows at the samples) for the request's
    parameters (:meth:`fix`), with its reverse derivative: CasADi's dense products of the (N nv, size)
    rows took most of a gradient's time (Gen3: 15 ms for cost and gradient; numpy's products and one
    sample's SX reverse sweep mapped over the samples: a few ms). The parameters are not inputs: CasADi
    would convert the (size, size) information to numpy at every call (a fifth of IPOPT's time)."""

    def __init__(self, rows: ca.Function, rows_vjp: ca.Function, maps, size: int, robot_prior, dt: float):
        """``rows``: the weighted rows ``(q, qd, qdd) (nv, N) each -> (nv, N size)`` at the samples;
        ``rows_vjp``: its reverse derivative ``(q, qd, qdd, rows, rows_adj) -> (q_adj, qd_adj, qdd_adj)``
        (one sample's SX function mapped over the samples); ``maps``: the sample maps
        (:meth:`~.optimizer.PlanOptimizer.sample_maps`) from the free points x and P0."""
        ca.Callback.__init__(self)
        self.maps, self.size, self.robot_prior, self.dt = maps, size, robot_prior, dt
        self.use(rows, rows_vjp)
        self.nx = maps[0][0].shape[1] * rows.size1_in(0)
        self.P0_shape = (maps[0][1].shape[1], rows.size1_in(0))
        self._fixed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None     # P0, F_prev, half
        self._last: tuple[bytes, float, np.ndarray | None] | None = None   # (x, cost, d cost / d x or None)
        self._reverse: _CostReverse | None = None
        self.construct("plan_cost", {"enable_fd": False})

    def use(self, rows: ca.Function, rows_vjp: ca.Function) -> None:
        """Evaluate the rows and their reverse sweep with these (the compiled ones, :mod:`.native`)."""
        self.rows, self.rows_vjp = BufferedCall(rows), BufferedCall(rows_vjp)

    def fix(self, P0, F_prev, half) -> None:
        """The request's control points at x = 0, information so far and box half-widths."""
        self._fixed = (np.array(P0, dtype=float), np.array(F_prev, dtype=float), np.ravel(half).astype(float))
        self._last = None

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.nx, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, 1)

    def value(self, x, gradient: bool):
        """(cost, d cost / d x or None), the last point's kept (IPOPT asks cost and gradient at the same x)."""
        assert self._fixed is not None, "fix() the request's parameters first"
        P0, F_prev, half = self._fixed
        x = np.asarray(x, dtype=float).ravel()
        key = x.tobytes()
        if self._last is not None and self._last[0] == key and (self._last[2] is not None or not gradient):
            return self._last[1], self._last[2]
        n, size = P0.shape[1], self.size
        X = x.reshape(-1, n)                                      # x raveled as (m, n)
        states = [(BA @ X + BP @ P0).T for BA, BP in self.maps]  # q, qd, qdd (n, N)
        out = self.rows(*states)[0]                               # (n, N size): sample after sample
        N = out.shape[1] // size
        R = out.reshape(n, N, size).transpose(1, 0, 2).reshape(N * n, size)
        cost, dR = cost_and_gradient(R, F_prev, half, self.dt, self.robot_prior, gradient)
        dx = None
        if gradient and dR is None:       # NaN where the cost is not finite (IPOPT: an evaluation error)
            dx = np.full(x.size, np.nan)
        elif gradient:
            seed = dR.reshape(N, n, size).transpose(1, 0, 2).reshape(n, N * size)
            bars = self.rows_vjp(*states, out, seed)
            dx = sum(BA.T @ b.T for (BA, _), b in zip(self.maps, bars)).ravel()
        self._last = (key, cost, dx)
        return cost, dx

    def eval(self, arg):
        # the gradient with the cost: IPOPT asks for it at nearly every point whose cost it asked, and
        # the rows are then evaluated once, not twice
        return [self.value(arg[0], gradient=True)[0]]

    def has_reverse(self, nadj):
        return nadj == 1

    def get_reverse(self, nadj, name, inames, onames, opts):
        self._reverse = _CostReverse(self, name, opts)            # kept: CasADi holds no Python reference
        return self._reverse


class _CostReverse(ca.Callback):
    """The reverse derivative of :class:`_Cost`: ``(x, cost, seed) -> seed d cost / d x``."""

    def __init__(self, cost: _Cost, name: str, opts):
        ca.Callback.__init__(self)
        self.cost = cost
        self.construct(name, {"enable_fd": False})

    def get_n_in(self):
        return 3

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.cost.nx, 1) if i == 0 else ca.Sparsity.dense(1, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self.cost.nx, 1)

    def eval(self, arg):
        _, dx = self.cost.value(arg[0], gradient=True)
        return [ca.DM(float(arg[2]) * dx)]


class PlanNLP:
    """The planner's NLP for one robot and settings (module docstring)."""

    def __init__(self, optimizer, budget_s: float, hessian: str = "limited-memory"):
        """``optimizer``: the :class:`~.optimizer.PlanOptimizer` whose maps, limits and screen constants
        the graph uses; ``budget_s``: IPOPT's ``max_wall_time``."""
        o, s = optimizer, optimizer.settings
        n, m, d, N = o.n, o.m, o.d, s.cost_samples
        self.size, self.joints = o.excitation.size, n
        maps = o.sample_maps()                                   # 3 x (B A (N, m), B (N, d+1))
        sample, rows_one, reach_one = _sample_function(o.robot, o.excitation, o._friction, o._robot_relative)
        sample, reach_one = sample.map(N), reach_one.map(N)
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
        # IPOPT's cost: the same, with the information's algebra in numpy (:class:`_Cost`)
        rows_map, vjp_map = dense(rows_one.map(N)), dense(rows_one.reverse(1).map(N))
        self.cost_callback = _Cost(rows_map, vjp_map, maps, self.size, o.excitation.robot_prior, s.horizon_s / N)
        self._cost_x = ca.Function("cost", [x, p], [self.cost_callback(x)])
        margins = ca.repmat(room, 1, N) - reach_one(q.T, qd.T, qdd.T, c, half)     # (n, N)
        screen_x = ca.Function("screen", [x, p], [ca.vertcat(*(soft_min(margins[j, :].T) for j in range(n)))])
        self.G = o.G_moving                                     # hull rows with some x dependence
        # "ad_weight": reverse mode for the constraint Jacobian (a nonlinear row per joint, the screen,
        # among the linear hull rows), not a forward sweep per variable (measured, one soft minimum of
        # every joint: 8 ms against 60 ms; one per joint: 3-8 ms)
        options: dict[str, Any] = {"oracle_options": {"ad_weight": 1.0}, "ipopt.hessian_approximation": hessian, "ipopt.max_wall_time": float(budget_s),
                   "ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes", "ipopt.tol": 1e-4,
                   "ipopt.acceptable_tol": 1e-2, "ipopt.acceptable_iter": 3, "ipopt.max_iter": 500,
                   "ipopt.mu_strategy": "adaptive", "ipopt.warm_start_init_point": "yes",
                   "ipopt.limited_memory_max_history": LBFGS_HISTORY}
        self._stop = _StopAt(x.numel(), self.G.shape[0] + n, p.numel())
        options["iteration_callback"] = self._stop
        self._x, self._p, self._options = x, p, options
        self.solver = self._solver(screen_x)
        # what IPOPT spends its time in, compiled (:mod:`.native`)
        self.hot_functions = [screen_x, screen_x.jacobian(), rows_map, vjp_map]
        self.native = NativeFunctions(self.hot_functions)
        self._native_loaded = False
        self.graph = ca.Function("graph", [x, p], [cost(F, half), reach])      # the whole graph in CasADi
        self._warm: tuple[np.ndarray, np.ndarray] | None = None   # (lam_x, lam_g) of the last solution

    def _solver(self, screen: ca.Function) -> ca.Function:
        x, p = self._x, self._p
        g = ca.vertcat(ca.mtimes(ca.DM(self.G), x), screen(x, p))
        return ca.nlpsol("plan", "ipopt", {"x": x, "p": p, "f": self._cost_x(x, p), "g": g}, self._options)

    def _use_native(self) -> None:
        """Once the compiled functions are there (:mod:`.native`), IPOPT evaluates them."""
        functions = None if self._native_loaded else self.native.load()
        if functions is None:
            return
        self._native_loaded = True
        callback = self.cost_callback
        callback.use(functions[callback.rows.function.name()], functions[callback.rows_vjp.function.name()])
        self.solver = self._solver(functions["screen"])

    def parameters(self, P0, F_prev, half, centre, room) -> np.ndarray:
        """The parameter vector of a request (column-major, as CasADi's ``vec``)."""
        return np.concatenate([np.ravel(P0, order="F"), np.ravel(F_prev, order="F"), half, centre, room])

    def _request(self, p) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P0, F_prev, half) of a parameter vector (:meth:`parameters`)."""
        shapes = (self.cost_callback.P0_shape, (self.size, self.size), (10,))
        ends = np.cumsum([int(np.prod(shape)) for shape in shapes])
        P0, F_prev, half = (np.reshape(p[end - int(np.prod(shape)):end], shape, order="F")
                            for shape, end in zip(shapes, ends))
        return P0, F_prev, half

    def evaluate(self, x, p) -> tuple[float, np.ndarray]:
        """(cost, screened reach (N, nv)) of the graph: the check against the numpy objective."""
        cost, reach = self.graph(x, p)
        return float(cost), np.asarray(reach).T

    def solve(self, x0, p, x_lo, x_hi, g_lo, g_hi, warm: bool, stop_at: float = float("inf")) -> Solution:
        """IPOPT from ``x0`` (with the last solution's multipliers when ``warm``), no iteration past
        ``stop_at`` (``time.perf_counter``); ``g_lo``/``g_hi``: the hull rows' bounds (the screen's soft
        minimum is kept >= 0)."""
        self._use_native()
        self.cost_callback.fix(*self._request(p))
        self._stop.stop_at = stop_at
        lbg, ubg = np.append(g_lo, np.zeros(self.joints)), np.append(g_hi, np.full(self.joints, np.inf))
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
