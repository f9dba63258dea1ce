"""The sound floor (core/estimators/sound_floor.py): verified witnesses, robot-parameter freedom,
the estimators' archived rows, and wrench rows' acceleration errors."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.estimators.bounds import IntervalBounds
from inertial_id.core.estimators.sound_floor import (AccelerationErrors, archived_witnesses_kg, floors_with_one_bound_halved,
                                                     Unexplained, sound_mass_floor_kg)
from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.robot.regressor import PayloadRegressor
from inertial_id.core.signals.acceleration_bound import acceleration_share


def _rows(rng, n_rows=60, n_r=4):
    pi = robot_model.payload_params("dumbbell_5lb")
    A, N = rng.normal(size=(n_rows, 10)), rng.normal(size=(n_rows, n_r))
    return pi, A, N, rng.uniform(0.05, 0.2, n_rows)


def test_floor_is_between_two_verified_witnesses_and_grows_with_the_bounds(rng):
    pi, A, N, e = _rows(rng)
    lower, upper = np.r_[np.zeros(1), np.full(9, -5.0)], np.r_[np.full(1, 10.0), np.full(9, 5.0)]
    floor = sound_mass_floor_kg(A, e, lower, upper, pi)
    assert 0.0 < floor < 10.0
    assert sound_mass_floor_kg(A, 2.0 * e, lower, upper, pi) > floor
    with pytest.raises(ValueError, match="inside the box"):
        sound_mass_floor_kg(A, e, lower, upper, np.r_[-1.0, pi[1:]])


def test_the_recorded_rows_floor_is_below_their_sound_box_and_errors_can_cut_it_below_the_error_free_one(rng):
    """Errors near their bounds shift the rows' bands apart: the payloads that explain the recording
    are fewer than those that explain its error-free realization. Both witnesses explain what was
    recorded, so the LP box over the recorded rows (sound, and looser: no physical consistency)
    holds them; a truth that does not explain the recording (an error beyond its bound) gives none."""
    pi, A, N, e = _rows(rng)
    lower, upper = np.r_[np.zeros(1), np.full(9, -5.0)], np.r_[np.full(1, 10.0), np.full(9, 5.0)]
    b = A @ pi + rng.choice([-0.95, 0.95], e.size) * e
    recorded = sound_mass_floor_kg(A, e, lower, upper, pi, observed=b)
    assert sound_mass_floor_kg(A, e, lower, upper, pi, observed=A @ pi) == sound_mass_floor_kg(A, e, lower, upper, pi)
    assert 0.0 < recorded < 0.5 * sound_mass_floor_kg(A, e, lower, upper, pi)
    bounds = IntervalBounds(lower, upper)
    assert bounds.update(A, b, e).consistent
    assert recorded <= (bounds.upper[0] - bounds.lower[0]) * (1 + 1e-6)
    b[0] = A[0] @ pi + 1.01 * e[0]
    with pytest.raises(Unexplained):
        sound_mass_floor_kg(A, e, lower, upper, pi, observed=b)


def test_robot_parameter_freedom_widens_the_floor(rng):
    """A nuisance box of zero width pins the robot part: the floor can only be smaller."""
    pi, A, N, e = _rows(rng)
    r = rng.uniform(-1, 1, N.shape[1])
    M, z = np.hstack([A, N]), np.r_[pi, r]
    prior_lo, prior_hi = np.r_[0.0, np.full(9, -5.0)], np.r_[10.0, np.full(9, 5.0)]
    free = sound_mass_floor_kg(M, e, np.r_[prior_lo, r - 0.5], np.r_[prior_hi, r + 0.5], z)
    pinned = sound_mass_floor_kg(M, e, np.r_[prior_lo, r], np.r_[prior_hi, r], z)
    assert pinned < free


def test_halving_one_stated_bound_at_a_time_says_which_one_sets_the_floor(rng):
    """A robot parameter confounded with the payload's mass (a column equal to the mass's, as the
    last link's mass is with a payload on it): its box, more than the rows' bounds, sets the floor.
    Halving a bound never widens the floor; a halved box that would leave the truth out gives none."""
    _, A, N, e = _rows(rng)
    # a solid box: its pseudo-inertia is definite (a dumbbell's is singular)
    box = pin.Inertia.FromBox(1.5, 0.1, 0.08, 0.06)
    pi = pin.Inertia(box.mass, np.array([0.01, -0.02, 0.05]), box.inertia).toDynamicParameters()
    N[:, 0] = A[:, 0]
    r = rng.uniform(-1, 1, N.shape[1])
    M, z = np.hstack([A, N]), np.r_[pi, r]
    lower, upper = np.r_[0.0, np.full(9, -5.0), r - 0.2], np.r_[10.0, np.full(9, 5.0), r + 0.2]
    full = sound_mass_floor_kg(M, e, lower, upper, z)
    halved = floors_with_one_bound_halved(M, e, lower, upper, z, {"confounded": np.array([10]),
                                                                  "others": np.arange(11, 14)})
    assert halved["confounded"] < halved["row bounds"] < full, (halved, full)
    assert halved["others"] <= full * (1 + 1e-6)
    lower[10] = r[0] - 0.001                  # the truth beside its lower edge: the halved box leaves it out
    assert floors_with_one_bound_halved(M, e, lower, upper, z, {"confounded": np.array([10])})["confounded"] is None


def test_floor_of_an_estimators_archived_rows_is_below_its_final_lp_box(rng):
    """Rows built from the truth with every error zero: the LP box (a relaxation of physical
    consistency) is at least as wide as the floor, whose witnesses are physical payloads."""
    pi, A, N, e = _rows(rng, n_rows=80)
    r = rng.uniform(-1, 1, N.shape[1])
    prior_lo, prior_hi = np.r_[0.0, np.full(9, -5.0)], np.r_[10.0, np.full(9, 5.0)]
    bounds = IntervalBounds(prior_lo, prior_hi, nuisance_lower=r - 0.5, nuisance_upper=r + 0.5,
                            keep_rows=True, max_rows=20, archive_rows=1000)
    b = A @ pi + N @ r
    for s in (slice(0, 40), slice(40, 80)):
        assert bounds.update(A[s], b[s], e[s], A_nuisance=N[s]).consistent
    assert bounds.final_update().consistent
    lightest, heaviest = archived_witnesses_kg(bounds, prior_lo, prior_hi, pi, r)
    assert params.is_physically_consistent(pi)
    # the witnesses hold the truth between them, and the LP box holds both
    assert lightest <= pi[0] <= heaviest
    tol = 1e-6 * (bounds.upper[0] - bounds.lower[0])
    assert bounds.lower[0] - tol <= lightest < heaviest <= bounds.upper[0] + tol
    assert archived_witnesses_kg(IntervalBounds(prior_lo, prior_hi, archive_rows=10), prior_lo, prior_hi, pi, r[:0]) is None


def _wrench_rows(robot, rng, samples):
    """Wrench rows (6 a sample, payload frame columns) at random states of ``robot``."""
    reg = PayloadRegressor(robot)
    rows = []
    for _ in range(samples):
        q = pin.randomConfiguration(robot.model, robot.position_lower, robot.position_upper)
        rows.append(reg.wrench_rows(q, rng.uniform(-1, 1, robot.nv), rng.uniform(-3, 3, robot.nv), np.zeros(6))[0])
    return np.vstack(rows), reg.wrench_acceleration_sensitivity()


def test_acceleration_errors_explain_what_some_admissible_error_does_and_nothing_beyond(rng):
    robot = robot_model.load_robot("xarm7")
    _, C = _wrench_rows(robot, rng, 1)
    pi = robot_model.payload_params("dumbbell_5lb")
    da = rng.uniform(0.1, 1.0, (20, 6))
    errors = AccelerationErrors(C, da)
    e = np.tile([0.35, 0.35, 0.35, 0.035, 0.035, 0.035], 20)
    G = errors.rows(pi)
    residual = G @ (rng.uniform(-1, 1, da.size) * da.ravel()) + rng.uniform(-0.5, 0.5, e.size) * e
    assert errors.explain(residual, e, pi)
    reach = np.abs(G) @ da.ravel()
    residual[7] = e[7] + reach[7] + 0.01          # no admissible error reaches that far on row 7
    assert not errors.explain(residual, e, pi)
    assert errors.halved().bound == pytest.approx(0.5 * da)


def test_acceleration_errors_widen_the_wrench_floor_which_stays_inside_a_sound_box(rng):
    """Error-free wrench rows: with each sample's acceleration error an unknown within its bound the
    floor is wider than with the acceleration exact, and both witnesses still lie in the box of the
    estimator's rule (each row's bound raised by the error's largest share over the prior box)."""
    robot = robot_model.load_robot("xarm7")
    A, C = _wrench_rows(robot, rng, 40)
    box = pin.Inertia.FromBox(1.5, 0.1, 0.08, 0.06)
    pi = pin.Inertia(box.mass, np.array([0.01, -0.02, 0.05]), box.inertia).toDynamicParameters()
    lower, upper = robot.payload_prior()
    e = np.tile([0.35, 0.35, 0.35, 0.035, 0.035, 0.035], 40)
    da = np.tile([0.3, 0.3, 0.3, 1.0, 1.0, 1.0], (40, 1))
    exact = sound_mass_floor_kg(A, e, lower, upper, pi)
    floor = sound_mass_floor_kg(A, e, lower, upper, pi, AccelerationErrors(C, da))
    assert exact < floor
    bounds = IntervalBounds(lower, upper)
    assert bounds.update(A, A @ pi, e + acceleration_share(C, lower, upper, da)).consistent
    assert floor <= (bounds.upper[0] - bounds.lower[0]) * (1 + 1e-6)
