"""Kalman filter and smoother for the velocities and accelerations of the F/T frame from its measured pose.

Position (world frame) and orientation (rotation vector in the sensor frame, relative to the last
estimate, reset after each update: a multiplicative filter) each follow a white-jerk model with state
``[x, x_dot, x_ddot]`` per axis. All three axes share one model and noise, so they share one 3x3
covariance. Outputs are in the sensor frame S: classical acceleration without gravity, angular
velocity and acceleration, and gravity.

The filter is causal, so its accelerations trail the motion: at 100 Hz with pose noise 1e-4 the
linear acceleration by about 40 ms and the angular one by about 20 ms. Paired with wrench samples of
the same instants this is a time misalignment whose error grows with the speed (at 2 rad/s on the
xArm7 wrist it doubles the linear acceleration error and biases every full-model estimate of the
COM by millimetres). A batch identification has the whole window at hand: :func:`smooth_poses` adds
the Rauch-Tung-Striebel backward pass, whose estimates at each instant use the later samples too and
carry no lag.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin


class WhiteJerkFilter:
    """Three axes of ``[x, x_dot, x_ddot]`` with measured ``x`` (constant model; state is scratch)."""

    def __init__(self, dt_s: float, sigma_measurement: float, jerk_psd: float):
        self.F = np.array([[1.0, dt_s, 0.5 * dt_s**2], [0.0, 1.0, dt_s], [0.0, 0.0, 1.0]])
        self.Q = jerk_psd * np.array([[dt_s**5 / 20, dt_s**4 / 8, dt_s**3 / 6],
                                      [dt_s**4 / 8, dt_s**3 / 3, dt_s**2 / 2],
                                      [dt_s**3 / 6, dt_s**2 / 2, dt_s]])
        self.r = sigma_measurement**2
        self.x = np.zeros((3, 3))        # rows: value, rate, acceleration; columns: axes
        self.P = np.diag([self.r, 1.0, 100.0])

    def predict(self) -> None:
        """Advance the state one time step."""
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def correct(self, z: np.ndarray) -> None:
        """Correct the state with a measurement ``z`` (3,) of ``x``."""
        gain = self.P[:, 0] / (self.P[0, 0] + self.r)
        self.x = self.x + np.outer(gain, z - self.x[0])
        self.P = self.P - np.outer(gain, self.P[0, :])

    def smoother_gain(self, P_filtered: np.ndarray, P_predicted: np.ndarray) -> np.ndarray:
        """RTS gain ``C_k = P_k F^T P_{k+1|k}^-1`` (step k filtered, step k+1 predicted covariance)."""
        return np.linalg.solve(P_predicted, self.F @ P_filtered).T


class PoseKalmanFilter:
    """Pose samples ``X_WS`` at a fixed rate -> ``(a_S, w_S, alpha_S, g_S)``."""

    def __init__(self, dt_s: float, sigma_position_m: float = 1e-4, sigma_rotation_rad: float = 1e-4,
                 linear_jerk_psd: float = 1.0, angular_jerk_psd: float = 20.0,
                 g_W=(0.0, 0.0, -9.81)):
        self.linear = WhiteJerkFilter(dt_s, sigma_position_m, linear_jerk_psd)
        self.angular = WhiteJerkFilter(dt_s, sigma_rotation_rad, angular_jerk_psd)
        self.g_W = np.asarray(g_W, dtype=float)
        self.R_WS: np.ndarray | None = None
        # predicted (x_lin, P_lin, x_ang, P_ang) of the last update, the angular state relative to the
        # previous R_WS: what a smoother needs besides the filtered states
        self.prediction: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def update(self, X_WS: pin.SE3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Filter the pose sample ``X_WS``; returns ``(a_S, w_S, alpha_S, g_S)`` in the sensor frame (m/s^2, rad/s, rad/s^2, m/s^2)."""
        if self.R_WS is None:
            self.R_WS = X_WS.rotation.copy()
            self.linear.x[0] = X_WS.translation
        else:
            self.linear.predict()
            self.angular.predict()
        self.prediction = (self.linear.x.copy(), self.linear.P.copy(), self.angular.x.copy(), self.angular.P.copy())
        self.linear.correct(X_WS.translation)
        self.angular.correct(pin.log3(self.R_WS.T @ X_WS.rotation))
        # move the reference to the new estimate; the rates are body-frame vectors, kept as they are
        self.R_WS = self.R_WS @ pin.exp3(self.angular.x[0])
        self.angular.x[0] = 0.0
        return self.outputs(self.R_WS, self.linear.x, self.angular.x)

    def outputs(self, R_WS, x_linear, x_angular) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(a_S, w_S, alpha_S, g_S)`` of a state."""
        R_SW = R_WS.T
        return R_SW @ x_linear[2], x_angular[1].copy(), x_angular[2].copy(), R_SW @ self.g_W


def smooth_poses(poses, dt_s: float, **filter_options) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fixed-interval smoothing of a batch of pose samples ``X_WS`` at a fixed rate: the filter of
    :class:`PoseKalmanFilter` (same options) forward, then the Rauch-Tung-Striebel pass backward.
    Returns ``(a_S, w_S, alpha_S, g_S)``, each (K, 3), at the pose instants and without lag.

    The orientation is smoothed in the filter's own coordinates: step k's rotation vector is
    relative to its reference ``R_k`` (zero after the update), so the smoothed rotation of step k+1
    is re-expressed relative to ``R_k`` before it enters step k's correction.
    """
    kf = PoseKalmanFilter(dt_s, **filter_options)
    lin, ang = kf.linear, kf.angular
    filtered: list[tuple] = []
    predicted: list = []                 # kf.prediction, set by every update
    for X_WS in poses:
        kf.update(X_WS)
        assert kf.R_WS is not None          # set by the first update
        predicted.append(kf.prediction)
        filtered.append((kf.R_WS.copy(), lin.x.copy(), lin.P.copy(), ang.x.copy(), ang.P.copy()))
    R_s, xl_s, _, xa_s, _ = filtered[-1]
    out = [kf.outputs(R_s, xl_s, xa_s)]
    for k in range(len(filtered) - 2, -1, -1):
        R_k, xl_k, Pl_k, xa_k, Pa_k = filtered[k]
        xl_p, Pl_p, xa_p, Pa_p = predicted[k + 1]
        xl_s = xl_k + lin.smoother_gain(Pl_k, Pl_p) @ (xl_s - xl_p)
        xa_next = xa_s.copy()
        xa_next[0] = pin.log3(R_k.T @ R_s)
        xa_s = xa_k + ang.smoother_gain(Pa_k, Pa_p) @ (xa_next - xa_p)
        R_s = R_k @ pin.exp3(xa_s[0])
        xa_s[0] = 0.0
        out.append(kf.outputs(R_s, xl_s, xa_s))
    a_S, w_S, alpha_S, g_S = (np.array(x) for x in zip(*out[::-1]))
    return a_S, w_S, alpha_S, g_S
