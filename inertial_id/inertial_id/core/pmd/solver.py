"""Point-mass discretization (the reference's Problem 1) as a second-order cone program.

``min_{m >= 0} ||(1-w) o (At m - b)|| + ||w o (A m - b)|| + lambda ||m||`` with ``A = A(a, w, alpha) Phi``
(full model), ``At = A(0, 0, 0) Phi`` (the same pose at rest: gravity only) and ``Phi`` the
parameter vectors of unit masses at the points. Each sample's weight ``w = tanh(3 nu / c1)`` grows
with the dynamism ``nu`` of the motion (eq. 4, 9).

Data enter only through the normal equations ``(M^T M, M^T c, c^T c)`` of each residual ``M m - c``:
``||M m - c||^2 = ||R m - d||^2 + r0^2`` with ``R^T R = M^T M`` and ``R^T d = M^T c``, so the cone has
n + 1 entries whatever the number of samples, samples can be accumulated one by one, and the cvxpy
problem is built once per point set and re-solved with new parameter values.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from ..robot import params
from .samples import WristSamples

LAMBDA = 0.1                        # regularization of the paper (homogeneity, unique solution)
C1_SIMULATION = 300.0               # c1 of the paper's simulations; 5e3..25e3 on the real xArm7
DYNAMISM_SCALES = (1.0, 1.0, 0.5)   # n1, n2, n3 of eq. 4 for (|a|, |alpha|, |w|)


def point_mass_basis(p_S: np.ndarray) -> np.ndarray:
    """(10, n) ``Phi``: column i is the parameter vector (pinocchio order) of a unit mass at ``p_S[i]``.

    ``Phi @ m`` recovers the body's parameters; with ``m >= 0`` they are physically consistent, the
    pseudo-inertia being the sum of ``m_i [p_i; 1][p_i; 1]^T``.
    """
    zero = np.zeros((3, 3))
    return np.column_stack([params.params_from_com(1.0, p, zero) for p in np.asarray(p_S, dtype=float)])


def dynamism(samples: WristSamples, scales=DYNAMISM_SCALES) -> np.ndarray:
    """Eq. 4, per sample: ``||[|a|/n1, |alpha|/n2, |w|/n3]||^2``."""
    n1, n2, n3 = scales
    return ((np.linalg.norm(samples.a_S, axis=1) / n1) ** 2 + (np.linalg.norm(samples.alpha_S, axis=1) / n2) ** 2
            + (np.linalg.norm(samples.w_S, axis=1) / n3) ** 2)


def dynamism_weight(nu, c1: float = C1_SIMULATION) -> np.ndarray:
    """Eq. 9: share of the full model in each sample's residual."""
    return np.tanh(3.0 * np.asarray(nu, dtype=float) / c1)


@dataclass
class NormalEquations:
    """Running ``(M^T M, M^T c, c^T c)`` of a residual ``M m - c`` (scratch, grows with samples)."""

    n: int
    gram: np.ndarray = field(init=False)
    moment: np.ndarray = field(init=False)
    energy: float = field(init=False, default=0.0)

    def __post_init__(self):
        self.gram = np.zeros((self.n, self.n))
        self.moment = np.zeros(self.n)

    def add(self, M: np.ndarray, c: np.ndarray) -> None:
        """Add residual rows ``M m - c``."""
        self.gram += M.T @ M
        self.moment += M.T @ c
        self.energy += float(c @ c)

    def square_root(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(R, d, r0)`` with ``||M m - c||^2 = ||R m - d||^2 + r0^2`` for every ``m``."""
        ev, V = np.linalg.eigh(self.gram)
        keep = ev > 1e-12 * max(ev[-1], 1e-300)
        root = np.sqrt(np.where(keep, ev, 0.0))
        R = root[:, None] * V.T
        # M^T c lies in the range of M^T M, so the dropped directions carry no part of it
        d = np.where(keep, (V.T @ self.moment) / np.where(keep, root, 1.0), 0.0)
        return R, d, float(np.sqrt(max(float(self.energy - d @ d), 0.0)))


class PmdProblem:
    """Problem 1 for a fixed set of points ``p_S`` (constant: built once, solved many times)."""

    def __init__(self, p_S: np.ndarray, lam: float = LAMBDA, c1: float = C1_SIMULATION):
        self.p_S = np.asarray(p_S, dtype=float)
        self.Phi = point_mass_basis(self.p_S)
        self.c1 = c1
        n = len(self.p_S)
        self.masses = cp.Variable(n, nonneg=True)
        self._R = [cp.Parameter((n, n)) for _ in range(2)]
        self._d = [cp.Parameter(n) for _ in range(2)]
        self._r0 = [cp.Parameter(nonneg=True) for _ in range(2)]
        cost = lam * cp.norm(self.masses, 2)
        for R, d, r0 in zip(self._R, self._d, self._r0):
            cost += cp.norm(cp.hstack([R @ self.masses - d, cp.reshape(r0, (1,), order='C')]), 2)
        self.problem = cp.Problem(cp.Minimize(cost))

    def normal_equations(self, samples: WristSamples, sigma_wrench=None) -> tuple[NormalEquations, NormalEquations]:
        """(static, full) normal equations of ``samples``, rows weighted by ``1 - w`` and ``w``
        (and divided by the wrench noise ``sigma_wrench`` when given)."""
        n = len(self.p_S)
        static, full = NormalEquations(n), NormalEquations(n)
        self.accumulate(samples, static, full, sigma_wrench)
        return static, full

    def accumulate(self, samples: WristSamples, static: NormalEquations, full: NormalEquations,
                   sigma_wrench=None) -> None:
        """Add ``samples`` to the static and full normal equations, weighted by their dynamism (and by ``1 / sigma_wrench`` per wrench axis)."""
        scale = np.ones(6) if sigma_wrench is None else 1.0 / np.asarray(sigma_wrench, dtype=float)
        w = dynamism_weight(dynamism(samples), self.c1)
        for eq, A, weight in ((static, samples.static_regressors(), 1.0 - w), (full, samples.full_regressors(), w)):
            row = weight[:, None] * scale[None, :]                    # (K, 6)
            M = (row[:, :, None] * (A @ self.Phi)).reshape(-1, self.Phi.shape[1])
            eq.add(M, (row * samples.wrench_S).reshape(-1))

    def solve(self, static: NormalEquations, full: NormalEquations) -> np.ndarray:
        """Point masses (kg) minimizing Problem 1 for the accumulated data."""
        for k, eq in enumerate((static, full)):
            self._R[k].value, self._d[k].value, self._r0[k].value = eq.square_root()
        self.problem.solve(solver=cp.CLARABEL)
        if self.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"PMD solve failed: {self.problem.status}")
        masses = self.masses.value
        assert masses is not None           # an optimal solve sets it
        return np.maximum(masses, 0.0)

    def estimate(self, samples: WristSamples, sigma_wrench=None) -> np.ndarray:
        """Parameters (pinocchio order, sensor frame) from a batch of samples."""
        return self.Phi @ self.solve(*self.normal_equations(samples, sigma_wrench))
