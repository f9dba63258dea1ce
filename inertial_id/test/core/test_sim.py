"""The simulator and the row builder: tracking, limits, and rows that respect their error bounds."""
import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core import trajectory
from inertial_id.core.signals.acceleration_bound import acceleration_share
from inertial_id.core.robot.regressor import PayloadRegressor
from inertial_id.core.signals.row_builder import RowBuilder
from inertial_id.core.sim import Simulator


def run_sim(name, seconds, noise=True):
    robot = robot_model.load_robot(name)
    truth = robot_model.payload_params("dumbbell_5lb")
    sim = Simulator.from_profile(robot, truth, seed=3, noise=noise)
    traj, report = trajectory.excitation_from_profile(robot, seconds)
    assert report.ok
    sim.command(traj.resample(100))
    sensing = robot.spec.sensing
    builder = RowBuilder(robot, sensing.joint_torque, sensing.wrench)
    rows, track_err = [], 0.0
    for k in range(int(seconds * 1000)):
        sim.step()
        if k % 2 == 0:
            m = sim.measure()
            rows += builder.push(m.t, m.q, m.qd, m.tau, m.wrench)
            track_err = max(track_err, np.abs(sim.desired(m.t)[0] - m.q).max())
    return robot, truth, rows, track_err


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7"])
def test_rows_with_the_true_payload_respect_their_error_bounds(name):
    """The bounded-noise assumption the guaranteed bounds rest on, checked against the simulator."""
    robot, truth, rows, track_err = run_sim(name, 4.0)
    # wrench rows: none from a window that may hold a velocity reversal; their bound adds what the
    # differentiated acceleration's error does to the payload (here: the true one)
    assert len(rows) > (1500 if name == "kinova_gen3" else 600)
    sensitivity = PayloadRegressor(robot).wrench_acceleration_sensitivity() if robot.ft_frame_id is not None else None
    ratios = np.concatenate([np.abs(r.A @ truth - r.b) / (
        r.noise_bound if r.kind != "wrench" else r.noise_bound + acceleration_share(sensitivity, truth, truth,
                                                                                    r.acceleration_bound))
        for r in rows])
    assert ratios.max() <= 1.0
    assert ratios.max() > 0.5          # the bounds are not vacuous: noise does reach them
    assert track_err < 0.03            # rad: computed-torque tracking despite the unknown payload


def test_noise_free_rows_err_less_than_the_declared_model_error():
    """Without sensor noise only differentiation at 500 Hz remains: the profile's allowance covers it."""
    robot, truth, rows, _ = run_sim("kinova_gen3", 2.0, noise=False)
    res = np.concatenate([np.abs(r.A @ truth - r.b) for r in rows])
    assert 1e-5 < res.max() < robot.spec.noise.model_error_Nm


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7", "digit_arm"])
def test_fourier_excitation_starts_and_ends_at_rest_within_limits(name):
    """Also on a profile that states no amplitude (Digit arm): a default from the joints' position
    ranges, never NaN (a NaN command made MuJoCo reset its simulation)."""
    robot = robot_model.load_robot(name)
    traj, report = trajectory.excitation_from_profile(robot, 12.0)
    assert report.ok and report.min_position_margin > 0 and report.min_velocity_margin > 0
    home = np.asarray(robot.spec.sim.home)
    np.testing.assert_allclose(traj.q[0], home, atol=1e-12)
    np.testing.assert_allclose(traj.q[-1], home, atol=1e-9)
    assert np.abs(traj.qd[[0, -1]]).max() < 1e-9
    assert np.abs(traj.qd).max(axis=0).min() > 0.05      # every joint moves
    tight = trajectory.check_limits(traj, robot.position_lower, robot.position_upper, 0.5 * np.abs(traj.qd).max(axis=0))
    assert not tight.ok and "velocity" in tight.message


def test_quintic_interpolation_reproduces_the_knots():
    robot = robot_model.load_robot("xarm7")
    traj, _ = trajectory.excitation_from_profile(robot, 5.0)
    coarse = traj.resample(100)
    q, qd, qdd = trajectory.interpolate(coarse, coarse.t)
    np.testing.assert_allclose(q, coarse.q, atol=1e-12)
    q, qd, qdd = trajectory.interpolate(coarse, traj.t)
    np.testing.assert_allclose(qd, traj.qd, atol=1e-6)
    np.testing.assert_allclose(qdd, traj.qdd, atol=1e-4)


