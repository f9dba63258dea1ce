"""From sensor samples to rows of the payload measurement model, with per-row error bounds.

``RowBuilder.push(t, q, qd, tau, wrench)`` takes synchronized samples at the sensor rate, estimates
the joint acceleration causally (:class:`~.filtering.StreamingDifferentiator`, one-sample latency)
and returns the rows of the sample ``delay`` steps back: joint-torque rows (payload columns on the
left, measured torque minus the nominal robot on the right) and/or the six wrench rows of the wrist
sensor. Each row carries a guaranteed error bound and a standard deviation:

- torque rows: ``|tau_meas - tau_true| <= r |tau_true| + c`` gives, from the measured value,
  ``e = r (|tau_meas| + c) / (1 - r) + c``, plus the profile's ``model_error_Nm`` (differentiation
  and encoder quantization); sigma = e / sqrt(3) (uniform error).
- wrench rows: ``bound_sigmas * sigma`` plus ``model_error_Nm`` / ``model_error_N``, plus the bound
  of the error of interpolating the wrench at the joint stamp (``wrench_extra``, from
  :func:`~.driver_streams.pair_wrenches`; zero when the stamps coincide). The differentiated
  acceleration's own error is carried apart, as ``acceleration_bound``: per sample, the bound on the
  error of the sensor frame's spatial acceleration (``|J_S| @ da``, :mod:`.acceleration_bound`); what
  it does to a row depends on the payload, so the estimator adds it for every payload of its current
  box. A sample whose window may hold a velocity reversal gives no wrench rows (counted as
  ``velocity_reversal``); without the profile's jerk and acceleration limits, or with the low-pass
  on, the bound is unknown (None) and the wrench rows are not guaranteed.

:class:`SampleRows` is the whole path from a synchronized sample stream to the contents of the
RegressorSample messages (:class:`RowMessage`): gap restarts, batches, momentum windows. The
regressor_builder node runs it live and :mod:`~.offline` on recordings, so both form the same rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..robot import params
from ..calibration import calibration_of, momentum_window
from .acceleration_bound import acceleration_error_bound, reversal_joints
from .filtering import StreamingDifferentiator
from .momentum import MomentumWindows, robot_parameter_names
from ..robot.profile import ProfileError
from ..robot.regressor import PayloadRegressor
from .sensors import NoiseModel


class ImplausibleSample(ValueError):
    """A sample whose differentiated acceleration no robot reaches (a stamp or velocity fault)."""


# A longer stamp gap is the driver pausing, not samples lost on the way (those are counted as
# missed, whether or not the gap restarts the differentiation).
SILENCE_S = 1.0
# Accelerations beyond this multiple of the profile's limits are not physical (as the node's
# magnitude checks on the readings themselves).
ABSURD_ACCELERATION_FACTOR = 10.0


@dataclass
class MeasurementRows:
    """Rows ``A theta = b`` of one sample (payload columns, pinocchio order, payload frame) with their guaranteed bound and noise sigma."""
    kind: str                 # "joint_torque" | "wrench"
    t: float
    A: np.ndarray             # (rows, 10) payload columns, pinocchio order, payload frame
    b: np.ndarray
    noise_bound: np.ndarray
    noise_sigma: np.ndarray
    kinematics: np.ndarray | None = None   # wrench rows: see PayloadRegressor.sensor_kinematics
    acceleration_bound: np.ndarray | None = None   # wrench rows: (6,) sensor-frame acceleration error bound


class RowBuilder:
    """Joint samples (and wrenches) into payload rows: joint-torque rows, wrench rows, or both."""
    def __init__(self, robot, use_joint_torque: bool, use_wrench: bool, fs_hz: float | None = None,
                 cutoff_hz: float | None = None):
        if use_wrench and robot.ft_frame_id is None:
            raise ProfileError(f"profile '{robot.name}' declares no F/T sensor frame")
        if not (use_joint_torque or use_wrench):
            raise ProfileError("nothing to build: enable joint-torque rows or wrench rows")
        self.robot = robot
        self.use_joint_torque = use_joint_torque
        self.use_wrench = use_wrench
        self.noise = NoiseModel.from_profile(robot.spec)
        self.model_error_Nm = float(robot.spec.noise.model_error_Nm)
        self.wrench_floor = robot.spec.noise.wrench_row_floor()
        self.core = PayloadRegressor(robot)
        self.diff = StreamingDifferentiator(robot.nv, fs_hz, cutoff_hz)
        self.max_acceleration = ABSURD_ACCELERATION_FACTOR * np.asarray(robot.acceleration_limit, float)
        self.velocity_error = self.noise.velocity_rad_s
        # the acceleration error of wrench rows can be bounded only under the stated limits, unfiltered
        self.bounds_acceleration = bool(np.all(np.isfinite(robot.jerk_limit)) and
                                        np.all(np.isfinite(robot.acceleration_limit)) and not self.diff.filtered)
        self._wrenches: dict[float, tuple] = {}
        self.skipped: list[tuple[str, str]] = []     # (reason, detail) of rows not formed by the last push

    def reset(self) -> None:
        """Forget the differentiator's window and the buffered wrenches (e.g. after a gap)."""
        self.diff.reset()
        self._wrenches.clear()

    def push(self, t: float, q, qd, tau, wrench=None, wrench_extra=None) -> list[MeasurementRows]:
        """``wrench_extra`` (6,): a bound added to the wrench rows' bounds (interpolation error)."""
        self.skipped = []
        if self.use_wrench:
            if wrench is None:
                raise ValueError("wrench rows need a wrench with every sample")
            extra = None if wrench_extra is None else np.asarray(wrench_extra, float)
            self._wrenches[t] = (np.asarray(wrench, float), extra)
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
            w, w_extra = self._wrenches.pop(tk)
            for old in [s for s in self._wrenches if s < tk]:
                del self._wrenches[old]
            t_window, v_window = self.diff.velocity_window()
            reversing = reversal_joints(t_window, v_window, self.velocity_error, self.robot.acceleration_limit)
            if reversing.size and self.bounds_acceleration:
                self.skipped.append(("velocity_reversal", f"joints {(reversing + 1).tolist()} may reverse "
                                     f"within {t_window[0]:.3f}..{t_window[2]:.3f} s: no wrench rows"))
                return rows
            A, b = self.core.wrench_rows(qk, vk, ak, w)
            kinematics = self.core.sensor_kinematics()
            sigma = self.noise.wrench_sigma()
            e = self.wrench_floor.copy() if w_extra is None else self.wrench_floor + w_extra
            da = None
            if self.bounds_acceleration:
                da_joint = acceleration_error_bound(t_window, v_window, self.velocity_error, self.robot.jerk_limit)
                da = np.abs(self.core.sensor_jacobian(qk)) @ da_joint
            rows.append(MeasurementRows("wrench", tk, A, b, e, np.maximum(sigma, e / 3.0), kinematics, da))
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
    acceleration_bound: np.ndarray | None = None   # wrench rows: (samples, 6) (RegressorSample.acceleration_bound)


