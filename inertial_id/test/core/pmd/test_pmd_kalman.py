import numpy as np
import pinocchio as pin

from inertial_id.core.robot import params
from inertial_id.core.robot.model import load_robot
from inertial_id.core.pmd import baselines
from inertial_id.studies import pmd as study
from inertial_id.core.pmd.kalman import PoseKalmanFilter, smooth_poses
from inertial_id.core.pmd.objects import bench_object
from inertial_id.core.pmd.samples import stack_rows


def test_filter_recovers_sensor_frame_rates_of_a_smooth_motion():
    dt, rng = 0.01, np.random.default_rng(0)
    kf = PoseKalmanFilter(dt, 1e-7, 1e-7)   # nearly exact poses: what remains is the frames and the lag
    errors = []
    for k in range(300):
        t = k * dt
        # rotation about a fixed body axis with sinusoidal angle; translation along a sinusoid
        axis = np.array([1.0, 2.0, 2.0]) / 3.0
        theta, theta_d, theta_dd = 0.8 * np.sin(1.5 * t), 1.2 * np.cos(1.5 * t), -1.8 * np.sin(1.5 * t)
        R = pin.exp3(theta * axis)
        p = np.array([0.3 * np.sin(t), 0.1 * t, 0.0])
        a_W = np.array([-0.3 * np.sin(t), 0.0, 0.0])
        noisy = pin.SE3(R @ pin.exp3(rng.normal(0, 1e-7, 3)), p + rng.normal(0, 1e-7, 3))
        a_S, w_S, alpha_S, g_S = kf.update(noisy)
        if k > 100:
            errors.append([np.linalg.norm(w_S - theta_d * axis), np.linalg.norm(alpha_S - theta_dd * axis),
                           np.linalg.norm(a_S - R.T @ a_W), np.linalg.norm(g_S - R.T @ [0, 0, -9.81])])
    worst = np.max(errors, axis=0)
    assert worst[0] < 1e-3 and worst[1] < 0.05 and worst[2] < 0.02 and worst[3] < 1e-4


def _sinusoidal_poses(K, dt, sigma, rng):
    """A wrist-like motion (rotation about a fixed body axis, translation along sinusoids), its noisy
    poses and its true sensor-frame (a, w, alpha)."""
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    poses, truth = [], []
    for k in range(K):
        t = k * dt
        theta, theta_d, theta_dd = 0.8 * np.sin(3.0 * t), 2.4 * np.cos(3.0 * t), -7.2 * np.sin(3.0 * t)
        R = pin.exp3(theta * axis)
        p = np.array([0.1 * np.sin(4.0 * t), 0.06 * np.cos(5.0 * t), 0.0])
        a_W = np.array([-1.6 * np.sin(4.0 * t), -1.5 * np.cos(5.0 * t), 0.0])
        poses.append(pin.SE3(R @ pin.exp3(rng.normal(0, sigma, 3)), p + rng.normal(0, sigma, 3)))
        truth.append((R.T @ a_W, theta_d * axis, theta_dd * axis))
    return poses, [np.array(x) for x in zip(*truth)]


def _rms_at_shift(est, true, shift, skip=50):
    """RMS of est[k] - true[k - shift] over the samples after ``skip`` (est trailing by ``shift``)."""
    e = est[skip:len(est) - 10]
    t = true[skip - shift:len(true) - 10 - shift]
    return float(np.sqrt(np.mean(np.sum((e - t) ** 2, axis=1))))


def test_smoother_removes_the_filter_lag():
    dt, sigma = 0.01, 1e-4
    poses, (a, w, alpha) = _sinusoidal_poses(250, dt, sigma, np.random.default_rng(1))
    kf = PoseKalmanFilter(dt, sigma, sigma)
    filtered = [np.array(x) for x in zip(*(kf.update(X) for X in poses))]
    smoothed = smooth_poses(poses, dt, sigma_position_m=sigma, sigma_rotation_rad=sigma)
    for i, true in ((0, a), (2, alpha)):
        filt = {s: _rms_at_shift(filtered[i], true, s) for s in range(0, 6)}
        smooth = {s: _rms_at_shift(smoothed[i], true, s) for s in range(-3, 4)}
        assert min(filt, key=filt.get) >= 2            # the causal filter trails the motion ...
        assert min(smooth, key=smooth.get) == 0        # ... the smoother does not
        assert smooth[0] < 0.6 * filt[0]
    assert _rms_at_shift(smoothed[1], w, 0) < 0.5 * _rms_at_shift(filtered[1], w, 0)


def test_study_kinematics_do_not_bias_the_com_at_2_rad_s():
    """With a noise-free wrench, least squares on the study's kinematics must find the COM to about a
    millimetre; kinematics that trail the wrench (the causal filter alone) shifted it by ~10 mm, the
    same offset for every object."""
    robot, n = load_robot("xarm7"), 150
    motion = study.wrist_motion(robot, 2.0, n)
    for name in ("Uniform", "Hammer"):
        obj = bench_object(name)
        samples = study.measured_samples(motion, obj.pi_S, (0.0, 0.0), np.random.default_rng(0), n)
        A, b = stack_rows(samples.full_regressors(), samples.wrench_S)
        pi = baselines.ols(A, b)
        dc = params.com_from_params(pi)[1] - params.com_from_params(obj.pi_S)[1]
        assert np.linalg.norm(dc) < 1.5e-3
        assert abs(pi[0] / obj.pi_S[0] - 1.0) < 2e-3
        true = motion.samples[-n:]
        assert np.sqrt(np.mean(np.sum((samples.a_S - true.a_S) ** 2, axis=1))) < 0.1
