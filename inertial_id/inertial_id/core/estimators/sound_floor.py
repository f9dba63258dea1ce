"""The sound floor: a mass width no box sound under the rows' stated bounds can beat on these rows.

Take every kept row ``|M z - b| <= e`` with ``z = [pi, r]`` (the payload's 10 parameters, then the
nuisance parameters: the robot's own parameters inside their box for joint-torque rows, the F/T
offset inside its box for wrench rows), and replace the observations by those of one admissible
truth ``z_true`` with every error zero: ``b = M z_true``. Any physically consistent payload ``pi``
that, with some nuisance ``r`` inside its box, stays within every row's bound of those observations
could have produced them, so a box that leaves it out is wrong for some errors the bounds admit. The
lightest and the heaviest such payload (an SDP over all rows at once: cvxpy, Clarabel; the payload's
pseudo-inertia positive semidefinite) are two such witnesses, each moved toward the truth until it
passes the checks exactly (the solver meets its constraints only to its tolerance); their mass
difference is the floor.

Wrench rows use a differentiated acceleration whose error is bounded per sample
(:mod:`~..signals.acceleration_bound`): one unknown error of the sensor frame's acceleration per
sample, shared by its six rows, which moves them by ``sum_l da_l C_l pi`` (:class:`AccelerationErrors`).
A witness then needs some admissible error per sample that lets the rows explain it: the SDP takes
the errors as unknowns with their rows linearized at a payload (the truth, then the point the last
SDP found), and the check solves an LP for the errors with the witness's own payload and verifies
them exactly. Without those unknowns the floor would take the acceleration as exact, the floor of a
sensor the rows do not have (on the xArm7's first case of ``study sim``: 0.11 kg against 0.31 kg).

The ratio of a box's width to the floor is how much of the width the estimator, the planner or the
data could still give back; the floor itself is what the stated bounds cost, and shrinks only when
a bound does. The floor belongs to the error-free realization: on the recorded one, errors that
happen to shift the rows' bands can cut the feasible set narrower, so a ratio a little below 1 is
possible and says the box is at the floor.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..robot import params
from .consistent import pseudo_inertia_expr

# SDPs per witness with acceleration errors, each linearized at the point the last one found
LINEARIZATION_ROUNDS = 2
# the SDP's and the LP's row bounds, as a share of the stated ones: the solvers meet constraints only
# to their tolerance, and a point that misses its exact check by that much costs a bisection (with
# acceleration errors the set of explained payloads is not convex, and the bisection may stop short)
SOLVER_MARGIN = 1.0 - 1e-6
# halvings of the segment from the truth to a witness that misses its check: to 1e-9 of its length
BISECTION_STEPS = 30


class Unexplained(ValueError):
    """The truth given does not explain the rows' observations within their stated bounds."""


@dataclass(frozen=True)
class AccelerationErrors:
    """The per-sample unknowns of wrench rows (module docstring): the rows come six a sample, in the
    order of ``bound`` (samples, 6), each sample's differentiated sensor-frame acceleration errs by
    at most ``bound`` per axis (``[linear, angular]``), and an error ``da`` moves its rows by
    ``sum_l da_l C_l pi`` (``sensitivity`` C (6, 6, 10),
    :meth:`~..robot.regressor.PayloadRegressor.wrench_acceleration_sensitivity`)."""

    sensitivity: np.ndarray
    bound: np.ndarray

    def rows(self, pi) -> sp.csr_matrix:
        """(6 samples, 6 samples): the rows' change per unit of each sample's error, payload ``pi``."""
        per_sample = (np.asarray(self.sensitivity, dtype=float) @ np.asarray(pi, dtype=float)).T
        return sp.kron(sp.eye(self.bound.shape[0]), sp.csr_matrix(per_sample), format="csr")

    def halved(self) -> AccelerationErrors:
        """The same errors, bounded by half."""
        return AccelerationErrors(self.sensitivity, 0.5 * np.asarray(self.bound, dtype=float))

    def explain(self, residual, e, pi) -> bool:
        """Whether errors within the bound bring every row's ``residual`` within ``e`` for the
        payload ``pi``: an LP over the samples that need one (HiGHS), its solution clipped to the
        bound and checked exactly."""
        residual, e = np.asarray(residual, dtype=float), np.asarray(e, dtype=float)
        outside = np.abs(residual) > e
        if not outside.any():
            return True
        need = np.flatnonzero(outside.reshape(-1, 6).any(axis=1))
        rows = np.concatenate([6 * k + np.arange(6) for k in need])
        sub = AccelerationErrors(self.sensitivity, np.asarray(self.bound, dtype=float)[need])
        G, r, tol = sub.rows(pi), residual[rows], e[rows]
        bound = sub.bound.ravel()
        inner = SOLVER_MARGIN * tol
        result = linprog(np.zeros(bound.size), A_ub=sp.vstack([G, -G]), b_ub=np.concatenate([r + inner, inner - r]),
                         bounds=np.column_stack([-bound, bound]), method="highs")
        if result.status != 0:
            return False
        da = np.clip(result.x, -bound, bound)
        return bool(np.all(np.abs(r - G @ da) <= tol))


