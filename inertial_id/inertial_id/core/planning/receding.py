"""The receding-horizon excitation loop as a ROS-free state machine (Algorithm 2 of the provably-safe
online identification paper, see References).

States (:class:`PlannerState`, transitions in :data:`TRANSITIONS`): ``idle`` (never started) |
``planning`` (started, first plan being made; nothing moves) | ``executing`` | ``braking`` | ``done``
| ``failed``.

Timeline: a list of certified plans, each with its start time; the reference at time t is the last
plan started at or before t, evaluated at ``t - start`` (every plan ends at rest and holds there).
Plan k+1 starts at ``start_k + t_p`` from the state of plan k at that instant (same q, qd, qdd: the
switch is C2-continuous). Plan k+1 is requested shortly before plan k starts; its result is accepted
only if certified and offered at least ``command_lead_s`` before the switch. Otherwise nothing is
switched: plan k, certified and ending at rest, is the braking manoeuvre (state ``braking``).

Start: only :meth:`start` moves the arm. With ``wait_for_estimate`` it first waits (bounded) for an
estimate whose bounds are guaranteed, whose data are consistent with the box and whose box is
narrower than the prior (data taken while the arm holds still: a payload the box excludes never
moves). It then certifies holding still where the arm stands; if that fails with the
current box, nothing moves and the start waits (bounded) for tighter bounds, or for a torque the arm
was measured to apply since the start (:meth:`RecedingHorizon.anchor_on`, :mod:`.anchor`), which then
anchors every certificate of the run.

Commands: after every change of the timeline the caller gets a :class:`Command` ``(t_from, t_to)``
and sends the reference sampled over that span with ``t_from`` as its start stamp. ``t_from`` is at
or before the time the command is issued (the first plan's: when it starts, from the rest position
the arm holds), so a receiver that honours the stamp continues exactly where it was: the reference
never steps.

Faults (joint states stale, tracking error beyond the certifier's tube, data contradicting the box,
a stop request) brake in two steps. At once, with nothing to compute: the plans that have not started
by the time a command can arrive are dropped, so the arm brakes on the executing plan (certified,
ending at rest) and the state is ``braking`` within the call. Then :meth:`shorter_brake`, which the
caller runs right after sending that command, certifies a shorter braking plan from the *desired*
state ahead with the current box, if one exists. The state is ``braking`` until rest, then ``failed``
(fault) or ``done``. Only :meth:`start` moves the arm again.

The payload box in use only shrinks: estimates are intersected with it, and only those whose bounds
are guaranteed and whose data are consistent count. Identification stops when the box's log-volume
falls by less than ``stop_shrink`` over ``stop_patience`` plans whose data the estimates hold (an
estimator behind the motion, on a loaded computer, is no sign of bounds that stopped shrinking), or
after ``max_plans``.

References:
- Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003)
"""
from __future__ import annotations

import bisect
import itertools
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .anchor import TorqueAnchor
from .bezier import BezierPlan
from .config import PlannerSettings
from .estimate_gate import DISJOINT, EstimateGate
from .excitation import PayloadExcitation
from .monitor import TubeMonitor
from .optimizer import PlanRequest, PlanResult, cached_certify, tube_margins
from .states import MOVING, PlannerState

FIRST_PLAN_DEADLINE_FACTOR = 3.0
ISSUE_AHEAD_S = 0.5
DEADLINE_MARGIN_S = 0.1
FIRST_PLAN_ATTEMPTS = 3


S = PlannerState
#: every state the loop may enter from each state; anything else is a bug (:meth:`RecedingHorizon._enter`)
TRANSITIONS: dict[PlannerState, frozenset] = {
    S.IDLE: frozenset({S.PLANNING}),
    S.PLANNING: frozenset({S.PLANNING, S.EXECUTING, S.FAILED, S.DONE}),
    S.EXECUTING: frozenset({S.EXECUTING, S.PLANNING, S.BRAKING, S.DONE, S.FAILED}),   # PLANNING: first plan withheld
    S.BRAKING: frozenset({S.BRAKING, S.DONE, S.FAILED}),
    S.DONE: frozenset({S.PLANNING}),
    S.FAILED: frozenset({S.PLANNING}),
}


