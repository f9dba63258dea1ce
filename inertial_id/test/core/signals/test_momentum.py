"""Momentum regressors W_m, W_c and the windowed rows of seed 003 (no accelerations)."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import params
from inertial_id.core.robot.model import load_robot, payload_params
from inertial_id.core.robot.params import robot_parameters
from inertial_id.core.signals.momentum import MomentumRegressor, MomentumWindows, robot_parameter_names, torque_error_bound
from inertial_id.core.robot.regressor import friction_torque
from inertial_id.core.signals.sensors import NoiseModel
from inertial_id.core.sim import Simulator
from inertial_id.core.trajectory import fourier_excitation


@pytest.fixture(scope="module")
def robot():
    return load_robot("kinova_gen3")


def test_regressors_match_pinocchio_momentum_coriolis_gravity_and_friction(robot, rng):
    model = robot.model
    data = model.createData()
    reg = MomentumRegressor(model)
    theta = robot_parameters(model)
    n_body = 10 * model.nv
    assert len(robot_parameter_names(model)) == theta.size == reg.n_cols
    friction = rng.uniform(0.0, 1.0, (model.nv, 4))
    friction[:, 2] = model.armature                 # Ia is the armature the model already has
    theta[n_body:] = friction.ravel()
    for _ in range(5):
        q, v = rng.uniform(-2.0, 2.0, model.nv), rng.normal(size=model.nv)
        M = pin.crba(model, data, q)                # includes the armature
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(reg.momentum(q, v) @ theta, M @ v, atol=1e-12)
        C = pin.computeCoriolisMatrix(model, data, q, v)
        g = pin.computeGeneralizedGravity(model, data, q)
        F = friction_torque(friction.ravel(), v, np.zeros(model.nv))
        expected = C.T @ v - g - F
        np.testing.assert_allclose(reg.coriolis_gravity(q, v) @ theta, expected, atol=1e-10)
        # the identity d/dt p = tau + W_c theta is not the torque regressor with C (not C^T)
        assert np.abs(expected - (C @ v - g - F)).max() > 1e-3


def _window_residual(robot, sign_erratum=False):
    """Rows from a noise-free simulation at 4 kHz against the true parameters."""
    traj = fourier_excitation(robot.spec.sim.home, [0.2] * robot.nv, 2.0, 2, 2.0, 1000.0, seed=3,
                              ramp_s=0.4)
    pi = payload_params("dumbbell_6lb")
    sim = Simulator(robot, pi, step_hz=4000.0, noise=NoiseModel())
    sim.command(traj)
    windows = MomentumWindows(robot, 400, 0.0, 0.0, 0.0)
    if sign_erratum:   # the printed "+ sum W_c dt"
        coriolis = windows.regressor.coriolis_gravity_sum
        windows.regressor.coriolis_gravity_sum = lambda states, w: -coriolis(states, w)
    while sim.t < 2.0:
        sim.step()
        m = sim.measure()
        windows.add_sample(m.t, m.q, m.qd, m.tau)
    rows = windows.take_rows()
    theta_r = robot_parameters(robot.model)
    return rows, rows.Y @ pi + rows.Y_r @ theta_r - rows.U


@pytest.mark.slow
def test_window_rows_hold_to_integration_error(robot):
    rows, residual = _window_residual(robot)
    assert rows.rows == 7 * 19 and rows.samples == 19 * 400
    h_dt = 400 / 4000.0
    # the forward-Euler error of a 0.1 s window uses at most a quarter of the model-error bound the
    # guaranteed rows assume (profile noise.model_error_Nm, an equivalent torque on every sample),
    # while the integrated torque is of the order of N m s
    assert np.abs(residual).max() < 0.25 * robot.spec.noise.model_error_Nm * h_dt
    assert np.abs(rows.U).max() > 1.0
    _, wrong = _window_residual(robot, sign_erratum=True)
    assert np.abs(wrong).max() > 100 * np.abs(residual).max()


def test_rows_do_not_depend_on_how_the_stream_is_batched(robot, rng):
    n = 1000
    t = np.cumsum(rng.uniform(2e-4, 3e-4, n))
    q, qd, tau = (rng.uniform(-1.0, 1.0, (n, robot.nv)) for _ in range(3))
    one_by_one, batched = (MomentumWindows(robot, 37, 0.02, 0.05, 0.01) for _ in range(2))
    for k in range(n):
        one_by_one.add_sample(t[k], q[k], qd[k], tau[k])
    cuts = [0, *np.sort(rng.choice(np.arange(1, n), 12, replace=False)), n]
    for a, b in zip(cuts[:-1], cuts[1:]):
        batched.add_samples(t[a:b], q[a:b], qd[a:b], tau[a:b])
    A, B = one_by_one.take_rows(), batched.take_rows()
    assert A.rows == B.rows == robot.nv * ((n - 1) // 37) and A.samples == B.samples
    # to the last bit: the guaranteed box amplifies a rounding difference in the rows (a replay whose
    # batches fell differently gave a box 1e-4 relative away from offline)
    for x, y in ((A.Y, B.Y), (A.Y_r, B.Y_r), (A.U, B.U), (A.noise_bound, B.noise_bound)):
        np.testing.assert_array_equal(x, y)


def test_payload_columns_are_the_end_body_columns_in_the_payload_frame(robot):
    rows, _ = _window_residual(robot)
    frame = robot.model.frames[robot.payload_frame_id]
    cols = slice(10 * (frame.parentJoint - 1), 10 * frame.parentJoint)
    np.testing.assert_allclose(rows.Y, rows.Y_r[:, cols] @ params.transform_matrix(frame.placement), atol=1e-12)


def test_torque_error_bound_from_the_measured_value_covers_the_error(rng):
    tau_true = rng.uniform(-40, 40, 10000)
    bound_true = 0.025 * np.abs(tau_true) + 0.05
    tau_meas = tau_true + rng.choice([-1.0, 1.0], tau_true.size) * bound_true   # errors at the bound
    assert np.all(np.abs(tau_meas - tau_true) <= torque_error_bound(tau_meas, 0.025, 0.05) + 1e-12)
    # and is not loose: at most (1 + r) / (1 - r) times the bound at the true torque
    assert np.all(torque_error_bound(tau_meas, 0.025, 0.05) <= 1.025 / 0.975 * bound_true + 1e-12)


def test_calibrated_rows_add_the_relative_error_beyond_the_calibrated_torque_range(robot):
    """A calibrated bound holds up to the torque its runs reached; each N m beyond adds the profile's
    relative error, integrated over the window (a heavier payload's rows broke the bare bound)."""
    window, dt, relative = 10, 1e-3, 0.025
    calibrated = np.full(robot.nv, 1e-3)
    torque_range = np.full(robot.nv, 5.0)
    tau = np.array([3.0, -8.0, 5.0, 12.0, -4.0, 0.0, 6.5])
    windows = MomentumWindows(robot, window, relative, 0.05, 0.02, window_bound_Nm_s=calibrated,
                              window_duration_s=window * dt, torque_range_Nm=torque_range)
    n = window + 1
    z = np.zeros((n, robot.nv))
    windows.add_samples(np.arange(n) * dt, z, z, np.tile(tau, (n, 1)))
    rows = windows.take_rows()
    beyond = relative * np.maximum(np.abs(tau) - torque_range, 0.0) * window * dt
    np.testing.assert_allclose(rows.noise_bound, calibrated + beyond, rtol=1e-12)
    assert beyond[1] > 0 and beyond[0] == 0


def test_the_peak_torque_counts_only_the_windows_that_became_rows(robot):
    """What a calibration measured up to: an excluded window's torque was not measured."""
    from inertial_id.core.calibration.plateaus import PlateauDetector
    window, dt = 5, 1e-3
    detector = PlateauDetector(np.full(robot.nv, np.inf), np.full(robot.nv, 1.0), guard_s=0.0)
    n = 3 * window + 1
    q, qd, tau = np.zeros((n, robot.nv)), np.zeros((n, robot.nv)), np.full((n, robot.nv), 2.0)
    qd[window + 2, 0] = 5.0                 # beyond the support: the second window is excluded
    tau[window + 1:2 * window, 3] = -40.0   # the torque it carried
    windows = MomentumWindows(robot, window, 0.0, 0.0, 0.0, exclude=detector)
    windows.add_samples(np.arange(n) * dt, q, qd, tau)
    assert len(windows.take_windows()) == 2 and windows.excluded_windows == 1
    np.testing.assert_array_equal(windows.peak_tau_Nm, np.full(robot.nv, 2.0))


def test_samples_must_move_forward_in_time(robot):
    windows = MomentumWindows(robot, 4, 0.0, 0.0, 0.0)
    z = np.zeros(robot.nv)
    windows.add_sample(0.0, z, z, z)
    with pytest.raises(ValueError):
        windows.add_sample(0.0, z, z, z)
