"""The sound floor of one run (:mod:`.sound_floor`) over the rows an estimator folded in: the wrench
rows with the F/T offset's columns inside its stated box and each sample's acceleration error within
the bound the rows carry, else the joint-torque or momentum rows the guaranteed estimator archived for
its final LP with the robot's box as the nuisance box.

Used where a run's box is scored against what its stated bounds allow at best: ``demo`` (the nodes'
rows, received beside the estimator) and ``study sim``."""
from __future__ import annotations

import numpy as np

from ..robot.regressor import PayloadRegressor
from ..signals.sensors import NoiseModel
from .guaranteed import GuaranteedEstimator
from .payload import offset_columns
from .sound_floor import AccelerationErrors, Problem, floors_with_one_bound_halved, sound_mass_floor_kg


def run_floor_kg(robot, session_estimator, rows, pi_true, wrench_offset) -> float | None:
    """The run's sound mass floor (kg): over its wrench rows (:func:`wrench_floor_kg`) when it has
    any, else over the rows the guaranteed estimator inside ``session_estimator`` (a session's
    estimator, ``RowIntake.estimator``) kept; None for another method."""
    if any(m.kind == "wrench" for m in rows):
        return wrench_floor_kg(robot, rows, pi_true, wrench_offset)
    inner = session_estimator.estimator
    return inner.sound_floor_kg(pi_true) if isinstance(inner, GuaranteedEstimator) else None


def run_floors_with_one_bound_halved(robot, session_estimator, rows, pi_true, wrench_offset) -> dict:
    """:func:`run_floor_kg` with one stated bound halved at a time (which one sets the floor:
    :func:`~.sound_floor.floors_with_one_bound_halved`): the rows' bounds, then the F/T offset's box
    (wrench rows) or each group of the robot's free parameters; {} where there is no floor."""
    if any(m.kind == "wrench" for m in rows):
        problem = _wrench_problem(robot, rows, pi_true, wrench_offset)
        return {} if problem is None else \
            floors_with_one_bound_halved(*problem[0], {"F/T offset": np.arange(10, 16)}, problem[1])
    inner = session_estimator.estimator
    return inner.floors_with_one_bound_halved(pi_true) if isinstance(inner, GuaranteedEstimator) else {}


def wrench_floor_kg(robot, rows, pi_true, offset) -> float | None:
    """:func:`~.sound_floor.sound_mass_floor_kg` over the wrench rows of ``rows`` (RowMessage), each
    with the offset's columns (the offset inside the profile's stated box) and its sample's
    acceleration error within the bound the message carries (none: taken as exact), the truth the
    payload ``pi_true`` and the offset ``offset`` (6,); None without wrench rows, or with the offset
    beyond its stated box (no floor within the stated bounds then)."""
    problem = _wrench_problem(robot, rows, pi_true, offset)
    return None if problem is None else sound_mass_floor_kg(*problem[0], problem[1])


def _wrench_problem(robot, rows, pi_true, offset) -> tuple[Problem, AccelerationErrors] | None:
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
    problem = (np.hstack([A, offset_columns(A.shape[0])]), e, np.concatenate([prior_lower, -offset_box]),
               np.concatenate([prior_upper, offset_box]), np.concatenate([pi_true, offset]))
    return problem, AccelerationErrors(PayloadRegressor(robot).wrench_acceleration_sensitivity(), da)