def sound_mass_floor_kg(M, e, lower, upper, z_true, acceleration: AccelerationErrors | None = None,
                        observed=None) -> float:
    """Mass width (kg) between the two verified witnesses of :func:`sound_mass_witnesses_kg` (same
    arguments)."""
    lightest, heaviest = sound_mass_witnesses_kg(M, e, lower, upper, z_true, acceleration, observed)
    return heaviest - lightest


def sound_mass_witnesses_kg(M, e, lower, upper, z_true, acceleration: AccelerationErrors | None = None,
                            observed=None) -> tuple[float, float]:
    """The masses (kg) of the lightest and the heaviest verified witness (module docstring): every
    box sound under the stated bounds on these rows holds both. ``M`` (rows, 10 + k) the
    rows' columns (payload first), ``e`` their bounds, ``[lower, upper]`` the box of ``z`` (the
    payload's prior, then the nuisance box), ``z_true`` the admissible truth inside it (a physically
    consistent payload); ``acceleration``: the wrench rows' per-sample acceleration errors (None:
    rows without one).

    ``observed``: the rows' recorded observations instead of the error-free ones, ``M z_true``. The
    witnesses then explain what was recorded, so every sound box on these rows holds both and is at
    least this wide, whatever the errors did (the truth must explain the recording: its errors within
    their bounds)."""
    M, e = np.atleast_2d(np.asarray(M, dtype=float)), np.asarray(e, dtype=float)
    lower, upper, z_true = (np.asarray(x, dtype=float) for x in (lower, upper, z_true))
    b = M @ z_true if observed is None else np.asarray(observed, dtype=float)

    def explains(z) -> bool:
        if not np.all((lower <= z) & (z <= upper)):
            return False
        residual = M @ z - b
        return bool(np.all(np.abs(residual) <= e)) or \
            (acceleration is not None and acceleration.explain(residual, e, z[:10]))
    if not (np.all((lower <= z_true) & (z_true <= upper)) and params.is_physically_consistent(z_true[:10], tol=0.0)):
        raise ValueError("the admissible truth must be a physical payload inside the box")
    if not explains(z_true):
        raise Unexplained("the truth does not explain the rows within their stated bounds")
    z = cp.Variable(M.shape[1])
    J = pseudo_inertia_expr(z[:10])
    finite = np.isfinite(lower) & np.isfinite(upper)
    constraints = [z[finite] >= lower[finite], z[finite] <= upper[finite], 0.5 * (J + J.T) >> 0]
    masses = []
    for farthest, objective in ((min, cp.Minimize(z[0])), (max, cp.Maximize(z[0]))):
        point, kept = z_true, []
        # the acceleration errors' rows linearized at the last SDP's point, from the truth on: the
        # witness the check keeps grows as the linearization comes to fit the point (every round's
        # witness is verified; the farthest counts)
        for _ in range(1 if acceleration is None else LINEARIZATION_ROUNDS):
            moved = M @ z - b
            if acceleration is not None:
                da = cp.Variable(acceleration.bound.size)
                moved = moved - acceleration.rows(point[:10]) @ da
                bounded = [cp.abs(da) <= np.asarray(acceleration.bound, dtype=float).ravel()]
            else:
                bounded = []
            problem = cp.Problem(objective, [cp.abs(moved) <= SOLVER_MARGIN * e, *constraints, *bounded])
            with warnings.catch_warnings():
                # an inaccurate solution is accepted by its status and then checked exactly (above)
                warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
                problem.solve(solver=cp.CLARABEL)
            if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                raise RuntimeError(f"the floor's SDP failed: {problem.status}")
            point = np.asarray(z.value)
            kept.append(_toward_physical(z_true, point, explains)[0])
        masses.append(farthest(kept))
    return float(masses[0]), float(masses[1])


