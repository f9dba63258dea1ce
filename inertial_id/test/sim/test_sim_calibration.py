"""The demo's calibration of a simulated arm on the pinocchio engine: the profile copy names it, its
window bounds are below what the profile states for the same windows, and a run with a payload
(another trajectory and noise) calibrated with it keeps the truth inside a guaranteed box narrower
than the prior."""
import numpy as np
import pytest

from inertial_id.core.calibration import calibration_of, momentum_window
from inertial_id.core.calibration.apply import run_pipeline
from inertial_id.core.robot.model import load_robot, payload_params
from inertial_id.core.signals.momentum import torque_error_bound
from inertial_id.sim.calibration import _pinocchio_run, calibrated_profile
from inertial_id.sim.harness import Case

pytestmark = pytest.mark.slow          # two 20 s payload-free runs simulated, then a third with a payload


def test_pinocchio_engine_calibration_is_narrower_than_the_stated_bound_and_keeps_the_truth(tmp_path):
    robot = load_robot(calibrated_profile("kinova_gen3", tmp_path, "pinocchio"))
    calibration = calibration_of(robot)
    assert calibration is not None and calibration.path.startswith(str(tmp_path))
    window = calibration.window(momentum_window(robot, calibration))
    noise = robot.spec.noise.joint_torque
    # what the profile states for a window of the same length at the smallest torque
    stated_Nm_s = window["duration_s"] * torque_error_bound(0.0, noise.relative, noise.absolute_Nm)
    assert np.all(window["bound_Nm_s"] < stated_Nm_s)
    truth = payload_params("dumbbell_5lb")
    run = _pinocchio_run(robot, Case("gen3-payload", robot="kinova_gen3", mass_kg=float(truth[0]), com_m=tuple(truth[1:4] / truth[0]),
                                     principal_kgm2=(0.004, 0.004, 0.002), principal_rpy_rad=(0.0, 0.0, 0.0),
                                     duration_s=10.0, trajectory_seed=7, noise_seed=8))
    _, result, _ = run_pipeline(robot, run)
    assert result.bounds_guaranteed and result.data_consistent, result.message
    lo, hi = robot.payload_prior()
    assert result.lower[0] <= truth[0] <= result.upper[0]
    assert result.upper[0] - result.lower[0] < 0.5 * (hi[0] - lo[0])
