"""Which estimates narrow the planner's payload box, and when the newest one forbids motion.

The box starts as the profile's prior and only shrinks: an estimate counts when its bounds are
guaranteed and its data consistent, and is intersected with the box. The newest estimate forbids
motion (``distrust``) when its data are inconsistent, when its bounds stop being guaranteed after
guaranteed ones came, or when it excludes the box in use: the certificates then rest on a box the
data no longer support.
"""
from __future__ import annotations

import numpy as np

DISJOINT = "an estimate's bounds do not intersect the box in use; ignored"


class EstimateGate:
    """The payload box the plans are certified for and the trust in the newest estimate."""

    def __init__(self, prior_lower, prior_upper):
        lower, upper = (np.asarray(x, dtype=float).copy() for x in (prior_lower, prior_upper))
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            raise ValueError("the planner needs a finite prior payload box (profile payload.prior_lower/upper)")
        self.prior = (lower.copy(), upper.copy())
        self.lower, self.upper = lower, upper
        self.received = 0                   # estimates taken, used or not
        self.rejected = 0                   # estimates not used (bounds not guaranteed, data inconsistent)
        self.rejected_why = ""
        self.distrust = ""                  # why the newest estimate forbids motion ('' if it does not)
        self.guaranteed_seen = False        # an estimate with guaranteed bounds has arrived
        self.narrowed = False               # an estimate narrowed the prior since :meth:`restart`
        self.refusal = ""                   # why the last estimate left the box unchanged ('' if it did not)

    def update(self, lower, upper, bounds_guaranteed: bool, data_consistent: bool) -> bool:
        """Intersect the box with an estimate's bounds; False (box unchanged, :attr:`refusal` says
        why) when the estimate does not qualify or contradicts the box."""
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.received += 1
        self.refusal = ""
        if not (bounds_guaranteed and data_consistent):
            self.rejected += 1
            self.rejected_why = self.refusal = "bounds not guaranteed" if not bounds_guaranteed else "data inconsistent"
            return False
        if lower.shape != self.lower.shape or upper.shape != self.upper.shape or \
                not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            self.refusal = "bounds of the wrong size or not finite"
            return False
        lo, hi = np.maximum(self.lower, lower), np.minimum(self.upper, upper)
        if np.any(lo > hi):
            self.refusal = DISJOINT
            return False
        self.lower, self.upper = lo, hi
        return True

    def judge(self, lower, upper, bounds_guaranteed: bool, data_consistent: bool) -> bool:
        """Take an estimate (:meth:`update`, whose answer this is) and set :attr:`distrust` from it."""
        bounds_guaranteed, data_consistent = bool(bounds_guaranteed), bool(data_consistent)
        disjoint = False
        used = self.update(lower, upper, bounds_guaranteed, data_consistent)
        if used:
            self.distrust = ""
            # a box still equal to the prior rests on no data yet (the estimator holds its first rows)
            self.narrowed |= bool(np.any(self.lower > self.prior[0]) or np.any(self.upper < self.prior[1]))
        elif not data_consistent:
            self.distrust = "the estimator reports data inconsistent with its error bounds"
        elif not bounds_guaranteed and self.guaranteed_seen:
            self.distrust = "the estimator's bounds stopped being guaranteed"
        elif self.refusal == DISJOINT:
            disjoint = True
            self.distrust = "an estimate's bounds exclude the box the plans were certified for"
        self.guaranteed_seen |= bounds_guaranteed and not disjoint
        return used

    def restart(self) -> None:
        """A new start: the box must be narrowed again before it counts as resting on data."""
        self.narrowed = False

    def log_volume(self) -> float:
        """Log-volume of the box (its edges floored at 1e-12)."""
        return float(np.sum(np.log(np.maximum(self.upper - self.lower, 1e-12))))
