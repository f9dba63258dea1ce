"""Which estimator (and which rows) each method gets, and the guarantee it may claim."""
import numpy as np
import pytest

from inertial_id.core import model as robot_model
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
    est.add("wrench", A, b, np.full(60, 1e-3), np.full(60, 1e-3), 10)
    est.update_bounds()
    assert est.result().bounds_guaranteed
    est.add("joint_torque", A, b, np.full(60, 1e-3), np.full(60, 1e-3), 10)
    est.update_bounds()
    r = est.result()
    assert not r.bounds_guaranteed and r.data_consistent
