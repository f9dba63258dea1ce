"""One LP over every integrated wrench row of a run: the payload's box with the F/T offset identified along.

The rows are those of :mod:`~..signals.wrench_momentum`; the offset ``o`` (its value at the run's
first sample) is six nuisance unknowns within the profile's box (``noise.wrench.offset_N`` /
``offset_Nm``) and its drift is in the rows' bound. The box is exact for that polytope (HiGHS, through
:class:`~.bounds.IntervalBounds`).

An offset outside its stated box never gives a narrower box labelled guaranteed
(:mod:`.offset_freeing`: an axis whose range reaches its box is freed; ``offset_freed`` says which,
and a freed axis reaching its widened box leaves the box not ``guaranteed``). No payload and offset
within the box explaining the rows is reported as inconsistent (``data_consistent`` false).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..signals.driver_streams import max_gap_s
from ..signals.sensors import NoiseModel
from ..signals.wrench_momentum import StepLimits, WrenchMomentumRegressor, step_terms, window_rows
from .offset_freeing import free_offsets, rows_box

# Steps per window at the sensor's rate: the velocity error at a window's two ends is paid once per
# window, the sensor's bound on every step; with no velocity error stated, one step a window keeps every
# sample's own constraint (xArm7 cases of study sim: mass width 0.12 kg at 1 step, 0.20 kg at 10).
WINDOW_STEPS = 1


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
    return robot.spec.noise.wrench_row_floor()


def momentum_wrench_box(robot, t, q, qd, wrench, extra_bound=None, window: int = WINDOW_STEPS) -> MomentumWrenchBox:
    """The box from samples ``t`` (N,) s, ``q, qd`` (N, nv), ``wrench`` (N, 6) sensor frame, and
    ``extra_bound`` (N, 6) added to each sample's bound (the reading's interpolation; None: none)."""
    nz = NoiseModel.from_profile(robot.spec)
    lo, hi = robot.payload_prior()
    e = sample_bound(robot) if extra_bound is None else sample_bound(robot) + np.asarray(extra_bound, dtype=float)
    terms = WrenchMomentumRegressor(robot).terms(q, qd)
    limits = StepLimits.from_robot(robot)
    rows = window_rows(terms, t, wrench, e, window, lo, hi, nz.velocity_rad_s, nz.wrench_offset_drift(),
                       max_gap_s(robot.sensing.joint_states_hz),
                       None if limits is None else step_terms(terms, t, qd, limits, lo, hi))
    freed = free_offsets(rows_box(lo, hi, np.hstack([rows.A, rows.O]), rows.b, rows.bound), nz.wrench_offset_bound())
    b = freed.bounds
    return MomentumWrenchBox(b.lower.copy(), b.upper.copy(), b.r_lower.copy(), b.r_upper.copy(), freed.consistent,
                             freed.freed, int(rows.b.size), freed.guaranteed and limits is not None)
