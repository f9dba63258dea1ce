"""Joint-space Bezier trajectories: q(t) = sum_i B_i^d(t/T) P_i, one curve for all joints.

Bernstein coefficients give convex-hull enclosures: on any time sub-interval the curve (and each of
its derivatives) lies in the box spanned by the control points of that sub-interval's restriction.
The certifier builds its state boxes from :func:`segment_points`; limits become linear in the control
points.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import comb


def _casteljau(points: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Control points of the two halves [0, s] and [s, 1] of a Bernstein polynomial (axis 0)."""
    work = np.array(points, dtype=float)
    m = len(work)
    left, right = [work[0].copy()], [work[-1].copy()]
    for _ in range(1, m):
        work = (1.0 - s) * work[:-1] + s * work[1:]
        left.append(work[0].copy())
        right.append(work[-1].copy())
    return np.array(left), np.array(right[::-1])


@lru_cache(maxsize=64)
def restriction_matrices(degree: int, intervals: int) -> np.ndarray:
    """(K, d+1, d+1) matrices M_k: control points of the restriction of a degree-d Bernstein
    polynomial to the k-th of K equal sub-intervals of [0, 1] are M_k @ P."""
    eye = np.eye(degree + 1)
    mats = np.empty((intervals, degree + 1, degree + 1))
    for k in range(intervals):
        a, b = k / intervals, (k + 1) / intervals
        head, _ = _casteljau(eye, b)                      # restriction to [0, b]
        _, piece = _casteljau(head, a / b if b > 0 else 0.0)
        mats[k] = piece
    mats.setflags(write=False)
    return mats


def segment_points(points: np.ndarray, intervals: int) -> np.ndarray:
    """(K, m, n) Bernstein coefficients of the polynomial with coefficients ``points`` (m, n) on each
    of K equal sub-intervals of its domain."""
    points = np.asarray(points, dtype=float)
    return np.einsum("kij,jn->kin", restriction_matrices(len(points) - 1, intervals), points)


def restrict(points: np.ndarray, s0, s1) -> np.ndarray:
    """(S, m, n) Bernstein coefficients of the polynomial with coefficients ``points`` (m, n) on the
    sub-intervals [s0, s1] (arrays (S,), fractions of the domain, 0 <= s0 < s1 <= 1)."""
    points = np.asarray(points, dtype=float)
    s0 = np.asarray(s0, dtype=float).reshape(-1, 1, 1)
    s1 = np.asarray(s1, dtype=float).reshape(-1, 1, 1)
    work = np.broadcast_to(points, (s0.shape[0],) + points.shape)
    heads = [work[:, 0]]
    for _ in range(1, points.shape[0]):                      # restriction to [0, s1]
        work = (1.0 - s1) * work[:, :-1] + s1 * work[:, 1:]
        heads.append(work[:, 0])
    work = np.stack(heads, axis=1)
    u = np.where(s1 > 0.0, s0 / np.where(s1 > 0.0, s1, 1.0), 0.0)
    tails = [work[:, -1]]
    for _ in range(1, points.shape[0]):                      # then to [s0 / s1, 1] of that piece
        work = (1.0 - u) * work[:, :-1] + u * work[:, 1:]
        tails.append(work[:, -1])
    return np.stack(tails[::-1], axis=1)


def bernstein_basis(degree: int, s) -> np.ndarray:
    """(len(s), d+1) Bernstein basis values at s in [0, 1]."""
    s = np.atleast_1d(np.asarray(s, dtype=float))[:, None]
    i = np.arange(degree + 1)[None, :]
    return comb(degree, i) * s**i * (1.0 - s) ** (degree - i)


def _derivative(points: np.ndarray, duration_s: float) -> np.ndarray:
    d = len(points) - 1
    return d / duration_s * np.diff(points, axis=0)


