"""Wrist samples: sensor-frame kinematics and wrench at each instant, and their wrench regressors.

All vectors are in the F/T sensor frame S, about its origin. ``a_S`` is the classical linear
acceleration of the origin *without* gravity, ``g_S`` gravity seen in S (``R_WS^T g_W``); the
regressor of :func:`inertial_id.core.robot.regressor.wrench_regressor` takes ``a_bar = a - g``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robot.regressor import wrench_regressor


@dataclass(frozen=True)
class WristSamples:
    """K samples of the wrist F/T sensor's kinematics and wrench, all in the sensor frame S."""
    a_S: np.ndarray        # (K, 3) m/s^2, gravity excluded
    w_S: np.ndarray        # (K, 3) rad/s
    alpha_S: np.ndarray    # (K, 3) rad/s^2
    g_S: np.ndarray        # (K, 3) m/s^2
    wrench_S: np.ndarray   # (K, 6) [f N; n Nm], exerted by the sensor on the payload

    def __post_init__(self):
        K = len(self.wrench_S)
        for name in ("a_S", "w_S", "alpha_S", "g_S"):
            if np.shape(getattr(self, name)) != (K, 3):
                raise ValueError(f"{name} must be ({K}, 3), got {np.shape(getattr(self, name))}")
        if np.shape(self.wrench_S) != (K, 6):
            raise ValueError(f"wrench_S must be (K, 6), got {np.shape(self.wrench_S)}")
        if not all(np.all(np.isfinite(getattr(self, n))) for n in ("a_S", "w_S", "alpha_S", "g_S", "wrench_S")):
            raise ValueError("wrist samples must be finite")

    def __len__(self) -> int:
        return len(self.wrench_S)

    def __getitem__(self, index) -> WristSamples:
        return WristSamples(self.a_S[index], self.w_S[index], self.alpha_S[index], self.g_S[index],
                            self.wrench_S[index])

    def full_regressors(self) -> np.ndarray:
        """(K, 6, 10): the full Newton-Euler model of each sample, pinocchio order."""
        return np.array([wrench_regressor(a - g, w, al)
                         for a, w, al, g in zip(self.a_S, self.w_S, self.alpha_S, self.g_S)])

    def static_regressors(self) -> np.ndarray:
        """(K, 6, 10): the gravity-only model (object at rest in the same pose), eq. 6-7 of :mod:`.pmd`'s reference."""
        zero = np.zeros(3)
        return np.array([wrench_regressor(-g, zero, zero) for g in self.g_S])


def stack_rows(A: np.ndarray, wrench_S: np.ndarray, sigma_wrench=None) -> tuple[np.ndarray, np.ndarray]:
    """(6K, 10) rows and (6K,) measurements from per-sample regressors; rows divided by the wrench
    noise standard deviations ``sigma_wrench`` (6,) when given, so that all rows weigh alike."""
    scale = np.ones(6) if sigma_wrench is None else 1.0 / np.asarray(sigma_wrench, dtype=float)
    return (A * scale[None, :, None]).reshape(-1, A.shape[-1]), (wrench_S * scale).reshape(-1)
