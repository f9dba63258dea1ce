"""Guaranteed payload bounds from momentum windows, and the sample intake shared with the
log-Cholesky estimator.

Every window row satisfies ``|Y theta_e + Y_r theta_r - U| <= e`` whenever the torque error and the
model error stay within their stated bounds (:class:`~..momentum.MomentumWindows`), and the robot's
parameters ``theta_r`` lie in a box around their nominal values (±5 % by default). Keeping
``theta_r`` as LP variables inside that box (one shared unknown for all rows) and taking the
per-parameter min/max of ``theta_e`` over the resulting polytope (:class:`~.bounds.IntervalBounds`,
rows kept across updates, dual-certified LP bounds) encloses the true payload parameters. Robot
parameters whose box has zero width are moved to the right side, which leaves the projection
unchanged.

Physical consistency adds linear cuts that every real body satisfies (:func:`~.physical_cuts.pseudo_inertia_cuts`):
the diagonal of the pseudo-inertia's 3x3 block is non-negative (``Iyy + Izz >= Ixx`` and its
permutations) and so is its quadratic form along a fixed set of directions (tangent planes of the
semidefinite cone: second moments about points around the frame origin); ``m >= 0`` comes with the
prior box.

Interface (what the node calls): ``add_samples(t, q, qd, tau)`` with the raw sample stream — the
momentum form needs positions, velocities and measured joint torques at a fixed high rate, not
acceleration rows; windows of ``window`` samples close as data arrive — then ``update_bounds()``
and ``result() -> PayloadEstimate``.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..robot import params
from ..robot.model import Robot
from ..signals.momentum import MomentumWindows, WindowRows
from ..robot.robot_box import ROBOT_RELATIVE_ERROR, robot_parameter_box
from ..signals.sensors import NoiseModel
from .bounds import FINAL_LP_ROWS, IntervalBounds
from .physical_cuts import pseudo_inertia_cuts
from .consistent import (InfeasibleError, SolverFailure, consistent_estimate, marginal_information,
                         payload_estimate)
from .bootstrap import WindowBootstrap, widen_by_bias
from .payload import PayloadEstimate
from .robust_point import WindowRowStore
from .row_checks import unsolvable
from .sound_floor import archived_witnesses_kg, archived_problem, floors_with_one_bound_halved

# Rows kept for the next LP update (see IntervalBounds.max_rows): about 0.1 s per update for a
# 7-DoF arm (~100 columns), whatever the run length; in the bounds benchmark the box after minutes
# of data is as tight as with 500 kept rows (the pruned rows are the non-binding ones).
MAX_LP_ROWS = 300


class MomentumEstimatorBase:
    """Sample intake, row store and the robot-parameter box shared by the momentum estimators."""

    method = ""

    def __init__(self, robot: Robot, prior_lower, prior_upper, window: int = 400,
                 noise: NoiseModel | None = None, model_error_Nm: float | None = None,
                 robot_relative_error: float = ROBOT_RELATIVE_ERROR, calibration=None):
        """``calibration`` (:class:`~..calibration.Calibration`): row bounds, excluded samples, torque
        sign and the robot box from it; the run's torque offsets are then unknowns of the least
        squares too (nuisance), not only of the bounds."""
        noise = noise or NoiseModel.from_profile(robot.spec)
        if model_error_Nm is None:
            model_error_Nm = float(robot.spec.noise.model_error_Nm)
        self.robot = robot
        self.names = params.parameter_names(robot.spec.payload.name)
        self.prior_lower = np.asarray(prior_lower, dtype=float)
        self.prior_upper = np.asarray(prior_upper, dtype=float)
        self.calibration = calibration
        self.window_s = calibration.window(window)["duration_s"] if calibration is not None else \
            window / robot.sensing.joint_states_hz
        self.windows = MomentumWindows(robot, window, noise.torque_relative, noise.torque_absolute_Nm,
                                       model_error_Nm, **({} if calibration is None else calibration.window_options(window)))
        self.robot_nominal: np.ndarray
        self.robot_lower: np.ndarray
        self.robot_upper: np.ndarray
        self.robot_nominal, self.robot_lower, self.robot_upper = \
            robot_parameter_box(robot.model, robot_relative_error) if calibration is None else \
            calibration.robot_box(robot.model)
        # robot columns estimated with the payload by least squares: the calibrated offsets
        self.ls_nuisance = np.flatnonzero(self.robot_upper > self.robot_lower) if calibration is not None \
            else np.zeros(0, dtype=int)
        self._new_rows: list[WindowRows] = []
        self.statistics = RowStatistics(10 + self.ls_nuisance.size)
        self.bootstrap = WindowBootstrap(10 + self.ls_nuisance.size)
        self.point_rows: WindowRowStore | None = None     # rows kept for a robust point estimate, if any
        self.samples_used = 0
        self.message = ""
        self.refused: dict[str, int] = {}     # rows refused before they reach any solver, by reason

    def add_samples(self, t, q, qd, tau) -> None:
        """One sample (``t`` scalar, vectors of nv) or a stream (``t`` (N,), arrays (N, nv))."""
        self.windows.add_samples(t, q, qd, tau)
        self.add_rows(self.windows.take_rows())

    def add_rows(self, batch: WindowRows) -> None:
        """Window rows formed elsewhere (e.g. one :class:`MomentumWindows` feeding several
        estimators); they must use this estimator's window and error bounds."""
        if batch.rows == 0:
            return
        bad = unsolvable(np.hstack([batch.Y, batch.Y_r]), batch.U, batch.noise_bound)
        if bad:
            self.refused[bad[0]] = self.refused.get(bad[0], 0) + 1
            return
        self._new_rows.append(batch)
        A = np.hstack([batch.Y, batch.Y_r[:, self.ls_nuisance]])
        u = batch.U - batch.Y_r @ self.robot_nominal
        self.statistics.add(A, u, batch.noise_bound)
        self.bootstrap.add(A, u, batch.noise_bound, self.robot.nv)
        if self.point_rows is not None:
            self.point_rows.add(A, u, batch.noise_bound)
        self.samples_used += batch.samples

    def _take_new_rows(self) -> WindowRows:
        batch = concatenate_rows(self._new_rows, self.robot_nominal.size)
        self._new_rows = []
        return batch

    def condition_number(self) -> float:
        """Condition number of the weighted information of the payload columns so far."""
        return self.statistics.condition_number()


