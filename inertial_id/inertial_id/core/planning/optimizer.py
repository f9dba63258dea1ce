"""One planning step: the most exciting plan from a given state that the certifier accepts.

Decision variables: the free control points of the plan (``degree - 4`` per joint, the last one the
rest point; :meth:`~.bezier.BezierPlan.from_state`). Every control point, and every control point of
the velocity and acceleration curves and of their restrictions to halves of [0, T], is affine in
them, so the Bezier convex-hull property turns the position, velocity and acceleration limits
(tightened by the tracking-error tube) into LINEAR sufficient constraints. The objective
(:mod:`.excitation`) and the torque screen are one CasADi graph (:mod:`.plan_nlp`, the dynamics from
the model's kinematic tree) that IPOPT optimises with exact first derivatives, the hull limits as
linear constraints and the screen as one constraint (the soft minimum of its margins at every
sample and joint). Its wall time is the
settings' ``optimize_s``: ``replan_s`` less what certifying the plan needs, as the next plan is
optimised while the executing one runs. Each plan starts from the best of random candidates and of
the last plan's solution (with its multipliers: a warm start).

Torque limits and obstacles are left to the certifier, which is independent of this optimiser. The
optimised step from the braking plan (every free point at the anchor, or at the third control point,
so the plan stops as soon as its initial state allows) is shrunk to the largest of the SHRINK
fractions the certifier accepts, each certifier call narrowing the bracket, the step tried next
predicted (:meth:`PlanOptimizer._certify_largest_step`), until ``search_s`` with an exciting plan in
hand. A torque screen, much cheaper than the certifier and optimistic by a gap learned from the
certifier's verdicts, keeps the optimiser near plans the certifier will accept and picks the first
step to certify. A plan is returned only with a certificate.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pinocchio as pin

from .anchor import TorqueAnchor
from . import enclosure
from .bezier import BezierPlan, bernstein_basis, restriction_matrices
from .certifier import certify
from .config import PlannerSettings
from ..robot.model import model_with_payload
from .excitation import PayloadExcitation
from .plan_nlp import SOFT_MIN_SHARPNESS, PlanNLP, smooth_abs

if TYPE_CHECKING:
    from .certifier import Certificate

# relative tightening of every linear limit: a plan sitting exactly on a limit fails dense checks
TIGHTENING = 1e-6
# fractions of the optimised step kept; 0: the plan to the anchor itself (no excitation, but the
# receding horizon goes on, and the next cycle may find room)
SHRINK = (1.0, 0.85, 0.7, 0.6, 0.5, 0.42, 0.35, 0.3, 0.25, 0.2, 0.17, 0.12, 0.08, 0.05, 0.0)
# the optimiser's starting point is picked among the candidates pulled in by these fractions (coarse)
START_FRACTIONS = (1.0, 0.5, 0.25, 0.12, 0.05)
# after a torque refusal, the next step tried is the largest predicted to certify with this margin (N m)
STEP_TARGET_NM = 0.8
# the screen's optimism on a moving plan over its optimism on holding still, for a gap learned on a
# braking plan from rest (the first plans of 12 Gen3 chains of `bench planner`, full step against its
# braking plan: median 1.90, 9 of 12 <= 2.3; the gaps themselves: 0.72-1.38 N m braking, 1.18-4.62
# moving. The screen before its tube terms: median 1.26, gaps 2.5 and 3.1 N m, p50 of the bench)
MOVING_GAP_FACTOR = 2.3
PRECHECK_SAMPLES = 48
# the optimiser keeps the screened torque margin this far above the learned gap. IPOPT, unlike the
# few SLSQP iterations before it (0.5 then), ends on the screen's bound, where the certifier refused
# the full step: Gen3, 3 rest requests of test_planning_optimizer twice, mean cost of the certified
# plans -54 with 0.5, -61 with 1.5, -56 with 3.0 (random free points: -51)
SCREEN_MARGIN_NM = 1.5


@dataclass(frozen=True)
class PlanRequest:
    """Plan from state (q, qd, qdd), for payloads in [lower, upper], information so far ``F_prev``."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    F_prev: np.ndarray
    seed: int = 0
    deadline_s: float | None = None      # wall time allowed (None: the settings' deadline_s)
    anchor: np.ndarray | None = None     # rest point to shrink toward (the executing plan's)
    torque_anchor: TorqueAnchor | None = None   # a measured torque of this run, for the certifier
    anchor_certified: tuple | None = None  # (plan, certificate) of the braking plan, when the caller has it


