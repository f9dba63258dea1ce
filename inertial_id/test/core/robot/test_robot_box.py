"""One robot-parameter box: for every robot profile with a planner, the certifier's robot box (link
parameters and joint friction) contains the box the estimator keeps the robot's parameters in (the
certificate covers every robot the estimator allows)."""
import numpy as np
import pytest

from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.robot.model import available_profiles, load_profile, load_robot
from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.robot.params import robot_parameters
from inertial_id.core.robot.robot_box import robot_parameter_box

PLANNED = [name for name in available_profiles() if load_profile(name)["planner"]]


def test_the_arms_have_planners():
    assert {"kinova_gen3", "xarm7"} <= set(PLANNED)


def estimator_box(robot):
    """The robot box of the profile's estimator, or the one it would take with momentum rows."""
    est = getattr(make_estimator(robot, robot.spec.identification.method), "estimator", None)
    if hasattr(est, "robot_lower"):
        return est.robot_lower, est.robot_upper
    return robot_parameter_box(robot.model, robot.spec.identification.robot_relative_error)[1:]


@pytest.mark.parametrize("name", PLANNED)
def test_certifier_box_contains_the_estimators(name):
    robot = load_robot(name)
    ctx = CertifierSettings.from_profile(robot).context(robot)
    lower, upper = estimator_box(robot)
    nominal = robot_parameters(robot.model)        # links, then friction [0, 0, armature, 0]
    np.testing.assert_array_equal(ctx.theta_nominal.ravel(), nominal[:ctx.theta_nominal.size])
    radius = np.concatenate([ctx.theta_radius.ravel(), ctx.friction_radius.ravel()])
    narrower = np.flatnonzero((nominal - radius > lower) | (nominal + radius < upper))
    assert narrower.size == 0, f"{name}: certifier box narrower on parameters {narrower.tolist()}"
    assert np.all(ctx.friction_radius[:, [0, 1, 3]] > 0)     # unknown friction is covered


def test_the_check_can_fail():
    """A certifier box built without the estimator's floors (the former construction) is caught."""
    robot = load_robot("kinova_gen3")
    settings = CertifierSettings.from_profile(robot)
    theta = settings.context(robot).theta_nominal
    radius = np.maximum(settings.robot_relative_error * np.abs(theta), settings.robot_floor[None, :])
    _, lower, upper = robot_parameter_box(robot.model, settings.robot_relative_error)
    links = theta.size
    narrower = ((theta - radius).ravel() > lower[:links]) | ((theta + radius).ravel() < upper[:links])
    assert narrower.sum() > 0