@dataclass(frozen=True)
class BezierPlan:
    """A joint trajectory on [0, T]: control points (d+1, n) in rad, duration T in s.

    Outside [0, T] the plan holds its end state: :meth:`evaluate` clamps time, which for plans that end
    at rest (three equal last control points, as :meth:`from_state` builds) is the exact continuation.
    """

    control_points: np.ndarray
    duration_s: float

    def __post_init__(self):
        points = np.array(self.control_points, dtype=float)
        if points.ndim != 2 or len(points) < 2:
            raise ValueError(f"control_points must be (d+1, n) with d >= 1, got shape {points.shape}")
        if not np.all(np.isfinite(points)):
            raise ValueError("control_points must be finite")
        if not (np.isfinite(self.duration_s) and self.duration_s > 0.0):
            raise ValueError(f"duration_s must be positive and finite, got {self.duration_s}")
        points.setflags(write=False)
        object.__setattr__(self, "control_points", points)
        object.__setattr__(self, "duration_s", float(self.duration_s))

    @property
    def degree(self) -> int:
        """Degree of the Bezier curve."""
        return len(self.control_points) - 1

    @property
    def n_joints(self) -> int:
        """Number of joints."""
        return self.control_points.shape[1]

    def derivative_points(self, k: int) -> np.ndarray:
        """Control points ((d+1-k), n) of d^k q / dt^k in SI units (rad/s^k)."""
        if not 0 <= k <= self.degree:
            raise ValueError(f"derivative order {k} outside 0..{self.degree}")
        points = self.control_points
        for _ in range(k):
            points = _derivative(points, self.duration_s)
        return points

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, qdd at times t (s), each (len(t), n)."""
        s = np.clip(np.atleast_1d(np.asarray(t, dtype=float)) / self.duration_s, 0.0, 1.0)
        out = []
        for k in range(3):
            if k > self.degree:
                out.append(np.zeros((len(s), self.n_joints)))
                continue
            points = self.derivative_points(k)
            out.append(bernstein_basis(len(points) - 1, s) @ points)
        return out[0], out[1], out[2]

    def split(self, s: float) -> tuple[BezierPlan, BezierPlan]:
        """The plan cut at fraction s of its duration (de Casteljau): pieces on [0, sT] and [sT, T]."""
        if not 0.0 < s < 1.0:
            raise ValueError(f"split fraction must be in (0, 1), got {s}")
        left, right = _casteljau(self.control_points, s)
        return (BezierPlan(left, s * self.duration_s), BezierPlan(right, (1.0 - s) * self.duration_s))

    @staticmethod
    def holding(q, degree: int, duration_s: float) -> BezierPlan:
        """Holding still at ``q`` for ``duration_s``: every control point of the degree-``degree`` plan at q."""
        return BezierPlan(np.tile(np.asarray(q, dtype=float), (degree + 1, 1)), duration_s)

    @staticmethod
    def from_state(q, qd, qdd, free_points, duration_s) -> BezierPlan:
        """A plan starting at state (q, qd, qdd) and ending at rest.

        ``free_points`` ((d-4), n): the interior free control points, then the rest point (which is
        repeated three times so velocity and acceleration vanish at T). Degree d = len(free_points) + 4.
        """
        q, qd, qdd = (np.asarray(x, dtype=float).reshape(-1) for x in (q, qd, qdd))
        free = np.atleast_2d(np.asarray(free_points, dtype=float))
        n = len(q)
        if qd.shape != (n,) or qdd.shape != (n,) or free.shape[1] != n:
            raise ValueError(f"state and free points must have {n} joints (got qd {qd.shape}, "
                             f"qdd {qdd.shape}, free_points {free.shape})")
        d = len(free) + 4
        T = float(duration_s)
        p0 = q
        p1 = q + qd * T / d
        p2 = qdd * T**2 / (d * (d - 1)) + 2.0 * p1 - p0
        rest = free[-1]
        points = np.vstack([p0, p1, p2, free[:-1], rest, rest, rest])
        return BezierPlan(points, T)
