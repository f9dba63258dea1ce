"""A Gen3 whose profile names a robot calibration: the planner's cost then models the rows as the
calibrated estimator bounds them."""
import numpy as np
import pytest

from inertial_id.core.calibration import Calibration
from inertial_id.core.calibration.apply import robot_with_calibration
from inertial_id.core.calibration.plateaus import PlateauDetector
from inertial_id.core.robot.model import load_robot


@pytest.fixture(scope="session")
def calibrated_gen3(tmp_path_factory):
    """The Gen3 with a calibration of 0.1 s windows at 1 kHz (the profile's), bounds that differ per
    joint, measured up to 6 N m of torque; every joint's offset free within ±1 N m."""
    robot = load_robot("kinova_gen3")
    n = robot.nv
    windows = {100: {"duration_s": 0.1, "max_error_Nm_s": np.linspace(0.01, 0.04, n),
                     "bound_Nm_s": np.linspace(0.02, 0.08, n)}}
    calibration = Calibration("kinova_gen3", list(robot.joint_names), 1000.0, np.ones(n),
                              np.tile([0.3, 0.5, 0.2], (n, 1)), np.zeros(n), np.ones(n), windows, 2.0,
                              PlateauDetector(np.full(n, 3.0), np.full(n, 5.0), guard_s=0.0),
                              torque_range_Nm=np.full(n, 6.0))
    return robot_with_calibration(robot, calibration, tmp_path_factory.mktemp("calibration") / "gen3.yaml")