def test_pmd_estimator_on_simulated_wrench_rows():
    """Method 'pmd' of the node's estimator: rows + sensor kinematics from the row builder."""
    from inertial_id.core.robot import params
    from inertial_id.core.estimators.payload import PayloadEstimator
    from inertial_id.core.robot.model import relative_placement
    from inertial_id.core.pmd.estimator import PmdEstimator
    robot, truth, rows, _ = run_sim("xarm7", 3.0)
    X_SP = relative_placement(robot.model, robot.ft_frame_id, robot.payload_frame_id)
    est = PayloadEstimator("pmd", params.parameter_names("payload"), *robot.payload_prior(),
                           pmd=PmdEstimator.from_payload_profile(robot.spec.payload, X_SP))
    for r in rows:
        est.add_rows(r.A, r.b, r.noise_bound, r.noise_sigma, samples=1, kinematics=r.kinematics)
    est.update_bounds()
    res = est.result()
    assert res.physically_consistent and res.samples_used == len(rows)
    assert abs(res.estimate[0] - truth[0]) < 0.02 * truth[0]
    assert np.linalg.norm(res.estimate[1:4] / res.estimate[0] - truth[1:4] / truth[0]) < 0.005
    assert np.all((truth >= res.lower) & (truth <= res.upper))
    with pytest.raises(ValueError, match="sensor kinematics"):
        est.add_rows(rows[0].A, rows[0].b, rows[0].noise_bound, rows[0].noise_sigma)


def test_command_reports_the_step_a_late_command_makes():
    """A command that repeats the reference up to now steps nothing; one whose new part has already
    begun (it arrived late) steps the reference by what it skipped."""
    robot = robot_model.load_robot("kinova_gen3")
    sim = Simulator.from_profile(robot, robot_model.payload_params("dumbbell_5lb"), seed=3, noise=False)
    traj = trajectory.excitation_from_profile(robot, 4.0)[0].resample(100)
    sim.command(traj, start_time=0.0)
    for _ in range(500):
        sim.step()
    jump_q, jump_qd = sim.command(traj, start_time=0.0)                 # the same reference again
    assert jump_q < 1e-9 and jump_qd < 1e-9
    q_now = sim.desired(sim.t)[0]
    hold = trajectory.SampledTrajectory(np.array([0.0, 1.0]), np.tile(q_now, (2, 1)), np.zeros((2, robot.nv)),
                                        np.zeros((2, robot.nv)))
    late = sim.desired(sim.t + 0.3)[0]            # a hold that should have started 0.3 s ago at the then reference
    shifted = trajectory.SampledTrajectory(hold.t, np.tile(late, (2, 1)), hold.qd, hold.qdd)
    jump_q, _ = sim.command(shifted, start_time=sim.t - 0.3)
    assert jump_q == pytest.approx(np.max(np.abs(late - q_now)), rel=1e-9) and jump_q > 1e-3


def test_joint_friction_acts_on_the_plant_and_stays_out_of_the_reported_torque():
    """tau (reported) = M qdd + h + Fc sign(qd) + Fv qd + beta: the convention of the friction columns."""
    import pinocchio as pin
    robot = robot_model.load_robot("kinova_gen3")
    friction = np.tile([0.05, 0.02, 0.0, -0.03], (robot.nv, 1))
    sim = Simulator(robot, robot_model.payload_params("dumbbell_5lb"), friction=friction)
    sim.command(trajectory.excitation_from_profile(robot, 2.0)[0].resample(100))
    for _ in range(300):
        sim.step()
    t, q, v, tau, a = sim._last
    assert np.max(np.abs(v)) > 1e-3
    data = sim.model_true.createData()
    Fc, Fv, _, beta = friction.T
    np.testing.assert_allclose(pin.rnea(sim.model_true, data, q, v, a) + Fc * np.sign(v) + Fv * v + beta, tau,
                               atol=1e-8)
