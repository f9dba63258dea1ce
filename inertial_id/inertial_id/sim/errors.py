"""How the MuJoCo simulator's sensors err: bounded sample errors drawn at a stated bound, offsets
that drift, and the lag of a filter.

Sample errors (``distribution``), per axis, with ``B`` the bound of that axis:

- ``none``: exact readings;
- ``uniform``: uniform in ``[-B, B]``, independent per sample;
- ``gaussian_clipped``: Gaussian of standard deviation ``B / 3`` clipped at 3 standard deviations;
- ``bias``: the worst constant error the bound allows, ``s B`` with a sign ``s = +-1`` per axis drawn
  once per run (or given as ``bias_signs``).

Bounds: the wrench's ``wrench_bound`` ``[f (N) x3, n (N m) x3]``; the joint torque's
``torque_relative |tau| + torque_absolute_Nm`` of the true torque (the profile's statement).
:meth:`SensorErrors.at_profile_bounds` takes them from a profile's ``noise:`` section, exactly at
the bounds the estimators are told (so the data are within the stated bounds, and nothing more).

Beyond the stated bounds, when asked for: an F/T offset ``wrench_offset`` plus a linear drift
``wrench_drift_per_s`` (a real sensor's temperature drift: the reading at time ``t`` carries
``offset + drift t``); a first-order low-pass filter of time constant ``wrench_lag_s`` (and
``torque_lag_s``) applied to the true signal at the simulator's rate before the sample errors (the
driver's filter: its lag is an error the stated bounds do not include); encoder quantization of the
positions and Gaussian velocity noise.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..core.signals.sensors import NoiseModel

DISTRIBUTIONS = ("none", "uniform", "gaussian_clipped", "bias")
CLIP_SIGMAS = 3.0


def _six(x) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=float), (6,)).copy()


@dataclass(frozen=True)
class SensorErrors:
    """The errors of the simulated sensors (module docstring); all zero by default."""

    distribution: str = "none"
    wrench_bound: tuple = (0.0,) * 6           # [f (N) x3, n (N m) x3]
    torque_relative: float = 0.0
    torque_absolute_Nm: float = 0.0
    wrench_offset: tuple = (0.0,) * 6          # [f (N) x3, n (N m) x3] at t = 0
    wrench_drift_per_s: tuple = (0.0,) * 6     # N/s x3, N m/s x3
    wrench_lag_s: float = 0.0
    torque_lag_s: float = 0.0
    encoder_resolution_rad: float = 0.0
    velocity_sigma_rad_s: float = 0.0
    bias_signs: tuple | None = field(default=None)   # (6 + nv,) +-1: wrench axes, then joints

    def __post_init__(self):
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}, not '{self.distribution}'")
        if self.wrench_lag_s < 0 or self.torque_lag_s < 0:
            raise ValueError("filter lags must be >= 0 s")

    @classmethod
    def at_profile_bounds(cls, robot, distribution: str = "gaussian_clipped", **overrides) -> SensorErrors:
        """Sample errors exactly at the bounds the profile states (``noise:``): wrench
        ``bound_sigmas * sigma`` per axis, joint torque ``relative |tau| + absolute_Nm``, encoder
        resolution; ``overrides``: any field."""
        stated = NoiseModel.from_profile(robot.spec)
        base = cls(distribution, tuple(float(x) for x in stated.bound_sigmas * stated.wrench_sigma()),
                   stated.torque_relative, stated.torque_absolute_Nm,
                   encoder_resolution_rad=stated.encoder_resolution_rad)
        return replace(base, **overrides)

    def offset(self, t_s: float) -> np.ndarray:
        """The F/T offset (6,) at time ``t_s`` (s): constant part plus drift."""
        return _six(self.wrench_offset) + _six(self.wrench_drift_per_s) * t_s


class ErrorSource:
    """Draws the errors of :class:`SensorErrors` for one run (its own random generator)."""

    def __init__(self, errors: SensorErrors, nv: int, rng: np.random.Generator):
        self.errors = errors
        self.rng = rng
        if errors.bias_signs is not None:
            signs = np.sign(np.asarray(errors.bias_signs, dtype=float))
            if signs.shape != (6 + nv,) or np.any(signs == 0):
                raise ValueError(f"bias_signs: expected {6 + nv} signs (+-1): 6 wrench axes, then the joints")
        else:
            signs = rng.choice([-1.0, 1.0], size=6 + nv)
        self.signs = signs

    def _unit(self, size: int, signs: np.ndarray) -> np.ndarray:
        """Errors in units of the bound, in [-1, 1]."""
        kind = self.errors.distribution
        if kind == "none":
            return np.zeros(size)
        if kind == "uniform":
            return self.rng.uniform(-1.0, 1.0, size)
        if kind == "gaussian_clipped":
            return np.clip(self.rng.normal(size=size), -CLIP_SIGMAS, CLIP_SIGMAS) / CLIP_SIGMAS
        return signs.copy()          # bias

    def wrench(self, t_s: float, w_true) -> np.ndarray:
        """Reading ``[f (N), n (N m)]`` of the (filtered) true wrench at time ``t_s``: plus offset,
        drift and a sample error within ``wrench_bound``."""
        e = self.errors
        return np.asarray(w_true, float) + e.offset(t_s) + _six(e.wrench_bound) * self._unit(6, self.signs[:6])

    def torque(self, tau_true_Nm) -> np.ndarray:
        """Reading (N m) of the (filtered) true joint torques: plus an error within
        ``relative |tau_true| + absolute``."""
        tau = np.asarray(tau_true_Nm, dtype=float)
        bound = self.errors.torque_relative * np.abs(tau) + self.errors.torque_absolute_Nm
        return tau + bound * self._unit(tau.size, self.signs[6:])

    def position(self, q_rad) -> np.ndarray:
        """Positions (rad) quantized to the encoder resolution."""
        r = self.errors.encoder_resolution_rad
        return np.round(np.asarray(q_rad) / r) * r if r > 0 else np.asarray(q_rad, dtype=float).copy()

    def velocity(self, v_rad_s) -> np.ndarray:
        """Velocities (rad/s) with Gaussian noise of ``velocity_sigma_rad_s``."""
        v = np.asarray(v_rad_s, dtype=float)
        s = self.errors.velocity_sigma_rad_s
        return v + s * self.rng.normal(size=v.shape) if s > 0 else v.copy()


class FirstOrderLag:
    """``y' = (x - y) / T`` discretized exactly for a signal held over each step of ``dt_s``;
    ``T = 0`` passes the signal through. Starts at the first input."""

    def __init__(self, lag_s: float, dt_s: float):
        self.alpha = 1.0 if lag_s <= 0 else 1.0 - np.exp(-dt_s / lag_s)
        self.y = None

    def __call__(self, x) -> np.ndarray:
        """The filter's output after input ``x``."""
        x = np.asarray(x, dtype=float)
        self.y = x.copy() if self.y is None else self.y + self.alpha * (x - self.y)
        return self.y.copy()