class Objective(NamedTuple):
    """A request's cost and screened margin (``evaluate(x) -> (cost, margin)``), ``freeze(x)``: the
    screen's tube terms taken from the plan at ``x``, and ``parameters(need)``: the request as
    :class:`~.plan_nlp.PlanNLP`'s parameters, the screen keeping its margin above ``need``."""
    evaluate: Callable
    freeze: Callable
    parameters: Callable


@dataclass
class PlanResult:
    """One planning cycle's outcome: the certified plan (or None), its certificate, cost, excitation and timings."""
    plan: BezierPlan | None                 # certified, or None
    certificate: Certificate | None         # of ``plan``, or of the last refused attempt
    cost: float = float("inf")              # scaled -log det of the accumulated information
    condition_number: float = float("inf")  # cond(W_e), the plan's excitation at N_s samples
    scale: float = 0.0                      # fraction of the optimised step kept (1: the optimum)
    attempts: int = 0                       # certifier calls
    converged: bool = False                 # IPOPT converged within the budget (optimised plans)
    iterations: int = 0                     # IPOPT iterations
    status: str = ""                        # IPOPT's return status ("" when not optimised)
    optimize_s: float = 0.0
    certify_s: float = 0.0
    reason: str = ""                        # why no plan, when plan is None
    timings: dict = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        """Whether a certified plan was found."""
        return self.plan is not None

    @property
    def total_s(self) -> float:
        """Optimising plus certifying time (s)."""
        return self.optimize_s + self.certify_s


