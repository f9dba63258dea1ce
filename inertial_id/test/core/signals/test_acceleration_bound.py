"""The differentiated acceleration's error bound of wrench rows (core.acceleration_bound): it holds for
every signal its assumptions admit, it grows with a step the window shows, reversals are refused, its
share in a row bounded as an affine function of the payload holds for every payload of the box, and
an xArm7 with Coulomb friction and the worst sensor bias the stated bounds allow keeps the truth in
a box labelled guaranteed."""
import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.robot.regressor import PayloadRegressor
from inertial_id.core.signals.acceleration_bound import (HELD_VELOCITY_RAD_S, acceleration_error_bound,
                                                        acceleration_share, acceleration_share_affine, reversal_joints)
from inertial_id.core.offline import RowIntake, rows_from_stream
from inertial_id.core.signals.sensors import NoiseModel, SensorNoise
from inertial_id.core.sim import Simulator
from inertial_id.core.trajectory import excitation_from_profile


def signal(rng, n, jerk, step):
    """Per joint: ``a(s) = a0 + jerk/w sin(w s + phi)`` (|jerk| at most ``jerk``) plus a step of
    size ``step`` at ``u``; returns ``a`` and its exact integral ``v`` as functions of time."""
    a0, w, phi, v0 = rng.uniform(-3, 3, n), rng.uniform(1, 200, n), rng.uniform(0, 2 * np.pi, n), rng.uniform(-1, 1, n)
    u = rng.uniform(-0.012, 0.012, n)

    def a(s):
        return a0 + jerk / w * np.sin(w * s + phi) + step * (s >= u)

    def v(s):
        return v0 + a0 * s - jerk / w**2 * (np.cos(w * s + phi) - np.cos(phi)) + step * np.maximum(s - u, 0.0)
    return a, v


@pytest.mark.parametrize("steps", [(0.01, 0.01), (0.008, 0.012), (0.001, 0.01)])
def test_the_bound_holds_for_every_signal_the_assumptions_admit(rng, steps):
    """Lipschitz acceleration (jerk <= L) plus one step anywhere in the window, velocities within
    eps: the central difference stays within the bound, on equal and unequal stamps."""
    n, L, eps = 7, 30.0, 1e-3
    t = np.array([-steps[0], 0.0, steps[1]])
    worst = 0.0
    for _ in range(300):
        step = rng.choice([0.0, 1.0]) * rng.uniform(-20, 20, n)
        a, v = signal(rng, n, L, step)
        vs = np.stack([v(s) for s in t]) + rng.uniform(-eps, eps, (3, n))
        a_est = (vs[2] - vs[0]) / (t[2] - t[0])
        bound = acceleration_error_bound(t, vs, eps, np.full(n, L))
        ratio = np.abs(a_est - a(0.0)) / bound
        assert np.all(ratio <= 1.0)
        worst = max(worst, ratio.max())
    assert worst > 0.3          # the bound is not vacuous on these signals


def test_a_step_in_the_window_raises_the_bound_by_what_it_shows():
    t = np.array([-0.01, 0.0, 0.01])
    smooth = acceleration_error_bound(t, np.array([[0.5], [0.51], [0.52]]), 0.0, [10.0])
    stepped = acceleration_error_bound(t, np.array([[0.5], [0.51], [0.57]]), 0.0, [10.0])
    assert stepped[0] == pytest.approx(smooth[0] + 0.5 * 5.0)         # D grew by 5 rad/s^2
    assert smooth[0] == pytest.approx(0.5 * 0.0 + 10.0 * 0.01 / 2 + 10.0 * 0.01 / 2)


def test_reversals_are_refused_and_held_or_clearly_moving_joints_kept():
    t = np.array([0.0, 0.01, 0.02])
    a_max = np.full(5, 10.0)
    v = np.array([[0.30, -0.4, 0.02, 0.05, 2e-4],       # joint 1 moving; 2 moving; 3 crosses zero;
                  [0.31, -0.4, -0.01, 0.04, -3e-4],     # 4 may touch zero and come back within a step
                  [0.32, -0.4, -0.04, 0.05, 1e-4]])     # (0.05 + 0.04 <= 10 * 0.01); 5 held still
    assert reversal_joints(t, v, 0.0, a_max).tolist() == [2, 3]
    assert HELD_VELOCITY_RAD_S >= 3e-4
    # a velocity error the size of the speed leaves the sign unknown, and no joint provably held
    assert reversal_joints(t, v, 0.36, a_max).tolist() == [0, 1, 2, 3, 4]


