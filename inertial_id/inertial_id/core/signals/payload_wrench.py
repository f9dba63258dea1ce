"""The identified payload's share taken out of what the sensors measure, with a bound on what is left.

For a wrist F/T sensor, the compensated wrench is the measured wrench (sensor frame S, about its
origin, ``[f (N); n (N m)]``) minus the wrench the payload needs to follow the arm, gravity included:
``w_comp = (w_meas - offset) - A_S(q, v, a) pi_hat``. For joint torque sensors, the external effort is
``tau_ext = tau_meas - tau_robot(q, v, a) - Y_P(q, v, a) pi_hat`` (N m per joint). Both are
"measured minus model": with nothing touching the robot they are sensor noise plus the error of the
estimate; a contact force ``F`` on the payload shows as ``-F`` in the compensated wrench (the sensor
then exerts less on the payload) and as ``-J^T F`` in the external effort.

The rows are those of the estimator (:class:`~.row_builder.RowBuilder`: same regressor, same causal
differentiation, same per-row error bound ``e``: stated sensor noise, model error, wrench interpolation),
so the bound of each component is

    |w_comp_i| <= e_i + max over pi in [lower, upper] of |A_i (pi - pi_hat)|

whenever the payload is inside the estimator's box and the sensors within their stated bounds, the
assumptions of the estimator's guaranteed box (``bounds_guaranteed`` and ``data_consistent``). Joint
torques add the robot's own share: the nominal robot is removed, and the largest torque its link and
friction parameters can add inside the estimators' robot box (:mod:`.robot_box`) is in the bound.

Wrench rows carry the bound of their differentiated acceleration's error (``acceleration_bound``,
:mod:`.acceleration_bound`): what it does for any payload of the box is added to the noise bound; rows
without it (no jerk limit stated) make the compensated sample not guaranteed.

Sensor offset: the estimator takes the sensor's zero as an unknown within the profile's box
(``noise.wrench.offset_N`` / ``offset_Nm``) and so does this bound: that box is added to it. A known
offset is subtracted here before anything else, zero by default.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..robot import params
from .acceleration_bound import acceleration_share
from ..robot.regressor import PayloadRegressor, friction_regressor, joint_torque_regressor
from ..robot.robot_box import estimator_robot_box
from .sensors import NoiseModel
from .row_builder import SampleRows

PARAMETERS = 10


class EstimateRejected(ValueError):
    """An estimate the compensation cannot use: ``reason`` (a counter key) and the detail in the text."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class PayloadBox:
    """A payload estimate ``pi_hat`` and its interval box, pinocchio order, payload frame; ``guaranteed``:
    the box holds the payload under the stated sensor bounds (estimator: bounds guaranteed, data consistent)."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    guaranteed: bool

    @classmethod
    def checked(cls, estimate, lower, upper, guaranteed: bool, parameter_names=None) -> PayloadBox:
        """The box of an InertialEstimate's fields; :class:`EstimateRejected` when it cannot be used."""
        if parameter_names is not None and list(parameter_names) != params.parameter_names("payload"):
            raise EstimateRejected("estimate_parameter_names", f"columns {list(parameter_names)[:3]}... are not "
                                                               "the payload's 10 parameters")
        x, lo, hi = (np.asarray(v, dtype=float).reshape(-1) for v in (estimate, lower, upper))
        if not x.size == lo.size == hi.size == PARAMETERS:
            raise EstimateRejected("estimate_wrong_length", f"{x.size}, {lo.size}, {hi.size} values, expected 10 each")
        if not (np.isfinite(x).all() and np.isfinite(lo).all() and np.isfinite(hi).all()):
            raise EstimateRejected("estimate_non_finite", "NaN or Inf in the estimate or its bounds")
        if np.any(lo > hi):
            raise EstimateRejected("estimate_empty_box", "a lower bound above its upper bound")
        return cls(x, lo, hi, bool(guaranteed))


