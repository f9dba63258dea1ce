"""Kalman filter for the velocities and accelerations of the F/T frame from its measured pose.

Position (world frame) and orientation (rotation vector in the sensor frame, relative to the last
estimate, reset after each update: a multiplicative filter) each follow a white-jerk model with state
``[x, x_dot, x_ddot]`` per axis. All three axes share one model and noise, so they share one 3x3
covariance. Outputs are in the sensor frame S: classical acceleration without gravity, angular
velocity and acceleration, and gravity.
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
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def correct(self, z: np.ndarray) -> None:
        gain = self.P[:, 0] / (self.P[0, 0] + self.r)
        self.x = self.x + np.outer(gain, z - self.x[0])
        self.P = self.P - np.outer(gain, self.P[0, :])


class PoseKalmanFilter:
    """Pose samples ``X_WS`` at a fixed rate -> ``(a_S, w_S, alpha_S, g_S)``."""

    def __init__(self, dt_s: float, sigma_position_m: float = 1e-4, sigma_rotation_rad: float = 1e-4,
                 linear_jerk_psd: float = 1.0, angular_jerk_psd: float = 20.0,
                 g_W=(0.0, 0.0, -9.81)):
        self.linear = WhiteJerkFilter(dt_s, sigma_position_m, linear_jerk_psd)
        self.angular = WhiteJerkFilter(dt_s, sigma_rotation_rad, angular_jerk_psd)
        self.g_W = np.asarray(g_W, dtype=float)
        self.R_WS = None

    def update(self, X_WS: pin.SE3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self.R_WS is None:
            self.R_WS = X_WS.rotation.copy()
            self.linear.x[0] = X_WS.translation
        else:
            self.linear.predict()
            self.angular.predict()
        self.linear.correct(X_WS.translation)
        self.angular.correct(pin.log3(self.R_WS.T @ X_WS.rotation))
        # move the reference to the new estimate; the rates are body-frame vectors, kept as they are
        self.R_WS = self.R_WS @ pin.exp3(self.angular.x[0])
        self.angular.x[0] = 0.0
        R_SW = self.R_WS.T
        return R_SW @ self.linear.x[2], self.angular.x[1].copy(), self.angular.x[2].copy(), R_SW @ self.g_W
