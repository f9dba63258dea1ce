"""From sensor samples to rows of the payload measurement model, with per-row error bounds.

``RowBuilder.push(t, q, qd, tau, wrench)`` takes synchronized samples at the sensor rate, estimates
the joint acceleration causally (:class:`~.filtering.StreamingDifferentiator`, one-sample latency)
and returns the rows of the sample ``delay`` steps back: joint-torque rows (payload columns on the
left, measured torque minus the nominal robot on the right) and/or the six wrench rows of the wrist
sensor. Each row carries a guaranteed error bound and a standard deviation:

- torque rows: ``|tau_meas - tau_true| <= r |tau_true| + c`` gives, from the measured value,
  ``e = r (|tau_meas| + c) / (1 - r) + c``, plus the profile's ``model_error_Nm`` (differentiation
  and encoder quantization); sigma = e / sqrt(3) (uniform error).
- wrench rows: ``bound_sigmas * sigma`` plus ``model_error_Nm`` / ``model_error_N``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .filtering import StreamingDifferentiator
from .profile import ProfileError
from .regressor import PayloadRegressor
from .sensors import NoiseModel


class ImplausibleSample(ValueError):
    """A sample whose differentiated acceleration no robot reaches (a stamp or velocity fault)."""


# Accelerations beyond this multiple of the profile's limits are not physical (as the node's
# magnitude checks on the readings themselves).
ABSURD_ACCELERATION_FACTOR = 10.0


@dataclass
class MeasurementRows:
    kind: str                 # "joint_torque" | "wrench"
    t: float
    A: np.ndarray             # (rows, 10) payload columns, pinocchio order, payload frame
    b: np.ndarray
    noise_bound: np.ndarray
    noise_sigma: np.ndarray
    kinematics: np.ndarray | None = None   # wrench rows: see PayloadRegressor.sensor_kinematics


class RowBuilder:
    def __init__(self, robot, use_joint_torque: bool, use_wrench: bool, fs_hz: float | None = None,
                 cutoff_hz: float | None = None):
        if use_wrench and robot.ft_frame_id is None:
            raise ProfileError(f"profile '{robot.name}' declares no F/T sensor frame")
        if not (use_joint_torque or use_wrench):
            raise ProfileError("nothing to build: enable joint-torque rows or wrench rows")
        self.robot = robot
        self.use_joint_torque = use_joint_torque
        self.use_wrench = use_wrench
        self.noise = NoiseModel.from_profile(robot.profile)
        err = robot.profile.get("noise", {})
        self.model_error_Nm = float(err.get("model_error_Nm", 0.0))
        self.model_error_N = float(err.get("model_error_N", 0.0))
        self.core = PayloadRegressor(robot)
        self.diff = StreamingDifferentiator(robot.nv, fs_hz, cutoff_hz)
        self.max_acceleration = ABSURD_ACCELERATION_FACTOR * np.asarray(robot.acceleration_limit, float)
        self._wrenches: dict[float, np.ndarray] = {}

    def reset(self) -> None:
        self.diff.reset()
        self._wrenches.clear()

    def push(self, t: float, q, qd, tau, wrench=None) -> list[MeasurementRows]:
        if self.use_wrench:
            if wrench is None:
                raise ValueError("wrench rows need a wrench with every sample")
            self._wrenches[t] = np.asarray(wrench, float)
        out = self.diff.push(t, np.asarray(q, float), np.asarray(qd, float), np.asarray(tau, float))
        if out is None:
            return []
        tk, qk, vk, ak, tauk = out
        if not np.all(np.abs(ak) <= self.max_acceleration):
            # the samples around this one are suspect too: start differentiating afresh
            self.reset()
            raise ImplausibleSample(f"differentiated acceleration {np.max(np.abs(ak)):.3g} rad/s^2 beyond "
                                    f"{ABSURD_ACCELERATION_FACTOR:g}x the profile's limits")
        rows = []
        if self.use_joint_torque:
            A, b = self.core.torque_rows(qk, vk, ak, tauk)
            nz = self.noise
            r, c = nz.torque_relative, nz.torque_absolute_Nm
            e = r * (np.abs(tauk) + c) / (1.0 - r) + c + self.model_error_Nm
            rows.append(MeasurementRows("joint_torque", tk, A, b, e, e / np.sqrt(3.0)))
        if self.use_wrench:
            w = self._wrenches.pop(tk)
            for old in [s for s in self._wrenches if s < tk]:
                del self._wrenches[old]
            A, b = self.core.wrench_rows(qk, vk, ak, w)
            sigma = self.noise.wrench_sigma()
            e = self.noise.bound_sigmas * sigma + np.array([self.model_error_N] * 3 + [self.model_error_Nm] * 3)
            rows.append(MeasurementRows("wrench", tk, A, b, e, np.maximum(sigma, e / 3.0), self.core.sensor_kinematics()))
        return rows
