"""One estimation session: the checks a message passes, the estimator, the bounds schedule and the
failure policy, which the estimator node and the offline pipeline both run (live = offline by
construction, not by tests alone).

What differs between them stays with the caller: the node counts on /diagnostics and logs, saves
its state, publishes, and folds in the rows left when a stream pauses; offline counts in a dict and
keeps the history of the box.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...defaults import BOUNDS_PERIOD_S
from .consistent import SolverFailure
from .factory import make_estimator
from .intake import CheckedRows, Skipped, check_rows
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
    its bounds updates (every ``bounds_period_s`` of row stamps; 0: only :meth:`update_bounds`)."""

    def __init__(self, robot, method: str, max_bound_rows: int | None = None, bounds_period_s: float = BOUNDS_PERIOD_S):
        self.estimator = make_estimator(robot, method, max_bound_rows)
        self.limits = RowLimits.from_robot(robot)
        self.schedule = UpdateSchedule(bounds_period_s)

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

    def update_bounds(self, final: bool = False) -> str:
        """Update the bounds (``final``: at the end of the data, one LP over every row kept); on a
        numerical failure the box keeps its last certified value and the failure is returned ('' when
        none)."""
        try:
            if final:
                self.estimator.final_update_bounds()
            else:
                self.estimator.update_bounds()
        except NUMERICAL_FAILURES as exc:
            return f"{type(exc).__name__}: {exc}"
        return ""

    def result(self):
        """The estimator's current estimate and box."""
        return self.estimator.result()
