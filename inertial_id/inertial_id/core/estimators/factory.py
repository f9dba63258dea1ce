"""The estimation methods, one class each registered by name (:mod:`.protocol`), and the two
adapters that put their estimators behind the one :class:`~.protocol.Estimator` interface.

| method | rows it consumes | estimate | bounds reported as guaranteed |
|---|---|---|---|
| ``rls``, ``lmi`` | joint_torque or wrench | RLS / consistent WLS (SDP) | wrench rows: yes; joint-torque rows: no (they assume the nominal robot exact) |
| ``pmd`` | wrench (+ sensor kinematics) | point-mass discretization | as ``lmi`` |
| ``guaranteed`` | momentum (torque sensing) or wrench | consistent WLS in the box | yes: LP over payload and robot-parameter box (momentum) or the wrench rows' polytope |
| ``log_cholesky`` | momentum | log-Cholesky IPOPT | no: Mean-Value-Form box at the nominal point |

Every row's stated error bound is first raised to the profile's floor for its kind
(:class:`~.row_checks.NoiseFloors`): the box relies on the profile's sensor model, never on a
sender's claim of a better one (``bounds_raised`` counts the rows it changed).

References:
- Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003)
- Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004)
"""
from __future__ import annotations

import numpy as np

from ..robot import params
from ..calibration import calibration_of, momentum_window
from ..pmd.estimator import PmdEstimator
from ..signals.momentum import WindowRows, robot_parameter_names
from ..robot.profile import ProfileError
from ..robot.model import relative_placement
from ..robot.regressor import PayloadRegressor
from ..signals.sensors import NoiseModel
from .guaranteed import MAX_LP_ROWS, GuaranteedEstimator
from .log_cholesky import LogCholeskyEstimator
from .payload import PayloadEstimator
from .protocol import EstimationMethod, method_class, method_names, register
from .row_checks import NoiseFloors


class _Adapter:
    """What both adapters hand straight to the wrapped estimator; ``bounds_raised`` counts rows whose
    bounds were raised to the profile's floor."""

    def __init__(self, estimator, floors: NoiseFloors | None):
        self.estimator = estimator
        self.floors = floors
        self.bounds_raised = 0

    @property
    def refused(self) -> dict[str, int]:
        """Rows the wrapped estimator refused, by reason."""
        return self.estimator.refused

    def state(self) -> dict | None:
        """The wrapped estimator's state to save (None when its method saves none)."""
        return self.estimator.state()

    def restore(self, state: dict) -> None:
        """Continue from a state saved by :meth:`state`."""
        self.estimator.restore(state)

    def update_bounds(self) -> None:
        """Recompute the payload bounds from the rows so far."""
        self.estimator.update_bounds()

    def final_update_bounds(self) -> None:
        """At the end of the data: the rows left over, then one LP over every row kept."""
        self.estimator.final_update_bounds()

    def result(self):
        """The wrapped estimator's current estimate and bounds."""
        return self.estimator.result()

    def support(self, C) -> np.ndarray | None:
        """The wrapped estimator's :meth:`~.protocol.Estimator.support`."""
        return self.estimator.support(C)

    def _raised(self, kind: str, e, samples: int):
        """``e`` raised to the profile's floor (counted)."""
        if self.floors is None:
            return e
        e, raised = self.floors.raise_to_floor(kind, e, samples)
        self.bounds_raised += raised
        return e


