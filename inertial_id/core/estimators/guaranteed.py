"""Guaranteed payload bounds from momentum windows (issue 4), and the sample intake shared with the
seed 003 estimator.

Every window row satisfies ``|Y theta_e + Y_r theta_r - U| <= e`` whenever the torque error and the
model error stay within their stated bounds (:class:`~..momentum.MomentumWindows`), and the robot's
parameters ``theta_r`` lie in a box around their nominal values (±5 % by default). Keeping
``theta_r`` as LP variables inside that box (one shared unknown for all rows) and taking the
per-parameter min/max of ``theta_e`` over the resulting polytope (:class:`~.bounds.IntervalBounds`,
rows kept across updates, dual-certified LP bounds) encloses the true payload parameters. Robot
parameters whose box has zero width are moved to the right side, which leaves the projection
unchanged.

Physical consistency adds three linear cuts that every real body satisfies: the diagonal of the
pseudo-inertia's 3x3 block is non-negative (``Iyy + Izz >= Ixx`` and its permutations); ``m >= 0``
comes with the prior box.

Interface (what the node calls): ``add_samples(t, q, qd, tau)`` with the raw sample stream — the
momentum form needs positions, velocities and measured joint torques at a fixed high rate, not
acceleration rows; windows of ``window`` samples close as data arrive — then ``update_bounds()``
and ``result() -> Estimate``.
"""
from __future__ import annotations

import numpy as np

from .. import params
from ..model import Robot
from ..momentum import MomentumWindows, WindowRows, robot_parameters
from ..sim import NoiseModel
from .bounds import IntervalBounds
from .consistent import InfeasibleError, consistent_estimate
from .payload import Estimate

ROBOT_RELATIVE_ERROR = 0.05


def robot_parameter_box(model, relative: float = ROBOT_RELATIVE_ERROR):
    """(nominal, lower, upper) of the robot part ``theta_r`` (see :mod:`..momentum`): every nominal
    value ± ``relative`` of its magnitude; zero nominal values (no friction, zero products of
    inertia) are taken as exact."""
    nominal = robot_parameters(model)
    half = relative * np.abs(nominal)
    return nominal, nominal - half, nominal + half


def pseudo_inertia_diagonal_cuts():
    """``(G, g)``, ``G pi <= g``: the 3x3 block of the pseudo-inertia has a non-negative diagonal,
    ``(I_jj + I_kk - I_ii) / 2 >= 0`` (pinocchio order)."""
    G = np.zeros((3, 10))
    xx, yy, zz = 4, 6, 9
    for row, (i, j, k) in enumerate(((xx, yy, zz), (yy, xx, zz), (zz, xx, yy))):
        G[row, [i, j, k]] = [1.0, -1.0, -1.0]
    return G, np.zeros(3)


class MomentumEstimatorBase:
    """Sample intake, row store and the robot-parameter box shared by the momentum estimators."""

    method = ""

    def __init__(self, robot: Robot, prior_lower, prior_upper, window: int = 400,
                 noise: NoiseModel | None = None, model_error_Nm: float | None = None,
                 robot_relative_error: float = ROBOT_RELATIVE_ERROR):
        noise = noise or NoiseModel.from_profile(robot.profile)
        if model_error_Nm is None:
            model_error_Nm = float(robot.profile.get("noise", {}).get("model_error_Nm", 0.0))
        self.robot = robot
        self.names = params.parameter_names(robot.profile.get("payload", {}).get("name", "payload"))
        self.prior_lower = np.asarray(prior_lower, dtype=float)
        self.prior_upper = np.asarray(prior_upper, dtype=float)
        self.windows = MomentumWindows(robot, window, noise.torque_relative, noise.torque_absolute_Nm,
                                       model_error_Nm)
        self.robot_nominal, self.robot_lower, self.robot_upper = \
            robot_parameter_box(robot.model, robot_relative_error)
        self.rows = WindowRows.empty(self.robot_nominal.size)
        self._new_rows = WindowRows.empty(self.robot_nominal.size)
        self.samples_used = 0
        self.message = ""

    def add_samples(self, t, q, qd, tau) -> None:
        """One sample (``t`` scalar, vectors of nv) or a stream (``t`` (N,), arrays (N, nv))."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, qd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, tau))
        for k in range(t.size):
            self.windows.add_sample(t[k], q[k], qd[k], tau[k])
        self.add_rows(self.windows.take_rows())

    def add_rows(self, batch: WindowRows) -> None:
        """Window rows formed elsewhere (e.g. one :class:`MomentumWindows` feeding several
        estimators); they must use this estimator's window and error bounds."""
        self._new_rows.extend(batch)
        self.rows.extend(batch)
        self.samples_used += batch.samples

    def _take_new_rows(self) -> WindowRows:
        batch, self._new_rows = self._new_rows, WindowRows.empty(self.robot_nominal.size)
        return batch

    def condition_number(self) -> float:
        if self.rows.rows < 10:
            return float("inf")
        return float(np.linalg.cond(self.rows.Y))


