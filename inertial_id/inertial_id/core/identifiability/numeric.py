"""Numerical base parameters from stacked regressor samples (Gautier's QR with column pivoting).

Notation of Zhang, Haugk & Vasudevan: with a regressor ``W`` (rows: samples, columns: standard parameters ``pi``),
``Pb`` and ``Pd`` are column selections (permutation blocks) of the independent and dependent
columns, ``W Pd = W Pb Kd``, and the base parameters are ``theta_b = (Pb^T + Kd Pd^T) pi``:
``W pi = (W Pb) theta_b`` for every state. ``Kd`` has shape ``(n_base, n_dependent)``.

Rank tolerance: a column is independent when its pivoted-QR diagonal ``|R_kk|`` exceeds
``tol = rel_tol * |R_00|`` (default ``rel_tol = 1e-9``, well above the ~1e-15 roundoff of the
sampled regressors and far below the smallest genuine pivot seen on the built-in models).
:func:`svd_rank` applies the same relative tolerance to singular values, as a cross-check.

:func:`base_parameters_from_rows` chooses base columns in a given preference order from any rows
spanning the identifiable directions (RPNA's ``N_sys`` or a sampled regressor); :func:`model_regressor`
stacks sampled regressors of a pinocchio model, optionally with motor rotors and a floating base.

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import scipy.linalg

from .spatial import ROTOR_EMBEDDING

DEFAULT_REL_TOL = 1e-9
# A preferred column is taken as a base column only if at least this fraction of it (a column of an
# orthonormal row basis) lies outside the span of the columns already taken; columns that are
# independent by less fill the remaining places afterwards. This keeps ``Kd`` well conditioned.
WELL_CONDITIONED = 1e-3


@dataclass(frozen=True)
class BaseParameters:
    """Base parameters of a sampled regressor: independent and dependent columns and the map ``Kd`` between them."""
    independent: np.ndarray   # column indices of the base columns (into pi), in pivot order
    dependent: np.ndarray     # remaining column indices
    Kd: np.ndarray            # (n_base, n_dependent): W[:, dependent] = W[:, independent] @ Kd
    n_params: int
    pivots: np.ndarray        # |R_kk| of the pivoted QR, for diagnosing near rank deficiency

    @property
    def rank(self) -> int:
        """Number of base parameters."""
        return self.independent.size

    @property
    def Pb(self) -> np.ndarray:
        """(n_params, rank) selection of the independent columns."""
        return np.eye(self.n_params)[:, self.independent]

    @property
    def Pd(self) -> np.ndarray:
        """(n_params, n_dependent) selection of the dependent columns."""
        return np.eye(self.n_params)[:, self.dependent]

    @property
    def base_map(self) -> np.ndarray:
        """``(n_base, n_params)`` matrix ``Pb^T + Kd Pd^T``: ``theta_b = base_map @ pi``."""
        return self.Pb.T + self.Kd @ self.Pd.T

    def reduce(self, W: np.ndarray) -> np.ndarray:
        """Columns of ``W`` that carry the base parameters (``W Pb``)."""
        return W[..., self.independent]

    def combinations(self, names, digits: int = 4, zero_tol: float = 1e-10) -> list[str]:
        """Each base parameter as a readable combination, e.g. ``'Izz1 + 0.09*m2'``."""
        out = []
        B = self.base_map
        for row in B:
            terms = []
            for j in np.flatnonzero(np.abs(row) > zero_tol):
                c = row[j]
                name = names[j]
                if abs(c - 1.0) < 10 ** -digits:
                    terms.append(("+", name))
                elif abs(c + 1.0) < 10 ** -digits:
                    terms.append(("-", name))
                else:
                    terms.append(("-" if c < 0 else "+", f"{abs(c):.{digits}g}*{name}"))
            text = " ".join(f"{s} {t}" for s, t in terms)
            out.append(text[2:] if text.startswith("+ ") else "-" + text[2:])
        return out


def _unit_columns(W: np.ndarray, rel_tol: float) -> np.ndarray:
    """Columns scaled to unit norm; columns below ``rel_tol`` times the largest norm are roundoff
    (a parameter the samples never excite) and are set to zero rather than blown up."""
    norms = np.linalg.norm(W, axis=0)
    keep = norms > rel_tol * norms.max(initial=0.0)
    return np.where(keep, W / np.where(keep, norms, 1.0), 0.0)


def base_parameters(W: np.ndarray, rel_tol: float = DEFAULT_REL_TOL,
                    preferred_order=None) -> BaseParameters:
    """Base parameters of the stacked regressor ``W`` (``(samples*rows, n_params)``).

    ``preferred_order``: optional permutation of the columns; among dependent sets the columns that
    come first are kept as base columns where possible (QR pivoting breaks ties in this order).
    """
    W = np.asarray(W, dtype=float)
    n = W.shape[1]
    order = np.arange(n) if preferred_order is None else np.asarray(preferred_order)
    # Scale-independent pivoting: normalise columns, then pivot.
    Wo = _unit_columns(W[:, order], rel_tol)
    _, R, perm = scipy.linalg.qr(Wo, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    tol = rel_tol * (diag[0] if diag.size and diag[0] > 0 else 1.0)
    rank = int(np.sum(diag > tol)) if diag.size and diag[0] > 0 else 0
    ind = order[perm[:rank]]
    dep = order[perm[rank:]]
    if dep.size:
        Kd, *_ = np.linalg.lstsq(W[:, ind], W[:, dep], rcond=None)
    else:
        Kd = np.zeros((rank, 0))
    Kd[np.abs(Kd) < 1e-12 * max(1.0, np.abs(Kd).max(initial=0))] = 0.0
    return BaseParameters(np.asarray(ind), np.asarray(dep), Kd, n, diag)


def sample_regressor(regressor_fn, sampler, n_samples: int = 50) -> np.ndarray:
    """Stack ``regressor_fn(*sampler())`` over ``n_samples`` random states."""
    return np.vstack([regressor_fn(*sampler()) for _ in range(n_samples)])


def svd_rank(W: np.ndarray, rel_tol: float = DEFAULT_REL_TOL) -> int:
    """Rank of ``W`` (columns scaled to unit norm) by singular values above ``rel_tol * s_max``."""
    s = np.linalg.svd(_unit_columns(np.asarray(W, dtype=float), rel_tol), compute_uv=False)
    return int(np.sum(s > rel_tol * s[0])) if s.size and s[0] > 0 else 0


def base_parameters_from_rows(rows: np.ndarray, preferred_order, rel_tol: float = DEFAULT_REL_TOL
                              ) -> BaseParameters:
    """Base parameters from rows spanning the identifiable directions (any row count).

    The base columns are picked greedily in ``preferred_order`` (the first column that is
    independent of those already picked wins), i.e. the pivots of the reduced row echelon form of
    the rows with columns in that order; ``Kd`` is read off that echelon form.
    """
    rows = np.asarray(rows, dtype=float)
    n = rows.shape[1]
    _, s, Vt = np.linalg.svd(rows, full_matrices=False)
    r = int(np.sum(s > rel_tol * max(1.0, s[0]))) if s.size else 0
    Q = Vt[:r]                      # orthonormal basis of the row space, (r, n)
    picked: list[int] = []
    residual = np.zeros(n)
    basis = np.zeros((r, 0))
    for threshold in (WELL_CONDITIONED, rel_tol):
        for j in preferred_order:
            if len(picked) == r or j in picked:
                continue
            norm = np.linalg.norm(Q[:, j])
            x = Q[:, j] - basis @ (basis.T @ Q[:, j])
            residual[j] = np.linalg.norm(x)
            if norm > rel_tol and residual[j] > threshold * norm:
                picked.append(int(j))
                basis = np.column_stack([basis, x / residual[j]])
    ind = np.array(picked, dtype=int)
    dep = np.array([j for j in preferred_order if j not in set(picked)], dtype=int)
    Kd = np.linalg.solve(Q[:, ind], Q[:, dep]) if r else np.zeros((0, dep.size))
    Kd[np.abs(Kd) < 1e-12 * max(1.0, np.abs(Kd).max(initial=0))] = 0.0
    return BaseParameters(ind, dep, Kd, n, residual[ind])


def model_regressor(model: pin.Model, rotors=None, n_samples: int | None = None, seed: int = 0,
                    static: bool = False) -> np.ndarray:
    """Stacked joint-torque regressor of ``model`` at random states, gravity ``model.gravity``.

    Columns: per body its 10 parameters (pinocchio order, joint frame), followed, for a body whose
    joint has a rotor (``rotors[j-1]``, a :class:`~.kinematic_tree.Rotor`), by the rotor's 4
    symmetric parameters ``[m, mcz, Ixx=Iyy, Izz]`` — the layout of :mod:`.rpna`. Rotors are
    simulated as extra bodies on a revolute joint turning ``gear_ratio`` times the joint; their
    torque reaches the joint through the gear (``tau = G^T tau_aug``). ``static``: v = a = 0.
    ``n_samples`` defaults to ``max(50, 2 * columns / nv + 4)``.
    """
    rotors = list(rotors) if rotors is not None else [None] * (model.njoints - 1)
    aug = pin.Model(model)
    G_rows = []
    for jid, rotor in enumerate(rotors, start=1):
        if rotor is not None:
            rid = aug.addJoint(int(model.parents[jid]), pin.JointModelRZ(), rotor.X_parent_rotor,
                               f"{model.names[jid]}_rotor")
            aug.appendBodyToJoint(rid, pin.Inertia.Zero(), pin.SE3.Identity())
            g = np.zeros(model.nv)
            g[model.joints[jid].idx_v] = rotor.gear_ratio
            G_rows.append(g)
    G = np.vstack([np.eye(model.nv)] + G_rows)       # v_aug = G v; rotor angles = G q (rotor rows)
    data = aug.createData()
    rng = np.random.default_rng(seed)
    n_cols = 10 * (model.njoints - 1) + 4 * len(G_rows)
    # sampling only bounds the rank from below: at least the project's default of 50 states and
    # twice as many rows as columns
    n_samples = n_samples or max(50, int(np.ceil(2 * n_cols / max(model.nv, 1))) + 4)

    def sample():
        dq = rng.uniform(-np.pi, np.pi, model.nv)
        q = np.concatenate([pin.integrate(model, pin.neutral(model), dq), G[model.nv:] @ dq])
        if static:
            return q, np.zeros(aug.nv), np.zeros(aug.nv)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        return q, G @ v, G @ a

    # (nv, cols) even for one joint, where pinocchio hands back a flat vector
    Y = sample_regressor(lambda q, v, a: G.T @ np.reshape(pin.computeJointTorqueRegressor(aug, data, q, v, a),
                                                          (aug.nv, -1)), sample, n_samples)
    cols, r = [], 0
    n_links = model.njoints - 1
    for b, rotor in enumerate(rotors):
        cols.append(Y[:, 10 * b:10 * b + 10])
        if rotor is not None:
            cols.append(Y[:, 10 * (n_links + r):10 * (n_links + r) + 10] @ ROTOR_EMBEDDING)
            r += 1
    return np.hstack(cols)