class RowsEstimator(_Adapter):
    """Per-sample rows (joint_torque, wrench) into a :class:`PayloadEstimator`."""

    def __init__(self, estimator: PayloadEstimator, kinds: tuple[str, ...], needs_kinematics: bool = False,
                 floors: NoiseFloors | None = None):
        super().__init__(estimator, floors)
        self.kinds = kinds
        self.column_names = estimator.names
        self.needs_kinematics = needs_kinematics    # rows must carry the sensor kinematics (pmd)
        # wrench rows must carry their acceleration error bound (the profile states what it rests on)
        self.needs_acceleration_bound = False

    def add(self, kind, A, b, e, sigma, samples, kinematics=None, acceleration_bound=None) -> None:
        """Rows ``A theta = b`` of ``kind`` with bounds ``e`` (raised to the floor) and noise ``sigma``."""
        e = self._raised(kind, e, samples)
        self.estimator.add_rows(A, b, e, sigma, samples, kinematics=kinematics, guaranteed=(kind == "wrench"),
                                acceleration_bound=acceleration_bound, wrench=(kind == "wrench"))


class MomentumEstimator(_Adapter):
    """Momentum windows (payload columns, then the robot's) into a log-Cholesky or guaranteed estimator."""

    kinds: tuple[str, ...] = ("momentum",)
    needs_kinematics = False
    needs_acceleration_bound = False

    def __init__(self, estimator, floors: NoiseFloors | None = None):
        super().__init__(estimator, floors)
        self.column_names = estimator.names + robot_parameter_names(estimator.robot.model)

    def add(self, kind, A, b, e, sigma, samples, kinematics=None, acceleration_bound=None) -> None:
        """Rows of whole momentum windows (one per joint; a partial window is refused and counted)."""
        if A.shape[0] % self.estimator.robot.nv:      # rows come in whole windows, one per joint
            refused = self.estimator.refused
            refused["partial_window"] = refused.get("partial_window", 0) + 1
            return
        e = self._raised(kind, e, samples)
        self.estimator.add_rows(WindowRows(A[:, :10], A[:, 10:], b, e, samples))


# Most rows in one bounds LP when the caller does not say: per-sample rows have 10 columns and the
# LP only sees each batch once; momentum rows carry ~100 robot columns and are kept across updates.
MAX_BOUND_ROWS = 3000


def _momentum(robot) -> bool:
    """The profile forms momentum windows (joint torque sensing, a window length)."""
    return bool(robot.sensing.joint_torque) and robot.momentum_window_samples > 0


def _momentum_estimator(robot, cls, **kw) -> MomentumEstimator:
    """``cls`` (a momentum estimator) on the profile's window, calibration and robot box."""
    calibration = calibration_of(robot)
    if calibration is not None:
        kw["calibration"] = calibration
    lo, hi = robot.payload_prior()
    return MomentumEstimator(cls(robot, lo, hi, window=momentum_window(robot, calibration),
                                 robot_relative_error=robot.spec.identification.robot_relative_error, **kw),
                             NoiseFloors(robot.spec, calibration))


def _rows_estimator(robot, method: str, kinds, max_bound_rows: int | None, pmd=None) -> RowsEstimator:
    """A :class:`PayloadEstimator` of ``method`` on per-sample rows of ``kinds``."""
    lo, hi = robot.payload_prior()
    wrench = robot.ft_frame_id is not None and "wrench" in kinds
    sensitivity = PayloadRegressor(robot).wrench_acceleration_sensitivity() if wrench else None
    offsets = NoiseModel.from_profile(robot.spec).wrench_offset_bound() if wrench and pmd is None else None
    est = PayloadEstimator(method, params.parameter_names("payload"), lo, hi, max_bound_rows or MAX_BOUND_ROWS, pmd=pmd,
                           acceleration_sensitivity=sensitivity, offset_bound=offsets)
    rows = RowsEstimator(est, kinds, needs_kinematics=pmd is not None, floors=NoiseFloors.of_robot(robot))
    rows.needs_acceleration_bound = wrench and bool(np.all(np.isfinite(robot.jerk_limit)) and
                                                    np.all(np.isfinite(robot.acceleration_limit)))
    return rows


class _LeastSquaresRows(EstimationMethod):
    """Joint-torque and wrench rows (only the wrench rows make the box guaranteed) into a
    :class:`PayloadEstimator` of this method."""

    kinds = ("joint_torque", "wrench")

    @classmethod
    def create(cls, robot, max_bound_rows: int | None = None) -> RowsEstimator:
        """The method's :class:`PayloadEstimator` behind :class:`RowsEstimator`."""
        return _rows_estimator(robot, cls.name, cls.kinds, max_bound_rows)