def box_deviation(Y, centre, lower, upper) -> np.ndarray:
    """Per row of ``Y`` (rows, n): the largest ``|Y_i (x - centre)|`` over every ``x`` in the box
    ``[lower, upper]`` (exact: a linear function takes its extremes at the vertex that picks, column by
    column, the end that raises, or lowers, it)."""
    Y = np.asarray(Y, dtype=float)
    up, down = Y * (np.asarray(upper) - centre), Y * (np.asarray(lower) - centre)
    return np.maximum(np.maximum(up, down).sum(axis=1), -np.minimum(up, down).sum(axis=1))


@dataclass
class Compensated:
    """One sample's measured-minus-model residual and its bound.

    ``kind``: ``"wrench"`` (6: ``[f (N); n (N m)]`` in the sensor frame) or ``"joint_torque"`` (one per
    joint, N m, profile joint order); ``bound = noise_bound + box_bound + robot_bound`` per component
    (``robot_bound``: the robot's own parameters inside the estimators' robot box, joint torques only),
    guaranteed only when ``guaranteed`` (the payload box is)."""

    t: float
    kind: str
    residual: np.ndarray
    bound: np.ndarray
    noise_bound: np.ndarray
    box_bound: np.ndarray
    robot_bound: np.ndarray
    guaranteed: bool


def compensate(t: float, kind: str, A, b, noise_bound, box: PayloadBox, robot_bound=0.0,
               guaranteed: bool = True) -> Compensated:
    """Rows ``A pi = b`` (payload columns; ``b`` the measurement with the nominal robot moved to its side)
    with their error bound: the residual ``b - A pi_hat`` and its bound (``robot_bound``: what the robot's
    own parameters may add to ``b``; ``guaranteed`` false: the rows' own bound is not)."""
    A = np.asarray(A, dtype=float)
    noise = np.asarray(noise_bound, dtype=float)
    spread = box_deviation(A, box.estimate, box.lower, box.upper)
    robot = np.broadcast_to(np.asarray(robot_bound, dtype=float), noise.shape)
    return Compensated(t, kind, np.asarray(b, dtype=float) - A @ box.estimate, noise + spread + robot, noise, spread,
                       robot, box.guaranteed and guaranteed)


def robot_torque_columns(model, data, q, v, a) -> np.ndarray:
    """``(nv, 10 n + 4 nv)``: the robot's own joint-torque columns, link parameters then friction, in the
    order of the robot box's ``theta_r`` (:mod:`.robot_box`): ``tau_robot = Y_r theta_r``."""
    return np.hstack([joint_torque_regressor(model, data, q, v, a), friction_regressor(v, a)])


def robot_torque_bound(robot_box, model, data, q, v, a) -> np.ndarray:
    """Per joint, the largest torque the robot's own parameters inside ``robot_box`` ((nominal, lower,
    upper) of :func:`~.robot_box.estimator_robot_box`) add to the nominal robot's at ``(q, v, a)``."""
    return box_deviation(robot_torque_columns(model, data, q, v, a), *robot_box)


def compensated_wrench(regressor, q, v, a, wrench_S, box: PayloadBox, noise_bound, offset_S=None) -> Compensated:
    """The compensated wrench at one state ``(q, v, a)`` (rad, rad/s, rad/s^2) from the measured
    ``wrench_S`` (sensor frame) minus ``offset_S``; ``regressor``: a :class:`~.regressor.PayloadRegressor`,
    ``noise_bound`` (6,): the bound of the measurement's error."""
    w = np.asarray(wrench_S, dtype=float) - (0.0 if offset_S is None else np.asarray(offset_S, dtype=float))
    A, b = regressor.wrench_rows(q, v, a, w)
    return compensate(np.nan, "wrench", A, b, noise_bound, box)


def external_effort(regressor, q, v, a, tau_measured_Nm, box: PayloadBox, noise_bound_Nm,
                    robot_box=None) -> Compensated:
    """Joint torques not explained by the nominal robot and the payload at ``(q, v, a)``, with their bound
    (``robot_box``: the robot's own parameter box, see :func:`robot_torque_bound`; None: the nominal
    robot taken as exact)."""
    Y_P, b = regressor.torque_rows(q, v, a, tau_measured_Nm)
    robot = 0.0 if robot_box is None else robot_torque_bound(robot_box, regressor.model, regressor.data, q, v, a)
    return compensate(np.nan, "joint_torque", Y_P, b, noise_bound_Nm, box, robot)