class GuaranteedEstimator(MomentumEstimatorBase):
    """LP bounds over the joint feasible set of payload and robot parameters (guaranteed).

    ``robot_uncertainty``: ``"lp"`` keeps ``theta_r`` as LP variables in its box (exact projection);
    ``"interval"`` instead widens each row's bound by ``|Y_r| dtheta_r`` (interval arithmetic, row by
    row: also guaranteed, smaller LPs, but each row may take another worst case, so looser)."""

    method = "guaranteed"

    def __init__(self, robot: Robot, prior_lower, prior_upper, robot_uncertainty: str = "lp", **kwargs):
        super().__init__(robot, prior_lower, prior_upper, **kwargs)
        if robot_uncertainty not in ("lp", "interval"):
            raise ValueError(f"robot_uncertainty must be 'lp' or 'interval', not '{robot_uncertainty}'")
        self.robot_uncertainty = robot_uncertainty
        free = self.robot_upper > self.robot_lower
        self._free = free
        nuisance = {} if robot_uncertainty == "interval" else \
            dict(nuisance_lower=self.robot_lower[free], nuisance_upper=self.robot_upper[free])
        self.bounds = IntervalBounds(self.prior_lower, self.prior_upper, cuts=pseudo_inertia_diagonal_cuts(),
                                     keep_rows=True, **nuisance)
        self.violating_rows = np.zeros(0, dtype=int)

    def update_bounds(self) -> None:
        """Intersect the box with the polytope of all rows so far; never widens. On contradiction the
        box stays, ``data_consistent`` turns false and the offending rows are named."""
        batch = self._take_new_rows()
        if batch.rows == 0 or not self.bounds.data_consistent:
            return
        if self.robot_uncertainty == "interval":
            half = 0.5 * (self.robot_upper - self.robot_lower)
            b = batch.U - batch.Y_r @ self.robot_nominal
            upd = self.bounds.update(batch.Y, b, batch.noise_bound + np.abs(batch.Y_r) @ half)
        else:
            fixed = ~self._free
            b = batch.U - batch.Y_r[:, fixed] @ self.robot_nominal[fixed]
            upd = self.bounds.update(batch.Y, b, batch.noise_bound, A_nuisance=batch.Y_r[:, self._free])
        if not upd.consistent:
            self.violating_rows = upd.violating_rows
            self.message = (f"data contradict the assumed torque/model/robot bounds: rows "
                            f"{upd.violating_rows.tolist()} (window*nv + joint) must violate them "
                            f"(largest excess {upd.max_violation:.3g} N m s)")

    def result(self) -> Estimate:
        n = len(self.names)
        lo, hi = self.bounds.lower.copy(), self.bounds.upper.copy()
        message = self.message
        estimate = 0.5 * (lo + hi)
        if self.rows.rows >= n:
            # least squares with the nominal robot, then the consistent vector nearest to it in the box
            w = 1.0 / np.maximum(self.rows.noise_bound, 1e-12) ** 2
            Y, U = self.rows.Y, self.rows.U - self.rows.Y_r @ self.robot_nominal
            info = Y.T @ (w[:, None] * Y)
            try:
                x_ls = np.linalg.lstsq(info, Y.T @ (w * U), rcond=None)[0]
                estimate = consistent_estimate(x_ls, info, lo, hi)
            except InfeasibleError as exc:
                message = message or str(exc)
        ok = self.bounds.data_consistent
        return Estimate(
            parameter_names=self.names, method=self.method, estimate=estimate, lower=lo, upper=hi,
            covariance=np.zeros((0, 0)),
            physically_consistent=bool(np.all(np.isfinite(estimate)) and params.is_physically_consistent(estimate)),
            bounds_guaranteed=ok, data_consistent=ok, samples_used=self.samples_used,
            condition_number=self.condition_number(), message=message)
