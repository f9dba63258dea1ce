"""One LP over every integrated wrench row of a run: the payload's box with the F/T offset identified along.

The rows are those of :mod:`~..signals.wrench_momentum`; the offset ``o`` (its value at the run's
first sample) is six nuisance unknowns within the profile's box (``noise.wrench.offset_N`` /
``offset_Nm``) and its drift is in the rows' bound. The box is exact for that polytope (HiGHS, through
:class:`~.bounds.IntervalBounds`).

An offset outside its stated box never gives a narrower box labelled guaranteed. The feasible set of
(payload, offset) without the offset's box is convex and holds the truth (the other stated bounds
holding); if it meets the box, the segment from the truth to a point of the box leaves the box through
a face of an axis on which the truth is outside, so some such axis's offset range reaches its box's
edge. Every axis whose range reaches its edge is therefore freed (its box widened ``FREED_FACTOR``
times, beyond any offset a working sensor reads) and the LP solved again, until no bounded axis reaches
its edge: the final box then holds whatever the true offset within the widened boxes (``offset_freed``
says which axes lost their box; a freed axis reaching its widened edge leaves the box not
``guaranteed``). No payload and offset within the box explaining the rows is reported as inconsistent
(``data_consistent`` false).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..signals.driver_streams import max_gap_s
from ..signals.sensors import NoiseModel
from ..signals.wrench_momentum import StepLimits, WrenchMomentumRegressor, step_terms, window_rows
from .bounds import IntervalBounds

# Steps per window at the sensor's rate: the velocity error at a window's two ends is paid once per
# window, the sensor's bound on every step; with no velocity error stated, one step a window keeps every
# sample's own constraint (xArm7 sim-study cases: mass width 0.12 kg at 1 step, 0.20 kg at 10).
WINDOW_STEPS = 1
# The offset's range within this fraction of its stated box's edge counts as reaching it.
EDGE_FRACTION = 1e-6
# A freed axis's box, in multiples of the stated one (the LP takes finite boxes only).
FREED_FACTOR = 1e3


@dataclass
class MomentumWrenchBox:
    """The payload's box (pinocchio order, payload frame) and the offset's, from one LP."""

    lower: np.ndarray
    upper: np.ndarray
    offset_lower: np.ndarray
    offset_upper: np.ndarray
    data_consistent: bool
    offset_freed: np.ndarray          # (6,) bool: axes whose offset reached its stated box, solved widened
    rows: int
    guaranteed: bool                  # consistent, no freed axis reaches its widened box, steps bounded


def sample_bound(robot) -> np.ndarray:
    """(6,) per-sample bound of the reading's error apart from the offset: stated noise and model error."""
    nz = NoiseModel.from_profile(robot.profile)
    err = robot.profile["noise"]
    model_error = np.array([err.get("model_error_N", 0.0)] * 3 + [err.get("model_error_Nm", 0.0)] * 3)
    return nz.bound_sigmas * nz.wrench_sigma() + model_error


def momentum_wrench_box(robot, t, q, qd, wrench, extra_bound=None, window: int = WINDOW_STEPS) -> MomentumWrenchBox:
    """The box from samples ``t`` (N,) s, ``q, qd`` (N, nv), ``wrench`` (N, 6) sensor frame, and
    ``extra_bound`` (N, 6) added to each sample's bound (the reading's interpolation; None: none)."""
    nz = NoiseModel.from_profile(robot.profile)
    lo, hi = robot.payload_prior()
    e = sample_bound(robot) if extra_bound is None else sample_bound(robot) + np.asarray(extra_bound, dtype=float)
    terms = WrenchMomentumRegressor(robot).terms(q, qd)
    limits = StepLimits.from_robot(robot)
    rows = window_rows(terms, t, wrench, e, window, lo, hi, nz.velocity_rad_s, nz.wrench_offset_drift(),
                       max_gap_s(robot.sensing["joint_states_hz"]),
                       None if limits is None else step_terms(terms, t, qd, limits, lo, hi))
    box = nz.wrench_offset_bound()
    free = np.zeros(6, dtype=bool)
    while True:     # at most six rounds: each frees one axis or more
        r_box = np.where(free, FREED_FACTOR * box, box)
        bounds = IntervalBounds(lo, hi, nuisance_lower=-r_box, nuisance_upper=r_box, bound_nuisance=True)
        consistent = bounds.update(rows.A, rows.b, rows.bound, A_nuisance=rows.O).consistent
        near = r_box * (1.0 - EDGE_FRACTION)
        # a zero box is a tared axis: the stated assumption itself, nothing to free
        at_edge = (box > 0) & ((bounds.r_upper >= near) | (bounds.r_lower <= -near))
        reached = ~free & at_edge
        if not consistent or not reached.any():
            return MomentumWrenchBox(bounds.lower.copy(), bounds.upper.copy(), bounds.r_lower.copy(),
                                     bounds.r_upper.copy(), bool(consistent), free, int(rows.b.size),
                                     bool(consistent) and not at_edge.any() and limits is not None)
        free |= reached