def xarm_samples(robot, seed: int, friction_Nm: float, bias_sign: float, duration_s: float = 8.0):
    """``(truth, t, q, qd, wrench)``: the simulated xArm7 with a 1.5 kg payload (COM offset, tilted
    principal axes), Coulomb friction on every joint and a constant F/T bias at the stated bound,
    sampled at the profile's rate."""
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    truth = params.params_from_com(1.5, np.array([0.02, -0.03, 0.09]), axes @ np.diag([0.004, 0.007, 0.003]) @ axes.T)
    stated = NoiseModel.from_profile(robot.spec)
    err = robot.spec.noise
    bound = stated.bound_sigmas * stated.wrench_sigma() + np.r_[[err.model_error_N] * 3, [err.model_error_Nm] * 3]
    sp = robot.spec.sim
    sim = Simulator(robot, truth, float(sp.step_hz), sp.kp, sp.kd, sp.ki,
                    SensorNoise(wrench_offset=tuple(0.999 * bias_sign * bound)), seed,
                    friction=np.tile([friction_Nm, 0.0, 0.0, 0.0], (robot.nv, 1)))
    traj, report = excitation_from_profile(robot, duration_s)
    assert report.ok
    sim.command(traj)
    every = int(round(sp.step_hz / robot.sensing.joint_states_hz))
    samples = []
    for k in range(int((duration_s + 0.5) * sp.step_hz)):
        sim.step()
        if k % every == 0:
            samples.append(sim.measure())
    return (truth, *(np.array([getattr(m, f) for m in samples]) for f in ("t", "q", "qd", "wrench")))


def xarm_run(robot, seed: int, friction_Nm: float, bias_sign: float, duration_s: float = 8.0):
    """:func:`xarm_samples` through the offline path."""
    truth, t, q, qd, w = xarm_samples(robot, seed, friction_Nm, bias_sign, duration_s)
    intake = RowIntake(robot, "guaranteed")
    counts: dict = {}
    for msg in rows_from_stream(robot, ("wrench",), t, q, qd, None, (t, w), counts=counts):
        intake.add(msg)
    return truth, intake.finish(), counts


@pytest.mark.parametrize("bias_sign", [1.0, -1.0])
def test_coulomb_friction_and_the_worst_bias_keep_the_truth_in_a_guaranteed_box(bias_sign):
    """Before the acceleration bound these runs gave confident boxes that excluded the truth."""
    robot = robot_model.load_robot("xarm7")
    truth, r, counts = xarm_run(robot, 0, 1.0, bias_sign)
    assert r.bounds_guaranteed and r.data_consistent
    assert np.all((r.lower <= truth) & (truth <= r.upper))
    # the bias is beyond the stated offset box on the moment axes: the box is the one that holds
    # whatever the offset there (offset_freeing): 0.57 kg
    assert r.upper[0] - r.lower[0] < 0.8
    assert 0 < counts["velocity_reversal"] < counts["accepted"]


def test_the_affine_share_bounds_each_payload_of_the_box_below_the_box_worst(rng):
    """For random boxes of the xArm7's payload and payloads inside them: the payload's own share
    ``sum_l bound_l |C_l pi|`` <= ``s0 + S pi`` <= the box's worst (:func:`acceleration_share`), and
    equal to the own share where no term changes sign in the box (a box of one payload)."""
    C = PayloadRegressor(robot_model.load_robot("xarm7")).wrench_acceleration_sensitivity()
    for _ in range(20):
        centre = np.r_[rng.uniform(0.5, 3.0), rng.normal(0, 0.1, 3), rng.normal(0, 0.02, 6)]
        half = np.r_[rng.uniform(0, 0.5), rng.uniform(0, 0.2, 3), rng.uniform(0, 0.05, 6)]
        lo, hi = centre - half, centre + half
        bound = rng.uniform(0, 2.0, (5, 6))
        S, s0 = acceleration_share_affine(C, lo, hi, bound)
        worst = acceleration_share(C, lo, hi, bound)
        for pi in rng.uniform(lo, hi, (30, 10)):
            own = (bound @ np.abs(C @ pi)).ravel()
            affine = s0 + S @ pi
            assert np.all(own <= affine + 1e-12) and np.all(affine <= worst + 1e-12)
        S1, s1 = acceleration_share_affine(C, centre, centre, bound)
        np.testing.assert_allclose(s1 + S1 @ centre, (bound @ np.abs(C @ centre)).ravel(), rtol=1e-12, atol=1e-12)