def concatenate_rows(parts, n_r: int) -> WindowRows:
    """All rows of ``parts`` in one (one copy, however many parts)."""
    if not parts:
        return WindowRows.empty(n_r)
    return WindowRows(np.vstack([p.Y for p in parts]), np.vstack([p.Y_r for p in parts]),
                      np.concatenate([p.U for p in parts]), np.concatenate([p.noise_bound for p in parts]),
                      sum(p.samples for p in parts))


class RowStatistics:
    """Running sums of rows ``Y x = u`` (``u`` with the nominal robot moved to the right side):
    the weighted normal equations (weights ``1/e^2``) and the unweighted Gram matrix, so that the
    point estimate and the conditioning cost the same after one minute as after ten."""

    def __init__(self, n: int = 10):
        self.information = np.zeros((n, n))
        self.rhs = np.zeros(n)
        self.gram = np.zeros((n, n))
        self.rows = 0

    def add(self, Y, u, e) -> None:
        """Add rows ``Y theta = u`` with error bounds ``e`` (weights ``1 / e^2``) to the sums."""
        w = 1.0 / np.maximum(e, 1e-12) ** 2
        self.information += Y.T @ (w[:, None] * Y)
        self.rhs += Y.T @ (w * u)
        self.gram += Y.T @ Y
        self.rows += u.size

    def condition_number(self) -> float:
        """Condition number of the stacked ``Y`` (square root of that of its Gram matrix)."""
        if self.rows < self.gram.shape[0]:
            return float("inf")
        try:
            eig = np.linalg.eigvalsh(self.gram)
        except np.linalg.LinAlgError:
            return float("inf")
        return float(np.sqrt(eig[-1] / eig[0])) if eig[0] > 0 and np.isfinite(eig[-1]) else float("inf")

    def state(self) -> dict:
        """The sums as a dict (saved with the estimator's state)."""
        return {"information": self.information, "rhs": self.rhs, "gram": self.gram, "rows": self.rows}

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state`'s dict; ValueError when a saved array does not fit or is not finite."""
        for k in ("information", "rhs", "gram"):
            value = np.asarray(state[k], dtype=float)
            if value.shape != getattr(self, k).shape or not np.all(np.isfinite(value)):
                raise ValueError(f"saved '{k}' has the wrong shape or is not finite")
            setattr(self, k, value)
        self.rows = int(state["rows"])


class GuaranteedEstimator(MomentumEstimatorBase):
    """LP bounds over the joint feasible set of payload and robot parameters (guaranteed).

    ``robot_uncertainty``: ``"lp"`` keeps ``theta_r`` as LP variables in its box (exact projection);
    ``"interval"`` instead widens each row's bound by ``|Y_r| dtheta_r`` (interval arithmetic, row by
    row: also guaranteed, smaller LPs, but each row may take another worst case, so looser)."""

    method = "guaranteed"

    def __init__(self, robot: Robot, prior_lower, prior_upper, robot_uncertainty: str = "lp",
                 max_rows: int | None = MAX_LP_ROWS, **kwargs):
        super().__init__(robot, prior_lower, prior_upper, **kwargs)
        if robot_uncertainty not in ("lp", "interval"):
            raise ValueError(f"robot_uncertainty must be 'lp' or 'interval', not '{robot_uncertainty}'")
        self.robot_uncertainty = robot_uncertainty
        free = self.robot_upper > self.robot_lower
        self._free = free
        nuisance: dict[str, Any] = {} if robot_uncertainty == "interval" else \
            dict(nuisance_lower=self.robot_lower[free], nuisance_upper=self.robot_upper[free])
        self.bounds = IntervalBounds(self.prior_lower, self.prior_upper, cuts=pseudo_inertia_cuts(),
                                     keep_rows=True, max_rows=max_rows, hold_until_determined=True,
                                     archive_rows=FINAL_LP_ROWS, **nuisance)
        self.violating_rows = np.zeros(0, dtype=int)
        # with a calibration the rows' error is heavy-tailed (largest 3-5x the RMS): the point
        # estimate is the least-absolute-deviations fit of the rows (robust_point), not least squares
        if self.calibration is not None:
            self.point_rows = WindowRowStore(10 + self.ls_nuisance.size, robot.nv)

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
        self._report(upd)

    def final_update_bounds(self) -> None:
        """The box of one LP over every row so far (:meth:`~.bounds.IntervalBounds.final_update`)."""
        self.update_bounds()
        self._report(self.bounds.final_update())

    def support(self, C) -> np.ndarray:
        """Upper bounds of ``c . pi`` (payload parameters) over the final LP's feasible set, one per
        row of ``C`` (:meth:`~.bounds.IntervalBounds.support`)."""
        return self.bounds.support(C)

    def sound_floor_kg(self, pi_true) -> float | None:
        """The mass width no sound box beats on the rows so far (:mod:`.sound_floor`), with the
        admissible truth ``pi_true`` and the nominal robot; None before any rows or with the robot's
        box taken row by row (``robot_uncertainty="interval"``)."""
        witnesses = self.sound_witnesses_kg(pi_true)
        return None if witnesses is None else witnesses[1] - witnesses[0]

    def sound_witnesses_kg(self, pi_true) -> tuple[float, float] | None:
        """The masses of the lightest and the heaviest payload that explain the rows so far
        (:func:`~.sound_floor.sound_mass_witnesses_kg`: every sound box holds both), as
        :meth:`sound_floor_kg` takes them."""
        if self.robot_uncertainty != "lp":
            return None
        return archived_witnesses_kg(self.bounds, self.prior_lower, self.prior_upper, pi_true,
                                     self.robot_nominal[self._free])

    def floors_with_one_bound_halved(self, pi_true) -> dict:
        """:meth:`sound_floor_kg` with one stated bound halved at a time
        (:func:`~.sound_floor.floors_with_one_bound_halved`: the rows' bounds, then each group of
        the robot's free parameters, :func:`~..robot.params.robot_parameter_groups`); {} when
        :meth:`sound_floor_kg` has none."""
        problem = None if self.robot_uncertainty != "lp" else \
            archived_problem(self.bounds, self.prior_lower, self.prior_upper, pi_true, self.robot_nominal[self._free])
        if problem is None:
            return {}
        kinds = params.robot_parameter_groups(self.robot.model)[self._free]
        groups = {str(k): 10 + np.flatnonzero(kinds == k) for k in dict.fromkeys(kinds)}
        return floors_with_one_bound_halved(*problem, groups)

    def _report(self, upd) -> None:
        if not upd.consistent:
            self.violating_rows = upd.violating_rows
            self.message = (f"data contradict the assumed torque/model/robot bounds: rows "
                            f"{upd.violating_rows.tolist()} (window*nv + joint) must violate them "
                            f"(largest excess {upd.max_violation:.3g} N m s)")

    def state(self) -> dict:
        """What a restart needs: the box, the rows the next LP reuses, the rows not yet in the box
        and the running sums."""
        b = self.bounds
        M, rows_b, rows_e = b.kept_rows
        pending = concatenate_rows(self._new_rows, self.robot_nominal.size)
        return {"lower": b.lower, "upper": b.upper, "data_consistent": b.data_consistent, "rows_used": b.rows_used,
                "determined": b.determined, "pending_Y": pending.Y, "pending_Y_r": pending.Y_r,
                "pending_U": pending.U, "pending_e": pending.noise_bound, "pending_samples": pending.samples,
                "kept_M": M, "kept_b": rows_b, "kept_e": rows_e, **self.statistics.state(),
                **({} if self.point_rows is None else self.point_rows.state()),
                "samples_used": self.samples_used, "message": self.message}

    def restore(self, state: dict) -> None:
        """Continue from a saved state (box, kept rows, rows awaiting the next update); ValueError when it does not fit."""
        self.bounds.restore(state["lower"], state["upper"], bool(state["data_consistent"]), int(state["rows_used"]),
                            kept=(state["kept_M"], state["kept_b"], state["kept_e"]),
                            determined=bool(state["determined"]) if "determined" in state else None)
        if "pending_U" in state:
            Y, Y_r, U, e = (np.asarray(state[k], dtype=float) for k in ("pending_Y", "pending_Y_r", "pending_U", "pending_e"))
            pending = WindowRows(Y, Y_r, U, e, int(state["pending_samples"]))
            if pending.Y.shape != (pending.U.size, 10) or pending.Y_r.shape != (pending.U.size, self.robot_nominal.size) \
                    or pending.noise_bound.shape != pending.U.shape or \
                    (pending.rows and unsolvable(np.hstack([pending.Y, pending.Y_r]), pending.U, pending.noise_bound)):
                raise ValueError("saved pending rows do not fit this estimator")
            self._new_rows = [pending] if pending.rows else []
        self.statistics.restore(state)
        if self.point_rows is not None:
            self.point_rows.restore(state)
        self.samples_used = int(state["samples_used"])
        self.message = str(state["message"])

    def statistical_interval(self, level: float = 0.95, block_s: float = 1.0, replicates: int = 200,
                             seed: int = 0) -> dict | None:
        """NOT guaranteed: moving-block bootstrap interval of the consistent least-squares estimate
        (:class:`~.bootstrap.WindowBootstrap`, blocks of ``block_s`` of data), inside the current box,
        widened by the calibration's run-to-run payload bias when it has one; None with too little data.
        ``level`` is nominal: :func:`~.bootstrap.interval_label` names what held-out runs validated."""
        block = max(1, int(round(block_s / self.window_s)))
        out = self.bootstrap.interval(self.bounds.lower, self.bounds.upper, block, level, replicates, seed)
        bias = None if self.calibration is None else self.calibration.payload_bias_rms
        if out is None or bias is None:
            return out
        out = widen_by_bias(out, bias, self.calibration.bias_runs())
        # the guaranteed box holds the truth whenever its assumptions do: no use reaching beyond it
        out["lower"], out["upper"] = np.maximum(out["lower"], self.bounds.lower), np.minimum(out["upper"], self.bounds.upper)
        return out

    def _point_estimate(self, lo, hi) -> np.ndarray:
        """The consistent payload vector in ``lo..hi`` nearest (metric of the information) to the
        least-absolute-deviations fit of the kept rows (:mod:`.robust_point`; least squares without a
        calibration)."""
        stats, n = self.statistics, len(self.names)
        fit = None if self.point_rows is None else self.point_rows.fit()
        if fit is None:
            return payload_estimate(stats.information, stats.rhs, n, lo, hi)
        return consistent_estimate(fit[:n], marginal_information(stats.information, n), lo, hi)

    def result(self) -> PayloadEstimate:
        """The guaranteed box, a point estimate inside it (:meth:`_point_estimate`), and the data's consistency."""
        n = len(self.names)
        lo, hi = self.bounds.lower.copy(), self.bounds.upper.copy()
        message = self.message
        estimate = 0.5 * (lo + hi)
        stats = self.statistics
        if stats.rows >= n:
            # least squares (least absolute deviations with a calibration) with the nominal robot and
            # the calibrated offsets as unknowns, then the consistent vector nearest to it in the box
            try:
                estimate = self._point_estimate(lo, hi)
            except (InfeasibleError, SolverFailure, np.linalg.LinAlgError) as exc:
                message = message or str(exc)
        ok = self.bounds.data_consistent
        return PayloadEstimate(
            parameter_names=self.names, method=self.method, estimate=estimate, lower=lo, upper=hi,
            covariance=np.zeros((0, 0)),
            physically_consistent=bool(np.all(np.isfinite(estimate)) and params.is_physically_consistent(estimate)),
            bounds_guaranteed=ok, data_consistent=ok, samples_used=self.samples_used,
            condition_number=self.condition_number(), message=message)
