"""The estimator of the per-sample row methods: a point estimate plus guaranteed bounds.

Methods:
- ``rls``: recursive least squares (weights 1/sigma^2, weak prior at the centre of the prior box);
  consistency is reported, not enforced.
- ``lmi``: weighted least squares projected onto the physically consistent set inside the current
  guaranteed box (SDP); always consistent when the box admits a consistent vector.
- ``guaranteed``: the same computation, named for what the caller relies on: the box. (With joint
  torque sensing the node runs :class:`~.guaranteed.GuaranteedEstimator` on momentum rows instead.)

- ``pmd``: point-mass discretization of the payload's shape from wrench rows and the
  sensor kinematics they carry; consistent by construction. Needs ``pmd`` (a configured
  :class:`~inertial_id.core.pmd.estimator.PmdEstimator`).

All maintain :class:`~.bounds.IntervalBounds` from the rows' error bounds (independent of the point
estimate), over physically consistent payloads (:func:`~.physical_cuts.pseudo_inertia_cuts`). The box is reported as guaranteed only if every row was added with ``guaranteed=True``:
rows whose right side uses the nominal robot model (joint-torque rows) hold only if that model is
exact, so callers add them with ``guaranteed=False``. Row intake (``add_rows``) is cheap; the LPs run in ``update_bounds`` on
the rows buffered since the last call.

Wrench rows use a differentiated acceleration. Their error from it depends on the payload: an error
``da`` of the sensor frame's spatial acceleration (bounded per sample by the sender,
``acceleration_bound``, :mod:`inertial_id.core.signals.acceleration_bound`) changes row ``i`` by
``sum_l da_l (C_l pi)_i`` (``acceleration_sensitivity``, :meth:`~inertial_id.core.robot.regressor.PayloadRegressor.wrench_acceleration_sensitivity`).
Each row's bound is raised, when it is added, by the largest that can be over the current box (which
holds the truth, and only shrinks): valid for the truth, tighter as the box tightens. Wrench rows
without an acceleration bound are not guaranteed.

F/T offsets (``offset_bound``, ``[f (N) x3, n (N m) x3]``, from the profile): the sensor's zero is an
unknown of the run, within that box, never assumed tared. Wrench rows get six more columns (the
offset, added to every sample's reading): nuisance parameters of the bounds LP and estimated with the
payload by the least squares, whose payload part is reported. The offset is a constant of the run: each
update narrows its box too (saved with the state), and the next starts from there. The final update
checks the offset's box rather than resting on it (:mod:`.offset_freeing`), on rows whose acceleration
share is the candidate payload's own (an affine bound within the box) rather than the box's worst.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

from ..robot import params
from ..signals.acceleration_bound import acceleration_share
from .batch import WeightedLeastSquares
from .bounds import FINAL_LP_ROWS, IntervalBounds
from .consistent import InfeasibleError, SolverFailure, payload_estimate
from .offset_freeing import OFFSET_AXES, FREED_FACTOR, offset_sound_box
from .physical_cuts import pseudo_inertia_cuts
from .rls import RecursiveLeastSquares
from .row_checks import unsolvable



def offset_columns(rows: int) -> np.ndarray:
    """The F/T offset's six columns of ``rows`` wrench rows (six a sample, ``[f, n]``): the offset
    adds to every sample's reading."""
    return np.tile(np.eye(6), (rows // 6, 1))


class Point(Enum):
    """How a row method forms its point estimate."""

    RECURSIVE = "recursive least squares"
    CONSISTENT = "consistent weighted least squares in the box"
    POINT_MASSES = "point-mass discretization"


ROW_METHODS = {"rls": Point.RECURSIVE, "lmi": Point.CONSISTENT, "guaranteed": Point.CONSISTENT,
               "pmd": Point.POINT_MASSES}


class Support(NamedTuple):
    """What a final LP says in given payload directions: ``values[k]``, an upper bound of
    ``directions[k] . pi`` over every payload it admits (a dual certificate); ``labels[k]``, what the
    caller asked direction ``k`` for."""
    directions: np.ndarray
    values: np.ndarray
    labels: np.ndarray


@dataclass
class PayloadEstimate:
    """An estimate of the payload's parameters (pinocchio order, payload frame) with its box, covariance and how it was obtained."""
    parameter_names: list
    method: str
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    covariance: np.ndarray
    physically_consistent: bool
    bounds_guaranteed: bool
    data_consistent: bool
    samples_used: int
    condition_number: float
    message: str = ""
    # the last final LP's support in the directions the session was given, or None
    final_support: Support | None = None
    # the box does not rest on the F/T offset's stated box unchecked: the rows have no offset, none
    # has narrowed the prior yet, or a final update checked it (offset_freeing); the online boxes
    # before that assume it
    offset_checked: bool = True


class PayloadEstimator:
    """Rows of one kind (joint torque or wrench) into one of the row methods (``rls``, ``lmi``, ``pmd``), with a guaranteed box from the wrench rows."""
    def __init__(self, method: str, parameter_names, prior_lower, prior_upper,
                 max_bound_rows: int = 3000, seed: int = 0, pmd=None, acceleration_sensitivity=None,
                 offset_bound=None):
        if method not in ROW_METHODS:
            raise ValueError(f"unknown estimation method '{method}' (choose from {', '.join(ROW_METHODS)})")
        self.point = ROW_METHODS[method]
        if (self.point is Point.POINT_MASSES) != (pmd is not None):
            raise ValueError("method 'pmd' needs a PmdEstimator (and only it takes one)")
        self.method = method
        self.pmd = pmd
        self.names = list(parameter_names)
        n = len(self.names)
        lo, hi = np.asarray(prior_lower, float), np.asarray(prior_upper, float)
        # the sensor offset's box (module docstring); none: the sensor is taken as tared
        self.offset_bound = None if offset_bound is None or not np.any(np.asarray(offset_bound, float) > 0) else \
            np.asarray(offset_bound, dtype=float)
        k = 0 if self.offset_bound is None else 6
        self.columns = n + k
        self.prior = (lo.copy(), hi.copy())
        # guaranteed wrench rows as they came, [A, O], b, e without the acceleration's share, and
        # that acceleration's bound: the final box checks the offset's box on them (offset_freeing)
        self._archive: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.offset_freed = np.zeros(k, dtype=bool)
        self.offset_guaranteed = True
        # a check found the offset inside its stated box: it stays there (a constant of the run)
        self.offset_established = False
        # the box rests on no unchecked offset box: no offset, or a check since (PayloadEstimate)
        self.offset_checked = self.offset_bound is None
        nuisance: dict[str, Any] = {} if self.offset_bound is None else {
            "nuisance_lower": -self.offset_bound, "nuisance_upper": self.offset_bound, "bound_nuisance": True}
        # every payload is a body: physically consistent (the cuts need its 10 parameters)
        cuts = pseudo_inertia_cuts() if n == 10 else None
        self.bounds = IntervalBounds(lo, hi, hold_until_determined=True, archive_rows=FINAL_LP_ROWS, cuts=cuts,
                                     **nuisance)
        self.wls = WeightedLeastSquares(n + k)
        centre = np.where(np.isfinite(lo + hi), 0.5 * (lo + hi), 0.0)
        spread = np.where(np.isfinite(hi - lo), 0.5 * (hi - lo), 1e3)
        if k:
            centre, spread = np.r_[centre, np.zeros(k)], np.r_[spread, self.offset_bound]
        self.rls = RecursiveLeastSquares(centre, np.diag(spread**2))
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.max_bound_rows = max_bound_rows
        self._rng = np.random.default_rng(seed)
        self.samples_used = 0
        self.message = ""
        self.rows_guaranteed = True
        self.refused: dict[str, int] = {}     # rows refused before they reach any solver, by reason
        # (6, 6, 10) wrench-row change per unit of sensor-frame acceleration (module docstring)
        self.acceleration_sensitivity = None if acceleration_sensitivity is None else \
            np.asarray(acceleration_sensitivity, dtype=float)

    def add_rows(self, A, b, noise_bound, noise_sigma, samples: int = 1, kinematics=None,
                 guaranteed: bool = True, acceleration_bound=None, wrench: bool | None = None) -> None:
        """Rows ``A x = b`` with per-row error bounds and sigmas. For ``pmd``: wrench rows (6 per
        sample) with ``kinematics`` of each sample (``[a, w, alpha, g]``, 12 values, sensor frame).
        ``acceleration_bound``: ``(samples, 6)`` for wrench rows (module docstring); ``guaranteed``
        rows without it, on an estimator that has the sensitivity, are taken as not guaranteed.
        ``wrench``: the rows are wrench rows, 6 a sample (default: ``guaranteed``), which carry the
        sensor offset's columns."""
        A = np.atleast_2d(np.asarray(A, float))
        b = np.asarray(b, float)
        sigma = np.asarray(noise_sigma, float)
        if guaranteed and self.acceleration_sensitivity is not None:
            if acceleration_bound is None or np.size(acceleration_bound) != b.size:
                guaranteed = False
                self.message = "wrench rows without an acceleration error bound: the box is not guaranteed"
            else:
                sensor_bound = np.asarray(noise_bound, float)
                noise_bound = sensor_bound + self.acceleration_share(acceleration_bound)
        bad = unsolvable(A, b, noise_bound) or \
            (None if np.all(np.isfinite(sigma)) and np.all(sigma > 0) else ("non_positive_noise", "")) or \
            (None if kinematics is None else unsolvable(kinematics, [], []))
        if self.pmd is not None:
            if kinematics is None or np.size(kinematics) != 2 * b.size:
                raise ValueError("method 'pmd' needs wrench rows with the sensor kinematics of each sample")
            if b.size % 6:
                bad = ("pmd_needs_wrench_kinematics", "wrench rows come 6 per sample")
        if bad:     # refused before any solver sees them (counted)
            self.refused[bad[0]] = self.refused.get(bad[0], 0) + 1
            return
        if self.pmd is not None:
            k = np.asarray(kinematics, float).reshape(-1, 12)
            self.pmd.update(k[:, 0:3], k[:, 3:6], k[:, 6:9], k[:, 9:12], b.reshape(-1, 6))
        w = 1.0 / np.square(np.maximum(sigma, 1e-12))
        if self.offset_bound is not None:        # the offset's columns: identity on wrench rows
            wrench = guaranteed if wrench is None else wrench
            offset = offset_columns(b.size) if wrench and b.size % 6 == 0 else np.zeros((b.size, 6))
            A = np.hstack([A, offset])
        self.wls.update(A, b, w)
        if self.point is Point.RECURSIVE:
            self.rls.update(A, b, w)
        self.rows_guaranteed &= guaranteed
        self._pending.append((A, b, np.asarray(noise_bound, float)))
        self.samples_used += samples
        if guaranteed and self.offset_bound is not None and self.acceleration_sensitivity is not None:
            self._archive.append((A, b, sensor_bound, np.asarray(acceleration_bound, float).reshape(-1, 6)))
            archived = sum(part[1].size for part in self._archive)
            while archived - self._archive[0][1].size >= FINAL_LP_ROWS:
                archived -= self._archive.pop(0)[1].size

    def acceleration_share(self, acceleration_bound) -> np.ndarray:
        """Per wrench row, the largest error that a sensor-frame acceleration error within
        ``acceleration_bound`` ``(samples, 6)`` causes for any payload of the current box."""
        return acceleration_share(self.acceleration_sensitivity, self.bounds.lower, self.bounds.upper,
                                  acceleration_bound)

    def update_bounds(self) -> None:
        """Intersect the box with the buffered rows. Every buffered row is a valid constraint, so
        subsampling them (to bound the LP size) keeps the result guaranteed, only less tight."""
        if not self._pending:
            return
        if not self.bounds.data_consistent:
            self._pending.clear()          # the box is frozen: the data broke its assumptions
            return
        A = np.vstack([p[0] for p in self._pending])
        b = np.concatenate([p[1] for p in self._pending])
        e = np.concatenate([p[2] for p in self._pending])
        self._pending.clear()
        if b.size > self.max_bound_rows:
            keep = self._rng.choice(b.size, self.max_bound_rows, replace=False)
            A, b, e = A[keep], b[keep], e[keep]
        n = len(self.names)
        self._report(self.bounds.update(A[:, :n], b, e, A_nuisance=A[:, n:] if self.offset_bound is not None else None))

    def final_update_bounds(self) -> None:
        """The box of one LP over every row so far (:meth:`~.bounds.IntervalBounds.final_update`),
        then the F/T offset's check (:meth:`_check_offset`)."""
        self.update_bounds()
        self._report(self.bounds.final_update())
        self._check_offset()

    def _check_offset(self) -> None:
        """Check the F/T offset's stated box on the latest ``FINAL_LP_ROWS`` wrench rows
        (:func:`~.offset_freeing.offset_sound_box`) rather than rest on it.

        Where the stated box held, the offset is inside it for the rest of the run (a constant), and
        the boxes intersect, now and at every later check. Where it did not, the box is the checked
        one, solved with the offset's axes that reached their box freed, and so are the updates that
        follow (they hold whatever the offset is there); a later check then intersects."""
        stated = self.offset_bound
        if stated is None or not self._archive or not self.bounds.data_consistent or not self.rows_guaranteed:
            return
        M, b, e, da = (np.concatenate([part[i] for part in self._archive]) for i in range(4))
        sound = offset_sound_box(M, b, e, da, self.acceleration_sensitivity, *self.prior, stated)
        box = self.bounds
        if not sound.consistent:
            box.data_consistent = False
            self.message = "data contradict the assumed noise bounds whatever the F/T offset"
            return
        # the box so far rests on the stated offset box unless a check held or axes were freed
        established, freed_before = self.offset_established, self.offset_freed.any()
        self.offset_checked = True
        self.offset_established |= sound.stated_offset_held
        if self.offset_established or freed_before:
            if sound.guaranteed:
                box.lower, box.upper = np.maximum(box.lower, sound.lower), np.minimum(box.upper, sound.upper)
                box.r_lower, box.r_upper = np.maximum(box.r_lower, sound.offset_lower), np.minimum(box.r_upper, sound.offset_upper)
        else:
            box.lower, box.upper = sound.lower, sound.upper
            box.r_lower, box.r_upper = sound.offset_lower, sound.offset_upper
        if self.offset_established:         # the stated box back for the updates that follow
            box.r_lower, box.r_upper = np.maximum(box.r_lower, -stated), np.minimum(box.r_upper, stated)
        box.upper, box.r_upper = np.maximum(box.upper, box.lower), np.maximum(box.r_upper, box.r_lower)
        if self.offset_established:
            if not established and freed_before:
                self.message = ""
            self.offset_freed, self.offset_guaranteed = np.zeros_like(self.offset_freed), True
            return
        self.offset_freed, self.offset_guaranteed = sound.freed, sound.guaranteed
        axes = ", ".join(a for a, f in zip(OFFSET_AXES, sound.freed) if f)
        if not sound.guaranteed:
            self.message = f"the F/T offset ({axes}) reaches {FREED_FACTOR:g}x its stated box: the box is not guaranteed"
        elif axes:
            self.message = f"the data leave the F/T offset at its stated box ({axes}): the box holds whatever it is there"

    def _report(self, upd) -> None:
        if not upd.consistent:
            self.message = (f"data contradict the assumed noise bounds: {upd.violating_rows.size} rows "
                            f"violate them (largest excess {upd.max_violation:.3g})")

    def state(self) -> dict:
        """What a restart needs, rows not yet in the box included. The ``pmd`` estimate is not part
        of it: it starts again from the rows that follow."""
        b = self.bounds
        pending = [np.vstack([p[0] for p in self._pending]) if self._pending else np.zeros((0, self.columns))] + \
            [np.concatenate([p[i] for p in self._pending]) if self._pending else np.zeros(0) for i in (1, 2)]
        return {"lower": b.lower, "upper": b.upper, "data_consistent": b.data_consistent, "rows_used": b.rows_used,
                "determined": b.determined, "pending_A": pending[0], "pending_b": pending[1], "pending_e": pending[2],
                "information": self.wls.information, "rhs": self.wls.rhs, "wls_rows": self.wls.rows_used,
                "rls_x": self.rls.x, "rls_P": self.rls.P, "samples_used": self.samples_used,
                "rows_guaranteed": self.rows_guaranteed, "message": self.message,
                "offset_lower": b.r_lower, "offset_upper": b.r_upper, "offset_established": self.offset_established,
                "offset_freed": self.offset_freed, "offset_guaranteed": self.offset_guaranteed}

    def restore(self, state: dict) -> None:
        """Continue from a saved state; ValueError when it does not fit this estimator."""
        n = self.columns
        arrays = {k: np.asarray(state[k], dtype=float) for k in ("information", "rhs", "rls_x", "rls_P")}
        if arrays["information"].shape != (n, n) or arrays["rls_P"].shape != (n, n) or \
                arrays["rhs"].shape != (n,) or arrays["rls_x"].shape != (n,) or \
                not all(np.all(np.isfinite(v)) for v in arrays.values()):
            raise ValueError("saved estimator state does not fit this estimator")
        self.bounds.restore(state["lower"], state["upper"], bool(state["data_consistent"]), int(state["rows_used"]),
                            determined=bool(state["determined"]) if "determined" in state else None)
        if "offset_lower" in state:      # the offset's box as the updates so far narrowed it, never wider
            lo, hi = (np.asarray(state[k], dtype=float) for k in ("offset_lower", "offset_upper"))
            box = self.bounds
            if lo.shape != box.r_lower.shape or hi.shape != box.r_upper.shape or np.any(np.isnan(lo + hi)) or np.any(lo > hi):
                raise ValueError("saved sensor offset box does not fit this estimator")
            box.r_lower, box.r_upper = np.maximum(box.r_lower, lo), np.minimum(box.r_upper, hi)
            box.r_upper = np.maximum(box.r_upper, box.r_lower)
            # an axis stays freed only while its range goes beyond the stated box (a fresh instance
            # clips it there: the box rests on that box again, and a failed check replaces it)
            freed = np.asarray(state.get("offset_freed", np.zeros(lo.size)), dtype=bool)
            if freed.shape != self.offset_freed.shape:
                raise ValueError("saved sensor offset box does not fit this estimator")
            if self.offset_bound is not None:
                freed &= (box.r_lower < -self.offset_bound) | (box.r_upper > self.offset_bound)
            self.offset_freed = freed
            self.offset_guaranteed = bool(state.get("offset_guaranteed", True))
            self.offset_established = bool(state.get("offset_established", False))
            self.offset_checked = self.offset_bound is None or self.offset_established or bool(freed.any())
        if "pending_A" in state:
            A, b, e = (np.asarray(state[k], dtype=float) for k in ("pending_A", "pending_b", "pending_e"))
            if A.ndim != 2 or A.shape[1] != n or b.shape != e.shape or b.shape != (A.shape[0],) or \
                    (b.size and unsolvable(A, b, e)):
                raise ValueError("saved pending rows do not fit this estimator")
            self._pending = [(A, b, e)] if b.size else []
        self.wls.information, self.wls.rhs = arrays["information"], arrays["rhs"]
        self.wls.rows_used = int(state["wls_rows"])
        self.rls.x, self.rls.P = arrays["rls_x"], arrays["rls_P"]
        self.samples_used = int(state["samples_used"])
        self.rows_guaranteed = bool(state["rows_guaranteed"])
        self.message = str(state["message"])

    def support(self, C) -> None:
        """None: the wrench rows' box is checked against the F/T offset round by round
        (:mod:`.offset_freeing`), and no one polytope holds it."""
        return None

    def result(self) -> PayloadEstimate:
        """The method's estimate with the box, covariance and consistency flags."""
        n = len(self.names)
        cov = np.full((n, n), np.nan)
        estimate = self.rls.x[:n].copy() if self.point is Point.RECURSIVE else np.full(n, np.nan)
        message = self.message
        if self.pmd is not None and self.pmd.samples_used:
            try:
                estimate = self.pmd.result()["estimate"]
            except RuntimeError as exc:        # the conic solver found no solution: no estimate now
                message = str(exc)
        try:
            cov = self.wls.solve()[1][:n, :n]
        except np.linalg.LinAlgError:
            message = message or "not enough excitation yet: the data leave parameters undetermined"
        if self.point is Point.CONSISTENT:
            # least squares of minimum norm with the offsets estimated along, then the consistent
            # vector nearest to it in the payload's marginal information: an inverse of a nearly
            # singular information (the first rows of a run) gave estimates of 1e16 and a metric
            # with negative eigenvalues, on which the conic solver failed
            try:
                estimate = payload_estimate(self.wls.information, self.wls.rhs, n, self.bounds.lower, self.bounds.upper)
            except (InfeasibleError, SolverFailure, np.linalg.LinAlgError) as exc:
                message = str(exc)
                estimate = np.clip(self.rls.x[:n], self.bounds.lower, self.bounds.upper)
        finite = np.all(np.isfinite(estimate))
        if finite and not np.all(self.bounds.contains(estimate)):
            message = message or "the point estimate lies outside the guaranteed box"
        return PayloadEstimate(
            parameter_names=self.names, method=self.method, estimate=estimate,
            lower=self.bounds.lower.copy(), upper=self.bounds.upper.copy(),
            covariance=cov if np.all(np.isfinite(cov)) else np.zeros((0, 0)),
            physically_consistent=bool(finite and params.is_physically_consistent(estimate)),
            bounds_guaranteed=self.bounds.data_consistent and self.rows_guaranteed and self.offset_guaranteed,
            data_consistent=self.bounds.data_consistent,
            samples_used=self.samples_used,
            condition_number=self.wls.condition_number(),
            message=message,
            offset_checked=self.offset_checked or self.bounds.rows_used == 0)