def tube_margins(cert_settings, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position, velocity, acceleration) half-widths (n,) of the tracking-error tube the certifier
    assumes: the linear constraints are tightened by them, so the optimiser does not plan what the
    certifier must refuse, and the live monitor compares measured errors with them."""
    return tuple(np.broadcast_to(np.asarray(getattr(cert_settings, name), dtype=float), (n,)).copy()
                 for name in ("tracking_position_rad", "tracking_velocity_rad_s", "tracking_acceleration_rad_s2"))


def cached_certify(robot, cert_settings):
    """``certify`` with the model-derived constants built once (for one robot and settings)."""
    context = enclosure.TorqueContext.build(robot, cert_settings)

    def run(robot_, settings_, plan, lower, upper, torque_anchor=None):
        return certify(robot_, settings_, plan, lower, upper, context=context, torque_anchor=torque_anchor)
    return run


class PlanOptimizer:
    """Constant per robot and settings; call :meth:`plan` (not thread-safe: own scratch data)."""

    def __init__(self, robot, settings: PlannerSettings, cert_settings, certify_fn=None, region=True):
        self.robot = robot
        self.settings = settings
        self.cert_settings = cert_settings
        self.certify = certify_fn or cached_certify(robot, cert_settings)
        self.excitation = PayloadExcitation(robot)
        self.screen_gap = 0.0         # N m: the screen's optimism on the last plan accepted (raised by refusals)
        # the screen's constants: N m each joint torque may reach before it counts short (limit less the
        # certifier's margin), the robot's relative error, the half-widths of the joint friction of the
        # robot box the certifier takes ([Fc, Fv, Ia, beta] per joint), the tracking tube (3, n)
        self._torque_room = robot.torque_limit - np.asarray(cert_settings.torque_margin_Nm)
        self._robot_relative = float(cert_settings.robot_relative_error)
        self._friction = cert_settings.context(robot).friction_radius
        self._tube = np.stack(tube_margins(cert_settings, robot.nv))
        self._centre: tuple = (None, None, None)  # (payload, model carrying it, its data) of the last box
        n, d, m = robot.nv, settings.degree, settings.free_points
        self.n, self.d, self.m = n, d, m
        T = settings.horizon_s
        zero = np.zeros(n)
        # control points P (d+1, n) = A @ X + B(state), X the free points (m, n); A is the same for every joint
        self.A = np.column_stack([BezierPlan.from_state(zero, zero, zero, np.outer(e, np.ones(n)), T)
                                  .control_points[:, 0] for e in np.eye(m)])
        # hull rows: control points of q, qd, qdd on each half of [0, T], as linear maps of P
        eye = BezierPlan(np.eye(d + 1), T)
        halves = 2
        H = []
        for k in range(3):
            D = eye.derivative_points(k)                       # (d+1-k, d+1)
            R = restriction_matrices(d - k, halves)            # (K, d+1-k, d+1-k)
            H.append(np.einsum("kij,jl->kil", R, D).reshape(-1, d + 1))
        self.H = H
        # G x: the hull rows' dependence on the free points x (m, n) raveled; the same for every request
        self.G = np.vstack([np.kron(Hk @ self.A, np.eye(n)[j]) for Hk in H for j in range(n)])
        self._moving = np.flatnonzero(np.abs(self.G).sum(axis=1) > 0)    # rows the free points move
        self.G_moving = self.G[self._moving]
        pos_m, vel_m, acc_m = tube_margins(cert_settings, n)
        lo, hi = robot.position_lower + pos_m, robot.position_upper - pos_m
        self.limits = [(lo + TIGHTENING * np.abs(lo), hi - TIGHTENING * np.abs(hi))]
        acc = robot.acceleration_limit * min(settings.acceleration_fraction, 1.0)
        for lim, margin in ((robot.velocity_limit, vel_m), (acc, acc_m)):
            lim = np.where(np.isfinite(lim), lim, 1e6) - margin
            lim = lim * (1.0 - TIGHTENING)
            self.limits.append((-lim, lim))
        # free points stay in the excitation region (a preference, not a safety constraint)
        if region:
            self.x_lo = np.maximum(settings.centre - settings.reach_rad, lo)
            self.x_hi = np.minimum(settings.centre + settings.reach_rad, hi)
        else:
            self.x_lo, self.x_hi = lo.copy(), hi.copy()
        self.nlp = PlanNLP(self, settings.optimize_s)
        self._last_x: np.ndarray | None = None   # the last plan's optimised free points (warm start)

    # --- plans and linear constraints --------------------------------------------------------------

    def plan_from(self, req: PlanRequest, X: np.ndarray) -> BezierPlan:
        """The plan from ``req``'s start state with the free control points ``X`` (flattened)."""
        return BezierPlan.from_state(req.q, req.qd, req.qdd, X.reshape(self.m, self.n), self.settings.horizon_s)

    def brake_point(self, req: PlanRequest, G=None, lo=None, hi=None) -> np.ndarray:
        """Free points of the plan the search shrinks toward: every free point at the request's
        anchor (the executing plan's rest point, where its certificate already brought the arm to
        rest) when that meets the hull limits, else at the third control point (the plan then
        stops as soon as its initial state allows)."""
        if req.anchor is not None:
            x = np.tile(np.asarray(req.anchor, dtype=float), self.m)
            if G is None or self._feasible(G, lo, hi, x, tol=1e-9):
                return x
        P = BezierPlan.from_state(req.q, req.qd, req.qdd, np.tile(req.q, (self.m, 1)), self.settings.horizon_s)
        return np.tile(P.control_points[2], (self.m, 1)).ravel()

    def _hull_bounds(self, req: PlanRequest) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) with lo <= G x <= hi the hull limits of ``req`` (rows of ``self.G``)."""
        base = self.plan_from(req, np.zeros(self.m * self.n)).control_points      # (d+1, n): B(state)
        lo_rows, hi_rows = [], []
        for Hk, (llo, lhi) in zip(self.H, self.limits):
            Hb = Hk @ base                                  # (r, n)
            for j in range(self.n):
                lo_rows.append(llo[j] - Hb[:, j])
                hi_rows.append(lhi[j] - Hb[:, j])
        return np.concatenate(lo_rows), np.concatenate(hi_rows)

    def _linear(self, req: PlanRequest):
        """(G, lo, hi) with lo <= G x <= hi the hull limits on x = free points (m, n) raveled."""
        G, (lo, hi) = self.G, self._hull_bounds(req)
        # rows that hold for every x in the region box cannot bind (the fixed start points among
        # them): leave them out of the feasibility checks
        xlo, xhi = np.tile(self.x_lo, self.m), np.tile(self.x_hi, self.m)
        g_max = np.maximum(G * xlo, G * xhi).sum(axis=1)
        g_min = np.minimum(G * xlo, G * xhi).sum(axis=1)
        keep = (g_max > hi) | (g_min < lo)
        return G[keep], lo[keep], hi[keep]

    @staticmethod
    def _feasible(G, lo, hi, x, tol=1e-12) -> bool:
        g = G @ x
        return bool(np.all(g >= lo - tol) and np.all(g <= hi + tol))

    def _pull_in(self, G, lo, hi, x, x_ref):
        """The point nearest ``x`` on the segment to the feasible ``x_ref`` that meets the limits."""
        if self._feasible(G, lo, hi, x):
            return x
        a, b = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (a + b)
            if self._feasible(G, lo, hi, x_ref + mid * (x - x_ref)):
                a = mid
            else:
                b = mid
        return x_ref + a * (x - x_ref)

    # --- objective and torque screen -------------------------------------------------------------

    def sample_maps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """For q, qd, qdd at the ``cost_samples`` midpoints of [0, T]: ``(B A (N, m), B (N, d+1))``,
        the samples being ``B A X + B P_0`` with ``P_0`` the control points at X = 0."""
        N, T = self.settings.cost_samples, self.settings.horizon_s
        s = (np.arange(N) + 0.5) / N
        maps = []
        for k in range(3):
            D = BezierPlan(np.eye(self.d + 1), T).derivative_points(k)            # (d+1-k, d+1)
            B = bernstein_basis(self.d - k, s) @ D                               # (N, d+1)
            maps.append((B @ self.A, B))
        return maps

    def _objective(self, req: PlanRequest) -> Objective:
        """The cost and the screened torque margin of this request at free points ``x`` (cached on x),
        and the request as the NLP's parameters. The screen's tube terms (:meth:`_tube_reach`) are
        those of the plan at the point last given to ``freeze`` (at first the braking plan's): held
        constant while IPOPT runs, so the screen is one function with exact derivatives."""
        N, T = self.settings.cost_samples, self.settings.horizon_s
        dt = T / N
        base = self.plan_from(req, np.zeros(self.m * self.n)).control_points
        maps = [(BA, B @ base) for BA, B in self.sample_maps()]                  # (N, m), (N, n)
        half = 0.5 * (req.upper - req.lower)
        ex = self.excitation
        values: dict[bytes, tuple[float, float]] = {}
        sampled: dict[bytes, tuple] = {}
        tube = [np.zeros(self.n)]

        def samples(x, key):
            """q, qd, qdd at the samples, their weighted rows and the screen's slack before the tube
            terms, of the last x asked for (``freeze`` and ``evaluate`` ask at the same points)."""
            if key not in sampled:
                X = x.reshape(self.m, self.n)
                q, qd, qdd = (BA @ X + Bb for BA, Bb in maps)
                A, tau, w = ex.weighted_rows(q, qd, qdd)
                slack = self._torque_room - self._reach(qd, qdd, A[:, :, :10], tau, req.lower, req.upper)
                sampled.clear()
                sampled[key] = (q, qd, qdd, (A, tau, w), slack)
            return sampled[key]

        def freeze(x):
            q, qd, qdd, _, slack = samples(x, x.tobytes())
            tube[0] = self._tube_reach(q, qd, qdd, slack, req.lower, req.upper)
            values.clear()

        def evaluate(x):
            key = x.tobytes()
            if key not in values:
                _, _, _, (A, _, w), slack = samples(x, key)
                cost = ex.cost(req.F_prev + ex.weighted_information(A, w, dt), half)
                values.clear()
                values[key] = (cost, float(np.min(slack - tube[0])))
            return values[key]

        def parameters(need):
            return self.nlp.parameters(base, req.F_prev, half, 0.5 * (req.upper + req.lower),
                                       self._torque_room - tube[0] - need)
        freeze(self.brake_point(req))
        return Objective(evaluate, freeze, parameters)

    def cost(self, req: PlanRequest, x) -> float:
        """The objective at free control points ``x`` for ``req``."""
        return self._objective(req).evaluate(np.asarray(x, dtype=float))[0]

    def _reach(self, qd, qdd, W, tau, lower, upper) -> np.ndarray:
        """Screening, not certification: a cheap estimate (N, nv) of how far each joint torque may
        reach at the samples on the plan itself, with payload rows ``W`` and payload-free torque
        ``tau``: the payload box exactly (centre +- |W_e| half-width), the robot's link parameters to
        first order (± relative error of the nominal torque), the joint friction of the robot box at
        the sample's speeds. The tracking tube's share is :meth:`_tube_reach`. Every magnitude is
        :func:`~.plan_nlp.smooth_abs`, as in the optimiser's graph."""
        c, h = 0.5 * (upper + lower), 0.5 * (upper - lower)
        fr = self._friction
        return (smooth_abs(tau + W @ c) + smooth_abs(W * h).sum(axis=-1) + smooth_abs(self._robot_relative * tau)
                + fr[:, 0] + smooth_abs(fr[:, 1] * qd) + smooth_abs(fr[:, 2] * qdd) + fr[:, 3])

    def _centre_model(self, c):
        """The robot carrying payload ``c`` and its data (kept for the next call with the same ``c``)."""
        if self._centre[0] is None or not np.array_equal(self._centre[0], c):
            model = model_with_payload(self.robot, c)
            self._centre = (np.array(c, dtype=float), model, model.createData())
        return self._centre[1], self._centre[2]

    def _tube_reach(self, q, qd, qdd, slack, lower, upper) -> np.ndarray:
        """(nv,) what the tracking tube adds to each joint's reach, to first order, at the joint's
        sample of least ``slack`` (N, nv): ``sum_j |d tau_i / d x_j| tube_j`` over q, qd, qdd, the
        derivative bounded over the payload box (the centre payload's plus ``sum_c h_c |d W_e[i, c] /
        d x_j|``) and the robot's relative error, plus the friction box's share at the tube's speeds.
        The certifier's enclosure carries these terms (and higher orders); without them the screen
        was optimistic by what the tube does to gravity and to the payload's uncertain torque."""
        c, h = 0.5 * (upper + lower), 0.5 * (upper - lower)
        centre, centre_data = self._centre_model(c)
        model, data = self.robot.model, self.excitation.data
        fr, tube = self._friction, self._tube
        out = fr[:, 1] * tube[1] + fr[:, 2] * tube[2]
        worst = np.argmin(slack, axis=0)
        for k in np.unique(worst):
            joints = np.flatnonzero(worst == k)
            D = np.abs(np.stack(pin.computeRNEADerivatives(centre, centre_data, q[k], qd[k], qdd[k])))
            D += self._robot_relative * np.abs(np.stack(pin.computeRNEADerivatives(model, data, q[k], qd[k], qdd[k])))
            D += np.einsum("c,cdij->dij", h, np.abs(self.excitation.column_derivatives(q[k], qd[k], qdd[k])))
            out[joints] += np.einsum("dij,dj->i", D[:, joints], tube)
        return out

    def screen(self, plan: BezierPlan, lower, upper) -> float:
        """The smallest torque margin (N m, beyond ``torque_margin_Nm``) the screen expects at
        PRECHECK_SAMPLES samples of a plan: :meth:`_reach`, then :meth:`_tube_reach`. The optimiser
        keeps it above the gap observed between it and the certifier, and candidates below that gap
        are not sent to the (much slower) certifier, whose verdict alone accepts a plan."""
        t = np.linspace(0.0, plan.duration_s, PRECHECK_SAMPLES)
        q, qd, qdd = plan.evaluate(t)
        W = self.excitation.rows(q, qd, qdd).reshape(len(t), self.n, 10)
        slack = self._torque_room - self._reach(qd, qdd, W, self.excitation.robot_torque(q, qd, qdd), lower, upper)
        return float(np.min(slack - self._tube_reach(q, qd, qdd, slack, lower, upper)))

    # --- the planning step -----------------------------------------------------------------------

    def plan(self, req: PlanRequest, optimise: bool = True, deadline_s: float | None = None) -> PlanResult:
        """Optimise (or, ``optimise=False``, draw random free points: the baseline), then certify,
        shrinking toward the braking plan until certified or past the deadline."""
        t0 = time.perf_counter()
        if deadline_s is None:
            deadline_s = self.settings.deadline_s if req.deadline_s is None else req.deadline_s
        deadline = t0 + deadline_s
        rng = np.random.default_rng(req.seed)
        G, lo, hi = self._linear(req)
        x_brake = self.brake_point(req, G, lo, hi)
        if not self._feasible(G, lo, hi, x_brake, tol=1e-9):
            return PlanResult(None, None, reason="the braking plan from this state breaks the hull limits",
                              optimize_s=time.perf_counter() - t0)
        braking = self._braking_certificate(req, x_brake)
        xlo, xhi = np.tile(self.x_lo, self.m), np.tile(self.x_hi, self.m)
        candidates = [self._pull_in(G, lo, hi, rng.uniform(xlo, xhi), x_brake)
                      for _ in range(6 if optimise else 1)]
        status = ""
        if optimise:
            warm = self._last_x is not None
            if self._last_x is not None:         # the last plan's optimum: where this one's optimum likely is (a warm start)
                candidates.insert(0, self._pull_in(G, lo, hi, np.clip(self._last_x, xlo, xhi), x_brake))
            objective = self._objective(req)
            need = self.screen_gap + SCREEN_MARGIN_NM
            x0, first = self._start(objective.evaluate, need, candidates, x_brake)
            objective.freeze(x0)
            # the screen's bound for IPOPT: no higher than the start meets (its soft minima being up to
            # log(samples) / SOFT_MIN_SHARPNESS below the margin), or IPOPT starts outside its feasible
            # set, which may be empty (the braking plan itself short of ``need``)
            reachable = objective.evaluate(x0)[1] - np.log(self.settings.cost_samples) / SOFT_MIN_SHARPNESS
            solution = self._optimise(req, objective, min(need, reachable), x0, xlo, xhi, warm and first == 0,
                                      min(t0 + self.settings.optimize_s, deadline))
            self._last_x = solution.x
            x = self._pull_in(G, lo, hi, self._better(objective.evaluate, need, x0, solution.x, G, lo, hi), x_brake)
            converged, iterations, status = solution.converged, solution.iterations, solution.status
        else:
            x, converged, iterations = candidates[0], False, 0
        t1 = time.perf_counter()
        result = PlanResult(None, None, optimize_s=t1 - t0, converged=converged, iterations=iterations,
                            status=status)
        self._certify_largest_step(req, x, x_brake, deadline, min(deadline, t0 + self.settings.search_s),
                                   braking, result)
        result.certify_s = time.perf_counter() - t1
        if result.plan is not None:
            F = self.excitation.information(result.plan, self.settings.cost_samples)
            result.cost = self.excitation.cost(req.F_prev + F, 0.5 * (req.upper - req.lower))
            result.condition_number = self.excitation.condition_number(result.plan, self.settings.report_samples)
        return result

    def _braking_certificate(self, req: PlanRequest, x_brake):
        """``(braking plan, its screened margin, certificate)`` when the request carries the certificate
        of its braking plan, else None (none carried, or one of another plan). It also bounds the
        screen's optimism from below, which on a first plan has not been learned yet: the learned gap
        is raised to the braking plan's, scaled to a moving plan's by MOVING_GAP_FACTOR."""
        if req.anchor_certified is None:
            return None
        plan, cert = req.anchor_certified
        braking = self.plan_from(req, x_brake)
        if not (cert.certified and plan.duration_s == braking.duration_s
                and np.array_equal(plan.control_points, braking.control_points)):
            return None
        screened = self.screen(braking, req.lower, req.upper)
        self.screen_gap = max(self.screen_gap, MOVING_GAP_FACTOR * (screened - cert.min_torque_margin_Nm))
        return braking, screened, cert

    def _certify_largest_step(self, req: PlanRequest, x, x_brake, deadline: float, search_until: float,
                              braking, result: PlanResult) -> None:
        """Certify the largest step of SHRINK from the braking plan toward ``x`` that the certifier
        accepts, filling ``result``. Every call narrows the bracket between the largest step refused
        and the smallest accepted, so with time enough the step found is the largest; which step of the
        bracket is tried next is a prediction:

        - before any torque refusal, the largest step whose screened margin is at least the learned
          gap (the screen's optimism on the last plan accepted);
        - after one, the largest step where the certified torque margin, interpolated linearly in the
          step between the refused step and the smallest accepted one, reaches STEP_TARGET_NM. While
          nothing is accepted the interpolation starts from the braking plan (step 0), whose margin is
          its certificate's when ``braking`` (:meth:`_braking_certificate`) is given, or its screened
          margin less the learned gap (measured: the certified margin falls with the step and, the
          screen's optimism growing with speed, faster than the screen's: the gap of the refused step
          would predict too little);
        - when nothing is predicted to pass: the smallest step of the bracket (the braking plan while
          nothing is accepted); after a refusal the torque margin does not explain (a limit, an
          obstacle): the middle of the bracket.

        The search for a larger step stops once the next call could end past ``search_until`` with an
        exciting plan certified (a step above 0), or past the deadline with the braking plan only
        (``search_until`` is not later than the deadline); without a certified plan, the braking plan
        (the last step) is always tried before giving up."""
        last = len(SHRINK) - 1
        refused, accepted = -1, len(SHRINK)        # step indices: every step in (refused, accepted) untried
        margins = {}                                # step index -> certified torque margin (N m)
        plans, estimates = {}, {}
        longest_call = 0.0          # s, of the certifier calls so far
        gap = self.screen_gap

        def plan_at(i):
            if i not in plans:
                plans[i] = self.plan_from(req, x_brake + SHRINK[i] * (x - x_brake))
            return plans[i]

        def screened(i):
            if i not in estimates:
                estimates[i] = self.screen(plan_at(i), req.lower, req.upper)
            return estimates[i]

        if braking is not None:          # already certified by the caller (and screened above)
            plans[last], estimates[last], cert = braking
            accepted, margins[last] = last, cert.min_torque_margin_Nm
            result.plan, result.scale, result.certificate = plans[last], SHRINK[last], cert

        def predicted(i):
            """The certified torque margin expected at step i (docstring)."""
            if refused < 0:         # only accepted steps: the gap of the smallest one
                return screened(i) - (screened(accepted) - margins[accepted])
            s0, m0 = ((SHRINK[accepted], margins[accepted]) if accepted in margins
                      else (SHRINK[last], margins.get(last, screened(last) - gap)))
            s1, m1 = SHRINK[refused], margins[refused]
            return m0 + (m1 - m0) * (SHRINK[i] - s0) / (s1 - s0)

        def next_step():
            bracket = range(refused + 1, min(accepted, len(SHRINK)))
            if not bracket:
                return None
            if refused < 0 and accepted > last:
                return next((k for k in bracket if screened(k) >= gap), last)
            if refused >= 0 and margins[refused] >= 0.0:     # refused for a reason the torque does not show
                return bracket[len(bracket) // 2]
            return next((k for k in bracket if predicted(k) >= STEP_TARGET_NM), bracket[-1])

        while True:
            i = next_step()
            if i is None:
                break
            now = time.perf_counter()
            # a larger step is worth the time up to the search's end with an exciting plan in hand, up
            # to the deadline with the braking plan only
            if result.plan is not None and now + longest_call > (search_until if result.scale > 0 else deadline):
                break
            if result.attempts and now > deadline:
                result.reason = f"deadline passed after {result.attempts} certifier calls"
                break
            plan = plan_at(i)
            cert = self.certify(self.robot, self.cert_settings, plan, req.lower, req.upper,
                                torque_anchor=req.torque_anchor)
            longest_call = max(longest_call, time.perf_counter() - now)
            result.attempts += 1
            margins[i] = cert.min_torque_margin_Nm
            if cert.certified:
                accepted = i
                result.plan, result.scale, result.certificate = plan, SHRINK[i], cert
                continue
            refused = i
            if result.plan is None:
                result.certificate = cert
            if cert.min_torque_margin_Nm < 0:
                self.screen_gap = max(self.screen_gap, screened(i) - cert.min_torque_margin_Nm)
            if i == last and result.plan is None:
                result.reason = f"no certificate at any of {len(SHRINK)} step sizes: {cert.reason}"
                break
        if result.plan is not None and accepted < last:
            # the screen's optimism on the plan accepted: what the next optimisation keeps in reserve
            assert result.certificate is not None      # set with the plan
            self.screen_gap = max(0.0, screened(accepted) - result.certificate.min_torque_margin_Nm)

    @staticmethod
    def _start(evaluate, need, candidates, x_brake) -> tuple[np.ndarray, int]:
        """The start point and its candidate's index: the most exciting candidate that the torque
        screen lets through once pulled toward the braking point (IPOPT keeps closer to
        feasibility from a feasible start)."""
        scored: list[tuple] = []
        for c in candidates:
            for alpha in START_FRACTIONS:
                xc = x_brake + alpha * (c - x_brake)
                cost, margin = evaluate(xc)
                if margin >= need:
                    break
            scored.append((margin < need, cost, len(scored), xc))
        best = min(scored, key=lambda e: e[:3])
        return best[3], best[2]

    def _better(self, evaluate, need, x0, x, G, lo, hi) -> np.ndarray:
        """``x`` unless the start ``x0`` ranks better: meeting the screen first, then the lower cost
        (IPOPT stopped by the budget may end at an infeasible iterate; the start is feasible)."""
        def rank(z):
            cost, margin = evaluate(z)
            return (margin < need or not self._feasible(G, lo, hi, z, tol=1e-9), cost)
        return x if rank(x) <= rank(x0) else x0

    def _optimise(self, req: PlanRequest, objective: Objective, need: float, x0, xlo, xhi, warm: bool,
                  stop_at: float):
        """IPOPT (:class:`~.plan_nlp.PlanNLP`) on the cost with the hull limits (linear) and the torque
        screen >= ``need``, from ``x0``, no iteration starting past ``stop_at``."""
        lo, hi = self._hull_bounds(req)
        return self.nlp.solve(x0, objective.parameters(need), xlo, xhi, lo[self._moving], hi[self._moving],
                              warm, stop_at)
