"""Which estimator (and which rows) each method gets, and the guarantee it may claim."""
import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators.factory import MomentumEstimator, RowsEstimator, make_estimator


@pytest.mark.parametrize("robot, method, cls, kinds", [
    ("kinova_gen3", "guaranteed", MomentumEstimator, ("momentum",)),
    ("kinova_gen3", "log_cholesky", MomentumEstimator, ("momentum",)),
    ("kinova_gen3", "lmi", RowsEstimator, ("joint_torque", "wrench")),
    ("xarm7", "guaranteed", RowsEstimator, ("wrench",)),
    ("xarm7", "pmd", RowsEstimator, ("wrench",)),
    ("xarm7", "rls", RowsEstimator, ("joint_torque", "wrench")),
])
def test_methods_map_to_estimators_and_row_kinds(robot, method, cls, kinds):
    est = make_estimator(robot_model.load_robot(robot), method)
    assert isinstance(est, cls) and tuple(est.kinds) == kinds
    assert est.column_names[:10] == [f"payload.{n}" for n in ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy",
                                                               "Ixz", "Iyz", "Izz")]


@pytest.mark.parametrize("robot, method, match", [
    ("xarm7", "log_cholesky", "joint torque sensing"),
    ("kinova_gen3", "pmd", "F/T sensor"),
    ("kinova_gen3", "magic", "unknown estimation method"),
])
def test_methods_a_profile_cannot_serve_are_refused(robot, method, match):
    with pytest.raises(ValueError, match=match):
        make_estimator(robot_model.load_robot(robot), method)


def test_joint_torque_rows_never_make_the_box_guaranteed(rng):
    """They rely on the nominal robot being exact; wrench rows do not involve the robot model."""
    est = make_estimator(robot_model.load_robot("xarm7"), "lmi")
    x = np.r_[2.0, 0.02, 0.0, 0.2, 0.03, 0.0, 0.04, 0.0, 0.0, 0.02]
    A = rng.normal(size=(60, 10))
    b = A @ x
    est.add("wrench", A, b, np.full(60, 1e-3), np.full(60, 1e-3), 10, acceleration_bound=np.zeros((10, 6)))
    est.update_bounds()
    assert est.result().bounds_guaranteed
    est.add("joint_torque", A, b, np.full(60, 1e-3), np.full(60, 1e-3), 10)
    est.update_bounds()
    r = est.result()
    assert not r.bounds_guaranteed and r.data_consistent


def test_wrench_rows_without_an_acceleration_bound_are_not_guaranteed(rng):
    """Their acceleration was differentiated: without a bound on its error the box rests on nothing."""
    est = make_estimator(robot_model.load_robot("xarm7"), "guaranteed")
    x = np.r_[2.0, 0.02, 0.0, 0.2, 0.03, 0.0, 0.04, 0.0, 0.0, 0.02]
    A = rng.normal(size=(60, 10))
    est.add("wrench", A, A @ x, np.full(60, 1e-3), np.full(60, 1e-3), 10)
    est.update_bounds()
    r = est.result()
    assert not r.bounds_guaranteed and "acceleration error bound" in r.message


def test_an_acceleration_bound_widens_each_wrench_row_by_its_worst_payload_of_the_box(rng):
    """The share bounds the change of every row for every payload of the current box and every
    acceleration error within the bound (sampled), and shrinks with the box."""
    robot = robot_model.load_robot("xarm7")
    est = make_estimator(robot, "guaranteed").estimator
    C = est.acceleration_sensitivity
    da = rng.uniform(0.0, 0.5, (3, 6))
    share = est.acceleration_share(da).reshape(3, 6)
    lo, hi = est.bounds.lower, est.bounds.upper
    pis = rng.uniform(lo, hi, size=(2000, 10))
    for s in range(3):
        errors = rng.uniform(-1.0, 1.0, size=(2000, 6)) * da[s]
        change = np.einsum("kl,lip,kp->ki", errors, C, pis)
        assert np.all(np.abs(change) <= share[s] * (1 + 1e-12))
        assert np.max(np.abs(change)) > 0.3 * np.max(share[s])       # not a vacuous bound
    est.bounds.lower, est.bounds.upper = lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo)
    assert np.all(est.acceleration_share(da) <= share.ravel())
