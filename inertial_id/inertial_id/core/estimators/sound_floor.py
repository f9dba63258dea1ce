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

The ratio of a box's width to the floor is how much of the width the estimator, the planner or the
data could still give back; the floor itself is what the stated bounds cost, and shrinks only when
a bound does. The floor belongs to the error-free realization: on the recorded one, errors that
happen to shift the rows' bands can cut the feasible set narrower, so a ratio a little below 1 is
possible and says the box is at the floor.
"""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..robot import params
from .consistent import pseudo_inertia_expr


def sound_mass_floor_kg(M, e, lower, upper, z_true) -> float:
    """Mass width (kg) between two verified witnesses (module docstring): ``M`` (rows, 10 + k) the
    rows' columns (payload first), ``e`` their bounds, ``[lower, upper]`` the box of ``z`` (the
    payload's prior, then the nuisance box), ``z_true`` the admissible truth inside it (a physically
    consistent payload)."""
    M, e = np.atleast_2d(np.asarray(M, dtype=float)), np.asarray(e, dtype=float)
    lower, upper, z_true = (np.asarray(x, dtype=float) for x in (lower, upper, z_true))
    b = M @ z_true

    def explains(z) -> bool:
        return bool(np.all(np.abs(M @ z - b) <= e) and np.all((lower <= z) & (z <= upper)))
    if not (explains(z_true) and params.is_physically_consistent(z_true[:10], tol=0.0)):
        raise ValueError("the admissible truth must be a physical payload inside the box")
    z = cp.Variable(M.shape[1])
    J = pseudo_inertia_expr(z[:10])
    finite = np.isfinite(lower) & np.isfinite(upper)
    constraints = [cp.abs(M @ z - b) <= e, z[finite] >= lower[finite], z[finite] <= upper[finite],
                   0.5 * (J + J.T) >> 0]
    masses = []
    for objective in (cp.Minimize(z[0]), cp.Maximize(z[0])):
        problem = cp.Problem(objective, constraints)
        problem.solve(solver=cp.CLARABEL)
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"the error-free rows' SDP failed: {problem.status}")
        masses.append(_toward_physical(z_true, np.asarray(z.value), explains)[0])
    return float(masses[1] - masses[0])


def floors_with_one_bound_halved(M, e, lower, upper, z_true, groups: dict) -> dict[str, float | None]:
    """Which stated bound sets the floor: :func:`sound_mass_floor_kg` again with the rows' bounds
    ``e`` halved (``"row bounds"``), then with each nuisance group's box halved about its centre
    (``groups``: name -> columns of ``z``). None for a group whose box has no width or whose
    halved box leaves ``z_true`` out (the error-free realization would not be admissible)."""
    lower, upper, z_true = (np.asarray(x, dtype=float) for x in (lower, upper, z_true))
    out: dict[str, float | None] = {"row bounds": sound_mass_floor_kg(M, 0.5 * np.asarray(e, dtype=float), lower, upper, z_true)}
    for name, columns in groups.items():
        lo, hi = lower.copy(), upper.copy()
        centre, half = 0.5 * (lo[columns] + hi[columns]), 0.25 * (hi[columns] - lo[columns])
        lo[columns], hi[columns] = centre - half, centre + half
        inside = np.all((lo[columns] <= z_true[columns]) & (z_true[columns] <= hi[columns]))
        out[name] = sound_mass_floor_kg(M, e, lo, hi, z_true) if np.any(half > 0) and inside else None
    return out


def _toward_physical(z_true, z, explains) -> np.ndarray:
    """The point of the segment from ``z_true`` to ``z`` nearest ``z`` whose payload is physically
    consistent and that ``explains`` the data (the solver meets its constraints only to its
    tolerance). Both hold on an interval from ``z_true`` (the pseudo-inertia is linear in the
    parameters and the semidefinite matrices a convex cone; the rows and the box are convex):
    bisection, which keeps the witness where the solver put it up to that tolerance (halving the
    segment instead lost up to half of each witness's distance, so the floor fell with a bound)."""
    def admissible(t: float) -> bool:
        point = z_true + t * (z - z_true)
        return params.is_physically_consistent(point[:10], tol=0.0) and explains(point)
    if admissible(1.0):
        return z
    inside, outside = 0.0, 1.0
    for _ in range(50):
        mid = 0.5 * (inside + outside)
        inside, outside = (mid, outside) if admissible(mid) else (inside, mid)
    return z_true + inside * (z - z_true)


Problem = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def archived_problem(bounds, prior_lower, prior_upper, pi_true, nuisance_true) -> Problem | None:
    """``(M, e, lower, upper, z_true)`` of :func:`sound_mass_floor_kg` over the rows an estimator's
    :class:`~.bounds.IntervalBounds` archived (:func:`archived_floor_kg`); None without any."""
    rows = bounds.archive()
    if rows is None:
        return None
    M, _, e = rows
    lower = np.concatenate([prior_lower, bounds.nuisance_prior[0]])
    upper = np.concatenate([prior_upper, bounds.nuisance_prior[1]])
    return M, e, lower, upper, np.concatenate([pi_true, nuisance_true])


def archived_floor_kg(bounds, prior_lower, prior_upper, pi_true, nuisance_true) -> float | None:
    """:func:`sound_mass_floor_kg` over the rows an estimator's
    :class:`~.bounds.IntervalBounds` archived for its final LP (its nuisance box as it stood at the
    start: the robot's box, or the offset's stated box), with the admissible truth ``[pi_true,
    nuisance_true]``; None without archived rows."""
    problem = archived_problem(bounds, prior_lower, prior_upper, pi_true, nuisance_true)
    return None if problem is None else sound_mass_floor_kg(*problem)
