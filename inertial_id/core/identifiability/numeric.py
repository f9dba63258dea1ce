"""Numerical base parameters from stacked regressor samples (Gautier's QR with column pivoting).

Notation of seed 001: with a regressor ``W`` (rows: samples, columns: standard parameters ``pi``),
``Pb`` and ``Pd`` are column selections (permutation blocks) of the independent and dependent
columns, ``W Pd = W Pb Kd``, and the base parameters are ``theta_b = (Pb^T + Kd Pd^T) pi``:
``W pi = (W Pb) theta_b`` for every state. ``Kd`` has shape ``(n_base, n_dependent)``.

Rank tolerance: a column is independent when its pivoted-QR diagonal ``|R_kk|`` exceeds
``tol = rel_tol * |R_00|`` (default ``rel_tol = 1e-9``, well above the ~1e-15 roundoff of the
sampled regressors and far below the smallest genuine pivot seen on the built-in models).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

DEFAULT_REL_TOL = 1e-9


@dataclass(frozen=True)
class BaseParameters:
    independent: np.ndarray   # column indices of the base columns (into pi), in pivot order
    dependent: np.ndarray     # remaining column indices
    Kd: np.ndarray            # (n_base, n_dependent): W[:, dependent] = W[:, independent] @ Kd
    n_params: int
    pivots: np.ndarray        # |R_kk| of the pivoted QR, for diagnosing near rank deficiency

    @property
    def rank(self) -> int:
        return self.independent.size

    @property
    def Pb(self) -> np.ndarray:
        return np.eye(self.n_params)[:, self.independent]

    @property
    def Pd(self) -> np.ndarray:
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
    Wo = W[:, order]
    norms = np.linalg.norm(Wo, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    _, R, perm = scipy.linalg.qr(Wo / scale, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    tol = rel_tol * (diag[0] if diag.size and diag[0] > 0 else 1.0)
    rank = int(np.sum(diag > tol)) if norms.max(initial=0) > 0 else 0
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
