"""Regressors x parameters reproduce RNEA / Newton-Euler at random states (to 1e-9)."""
import numpy as np
import pinocchio as pin
import pytest

from conftest import random_params
from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import regressor


def random_state(robot, rng):
    n = robot.nv
    q = rng.uniform(robot.position_lower.clip(-3, 3), robot.position_upper.clip(-3, 3))
    return q, rng.normal(size=n), rng.normal(size=n)


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7"])
def test_whole_robot_regressor_with_friction_matches_rnea(name, rng):
    robot = robot_model.load_robot(name)
    model, data = robot.model, robot.model.createData()
    pis = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    phi_f = rng.uniform(0.0, 1.0, size=4 * robot.nv)
    assert model.armature.min() > 0                 # the profiles declare rotor inertia
    phi_f_total = phi_f.copy()
    phi_f_total[2::4] += model.armature             # pinocchio's RNEA adds armature * qdd
    for _ in range(20):
        q, v, a = random_state(robot, rng)
        Y = np.hstack([regressor.joint_torque_regressor(model, data, q, v, a), regressor.friction_regressor(v, a)])
        tau = pin.rnea(model, data, q, v, a) + regressor.friction_torque(phi_f, v, a)
        np.testing.assert_allclose(Y @ np.r_[pis, phi_f_total], tau, atol=1e-9)


def test_friction_columns_follow_the_convention():
    Y = regressor.friction_regressor([2.0, -1.0], [3.0, 4.0])
    np.testing.assert_array_equal(Y[0, :4], [1.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(Y[1, 4:], [-1.0, -1.0, 4.0, 1.0])
    assert not Y[0, 4:].any() and not Y[1, :4].any()


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7"])
def test_payload_torque_rows_are_rnea_difference(name, rng):
    robot = robot_model.load_robot(name)
    core = regressor.PayloadRegressor(robot)
    for _ in range(20):
        pi_P = random_params(rng)
        with_payload = robot_model.model_with_payload(robot, pi_P)
        q, v, a = random_state(robot, rng)
        tau = pin.rnea(with_payload, with_payload.createData(), q, v, a)
        Y, b = core.torque_rows(q, v, a, tau)
        np.testing.assert_allclose(Y @ pi_P, b, atol=1e-9)


def newton_euler_wrench(pi_S, R_WS, v_S, w_S, a_S, alpha_S, g_W):
    """Wrench on a rigid body in the sensor frame S, about S's origin, from Newton-Euler."""
    from inertial_id.core.robot import params
    m, c, I_C = params.com_from_params(pi_S)
    a_c = a_S + np.cross(alpha_S, c) + np.cross(w_S, np.cross(w_S, c))   # classical COM acceleration
    f = m * (a_c - R_WS.T @ g_W)
    n_c = I_C @ alpha_S + np.cross(w_S, I_C @ w_S)
    return np.r_[f, n_c + np.cross(c, f)]


def test_wrench_rows_match_newton_euler(rng):
    robot = robot_model.load_robot("xarm7")
    core = regressor.PayloadRegressor(robot)
    model, data = robot.model, robot.model.createData()
    for _ in range(20):
        pi_P = random_params(rng)
        q, v, a = random_state(robot, rng)
        A, _ = core.wrench_rows(q, v, a, np.zeros(6))
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        fid = robot.ft_frame_id
        vel = pin.getFrameVelocity(model, data, fid, pin.LOCAL)
        acc = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL)
        alpha = pin.getFrameAcceleration(model, data, fid, pin.LOCAL).angular
        expected = newton_euler_wrench(pi_P, data.oMf[fid].rotation, vel.linear, vel.angular, acc.linear,
                                       alpha, model.gravity.linear)
        np.testing.assert_allclose(A @ pi_P, expected, atol=1e-9)
        g_S = data.oMf[fid].rotation.T @ model.gravity.linear
        np.testing.assert_allclose(regressor.wrench_regressor(acc.linear - g_S, vel.angular, alpha) @ pi_P,
                                   expected, atol=1e-9)


def test_sensor_kinematics_are_those_of_the_wrench_rows(rng):
    """PMD and other gravity-separating estimators rebuild the wrench rows from these kinematics."""
    robot = robot_model.load_robot("xarm7")
    core = regressor.PayloadRegressor(robot)
    for _ in range(10):
        q, v, a = random_state(robot, rng)
        A, _ = core.wrench_rows(q, v, a, np.zeros(6))
        k = core.sensor_kinematics()
        d = robot.model.createData()
        pin.framesForwardKinematics(robot.model, d, q)
        g_S = d.oMf[robot.ft_frame_id].rotation.T @ robot.model.gravity.linear
        np.testing.assert_allclose(k[9:], g_S, atol=1e-12)
        np.testing.assert_allclose(regressor.wrench_regressor(k[:3] - k[9:], k[3:6], k[6:9]), A, atol=1e-9)
