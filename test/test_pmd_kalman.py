import numpy as np
import pinocchio as pin

from inertial_id.core.pmd.kalman import PoseKalmanFilter


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