@dataclass
class Pushed:
    """What a batch of samples gave: the messages to publish, and what happened to the stream."""

    messages: list
    drops: list = field(default_factory=list)   # (reason, detail): samples not used, restarts
    events: list = field(default_factory=list)  # (reason, detail): rows withheld from samples that were used
    accepted: int = 0           # samples used
    missed: int = 0             # samples missing from the stream, judging by the stamps at the driver's rate


class SampleRows:
    """Synchronized samples ``(t, q, qd, tau, wrench)`` -> RegressorSample contents.

    Per-sample rows (``joint_torque``, ``wrench``) go out in batches of ``batch_samples`` samples;
    momentum rows (``momentum_window`` > 0) one message per closed window, with the payload
    columns followed by the robot's own. A stamp gap longer than ``max_gap_s`` (or a step back in
    time) restarts the differentiation and the windows. ``kinds``: the kinds to publish (None: all
    that are built). The messages do not depend on how the stream is cut into :meth:`push_many`
    batches; batches cost less per sample (momentum rows are formed for a whole batch at once).
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

    @property
    def needs_effort(self) -> bool:
        """Whether the rows formed use JointState.effort (a driver may leave it NaN otherwise)."""
        return self.rows.use_joint_torque and (self.kinds is None or bool(self.kinds & {"joint_torque", "momentum"}))

    @classmethod
    def from_profile(cls, robot, kinds=None, **overrides) -> SampleRows:
        """As the regressor_builder node builds them with its default parameters (momentum windows
        as the profile's robot calibration says, when it names one)."""
        sensing = robot.sensing
        args = dict(use_joint_torque=sensing.joint_torque, use_wrench=sensing.wrench,
                    rate_hz=sensing.joint_states_hz, cutoff_hz=sensing.filter_cutoff_hz or None,
                    momentum_window=momentum_window(robot, calibration_of(robot)) if sensing.joint_torque else 0)
        args.update(overrides)
        return cls(robot, kinds=kinds, **args)

    def _new_windows(self):
        if not self.window:
            return None
        nz = self.rows.noise
        calibration = calibration_of(self.robot)
        return MomentumWindows(self.robot, self.window, nz.torque_relative, nz.torque_absolute_Nm,
                               self.rows.model_error_Nm,
                               **({} if calibration is None else calibration.window_options(self.window)))

    def push(self, t: float, q, qd, tau, wrench=None, wrench_extra=None) -> Pushed:
        """One sample."""
        return self.push_many([t], [q], [qd], None if tau is None else [tau], None if wrench is None else [wrench],
                              None if wrench_extra is None else [wrench_extra])

    def push_many(self, t, q, qd, tau=None, wrench=None, wrench_extra=None) -> Pushed:
        """Samples ``t`` (N,), ``q, qd, tau`` (N, nv), ``wrench`` (N, 6) when wrench rows are built
        and ``wrench_extra`` (N, 6) the bounds of its interpolation error (None: exact);
        ``tau`` None: no torque sensing."""
        t = np.asarray(t, dtype=float).reshape(-1)
        n = t.size
        out = Pushed([])
        if n == 0:
            return out
        q, qd = (np.asarray(x, dtype=float).reshape(n, -1) for x in (q, qd))
        tau = np.zeros_like(q) if tau is None else np.asarray(tau, dtype=float).reshape(n, -1)
        dt = np.diff(np.concatenate([[np.nan if self.last_t is None else self.last_t], t]))
        in_stream = (dt > 0) & (dt <= self.max_gap)
        lost = (dt > 0) & (dt <= SILENCE_S)
        out.missed = int(np.maximum(np.round(dt[lost] * self.rate_hz) - 1, 0).sum())
        restart = ~in_stream
        restart[0] &= self.last_t is not None
        self.last_t = t[-1]
        starts = [0, *np.flatnonzero(restart[1:]) + 1, n] if not restart[0] else [*np.flatnonzero(restart), n]
        for a, b in zip(starts[:-1], starts[1:]):
            if restart[a]:
                out.drops.append(("gap", f"a gap before {t[a]:.3f} s: restarting differentiation"))
                self.rows.reset()
                self._restart_windows(out)
            rejected = (self._sample_rows(out, t, q, qd, tau, wrench, wrench_extra, range(a, b))
                        if self.need_rows else [])
            for c, d in zip([a, *(k + 1 for k in rejected)], [*rejected, b]):
                if c > a:                # after a rejected sample the windows start afresh
                    self._restart_windows(out)
                if self.windows is not None and d > c:
                    self.windows.add_samples(t[c:d], q[c:d], qd[c:d], tau[c:d])
            out.accepted += b - a - len(rejected)
        self._window_messages(out)
        return out

    def _sample_rows(self, out: Pushed, t, q, qd, tau, wrench, wrench_extra, indices) -> list[int]:
        """Per-sample rows of ``indices``, batched into messages; the indices rejected."""
        rejected = []
        for k in indices:
            try:
                built = self.rows.push(t[k], q[k], qd[k], tau[k], None if wrench is None else wrench[k],
                                       None if wrench_extra is None else wrench_extra[k])
            except ImplausibleSample as exc:
                out.drops.append(("absurd_acceleration", str(exc)))
                rejected.append(k)
                continue
            out.events.extend(self.rows.skipped)
            for r in built:
                self.pending.setdefault(r.kind, []).append(r)
            for kind, batch in list(self.pending.items()):
                if len(batch) >= self.batch:
                    if self.kinds is None or kind in self.kinds:
                        out.messages.append(self._batch(kind, batch))
                    self.pending[kind] = []
        return rejected

    def _restart_windows(self, out: Pushed) -> None:
        self._window_messages(out)
        self.windows = self._new_windows()

    def _window_messages(self, out: Pushed) -> None:
        if self.windows is None:
            return
        for t, w in self.windows.take_windows():
            out.messages.append(RowMessage(t, "momentum", self.momentum_names, np.hstack([w.Y, w.Y_r]), w.U,
                                           w.noise_bound, w.noise_bound / np.sqrt(3.0), w.samples))

    def _batch(self, kind: str, batch) -> RowMessage:
        kin = np.concatenate([r.kinematics for r in batch]) if kind == "wrench" else None
        bounded = kind == "wrench" and all(r.acceleration_bound is not None for r in batch)
        da = np.stack([r.acceleration_bound for r in batch]) if bounded else None
        return RowMessage(batch[-1].t, kind, self.names, np.vstack([r.A for r in batch]),
                          np.concatenate([r.b for r in batch]), np.concatenate([r.noise_bound for r in batch]),
                          np.concatenate([r.noise_sigma for r in batch]), len(batch), kin, da)
