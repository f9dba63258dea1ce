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

:class:`SampleRows` is the whole path from a synchronized sample stream to the contents of the
RegressorSample messages (:class:`RowMessage`): gap restarts, batches, momentum windows. The
regressor_builder node runs it live and :mod:`~.offline` on recordings, so both form the same rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import params
from .filtering import StreamingDifferentiator
from .momentum import MomentumWindows, robot_parameter_names
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


@dataclass
class RowMessage:
    """The content of one RegressorSample message, as numpy arrays."""

    t: float
    kind: str                   # "joint_torque" | "wrench" | "momentum"
    parameter_names: list
    A: np.ndarray               # (rows, cols)
    b: np.ndarray
    noise_bound: np.ndarray
    noise_sigma: np.ndarray
    samples: int
    kinematics: np.ndarray | None = None     # wrench rows: the sensor kinematics (RegressorSample.kinematics)


@dataclass
class Pushed:
    """What one sample gave: the messages to publish, and what happened to the stream."""

    messages: list
    rejected: str = ""          # drop reason when the sample was not used (e.g. absurd_acceleration)
    detail: str = ""
    restarted: bool = False     # a gap (or a step back in time) before it: differentiation restarted
    missed: int = 0             # samples missing before it, judging by the stamps at the driver's rate


class SampleRows:
    """Synchronized samples ``(t, q, qd, tau, wrench)`` -> RegressorSample contents.

    Per-sample rows (``joint_torque``, ``wrench``) go out in batches of ``batch_samples`` samples;
    momentum rows (``momentum_window`` > 0) one message per closed window, with the payload
    columns followed by the robot's own. A stamp gap longer than ``max_gap_s`` restarts the
    differentiation and the windows. ``kinds``: the kinds to publish (None: all that are built).
    """

    def __init__(self, robot, use_joint_torque: bool, use_wrench: bool, rate_hz: float,
                 cutoff_hz: float | None = None, momentum_window: int = 0, batch_samples: int = 20,
                 max_gap_s: float = 0.05, kinds=None):
        if momentum_window and not use_joint_torque:
            raise ProfileError("momentum rows need joint torque sensing (use_joint_torque)")
        self.robot = robot
        self.rate_hz = rate_hz
        self.rows = RowBuilder(robot, use_joint_torque, use_wrench, rate_hz, cutoff_hz)
        self.kinds = None if kinds is None else set(kinds)
        self.need_rows = self.kinds is None or bool(self.kinds & {"joint_torque", "wrench"})
        self.window = momentum_window if (self.kinds is None or "momentum" in self.kinds) else 0
        self.batch = batch_samples
        self.max_gap = max_gap_s
        self.names = params.parameter_names("payload")
        self.momentum_names = self.names + robot_parameter_names(robot.model)
        self.windows = self._new_windows()
        self.pending: dict[str, list] = {}
        self.last_t = None

    @classmethod
    def from_profile(cls, robot, kinds=None, **overrides) -> "SampleRows":
        """As the regressor_builder node builds them with its default parameters."""
        sensing = robot.sensing
        args = dict(use_joint_torque=sensing["joint_torque"], use_wrench=sensing["wrench"],
                    rate_hz=sensing["joint_states_hz"], cutoff_hz=sensing["filter_cutoff_hz"] or None,
                    momentum_window=robot.momentum_window_samples if sensing["joint_torque"] else 0)
        args.update(overrides)
        return cls(robot, kinds=kinds, **args)

    def _new_windows(self):
        if not self.window:
            return None
        nz = self.rows.noise
        return MomentumWindows(self.robot, self.window, nz.torque_relative, nz.torque_absolute_Nm,
                               self.rows.model_error_Nm)

    def push(self, t: float, q, qd, tau, wrench=None) -> Pushed:
        out = Pushed([])
        if self.last_t is not None:
            dt = t - self.last_t
            if 0 < dt <= self.max_gap:
                out.missed = max(int(round(dt * self.rate_hz)) - 1, 0)
            else:                        # a gap, or the stream went back in time
                out.restarted = True
                self.rows.reset()
                self.windows = self._new_windows()
        self.last_t = t
        if self.need_rows:
            tau_rows = tau if tau is not None else np.zeros(self.robot.nv)
            try:
                built = self.rows.push(t, q, qd, tau_rows, wrench)
            except ImplausibleSample as exc:
                out.rejected, out.detail = "absurd_acceleration", str(exc)
                self.windows = self._new_windows()
                return out
            for r in built:
                self.pending.setdefault(r.kind, []).append(r)
            for kind, batch in list(self.pending.items()):
                if len(batch) >= self.batch:
                    if self.kinds is None or kind in self.kinds:
                        out.messages.append(self._batch(kind, batch))
                    self.pending[kind] = []
        if self.windows is not None:
            self.windows.add_sample(t, q, qd, tau)
            w = self.windows.take_rows()
            if w.rows:
                out.messages.append(RowMessage(t, "momentum", self.momentum_names, np.hstack([w.Y, w.Y_r]), w.U,
                                               w.noise_bound, w.noise_bound / np.sqrt(3.0), w.samples))
        return out

    def _batch(self, kind: str, batch) -> RowMessage:
        kin = np.concatenate([r.kinematics for r in batch]) if kind == "wrench" else None
        return RowMessage(batch[-1].t, kind, self.names, np.vstack([r.A for r in batch]),
                          np.concatenate([r.b for r in batch]), np.concatenate([r.noise_bound for r in batch]),
                          np.concatenate([r.noise_sigma for r in batch]), len(batch), kin)
