"""Choices made on held-out parts of the training data: the weight of the prior toward the nominal
model, and which friction terms earn their parameters.

Folds: each training run is held out in turn when there are two runs or more (runs are recorded
separately, so a held-out run tests generalisation rather than interpolation between neighbouring
samples); a single run is split into its two halves in time. Validation runs given by the user are
never used here.

Score: the mean over held-out rows of ``(w_j r)^2``, with ``r`` the torque residual and ``w_j`` the
joint weights of the whole training set (the same chi-square the solver minimises, per row).
"""
from __future__ import annotations

import numpy as np

from ..robot import closed_chain as cc
from ..robot.params import FRICTION_NAMES
from .problem import Problem, problem_from_rows
from .solvers import DEFAULT_LMI_MARGIN, ConsistentSDP, Plausibility, joint_weights, solve

WEIGHT_GRID = (0.0, 0.01, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
TIE = 0.01     # held-out scores within 1 % of each other count as equal


def folds(problem: Problem) -> list[np.ndarray]:
    """Held-out sample indices of each fold."""
    runs = problem.rows.run_samples()
    if len(runs) >= 2:
        return runs
    n = problem.rows.n_samples
    return [np.arange(n // 2), np.arange(n // 2, n)]


def cross_validate(problem: Problem, grid, bounds: dict, w=None,
                   lmi_margin: float = DEFAULT_LMI_MARGIN) -> list[dict]:
    """Per weight of ``grid``: ``score`` (see module doc) and per-joint held-out ``rms`` (N m) over
    all folds, each fold's SDP held to ``bounds`` (``plausible.LinkBounds`` per body) as the final
    solve is. One compiled SDP per fold serves the whole grid."""
    w = joint_weights(problem) if w is None else w
    grid = [float(g) for g in grid]
    sq = np.zeros((len(grid), problem.na))
    n = 0
    for held in folds(problem):
        train = problem.subset(np.setdiff1d(np.arange(problem.rows.n_samples), held))
        test = problem.subset(held)
        row_w = np.tile(w, train.rows.n_samples)
        sdp = ConsistentSDP(train, row_w, lmi_margin, bounds, divergence=any(g > 0 for g in grid))
        for i, g in enumerate(grid):
            est = solve(train, "lmi", lmi_margin, Plausibility(g, bounds), weights=w, sdp=sdp)
            r = (test.b - test.A @ est.theta[problem.free]).reshape(-1, problem.na)
            sq[i] += np.sum(r**2, axis=0)
        n += held.size
    return [{"score": float(np.sum(s * w**2) / (n * problem.na)), "rms": np.sqrt(s / n)} for s in sq]


def select_weight(problem: Problem, bounds: dict, grid=WEIGHT_GRID,
                  lmi_margin: float = DEFAULT_LMI_MARGIN) -> dict:
    """The smallest grid weight whose held-out score is within ``TIE`` of the lowest: the data keep
    every say the held-out error does not take from them. ``scores`` lists every grid point."""
    scores = [cv["score"] for cv in cross_validate(problem, grid, bounds, lmi_margin=lmi_margin)]
    best = next(i for i, s in enumerate(scores) if s <= (1 + TIE) * min(scores))
    return {"weight": float(grid[best]), "grid": [float(g) for g in grid], "scores": scores,
            "folds": len(folds(problem))}


def friction_support(chain: cc.ClosedChain, problem: Problem, fixed_groups, weight: float, bounds: dict,
                     lmi_margin: float = DEFAULT_LMI_MARGIN, tolerance: float = 0.01) -> dict:
    """Held-out score with all friction terms, without each one (held at its nominal value: zero,
    or the nominal rotor inertia for ``Ia``) and without friction at all. A term is ``supported``
    when leaving it out raises the held-out score by more than ``tolerance`` (relative)."""
    w = joint_weights(problem)
    held = problem.layout.nominal.copy()
    held[problem.fixed] = problem.theta_fixed
    full = cross_validate(problem, [weight], bounds, w, lmi_margin)[0]
    out = {"with_all": {"score": full["score"], "rms": full["rms"].tolist()}, "without": {}, "supported": {}}
    for term in (*FRICTION_NAMES, "friction"):
        if set(problem.layout.indices([term])) <= set(problem.fixed):
            continue
        reduced = problem_from_rows(chain, problem.layout, problem.rows, [*fixed_groups, term], held, check=False)
        cv = cross_validate(reduced, [weight], bounds, w, lmi_margin)[0]
        out["without"][term] = {"score": cv["score"], "rms": cv["rms"].tolist()}
        out["supported"][term] = bool(cv["score"] > (1 + tolerance) * full["score"])
    return out