@lru_cache(maxsize=16)
def _bernstein_to_power(degree: int) -> np.ndarray:
    """(d+1, d+1) M with sum_i B_i^d(s) P_i = sum_k s^k (M @ P)_k."""
    M = np.zeros((degree + 1, degree + 1))
    for i in range(degree + 1):
        for k in range(i, degree + 1):
            M[k, i] = comb(degree, i) * comb(degree - i, k - i) * (-1) ** (k - i)
    return M


@dataclass(frozen=True)
class Segment:
    """A certified plan on the timeline from ``start`` (seconds, the caller's clock)."""

    start: float
    plan: BezierPlan
    kind: str                  # "excite" | "brake"
    certificate: object
    if TYPE_CHECKING:
        # per instance, set by __post_init__; ClassVar keeps it out of the dataclass's fields for mypy
        # as its absence at run time does for dataclasses (no init, eq or repr)
        _coeffs: ClassVar[list[np.ndarray]]

    def __post_init__(self):
        # power-basis coefficients of q, qd, qdd in s = t / T: the reference is evaluated at every
        # joint state (tracking monitor), and Horner's rule on these is far cheaper than Bernstein sums
        coeffs = []
        for k in range(3):
            P = self.plan.derivative_points(k)
            coeffs.append(_bernstein_to_power(len(P) - 1) @ P)
        object.__setattr__(self, "_coeffs", coeffs)

    @property
    def end(self) -> float:
        """When the plan reaches rest."""
        return self.start + self.plan.duration_s

    def evaluate(self, t: float):
        """(q, qd, qdd) at time t (clamped to the plan, which holds its end state)."""
        s = min(max((t - self.start) / self.plan.duration_s, 0.0), 1.0)
        out = []
        for c in self._coeffs:
            v = c[-1].copy()
            for row in c[-2::-1]:
                v = v * s + row
            out.append(v)
        return out[0], out[1], out[2]


@dataclass(frozen=True)
class Command:
    """Send the reference on [t_from, t_to], stamped to start at t_from. Before ``takes_effect`` it
    repeats what was sent before; a command that cannot reach the controller before then must not be
    sent (:meth:`RecedingHorizon.withdraw`). ``kind``: 'first' (first plan), 'next' (next plan) or
    'brake' (a fault or stop)."""

    t_from: float
    t_to: float
    reason: str
    takes_effect: float = -np.inf
    kind: str = "brake"


@dataclass
class _Run:
    """What one start sets: where it started, its deadlines, how it is to end."""
    q_start: np.ndarray
    hold_deadline: float                   # the start fails unless a hold certifies by then
    time_budget_s: float
    time_budget_end: float = np.inf        # set once the hold certifies
    hold_box: tuple | None = None          # the box the hold was last tried with
    first_attempts: int = 0
    first_request: PlanRequest | None = None
    final_state: PlannerState = PlannerState.DONE
    final_message: str = "done"
    brake_reason: str | None = None        # a fault braking on the executing plan: try a shorter one
    torque_anchor: TorqueAnchor | None = None   # a torque measured before the start (certifier)


@dataclass
class _Pending:
    id: int
    request: PlanRequest | None    # built (box, information so far) when issued
    switch_time: float | None      # None: the first plan, from rest, starts when it is ready
    issue_time: float = -np.inf
    state: tuple = ()              # (q, qd, qdd, anchor) for a request built later


