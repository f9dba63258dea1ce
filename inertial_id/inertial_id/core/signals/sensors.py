"""Sensor errors: what a profile states (:class:`NoiseModel`, the bounds the estimators rely on) and
how the simulator's sensors actually err (:class:`SensorNoise`), kept apart so that a guarantee
tested in simulation is not built into the simulator.

The stated model (profile ``noise:``): joint torque ``|error| <= relative |tau| + absolute_Nm``;
wrench standard deviations with a bound at ``bound_sigmas`` of them and the box of the F/T sensor's
unknown zero offset; encoder resolution; the bound on the reported joint velocities' error.

The simulated sensors draw errors without looking at those bounds: unbounded distributions
(Gaussian, or Student-t for heavy tails) whose spread is a fraction of the stated bound
(``margin``: the bound sits at ``margin`` standard deviations, 5 by default, so a sample exceeds
it with probability ~6e-7 for Gaussian errors), optional velocity noise, and an optional constant
F/T offset. Nothing clips: when a draw exceeds the stated bound, the data break the assumption,
and the estimators must say so (``data_consistent = false``) or still contain the truth.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robot.profile import RobotProfile


@dataclass(frozen=True)
class NoiseModel:
    """Sensor error bounds of a profile (``noise:`` section)."""

    torque_relative: float = 0.0
    torque_absolute_Nm: float = 0.0
    encoder_resolution_rad: float = 0.0
    force_sigma_N: float = 0.0
    torque_sigma_Nm: float = 0.0
    bound_sigmas: float = 3.0
    velocity_rad_s: float = 0.0
    wrench_offset_N: float = 0.0
    wrench_offset_Nm: float = 0.0
    wrench_offset_drift_N_per_s: float = 0.0
    wrench_offset_drift_Nm_per_s: float = 0.0

    @classmethod
    def from_profile(cls, profile: RobotProfile) -> NoiseModel:
        """The error bounds of the profile's ``noise`` section."""
        n = profile.noise
        jt, wr = n.joint_torque, n.wrench
        return cls(jt.relative, jt.absolute_Nm, np.deg2rad(n.encoder_resolution_deg),
                   wr.force_sigma_N, wr.torque_sigma_Nm, wr.bound_sigmas, n.velocity_rad_s,
                   wr.offset_N, wr.offset_Nm, wr.offset_drift_N_per_s, wr.offset_drift_Nm_per_s)

    def torque_bound(self, tau) -> np.ndarray:
        """Guaranteed bound (N m) of the joint torque error at measured torque ``tau``."""
        return self.torque_relative * np.abs(tau) + self.torque_absolute_Nm

    def wrench_offset_bound(self) -> np.ndarray:
        """(6,) bound of the F/T sensor's unknown zero offset, ``[f (N) x3, n (N m) x3]`` (zero: tared)."""
        return np.array([self.wrench_offset_N] * 3 + [self.wrench_offset_Nm] * 3)

    def wrench_offset_drift(self) -> np.ndarray:
        """(6,) how fast the offset may move from its value at a run's start, ``[N/s x3, N m/s x3]``."""
        return np.array([self.wrench_offset_drift_N_per_s] * 3 + [self.wrench_offset_drift_Nm_per_s] * 3)

    def wrench_sigma(self) -> np.ndarray:
        """(6,) standard deviation of the wrench noise, ``[f (N) x3, tau (N m) x3]``."""
        return np.array([self.force_sigma_N] * 3 + [self.torque_sigma_Nm] * 3)


@dataclass(frozen=True)
class SensorNoise:
    """How the simulated sensors err.

    ``torque_sigma_relative``, ``torque_sigma_Nm``: standard deviation of the joint torque error,
    ``relative |tau| + absolute``; ``wrench_sigma``: per axis ``[f; n]``; ``tails``: ``"gaussian"``
    or ``"student"`` (``dof`` degrees of freedom, scaled to the same standard deviation);
    ``velocity_sigma``: rad/s on the reported joint velocities; ``wrench_offset``: constant bias
    ``[f; n]`` of the F/T sensor; ``encoder_resolution_rad``: position quantization."""

    torque_sigma_relative: float = 0.0
    torque_sigma_Nm: float = 0.0
    wrench_sigma: tuple = (0.0,) * 6
    tails: str = "gaussian"
    dof: float = 5.0
    velocity_sigma: float = 0.0
    wrench_offset: tuple = (0.0,) * 6
    encoder_resolution_rad: float = 0.0

    @classmethod
    def from_bounds(cls, stated: NoiseModel, margin: float = 5.0, model_error_N: float = 0.0,
                    model_error_Nm: float = 0.0, **overrides) -> SensorNoise:
        """Errors whose standard deviation puts the stated bound (including the rows' model-error
        allowance for the wrench) at ``margin`` sigmas."""
        wrench_bound = stated.bound_sigmas * stated.wrench_sigma() + np.r_[[model_error_N] * 3, [model_error_Nm] * 3]
        base = cls(stated.torque_relative / margin, stated.torque_absolute_Nm / margin,
                   tuple(float(x) for x in wrench_bound / margin),
                   encoder_resolution_rad=stated.encoder_resolution_rad)
        return cls(**{**base.__dict__, **overrides})

    @classmethod
    def from_profile(cls, profile: RobotProfile, **overrides) -> SensorNoise:
        """Simulated sensor errors within the profile's bounds (``overrides``: any field)."""
        return cls.from_bounds(NoiseModel.from_profile(profile), model_error_N=float(profile.noise.model_error_N),
                               model_error_Nm=float(profile.noise.model_error_Nm), **overrides)

    def _unit(self, rng, size) -> np.ndarray:
        """Zero-mean, unit standard deviation draws of the chosen tails."""
        if self.tails == "gaussian":
            return rng.normal(size=size)
        if self.tails == "student":
            if not self.dof > 2:
                raise ValueError("Student-t tails need more than 2 degrees of freedom (finite variance)")
            return rng.standard_t(self.dof, size=size) * np.sqrt((self.dof - 2.0) / self.dof)
        raise ValueError(f"tails must be 'gaussian' or 'student', not '{self.tails}'")

    def torque(self, rng, tau_true) -> np.ndarray:
        """Measured joint torques (N m): ``tau_true`` plus noise."""
        sigma = self.torque_sigma_relative * np.abs(tau_true) + self.torque_sigma_Nm
        return tau_true + sigma * self._unit(rng, np.shape(tau_true))

    def velocity(self, rng, v_true) -> np.ndarray:
        """Measured joint velocities (rad/s): ``v_true`` plus Gaussian noise."""
        return v_true + self.velocity_sigma * rng.normal(size=np.shape(v_true)) if self.velocity_sigma else v_true

    def position(self, q_true) -> np.ndarray:
        """Measured joint positions (rad): ``q_true`` quantized to the encoder resolution."""
        r = self.encoder_resolution_rad
        return np.round(q_true / r) * r if r > 0 else q_true

    def wrench(self, rng, w_true) -> np.ndarray:
        """Measured wrench ``[f (N), tau (N m)]``: ``w_true`` plus offset and noise."""
        return w_true + np.asarray(self.wrench_offset) + np.asarray(self.wrench_sigma) * self._unit(rng, 6)
