"""One estimation session: the checks a message passes, the estimator, the bounds schedule and the
failure policy, which the estimator node and the offline pipeline both run (live = offline by
construction, not by tests alone).

What differs between them stays with the caller: the node counts on /diagnostics and logs, saves
its state and publishes; offline counts in a dict and keeps the history of the box. When the node
makes a final update (the planner's motion ended, the stream paused) and hands on an estimate is
decided by :class:`LiveSchedule`, here so that it is tested without ROS or threads.
"""
from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, replace

import numpy as np

from ...defaults import BOUNDS_PERIOD_S
from ..planning.states import ENDED, MOVING, PlannerState
from .consistent import SolverFailure
from .factory import make_estimator
from .intake import CheckedRows, Skipped, check_rows
from .payload import Support
from .row_checks import RowLimits
from .schedule import UpdateSchedule

# what a solver or a factorisation may raise on numerically hard rows; the session says so and goes on
NUMERICAL_FAILURES = (np.linalg.LinAlgError, FloatingPointError, ArithmeticError, SolverFailure)


@dataclass
class Added:
    """What folding one message in did: ``failure`` (the rows were not folded in: the solver failed
    on them), the rows the estimator refused and the row bounds it raised to the profile's floor
    (beyond the intake's checks), a stamp that jumped back a period or more, and the bounds
    update it closed (``updated``; ``update_failure``: the box kept its last value)."""

    failure: str = ""
    refused: int = 0
    raised: int = 0
    jumped_back: bool = False
    updated: bool = False
    update_failure: str = ""


class EstimationSession:
    """``method``'s estimator of ``robot`` with the intake's checks and the data-time schedule of
    its bounds updates (every ``bounds_period_s`` of row stamps; 0: only :meth:`update_bounds`).
    ``support_directions``: ``(C, labels)``, payload directions whose support each final update
    solves over the estimator's final LP, where it has one (the ``~/apply`` gate's); the results
    carry it (:class:`~inertial_id.core.estimators.payload.Support`) until the next final update. It stays sound after that (rows only
    add constraints), but the next one's is tighter."""

    def __init__(self, robot, method: str, max_bound_rows: int | None = None, bounds_period_s: float = BOUNDS_PERIOD_S,
                 support_directions: tuple[np.ndarray, np.ndarray] | None = None):
        self.estimator = make_estimator(robot, method, max_bound_rows)
        self.support_directions = support_directions
        self.final_support: Support | None = None
        self.limits = RowLimits.from_robot(robot)
        self.schedule = UpdateSchedule(bounds_period_s)
        # the latest row stamp the box holds (s): what a consumer of the box knows it reflects (the
        # planner's stop criterion); None before a bounds update of the schedule's (or with a period of 0)
        self.data_until: float | None = None
        # the estimator's state before a provisional final update (a pause's, a failed motion's)
        self._before_provisional: dict | None = None

    def check(self, kind: str, parameter_names, rows: int, samples: int, A, b, e, sigma, kinematics=None,
              acceleration_bound=None) -> CheckedRows | Skipped:
        """A message's rows checked for this session's estimator (:func:`~.intake.check_rows`)."""
        return check_rows(self.estimator, self.limits, kind, parameter_names, rows, samples, A, b, e, sigma,
                          kinematics, acceleration_bound)

    def add(self, t: float, rows: CheckedRows) -> Added:
        """Fold in checked rows stamped ``t`` (s); update the bounds when they close a period."""
        est = self.estimator
        refused, raised = sum(est.refused.values()), est.bounds_raised
        try:
            est.add(*rows)
        except NUMERICAL_FAILURES as exc:
            return Added(failure=f"{type(exc).__name__}: {exc}")
        jumps = self.schedule.backward_jumps
        out = Added(refused=sum(est.refused.values()) - refused, raised=est.bounds_raised - raised)
        due = self.schedule.due(t)
        out.jumped_back = self.schedule.backward_jumps > jumps
        if due:
            out.updated, out.update_failure = True, self.update_bounds()
        return out

    def update_bounds(self, final: bool = False, provisional: bool = False) -> str:
        """Update the bounds (``final``: at the end of the data, one LP over every row kept); on a
        numerical failure the box keeps its last certified value and the failure is returned ('' when
        none). ``provisional``: a final update that :meth:`resume` may withdraw (a stream's pause, a
        motion that failed), until the next final update."""
        if final:
            # a copy: an update may change the state's arrays in place
            self._before_provisional = copy.deepcopy(self.estimator.state()) if provisional else None
        try:
            if final:
                self.estimator.final_update_bounds()
                self._solve_final_support()
            else:
                self.estimator.update_bounds()
        except NUMERICAL_FAILURES as exc:
            return f"{type(exc).__name__}: {exc}"
        self.data_until = self.schedule.latest_t
        return ""

    def resume(self) -> None:
        """The data go on after a provisional final update (rows again after a pause; the planner
        moving again after a motion that failed): it is withdrawn, as offline, where it is made at
        the end of the data only. The estimator goes back to its state from before it, its box
        intersected with the current one (which holds too). What this is for: the F/T offset's check
        (:mod:`.offset_freeing`) on rows that cannot tell the offset from the payload's weight (an arm
        at rest, a motion braked after a second) frees every axis, and the updates after it, solved
        with the offset free, would narrow the box no more; a box back at the prior would also keep
        the planner from starting again. The check comes back with the next final update."""
        if self._before_provisional is not None:
            self.estimator.restore(self._before_provisional)
            self._before_provisional = None

    def restore(self, state: dict) -> None:
        """Continue from a saved estimator state (:meth:`~.protocol.Estimator.state`), with the support of the rows it
        kept: a subset of every row, so a sound bound (wider than the last final LP's, which a
        restart does not keep), and one ``~/apply`` can use before the next final update.
        ValueError (and what the estimator's restore raises) when the state does not fit."""
        self.estimator.restore(state)
        self._solve_final_support()

    def _solve_final_support(self) -> None:
        if self.support_directions is None:
            return
        C, labels = self.support_directions
        values = self.estimator.support(C)
        if values is not None:
            self.final_support = Support(C, values, labels)

    def result(self):
        """The estimator's current estimate and box, with the last final LP's :class:`~inertial_id.core.estimators.payload.Support`."""
        result = self.estimator.result()
        return result if self.final_support is None else replace(result, final_support=self.final_support)


