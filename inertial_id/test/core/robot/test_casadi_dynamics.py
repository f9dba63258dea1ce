"""The CasADi graphs of inverse dynamics and of the joint-torque regressor agree with pinocchio to
1e-10 on random states of every shipped arm (revolute joints about aligned and unaligned axes,
prismatic joints)."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot.casadi_dynamics import CasadiDynamics
from inertial_id.core.robot.model import load_robot, model_with_payload, payload_params

ROBOTS = ("kinova_gen3", "xarm7", "digit_arm")


def random_states(model, rng, count=25):
    lo, hi = np.maximum(model.lowerPositionLimit, -np.pi), np.minimum(model.upperPositionLimit, np.pi)
    for _ in range(count):
        yield rng.uniform(lo, hi), rng.uniform(-3.0, 3.0, model.nv), rng.uniform(-10.0, 10.0, model.nv)


@pytest.mark.parametrize("name", ROBOTS)
def test_rnea_and_regressor_match_pinocchio(name):
    robot = load_robot(name)
    model = model_with_payload(robot, payload_params("dumbbell_5lb"))   # a payload: no zero-mass body left
    data = model.createData()
    rnea, regressor = CasadiDynamics(model).functions()
    rng = np.random.default_rng(47)
    for q, v, a in random_states(model, rng):
        tau = pin.rnea(model, data, q, v, a)
        assert np.abs(tau).max() > 1.0                 # a state that exercises the dynamics
        np.testing.assert_allclose(np.asarray(rnea(q, v, a)).ravel(), tau, rtol=0, atol=1e-10)
        Y = pin.computeJointTorqueRegressor(model, data, q, v, a)
        np.testing.assert_allclose(np.asarray(regressor(q, v, a)), Y, rtol=0, atol=1e-10)


def test_other_axes_and_prismatic_joints():
    """Digit's arm turns one joint about -z; a synthetic chain adds an oblique axis and a prismatic joint."""
    assert any(axis[2] < 0 for _, axis in CasadiDynamics(load_robot("digit_arm").model).kinds)
    rng = np.random.default_rng(3)
    model = pin.Model()
    joints = (pin.JointModelRevoluteUnaligned(0.6, -0.48, 0.64), pin.JointModelPY(), pin.JointModelRX())
    parent = 0
    for k, joint in enumerate(joints):
        placement = pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        parent = model.addJoint(parent, joint, placement, f"j{k}")
        model.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    model.armature = rng.uniform(0.0, 0.2, model.nv)
    data = model.createData()
    rnea, regressor = CasadiDynamics(model).functions()
    for q, v, a in random_states(model, rng):
        np.testing.assert_allclose(np.asarray(rnea(q, v, a)).ravel(), pin.rnea(model, data, q, v, a), rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.asarray(regressor(q, v, a)), pin.computeJointTorqueRegressor(model, data, q, v, a),
                                   rtol=0, atol=1e-10)


def test_unsupported_joint_is_refused():
    model = pin.Model()
    model.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    with pytest.raises(ValueError, match="one-coordinate"):
        CasadiDynamics(model)