class RecedingHorizon:
    """The loop's state: the payload box in use, the certified timeline, the pending plan request and
    the tube monitor (see the module docstring for the rules)."""

    def __init__(self, robot, settings: PlannerSettings, cert_settings, certify_fn=None,
                 wait_for_estimate: bool = False):
        self.robot = robot
        self.wait_for_estimate = wait_for_estimate
        self.settings = settings
        self.cert_settings = cert_settings
        self.certify = certify_fn or cached_certify(robot, cert_settings)
        self.excitation = PayloadExcitation(robot)
        self.gate = EstimateGate(*robot.payload_prior())
        self.tube = tube_margins(cert_settings, robot.nv)
        self.monitor = TubeMonitor(self.tube, robot.position_lower, robot.position_upper, robot.velocity_limit,
                                   robot.spec.noise.velocity_rad_s)
        self.F_prev = self.excitation.no_information()
        self.state, self.message = S.IDLE, "waiting for a start request"
        self.segments: list[Segment] = []
        self.pending: _Pending | None = None
        self._ids = itertools.count(1)
        self.plans = 0
        self.cycles = 0                # planning cycles after the first plan
        self.fallbacks = 0             # cycles that ended without a certified plan in time
        self.last_result: PlanResult | None = None
        # results IPOPT optimised, and how many of them converged within their budget (replan_s
        # less certification, or the first plan's deadline)
        self.optimized = 0
        self.converged = 0
        self.last_certificate = None
        # (start time, log-volume of the box in use then) of every plan started since the start
        self.box_log_volume: list[tuple[float, float]] = []
        self.data_until = -np.inf                  # latest data stamp of an estimate the box took
        self._stale = False                        # joint states stale at the last tick
        self._scheduled: Segment | None = None     # accepted plan that has not started yet
        self._run = _Run(np.zeros(robot.nv), -np.inf, np.inf)     # replaced by every start
        self._before: tuple | None = None          # the timeline as last sent (withdraw)
        self.brake_compute_s = 0.0                 # wall time the last braking plan took to certify

    @property
    def lower(self) -> np.ndarray:
        """Lower corner of the payload box in use (:class:`~.estimate_gate.EstimateGate`)."""
        return self.gate.lower

    @property
    def upper(self) -> np.ndarray:
        """Upper corner of the payload box in use."""
        return self.gate.upper

    # --- inputs ----------------------------------------------------------------------------------

    def update_box(self, lower, upper, bounds_guaranteed: bool, data_consistent: bool) -> bool:
        """Intersect the box in use with an estimate's bounds; False (box unchanged) when the
        estimate does not qualify or contradicts the box (:meth:`.EstimateGate.update`)."""
        if self.gate.update(lower, upper, bool(bounds_guaranteed), bool(data_consistent)):
            return True
        if self.gate.refusal == DISJOINT:
            self.message = DISJOINT
        return False

    def on_estimate(self, t: float, lower, upper, bounds_guaranteed: bool, data_consistent: bool,
                    data_until: float | None = None) -> Command | None:
        """An estimate at time ``t`` whose bounds hold the data stamped up to ``data_until`` (None:
        up to ``t``, an estimator in step with the motion): its box is used when it qualifies; when its data are
        inconsistent, its bounds stop being guaranteed or it contradicts the box in use, the
        certificates rest on a box the data no longer support (:meth:`.EstimateGate.judge`): brake
        now (certified braking from the desired state) and refuse to start until an estimate is
        trusted again."""
        if self.gate.judge(lower, upper, bounds_guaranteed, data_consistent):
            self.data_until = max(self.data_until, t if data_until is None else float(data_until))
        if self.gate.refusal == DISJOINT:
            self.message = DISJOINT
        if self.gate.distrust and self.state in (S.PLANNING, S.EXECUTING) and not self.faulted:
            return self.fault(t, f"stopped on the estimate: {self.gate.distrust}")
        return None

    def start(self, t: float, q, time_budget_s: float = np.inf) -> bool:
        """Explicit start from rest at measured position ``q``. When holding still at q is not
        certified with the current box, nothing moves: the start waits (state ``planning``) up to
        ``hold_wait_s`` for tighter guaranteed bounds (data taken at rest shrink them) or for a
        measured torque to anchor on (:meth:`anchor_on`), then fails with the reason; False when it
        fails at once."""
        if self.state in MOVING:
            self.message = f"start ignored: already {self.state}"
            return False
        if self.gate.distrust:
            self.message = f"not starting: {self.gate.distrust}"
            return False
        self._run = _Run(np.asarray(q, dtype=float).copy(), t + self.settings.hold_wait_s, time_budget_s)
        self.segments = []                         # nothing commanded until a hold certifies
        self.monitor.reset()
        self._scheduled = None
        self.pending = None
        self.plans = 0
        self.gate.restart()
        self.box_log_volume, self.data_until = [], -np.inf
        self._enter(S.PLANNING, "certifying holding still at the start position")
        return self._try_hold(t)

    @property
    def awaits_anchor(self) -> bool:
        """Started, nothing commanded yet (no hold certified), and no measured torque to anchor on."""
        return self.state == S.PLANNING and not self.segments and self._run.torque_anchor is None

    def anchor_on(self, torque_anchor: TorqueAnchor) -> bool:
        """Use ``torque_anchor``, measured since the start while nothing was commanded, for the hold's
        certificate (tried again at the next tick) and every later one of this run; only while
        :attr:`awaits_anchor` (True: taken)."""
        if not self.awaits_anchor:
            return False
        self._run.torque_anchor = torque_anchor
        self._run.hold_box = None
        return True

    def _try_hold(self, t: float) -> bool:
        """Certify holding still at the start position; on success request the first plan."""
        run = self._run
        q = run.q_start
        if self.wait_for_estimate and not self.gate.narrowed:
            run.hold_box = None
            return self._wait(t, "not moving: no estimate since the start whose bounds are guaranteed, data "
                                 "consistent and narrower than the prior", "an estimate")
        hold = BezierPlan.holding(q, self.settings.degree, self.settings.horizon_s)
        started = time.perf_counter()
        cert = self.certify(self.robot, self.cert_settings, hold, self.lower, self.upper,
                            torque_anchor=run.torque_anchor)
        self.brake_compute_s = time.perf_counter() - started     # what a braking plan will cost, at first
        self.last_certificate = cert
        run.hold_box = (self.lower.copy(), self.upper.copy())
        if not cert.certified:
            return self._wait(t, "not moving: holding still at the current position is not certified with the "
                                 f"current payload box ({cert.reason})", "tighter guaranteed bounds")
        self.segments = [Segment(t, hold, "brake", cert)]
        run.time_budget_end = t + run.time_budget_s
        z = np.zeros_like(q)
        # nothing moves while the first plan is made: it may take longer than a switch allows
        self.pending = _Pending(next(self._ids), replace(self._request(q, z, z, q), deadline_s=FIRST_PLAN_DEADLINE_FACTOR
                                                          * self.settings.deadline_s, anchor_certified=(hold, cert)), None)
        run.first_attempts = 0
        self.message = "planning the first exciting plan"
        return True

    def _wait(self, t: float, why: str, for_what: str) -> bool:
        """Nothing moves yet because of ``why``: fail at the hold deadline (False), else keep waiting."""
        if self.gate.rejected:
            why += f"; {self.gate.rejected} estimates not used ({self.gate.rejected_why})"
        elif not self.gate.received:      # a slow or absent estimator, not a refusal
            why += "; none has arrived"
        if t >= self._run.hold_deadline:
            self._enter(S.FAILED, why)
            return False
        self.message = f"{why}; waiting up to {self.settings.hold_wait_s:.1f} s for {for_what}"
        return True

    def request(self, t: float) -> tuple[int, PlanRequest] | None:
        """The plan to compute at time t (id, request), if any: the next plan is requested
        ``ISSUE_AHEAD_S`` before the last accepted one starts, with the box in use at that moment,
        and may take the time until its switch (less the command lead and a margin)."""
        self._record_start(t)
        p = self.pending
        if p is None or t < p.issue_time:
            return None
        if p.request is None:
            assert p.switch_time is not None        # only a first plan is requested when issued, with no switch time
            window = p.switch_time - self.settings.command_lead_s - DEADLINE_MARGIN_S - t
            p.request = replace(self._request(*p.state), deadline_s=max(window, 0.05))
        return p.id, p.request

    def offer(self, t: float, request_id: int, result: PlanResult) -> Command | None:
        """A planning result, available at time ``t``."""
        self.last_result = result
        if result.status:
            self.optimized += 1
            self.converged += result.converged
        p = self.pending
        if p is None or p.id != request_id:
            return None
        self._snapshot()
        self.pending = None
        if p.switch_time is None:                       # the first plan, from rest
            if self._stale:                             # not moving on stale data: plan again
                self.pending = _Pending(next(self._ids), p.request, None)
                self.message = "joint states stale: not moving yet, planning again"
                return None
            assert p.request is not None            # request() built it before any result
            if not result.certified:
                self._run.first_attempts += 1
                if self._run.first_attempts < FIRST_PLAN_ATTEMPTS:
                    self.pending = _Pending(next(self._ids), replace(p.request, seed=p.request.seed + 1), None)
                    self.message = f"no exciting plan certified from rest yet ({result.reason}); trying again"
                    return None
                self._enter(S.FAILED, f"not moving: no exciting plan certified from rest ({result.reason})")
                return None
            start = t + self.settings.command_lead_s
            self._run.first_request = p.request
            assert result.plan is not None          # certified
            self.segments = [Segment(start, result.plan, "excite", result.certificate)]
            self._accepted(start)
            return Command(start, self.end_time, "first plan", takes_effect=start, kind="first")
        self.cycles += 1
        late = t + self.settings.command_lead_s > p.switch_time
        if late or not result.certified:
            self.fallbacks += 1
            why = "planning missed its deadline" if late else result.reason
            self._brake_on_executing(f"no certified plan in time ({why}): braking on the executing plan")
            return None
        assert result.plan is not None              # certified
        self.segments = [s for s in self.segments if s.start <= p.switch_time]
        self.segments.append(Segment(p.switch_time, result.plan, "excite", result.certificate))
        self._accepted(p.switch_time)
        return Command(t, self.end_time, "next plan", takes_effect=p.switch_time, kind="next")

    def tick(self, t: float, joint_state_age_s: float | None = None, measured=None) -> Command | None:
        """Periodic check at time ``t``: stale joint states; ``measured``, one sample ``(t_meas, q, qd)``
        or a list of them in time order (every sample since the last tick), against the joint limits
        (whenever started) and the certified tube (whenever a reference is commanded); missed switch
        times; the end of motion."""
        self._stale = joint_state_age_s is not None and joint_state_age_s > self.settings.stale_after_s
        samples = [] if measured is None else measured if isinstance(measured, list) else [measured]
        if self.state in MOVING and not self.faulted:
            for sample in samples:
                breach = self.tracking_breach(*sample)
                if breach:
                    return self.fault(t, breach)
        if self.state == S.PLANNING and self.pending is None:     # waiting for a box that certifies a hold
            hold_box = self._run.hold_box
            box_changed = hold_box is None or not (np.array_equal(hold_box[0], self.lower)
                                                   and np.array_equal(hold_box[1], self.upper))
            if box_changed or t >= self._run.hold_deadline:
                self._try_hold(t)
            return None
        if self.state not in (S.EXECUTING, S.BRAKING):
            return None
        self._record_start(t)
        if self._stale:
            if self._run.final_state != S.FAILED:
                return self.fault(t, f"joint states stale ({joint_state_age_s:.3f} s)")
        if self.pending is not None and self.pending.switch_time is not None and \
                t + self.settings.command_lead_s > self.pending.switch_time:
            self.pending = None
            self.cycles += 1
            self.fallbacks += 1
            self._brake_on_executing("planning missed its deadline: braking on the executing plan")
        if self.pending is None and t >= self.end_time:
            self._enter(self._run.final_state, self._run.final_message)
            return None
        return None

    def tracking_breach(self, t_meas: float, q, qd) -> str:
        """Why (q, qd) measured at ``t_meas`` breaks the joint limits or lies outside the certified
        tube around the reference (:class:`~.monitor.TubeMonitor`; '' if neither)."""
        why = self.monitor.check_limits(q, qd)
        if why or not self.segments or t_meas < self.segments[0].start:
            return why
        q_d, qd_d, _ = self.reference(t_meas)
        return self.monitor.check_tube(t_meas, q, qd, (q_d, qd_d))

    @property
    def max_tracking_error(self) -> np.ndarray:
        """Largest measured tracking error (rad, rad/s, rad/s^2 estimated), max over joints."""
        return self.monitor.max_error

    @property
    def max_tube_share(self) -> float:
        """Largest measured tracking error as a share of its tube (1: on its edge), over joints and kinds."""
        return self.monitor.max_tube_share

    def fault(self, t: float, reason: str, final_state: PlannerState = S.FAILED) -> Command | None:
        """Brake now, computing nothing: drop every plan that has not started by the time a command
        sent now can take effect (``command_lead_s``), so the arm brakes on the executing plan, which
        is certified and ends at rest. The caller sends the command, then asks :meth:`shorter_brake`
        for a shorter certified braking plan."""
        if self.state not in MOVING or (self.faulted and self.state == S.BRAKING):
            return None       # a stop or a second fault changes nothing while a fault brakes
        self._snapshot()
        self.pending = None
        self._run.final_state = final_state
        if self.state == S.PLANNING:
            self._enter(final_state, f"{reason}: not moving")
            self._run.final_message = self.message
            return None
        t_effect = t + self.settings.command_lead_s
        dropped = [s.start for s in self.segments[1:] if s.start > t_effect]
        self.segments = [s for s in self.segments if s.start <= t_effect]
        q, qd, qdd = self.reference(t_effect)
        if np.max(np.abs(qd)) < 1e-9 and np.max(np.abs(qdd)) < 1e-9 and t_effect >= self._active(t_effect).end:
            # at rest at the end of what was sent: nothing to send (a trajectory ending in the past is
            # one joint_trajectory_controller rejects)
            self._set_braking(f"{reason}: at rest")
            return None
        self._set_braking(f"{reason}: braking on the executing plan")
        self._run.brake_reason = reason
        return Command(t, self.end_time, reason, takes_effect=min(dropped, default=t_effect))

    def shorter_brake(self, t: float) -> Command | None:
        """After :meth:`fault`'s command is sent: a certified braking plan shorter than what remains of
        the executing plan, from the desired state ``command_lead_s`` plus twice the wall time the last
        certification took ahead (wall seconds: conservative on a simulation running slower than real
        time); None when nothing shorter certifies (the arm brakes on the executing plan)."""
        reason, self._run.brake_reason = self._run.brake_reason, None
        if reason is None or self.state != S.BRAKING:
            return None
        t_b = t + self.settings.command_lead_s + 2.0 * self.brake_compute_s
        q, qd, qdd = self.reference(t_b)
        self._snapshot()
        started = time.perf_counter()
        for duration in self._brake_durations(self._active(t_b).end - t_b):
            plan = BezierPlan.from_state(q, qd, qdd, self._brake_points(q, qd, qdd, duration), duration)
            cert = self.certify(self.robot, self.cert_settings, plan, self.lower, self.upper,
                                torque_anchor=self._run.torque_anchor)
            self.brake_compute_s = time.perf_counter() - started
            if cert.certified:
                self.segments = [s for s in self.segments if s.start < t_b]
                self.segments.append(Segment(t_b, plan, "brake", cert))
                self._set_braking(f"{reason}: braking on a certified {duration:.2f} s plan")
                return Command(t, self.end_time, reason, takes_effect=t_b)
        return None

    def withdraw(self, cmd: Command, why: str) -> None:
        """``cmd`` was not sent (it would have reached the controller after ``takes_effect``): the
        timeline goes back to what was sent, which is certified and ends at rest, and the arm brakes
        on it; a first plan is planned again from rest."""
        assert self._before is not None             # every command sent was snapshot first
        segments, plans, F_prev, scheduled, state = self._before
        self.segments, self.plans, self.F_prev, self._scheduled = segments, plans, F_prev, scheduled
        self.pending = None
        if cmd.kind == "first":
            self._enter(state, self.message)
            self.pending = _Pending(next(self._ids), self._run.first_request, None)
            self.message = f"first plan withheld ({why}): planning again"
        elif cmd.kind == "next":
            self.fallbacks += 1
            self._brake_on_executing(f"next plan withheld ({why}): braking on the executing plan")
        else:       # the fault stands (its final state is kept); only its braking plan is not used
            self._set_braking(f"{cmd.reason}: braking command withheld ({why}): braking on the executing plan")

    def _snapshot(self) -> None:
        """The timeline as last sent, for :meth:`withdraw`."""
        self._before = (list(self.segments), self.plans, self.F_prev.copy(), self._scheduled, self.state)

    def stop(self, t: float, reason: str = "stop requested") -> Command | None:
        """Brake to rest as on a fault, ending in ``done``."""
        return self.fault(t, reason, final_state=S.DONE)

    @property
    def faulted(self) -> bool:
        """A fault has been raised since the last start (the motion ends in ``failed``)."""
        return self._run.final_state == S.FAILED

    # --- timeline ------------------------------------------------------------------------------

    def _active(self, t: float) -> Segment:
        active = self.segments[0]
        for s in self.segments:
            if s.start <= t:
                active = s
        return active

    def reference(self, t: float):
        """Desired (q, qd, qdd) at time t (each (n,))."""
        return self._active(t).evaluate(t)

    def sample(self, t_from: float, t_to: float, hz: float):
        """Times (relative to t_from) and (q, qd, qdd) of the reference on [t_from, t_to]; the last
        sample is at t_to exactly, and at the end of the timeline (at rest) its velocity and
        acceleration are exactly zero (joint_trajectory_controller refuses any other end by default)."""
        span = t_to - t_from
        t = np.arange(0.0, span + 0.5 / hz, 1.0 / hz)
        t = t[t < span - 1e-9 * max(1.0, span)]
        t = np.append(t, span)
        out = [np.empty((t.size, self.robot.nv)) for _ in range(3)]
        for s, nxt in zip(self.segments, self.segments[1:] + [None]):
            mask = (t_from + t >= s.start) if s is not self.segments[0] else np.ones(t.size, bool)
            if nxt is not None:
                mask &= t_from + t < nxt.start
            if mask.any():
                for k, v in enumerate(s.plan.evaluate(t_from + t[mask] - s.start)):
                    out[k][mask] = v
        if t_to >= self.end_time:
            out[1][-1], out[2][-1] = 0.0, 0.0
        return t, out[0], out[1], out[2]

    @property
    def end_time(self) -> float:
        """When the timeline reaches rest (-inf before anything is commanded)."""
        return self.segments[-1].end if self.segments else -np.inf

    @property
    def fallback_rate(self) -> float:
        """Share of planning cycles after the first plan that ended without a certified plan in time."""
        return self.fallbacks / self.cycles if self.cycles else 0.0

    # --- internals -------------------------------------------------------------------------------

    def _request(self, q, qd, qdd, anchor) -> PlanRequest:
        return PlanRequest(np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float),
                           self.lower.copy(), self.upper.copy(), self.F_prev.copy(), seed=self.plans,
                           anchor=np.asarray(anchor, float), torque_anchor=self._run.torque_anchor)

    def _accepted(self, start: float) -> None:
        """Plan accepted to start at ``start``: count its executed part, request the next one."""
        self.plans += 1
        seg = self.segments[-1]
        self.F_prev = self.F_prev + self.excitation.information(
            seg.plan, self.settings.cost_samples, until_s=self.settings.replan_s)
        self._enter(S.EXECUTING, f"executing plan {self.plans}")
        self._scheduled = seg
        switch = seg.start + self.settings.replan_s
        stop = self._stop_reason(switch)
        if stop:
            self.message = f"executing the final plan {self.plans}: {stop}"
            self._run.final_message = f"done after {self.plans} plans: {stop}"
            return
        q, qd, qdd = seg.plan.evaluate([self.settings.replan_s])
        rest = seg.plan.control_points[-1]
        # planning starts ISSUE_AHEAD_S before this plan does: time enough, and the box is fresh
        self.pending = _Pending(next(self._ids), None, switch, seg.start - ISSUE_AHEAD_S,
                                (q[0], qd[0], qdd[0], rest))

    def _record_start(self, t: float) -> None:
        """The box in use when each plan starts: what the stop criterion compares."""
        seg = self._scheduled
        if seg is not None and t >= seg.start:
            self._scheduled = None
            self.box_log_volume.append((seg.start, self.gate.log_volume()))

    def _stop_reason(self, switch: float) -> str:
        s = self.settings
        if self.plans >= s.max_plans:
            return f"{s.max_plans} plans made"
        if switch + s.horizon_s > self._run.time_budget_end:
            return "time budget reached"
        # the box at the start of a plan against the box now, once the estimates hold the data of
        # the stop_patience plans after it
        h = self.box_log_volume
        covered = bisect.bisect_right([start for start, _ in h], self.data_until)
        if covered > s.stop_patience:
            fell = h[covered - 1 - s.stop_patience][1] - self.gate.log_volume()
            if fell < s.stop_shrink:
                return f"bounds stopped shrinking (log-volume fell {fell:.4f} over {s.stop_patience} plans)"
        return ""

    def _brake_on_executing(self, why: str) -> None:
        self._run.final_state = S.DONE
        self._set_braking(why)

    def _set_braking(self, why: str) -> None:
        self.pending, self._scheduled = None, None
        self._enter(S.BRAKING, why)
        self._run.final_message = f"stopped: {why}"

    def _brake_durations(self, remaining: float) -> list[float]:
        """Braking durations to try, shortest first: only those shorter than ``remaining``."""
        s = self.settings
        out, d = [], s.brake_duration_s
        while d < min(remaining, s.horizon_s):
            out.append(d)
            d *= 1.6
        return out

    def _enter(self, state: PlannerState, message: str) -> None:
        """Go to ``state`` saying why; a transition outside :data:`TRANSITIONS` is a bug."""
        if state not in TRANSITIONS[self.state]:
            raise RuntimeError(f"planner state {self.state} -> {state} is not a transition ({message})")
        self.state, self.message = PlannerState(state), message

    def _brake_points(self, q, qd, qdd, duration: float) -> np.ndarray:
        m = self.settings.free_points
        P = BezierPlan.from_state(q, qd, qdd, np.tile(q, (m, 1)), duration).control_points
        return np.tile(P[2], (m, 1))
