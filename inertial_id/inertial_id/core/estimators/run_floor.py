"""The sound floor of one run (:mod:`.sound_floor`) over the rows an estimator folded in: the wrench
rows with the F/T offset's columns and each sample's acceleration error within the bound the rows
carry, else the joint-torque or momentum rows the guaranteed estimator archived for its final LP with
the robot's box as the nuisance box.

The F/T offset's stated box is checked, not trusted (:mod:`.offset_freeing`): a box labelled
guaranteed must hold whatever the offset the rows admit, since an offset outside its stated box may
never give a narrower box so labelled. With the same rows, a payload that some offset beyond the box
explains could be the truth, so no such box may leave it out: the floor of a guaranteed box takes the
offset free (``FREED_FACTOR`` times its stated box, as the estimator frees it). Where no payload the
rows admit needs an offset beyond the stated box, the two floors are one.
``trust_offset_box`` gives the floor with the stated box trusted: what a sensor whose offset were known
to be inside it would allow, the share of the width the check costs.

Used where a run's box is scored against what its stated bounds allow at best: ``demo`` (the nodes'
rows, received beside the estimator) and ``study sim``."""
from __future__ import annotations

import numpy as np

from ..robot.regressor import PayloadRegressor
from ..signals.sensors import NoiseModel
from .guaranteed import GuaranteedEstimator
from .offset_freeing import FREED_FACTOR
from .payload import offset_columns
from .sound_floor import AccelerationErrors, Problem, Unexplained, floors_with_one_bound_halved, sound_mass_floor_kg


# A sound box holds the recorded floor's witnesses up to its LPs' tolerances: a box narrower than the
# recorded floor by more than this share of it leaves out a payload that explains its rows.
RECORDED_FLOOR_TOLERANCE = 1e-4


def has_wrench_rows(rows) -> bool:
    """Whether ``rows`` (RowMessage) hold wrench rows, whose floor has an F/T offset to check."""
    return any(m.kind == "wrench" for m in rows)


def run_floor_kg(robot, session_estimator, rows, pi_true, wrench_offset, trust_offset_box: bool = False) -> float | None:
    """The run's sound mass floor (kg): over its wrench rows (:func:`wrench_floor_kg`) when it has
    any, else over the rows the guaranteed estimator inside ``session_estimator`` (a session's
    estimator, ``RowIntake.estimator``) kept; None for another method."""
    if has_wrench_rows(rows):
        return wrench_floor_kg(robot, rows, pi_true, wrench_offset, trust_offset_box)
    inner = session_estimator.estimator
    return inner.sound_floor_kg(pi_true) if isinstance(inner, GuaranteedEstimator) else None


def run_floors_with_one_bound_halved(robot, session_estimator, rows, pi_true, wrench_offset) -> dict:
    """:func:`run_floor_kg` with one stated bound halved at a time (which one sets the floor:
    :func:`~.sound_floor.floors_with_one_bound_halved`): the rows' bounds, then (wrench rows) the
    acceleration errors' bound and the F/T offset's stated box trusted instead of checked, or each
    group of the robot's free parameters; {} where there is no floor."""
    if has_wrench_rows(rows):
        problem = _wrench_problem(robot, rows, pi_true, wrench_offset, trusted=False)
        if problem is None:
            return {}
        return {**floors_with_one_bound_halved(*problem[0], {}, problem[1]),
                "F/T offset box trusted": wrench_floor_kg(robot, rows, pi_true, wrench_offset, trust_offset_box=True)}
    inner = session_estimator.estimator
    return inner.floors_with_one_bound_halved(pi_true) if isinstance(inner, GuaranteedEstimator) else {}


def wrench_floor_kg(robot, rows, pi_true, offset, trust_offset_box: bool = False,
                    recorded: bool = False) -> float | None:
    """:func:`~.sound_floor.sound_mass_floor_kg` over the wrench rows of ``rows`` (RowMessage), each
    with the offset's columns (the offset free, or with ``trust_offset_box`` inside the profile's
    stated box: module docstring) and its sample's acceleration error within the bound the message
    carries (none: taken as exact), the truth the payload ``pi_true`` and the offset ``offset`` (6,);
    None without wrench rows, or with the offset beyond its stated box (no floor within the stated
    bounds then). ``recorded``: the floor of the rows as recorded rather than of their error-free
    realization, which no sound box on them beats; None where the truth does not explain them (an
    error beyond its stated bound, as in the cases that break the stated assumptions: no floor
    follows from bounds the rows do not keep)."""
    problem = _wrench_problem(robot, rows, pi_true, offset, trust_offset_box)
    if problem is None:
        return None
    if not recorded:
        return sound_mass_floor_kg(*problem[0], problem[1])
    try:
        return sound_mass_floor_kg(*problem[0], problem[1],
                                   observed=np.concatenate([m.b for m in rows if m.kind == "wrench"]))
    except Unexplained:
        return None


def _wrench_problem(robot, rows, pi_true, offset, trusted: bool) -> tuple[Problem, AccelerationErrors] | None:
    """``(M, e, lower, upper, z_true)`` and the acceleration errors of :func:`wrench_floor_kg`, or None."""
    wrench = [m for m in rows if m.kind == "wrench"]
    if not wrench:
        return None
    A = np.vstack([m.A for m in wrench])
    e = np.concatenate([m.noise_bound for m in wrench])
    offset_box = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
    if np.any(np.abs(offset) > offset_box):
        return None
    da = np.vstack([np.zeros((m.b.size // 6, 6)) if m.acceleration_bound is None else
                    np.asarray(m.acceleration_bound, dtype=float).reshape(-1, 6) for m in wrench])
    prior_lower, prior_upper = robot.payload_prior()
    box = offset_box if trusted else FREED_FACTOR * offset_box
    problem = (np.hstack([A, offset_columns(A.shape[0])]), e, np.concatenate([prior_lower, -box]),
               np.concatenate([prior_upper, box]), np.concatenate([pi_true, offset]))
    return problem, AccelerationErrors(PayloadRegressor(robot).wrench_acceleration_sensitivity(), da)