def floors_with_one_bound_halved(M, e, lower, upper, z_true, groups: dict,
                                 acceleration: AccelerationErrors | None = None) -> dict[str, float | None]:
    """Which stated bound sets the floor: :func:`sound_mass_floor_kg` again with the rows' bounds
    ``e`` halved (``"row bounds"``), with the acceleration errors' bound halved (``"acceleration
    error"``, wrench rows), then with each nuisance group's box halved about its centre (``groups``:
    name -> columns of ``z``). None for a group whose box has no width or whose halved box leaves
    ``z_true`` out (the error-free realization would not be admissible)."""
    lower, upper, z_true = (np.asarray(x, dtype=float) for x in (lower, upper, z_true))
    out: dict[str, float | None] = {
        "row bounds": sound_mass_floor_kg(M, 0.5 * np.asarray(e, dtype=float), lower, upper, z_true, acceleration)}
    if acceleration is not None:
        out["acceleration error"] = sound_mass_floor_kg(M, e, lower, upper, z_true, acceleration.halved())
    for name, columns in groups.items():
        lo, hi = lower.copy(), upper.copy()
        centre, half = 0.5 * (lo[columns] + hi[columns]), 0.25 * (hi[columns] - lo[columns])
        lo[columns], hi[columns] = centre - half, centre + half
        inside = np.all((lo[columns] <= z_true[columns]) & (z_true[columns] <= hi[columns]))
        out[name] = sound_mass_floor_kg(M, e, lo, hi, z_true, acceleration) if np.any(half > 0) and inside else None
    return out


def _toward_physical(z_true, z, explains) -> np.ndarray:
    """The point of the segment from ``z_true`` to ``z`` nearest ``z`` whose payload is physically
    consistent and that ``explains`` the data (the solver meets its constraints only to its
    tolerance). Both hold on an interval from ``z_true`` (the pseudo-inertia is linear in the
    parameters and the semidefinite matrices a convex cone; the rows and the box are convex):
    bisection, which keeps the witness where the solver put it up to that tolerance (halving the
    segment instead lost up to half of each witness's distance, so the floor fell with a bound).
    With acceleration errors the explained set is not convex (the errors multiply the payload), and
    the bisection may stop short of the farthest explained point: the point it keeps is checked all
    the same, so the floor stays one."""
    def admissible(t: float) -> bool:
        point = z_true + t * (z - z_true)
        return params.is_physically_consistent(point[:10], tol=0.0) and explains(point)
    if admissible(1.0):
        return z
    inside, outside = 0.0, 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (inside + outside)
        inside, outside = (mid, outside) if admissible(mid) else (inside, mid)
    return z_true + inside * (z - z_true)


Problem = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def archived_problem(bounds, prior_lower, prior_upper, pi_true, nuisance_true) -> Problem | None:
    """``(M, e, lower, upper, z_true)`` of :func:`sound_mass_floor_kg` over the rows an estimator's
    :class:`~.bounds.IntervalBounds` archived (:func:`archived_witnesses_kg`); None without any."""
    rows = bounds.archive()
    if rows is None:
        return None
    M, _, e = rows
    lower = np.concatenate([prior_lower, bounds.nuisance_prior[0]])
    upper = np.concatenate([prior_upper, bounds.nuisance_prior[1]])
    return M, e, lower, upper, np.concatenate([pi_true, nuisance_true])


def archived_witnesses_kg(bounds, prior_lower, prior_upper, pi_true, nuisance_true) -> tuple[float, float] | None:
    """:func:`sound_mass_witnesses_kg` over the rows an estimator's
    :class:`~.bounds.IntervalBounds` archived for its final LP (its nuisance box as it stood at the
    start: the robot's box, or the offset's stated box), with the admissible truth ``[pi_true,
    nuisance_true]``; None without archived rows."""
    problem = archived_problem(bounds, prior_lower, prior_upper, pi_true, nuisance_true)
    return None if problem is None else sound_mass_witnesses_kg(*problem)
