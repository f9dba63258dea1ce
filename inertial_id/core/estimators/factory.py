"""The estimator a node runs for a method name, behind one interface for RegressorSample rows.

| method | rows it consumes | estimate | bounds reported as guaranteed |
|---|---|---|---|
| ``rls``, ``lmi`` | joint_torque or wrench | RLS / consistent WLS (SDP) | wrench rows: yes; joint-torque rows: no (they assume the nominal robot exact) |
| ``pmd`` | wrench (+ sensor kinematics) | point-mass discretization (seed 004) | as ``lmi`` |
| ``guaranteed`` | momentum (torque sensing) or wrench | consistent WLS in the box | yes: LP over payload and robot-parameter box (momentum) or the wrench rows' polytope |
| ``seed003`` | momentum | log-Cholesky IPOPT (seed 003) | no: Mean-Value-Form box at the nominal point |
"""
from __future__ import annotations


from .. import params
from ..momentum import WindowRows, robot_parameter_names
from .payload import PayloadEstimator

METHODS = ("rls", "lmi", "pmd", "guaranteed", "seed003")


class RowsEstimator:
    """Per-sample rows (joint_torque, wrench) into a :class:`PayloadEstimator`."""

    def __init__(self, estimator: PayloadEstimator, kinds: tuple[str, ...]):
        self.estimator = estimator
        self.kinds = kinds
        self.column_names = estimator.names

    def add(self, kind, A, b, e, sigma, samples, kinematics=None) -> None:
        self.estimator.add_rows(A, b, e, sigma, samples, kinematics=kinematics, guaranteed=(kind == "wrench"))

    def update_bounds(self) -> None:
        self.estimator.update_bounds()

    def result(self):
        return self.estimator.result()


class MomentumEstimator:
    """Momentum windows (payload columns, then the robot's) into a seed-003 or guaranteed estimator."""

    kinds = ("momentum",)

    def __init__(self, estimator):
        self.estimator = estimator
        self.column_names = estimator.names + robot_parameter_names(estimator.robot.model)

    def add(self, kind, A, b, e, sigma, samples, kinematics=None) -> None:
        self.estimator.add_rows(WindowRows(A[:, :10], A[:, 10:], b, e, samples))

    def update_bounds(self) -> None:
        self.estimator.update_bounds()

    def result(self):
        return self.estimator.result()


def make_estimator(robot, method: str, max_bound_rows: int = 3000):
    """The estimator for ``method`` on ``robot`` (profile decides torque vs wrench rows)."""
    if method not in METHODS:
        raise ValueError(f"unknown estimation method '{method}' (choose from {', '.join(METHODS)})")
    lo, hi = robot.payload_prior()
    ident = robot.profile.get("identification", {})
    momentum = bool(robot.profile.get("sensing", {}).get("joint_torque")) and ident.get("momentum_window", 0) > 0
    if method == "seed003" or (method == "guaranteed" and momentum):
        if not momentum:
            raise ValueError("method 'seed003' needs joint torque sensing and identification.momentum_window > 0")
        from .guaranteed import GuaranteedEstimator
        from .seed003 import Seed003Estimator
        cls = Seed003Estimator if method == "seed003" else GuaranteedEstimator
        return MomentumEstimator(cls(robot, lo, hi, window=int(ident["momentum_window"]),
                                     robot_relative_error=float(ident.get("robot_relative_error", 0.05))))
    names = params.parameter_names("payload")
    if method == "pmd":
        from ..model import relative_placement
        from ..pmd.estimator import PmdEstimator
        if robot.ft_frame_id is None:
            raise ValueError("method 'pmd' needs an F/T sensor frame in the profile")
        X_SP = relative_placement(robot.model, robot.ft_frame_id, robot.payload_frame_id)
        pmd = PmdEstimator.from_payload_profile(robot.profile.get("payload", {}), X_SP)
        return RowsEstimator(PayloadEstimator(method, names, lo, hi, max_bound_rows, pmd=pmd), ("wrench",))
    if method == "guaranteed" and robot.ft_frame_id is None:
        raise ValueError("method 'guaranteed' needs momentum rows (joint torque sensing) or an F/T sensor")
    kinds = ("wrench",) if method == "guaranteed" else ("joint_torque", "wrench")
    return RowsEstimator(PayloadEstimator(method, names, lo, hi, max_bound_rows), kinds)