# why a job makes a final update (Job.final)
MOTION_END = "motion_end"
MOTION_FAILED = "motion_failed"      # provisional: withdrawn when the planner moves again
STREAM_PAUSE = "stream_pause"
# final updates that the data going on withdraws (EstimationSession.resume)
PROVISIONAL = frozenset({MOTION_FAILED, STREAM_PAUSE})


@dataclass(frozen=True)
class Job:
    """What the worker does once it has folded in the rows queued so far: a final bounds update
    (``final``: :data:`MOTION_END`, :data:`MOTION_FAILED` or :data:`STREAM_PAUSE`; '' for none), then, when ``publish``, hand
    on an estimate, saving the state first when ``save``; ``resume``: :meth:`EstimationSession.resume`
    before anything else."""

    final: str = ""
    publish: bool = False
    save: bool = False
    resume: bool = False        # first withdraw a failed motion's final update (the planner moves again)


class LiveSchedule:
    """The estimator node's decisions beyond the data-time schedule of :class:`EstimationSession`,
    which outlive a reset of the session. The executor thread reports the planner's states, its idle
    timer and its publication timer; the worker reports the rows it takes, then asks :meth:`next_job`.
    The executor's requests and :meth:`next_job`, which takes them, hold a lock: a request that comes
    while a job is decided is taken by the next one, never lost.

    ``publish_first``: publish before any row arrives (a box restored from a saved state)."""

    def __init__(self, publish_first: bool = False):
        self._lock = threading.Lock()
        # set by the executor thread, taken by the worker
        self._motion_ended = False
        self._motion_failed = False     # the motion that ended ended failed
        self._moving_again = False      # the planner left a failed motion's end for a new one
        self._paused_at: int | None = None     # rows messages accepted when a timer period without any ended
        self._result_due = False
        # the executor thread's own
        self._planner_state = ""
        self._accepted_at_tick = -1
        # the worker's own
        self.taken = 0                  # rows messages taken (folded in or failed)
        self._since_final = False       # rows folded in since the last final update
        self._dirty = False             # the state changed since it was last saved
        self._new_box = publish_first   # a box not yet handed on
        self._paused_update = False     # the last update folded in the rows left by a pause

    # --- the executor thread ------------------------------------------------------------------

    def planner_status(self, state: str) -> bool:
        """The planner's state, as ``excitation_status`` carries it; True when its motion just ended
        (a final update is due: an arm at rest keeps streaming rows, so the stream never pauses), or
        when it moves again after a motion that failed (that update, provisional, is withdrawn:
        :meth:`EstimationSession.resume`)."""
        ended = state in ENDED and self._planner_state in MOVING
        again = state in MOVING and self._planner_state == PlannerState.FAILED
        self._planner_state = state
        if ended or again:
            with self._lock:
                if ended:
                    self._motion_ended, self._motion_failed = True, state == PlannerState.FAILED
                self._moving_again |= again
        return ended or again

    def idle_tick(self, accepted: int) -> bool:
        """A bounds period of the node's clock went by, ``accepted`` rows messages having arrived in
        all; True when none came during it (the stream paused or stopped: the rows left may be folded in)."""
        paused = accepted == self._accepted_at_tick
        self._accepted_at_tick = accepted
        if paused:
            with self._lock:
                self._paused_at = accepted
        return paused

    def request_result(self) -> None:
        """The publication period went by: the next job hands on an estimate if the state changed."""
        with self._lock:
            self._result_due = True

    # --- the worker ---------------------------------------------------------------------------

    def reset(self) -> None:
        """The session was reset to the prior: its box is handed on, nothing is left to save."""
        self._since_final = self._dirty = self._paused_update = False
        self._new_box = True
        with self._lock:
            self._moving_again = False      # nothing of the prior's to withdraw

    def take_rows(self) -> bool:
        """A rows message is taken from the queue; True when the last update had folded in the rows
        of a pause: the stream only paused, and from here the box may differ from an offline run's
        (offline makes that update at the end of the data only) in the last digits."""
        self.taken += 1
        resumed, self._paused_update = self._paused_update, False
        return resumed

    def rows_added(self, updated: bool) -> None:
        """The rows were folded in; ``updated``: they closed a data-time bounds period."""
        self._dirty = self._since_final = True
        self._new_box = self._new_box or updated

    def next_job(self) -> Job:
        """What to do now that the queued rows are in; takes every request made so far."""
        with self._lock:
            final, resume = "", self._moving_again
            if resume:
                self._new_box = True
            if self._motion_ended and not (self._motion_failed and resume):
                final = MOTION_FAILED if self._motion_failed else MOTION_END
            # (a failed motion whose planner already moves again: its update would be withdrawn at once)
            # rows since the last final update, then a period without any: the stream stopped, one LP
            # over every row, as the offline schedule makes at the end of the data (even when the
            # last rows closed an online update: the chain of updates is not that LP). Not without
            # rows (a latched request would update after the first rows of a stream that starts
            # late, an update the offline schedule never makes), nor when rows came after it.
            elif self._paused_at is not None and self._since_final and self.taken == self._paused_at:
                final = STREAM_PAUSE
                self._paused_update = True
            self._motion_ended, self._motion_failed, self._moving_again, self._paused_at = False, False, False, None
            if final:
                # the final LP narrows the box: saved with it, or a restart would start wider
                self._since_final, self._new_box, self._dirty = False, True, True
            # a new box at once, even if no rows follow (the end of a recording or a replay); new rows
            # alone at the publication period
            publish = self._new_box or (self._dirty and self._result_due)
            job = Job(final, publish, publish and self._dirty, resume)
            if publish:
                self._result_due = self._new_box = self._dirty = False
            return job