class _TorqueRowsWithRobotColumns(PayloadRegressor):
    """The row builder's payload regressor, also keeping (in order) the robot's own torque columns at
    each state it forms joint-torque rows for: the rows' messages do not carry the state."""

    def __init__(self, robot):
        super().__init__(robot)
        self.robot_rows: deque = deque()

    def torque_rows(self, q, v, a, tau_measured_Nm):
        rows = super().torque_rows(q, v, a, tau_measured_Nm)
        self.robot_rows.append(robot_torque_columns(self.model, self.data, q, v, a))
        return rows


class PayloadCompensator:
    """A synchronized sample stream ``(t, q, qd, tau, wrench)`` into :class:`Compensated` samples, through
    the estimator's own rows (:class:`~.row_builder.SampleRows`, one sample per message: the same
    differentiation, gap restarts and error bounds). ``wrench_offset_S`` (6,) is subtracted from every
    measured wrench."""

    def __init__(self, robot, use_joint_torque: bool, use_wrench: bool, rate_hz: float,
                 cutoff_hz: float | None = None, max_gap_s: float = 0.05, wrench_offset_S=None):
        kinds = [k for k, on in (("joint_torque", use_joint_torque), ("wrench", use_wrench)) if on]
        self.rows = SampleRows(robot, use_joint_torque, use_wrench, rate_hz, cutoff_hz, momentum_window=0,
                               batch_samples=1, max_gap_s=max_gap_s, kinds=kinds)
        self.offset = np.zeros(6) if wrench_offset_S is None else np.asarray(wrench_offset_S, dtype=float)
        self.sensitivity = PayloadRegressor(robot).wrench_acceleration_sensitivity() if use_wrench else None
        self.offset_bound = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
        # joint torques: the nominal robot is not exact; its parameters are in the estimators' robot box
        self.robot_box = estimator_robot_box(robot) if use_joint_torque else None
        if use_joint_torque:
            self.rows.rows.core = self._torque_core = _TorqueRowsWithRobotColumns(robot)

    @property
    def needs_effort(self) -> bool:
        """Whether JointState.effort is used (joint torque sensing)."""
        return self.rows.needs_effort

    @property
    def uses_wrench(self) -> bool:
        """Whether a wrench comes with every sample."""
        return self.rows.rows.use_wrench

    def push_many(self, t, q, qd, tau, box: PayloadBox, wrench=None, wrench_extra=None):
        """Samples as :meth:`SampleRows.push_many` takes them (``tau`` None: no torque sensing); returns
        ``(compensated, pushed)``: the samples now complete (the differentiator lags one sample) and
        what :meth:`SampleRows.push_many` reports (drops, missed samples). Batches cost less per sample."""
        pushed = self.rows.push_many(t, q, qd, tau, None if wrench is None else np.asarray(wrench, float) - self.offset,
                                     wrench_extra)
        out = []
        for m in pushed.messages:      # one message per sample; joint-torque ones in the order of their rows
            if m.kind == "joint_torque":
                assert self.robot_box is not None       # joint-torque rows come with use_joint_torque only
                robot = box_deviation(self._torque_core.robot_rows.popleft(), *self.robot_box)
                out.append(compensate(m.t, m.kind, m.A, m.b, m.noise_bound, box, robot))
            elif m.acceleration_bound is None:
                out.append(compensate(m.t, m.kind, m.A, m.b, m.noise_bound, box, guaranteed=False))
            else:
                share = acceleration_share(self.sensitivity, box.lower, box.upper, m.acceleration_bound)
                out.append(compensate(m.t, m.kind, m.A, m.b, m.noise_bound + share + self.offset_bound, box))
        return out, pushed

    def push(self, t: float, q, qd, tau, box: PayloadBox, wrench=None, wrench_extra=None):
        """One sample (see :meth:`push_many`)."""
        return self.push_many([t], [q], [qd], None if tau is None else [tau], box,
                              None if wrench is None else [wrench], None if wrench_extra is None else [wrench_extra])