@register("rls")
class RecursiveLeastSquaresMethod(_LeastSquaresRows):
    """Recursive least squares on per-sample rows; consistency reported, not enforced."""


@register("lmi")
class ConsistentLeastSquaresMethod(_LeastSquaresRows):
    """Weighted least squares projected onto the physically consistent set in the box (SDP)."""


@register("pmd")
class PointMassMethod(EstimationMethod):
    """Point-mass discretization of the payload's shape from wrench rows and the sensor kinematics."""

    kinds = ("wrench",)

    @classmethod
    def create(cls, robot, max_bound_rows: int | None = None) -> RowsEstimator:
        """The PMD estimator in the F/T sensor's frame; ProfileError without an F/T sensor."""
        if robot.ft_frame_id is None:
            raise ProfileError("method 'pmd' needs an F/T sensor frame in the profile")
        X_SP = relative_placement(robot.model, robot.ft_frame_id, robot.payload_frame_id)
        pmd = PmdEstimator.from_payload_profile(robot.spec.payload, X_SP)
        return _rows_estimator(robot, cls.name, cls.kinds, max_bound_rows, pmd=pmd)


@register("guaranteed")
class GuaranteedMethod(EstimationMethod):
    """Guaranteed bounds: LP over payload and robot-parameter box on momentum windows when the robot
    senses joint torques, else over the polytope of the wrench rows."""

    @classmethod
    def row_kinds(cls, robot) -> tuple[str, ...]:
        """Momentum windows with joint torque sensing, else wrench rows."""
        return ("momentum",) if _momentum(robot) else ("wrench",)

    @classmethod
    def create(cls, robot, max_bound_rows: int | None = None):
        """:class:`~.guaranteed.GuaranteedEstimator` on momentum windows, or the consistent row
        estimator on wrench rows; ProfileError when the profile has neither."""
        if _momentum(robot):
            return _momentum_estimator(robot, GuaranteedEstimator, max_rows=max_bound_rows or MAX_LP_ROWS)
        if robot.ft_frame_id is None:
            raise ProfileError("method 'guaranteed' needs momentum rows (joint torque sensing) or an F/T sensor")
        return _rows_estimator(robot, cls.name, ("wrench",), max_bound_rows)


@register("log_cholesky")
class LogCholeskyMethod(EstimationMethod):
    """Log-Cholesky least squares (IPOPT) on momentum windows with a Mean-Value-Form box (not guaranteed)."""

    kinds = ("momentum",)

    @classmethod
    def create(cls, robot, max_bound_rows: int | None = None) -> MomentumEstimator:
        """:class:`~.log_cholesky.LogCholeskyEstimator` (it keeps every row: ``max_bound_rows`` does
        not apply); ProfileError without joint torque sensing."""
        if not _momentum(robot):
            raise ProfileError("method 'log_cholesky' needs joint torque sensing and "
                               "identification.momentum_window_s > 0")
        return _momentum_estimator(robot, LogCholeskyEstimator)


METHODS = method_names()


def row_kinds(robot, method: str) -> tuple[str, ...]:
    """The RegressorSample kinds the estimator of ``method`` consumes on ``robot`` (what the
    regressor builder needs to form)."""
    return method_class(method).row_kinds(robot)


def make_estimator(robot, method: str, max_bound_rows: int | None = None):
    """The estimator for ``method`` on ``robot`` (profile decides torque vs wrench rows).
    ``max_bound_rows``: most rows in one bounds LP (default: :data:`MAX_BOUND_ROWS` for per-sample
    rows, :data:`~.guaranteed.MAX_LP_ROWS` kept rows for momentum windows)."""
    return method_class(method).create(robot, max_bound_rows)
