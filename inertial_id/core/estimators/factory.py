"""The estimator a node runs for a method name, behind one interface for RegressorSample rows.

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


from .. import params
from ..profile import ProfileError
from ..momentum import WindowRows, robot_parameter_names
from .payload import PayloadEstimator
from .row_checks import NoiseFloors

METHODS = ("rls", "lmi", "pmd", "guaranteed", "log_cholesky")


class _Adapter:
    """What both adapters hand straight to the wrapped estimator; ``bounds_raised`` counts rows whose
    bounds were raised to the profile's floor."""

    def __init__(self, estimator, floors: NoiseFloors | None):
        self.estimator = estimator
        self.floors = floors
        self.bounds_raised = 0

    def restore(self, state: dict) -> None:
        """Continue from a state saved by :meth:`state`."""
        self.estimator.restore(state)

    def update_bounds(self) -> None:
        """Recompute the payload bounds from the rows so far."""
        self.estimator.update_bounds()

    def result(self):
        """The wrapped estimator's current estimate and bounds."""
        return self.estimator.result()


class RowsEstimator(_Adapter):
    """Per-sample rows (joint_torque, wrench) into a :class:`PayloadEstimator`."""

    def __init__(self, estimator: PayloadEstimator, kinds: tuple[str, ...], needs_kinematics: bool = False,
                 floors: NoiseFloors | None = None):
        super().__init__(estimator, floors)
        self.kinds = kinds
        self.column_names = estimator.names
        self.needs_kinematics = needs_kinematics    # rows must carry the sensor kinematics (pmd)

    def add(self, kind, A, b, e, sigma, samples, kinematics=None) -> None:
        """Rows ``A theta = b`` of ``kind`` with bounds ``e`` (raised to the floor) and noise ``sigma``."""
        e = _raised(self, kind, e, samples)
        self.estimator.add_rows(A, b, e, sigma, samples, kinematics=kinematics, guaranteed=(kind == "wrench"))

    def state(self) -> dict:
        """The estimator's state to save."""
        return self.estimator.state()


class MomentumEstimator(_Adapter):
    """Momentum windows (payload columns, then the robot's) into a log-Cholesky or guaranteed estimator."""

    kinds = ("momentum",)
    needs_kinematics = False

    def __init__(self, estimator, floors: NoiseFloors | None = None):
        super().__init__(estimator, floors)
        self.column_names = estimator.names + robot_parameter_names(estimator.robot.model)

    def add(self, kind, A, b, e, sigma, samples, kinematics=None) -> None:
        """Rows of whole momentum windows (one per joint; a partial window is refused and counted)."""
        if A.shape[0] % self.estimator.robot.nv:      # rows come in whole windows, one per joint
            refused = self.estimator.refused
            refused["partial_window"] = refused.get("partial_window", 0) + 1
            return
        e = _raised(self, kind, e, samples)
        self.estimator.add_rows(WindowRows(A[:, :10], A[:, 10:], b, e, samples))

    def state(self) -> dict | None:
        """None for a method whose state is not saved (log_cholesky keeps every row)."""
        return self.estimator.state() if hasattr(self.estimator, "state") else None


def _raised(adapter, kind: str, e, samples: int):
    """``e`` raised to the profile's floor (counted on the adapter)."""
    if adapter.floors is None:
        return e
    e, raised = adapter.floors.raise_to_floor(kind, e, samples)
    adapter.bounds_raised += raised
    return e


# Most rows in one bounds LP when the caller does not say: per-sample rows have 10 columns and the
# LP only sees each batch once; momentum rows carry ~100 robot columns and are kept across updates.
MAX_BOUND_ROWS = 3000


def row_kinds(robot, method: str) -> tuple[str, ...]:
    """The RegressorSample kinds the estimator of ``method`` consumes on ``robot`` (what the
    regressor builder needs to form)."""
    if method not in METHODS:
        raise ProfileError(f"unknown estimation method '{method}' (choose from {', '.join(METHODS)})")
    momentum = robot.sensing["joint_torque"] and robot.momentum_window_samples > 0
    if method == "log_cholesky" or (method == "guaranteed" and momentum):
        return ("momentum",)
    if method in ("pmd", "guaranteed"):
        return ("wrench",)
    return ("joint_torque", "wrench")


def make_estimator(robot, method: str, max_bound_rows: int | None = None):
    """The estimator for ``method`` on ``robot`` (profile decides torque vs wrench rows).
    ``max_bound_rows``: most rows in one bounds LP (default: :data:`MAX_BOUND_ROWS` for per-sample
    rows, :data:`~.guaranteed.MAX_LP_ROWS` kept rows for momentum windows)."""
    if method not in METHODS:
        raise ProfileError(f"unknown estimation method '{method}' (choose from {', '.join(METHODS)})")
    lo, hi = robot.payload_prior()
    ident = robot.profile["identification"]
    momentum = robot.sensing["joint_torque"] and robot.momentum_window_samples > 0
    if method == "log_cholesky" or (method == "guaranteed" and momentum):
        if not momentum:
            raise ProfileError("method 'log_cholesky' needs joint torque sensing and identification.momentum_window_s > 0")
        from ..calibration import calibration_of, momentum_window
        from .guaranteed import MAX_LP_ROWS, GuaranteedEstimator
        from .log_cholesky import LogCholeskyEstimator
        kw = {} if method == "log_cholesky" else {"max_rows": max_bound_rows or MAX_LP_ROWS}
        cls = LogCholeskyEstimator if method == "log_cholesky" else GuaranteedEstimator
        calibration = calibration_of(robot)
        if calibration is not None:
            kw["calibration"] = calibration
        return MomentumEstimator(cls(robot, lo, hi, window=momentum_window(robot, calibration),
                                     robot_relative_error=ident["robot_relative_error"], **kw),
                                 NoiseFloors(robot.profile))
    max_bound_rows = max_bound_rows or MAX_BOUND_ROWS
    names = params.parameter_names("payload")
    if method == "pmd":
        from ..model import relative_placement
        from ..pmd.estimator import PmdEstimator
        if robot.ft_frame_id is None:
            raise ProfileError("method 'pmd' needs an F/T sensor frame in the profile")
        X_SP = relative_placement(robot.model, robot.ft_frame_id, robot.payload_frame_id)
        pmd = PmdEstimator.from_payload_profile(robot.profile.get("payload", {}), X_SP)
        return RowsEstimator(PayloadEstimator(method, names, lo, hi, max_bound_rows, pmd=pmd), ("wrench",),
                             needs_kinematics=True, floors=NoiseFloors(robot.profile))
    if method == "guaranteed" and robot.ft_frame_id is None:
        raise ProfileError("method 'guaranteed' needs momentum rows (joint torque sensing) or an F/T sensor")
    return RowsEstimator(PayloadEstimator(method, names, lo, hi, max_bound_rows), row_kinds(robot, method),
                         floors=NoiseFloors(robot.profile))
