"""Interval arithmetic on numpy arrays with outward rounding.

An :class:`Interval` holds elementwise bounds ``lo <= x <= hi`` of arrays of any shape (vectorised
across time sub-intervals, joints, ...). Every operation computes its bounds in round-to-nearest and
then moves each bound one ulp outwards (``np.nextafter``), which covers the rounding error of one
IEEE operation. sin/cos use the endpoint values (padded by libm's error, see ``_LIBM_ABS``) and the
extrema the interval contains, so they are sound for any width.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# numpy's float64 sin/cos are accurate to a few ulp (<= 4 ulp on the SIMD paths); 1e-14 absolute
# covers that with room to spare for values of magnitude <= 1.
_LIBM_ABS = 1.0e-14


def down(x):
    return np.nextafter(x, -np.inf)


def up(x):
    return np.nextafter(x, np.inf)


@dataclass(frozen=True)
class Interval:
    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self):
        lo, hi = np.broadcast_arrays(np.asarray(self.lo, dtype=float), np.asarray(self.hi, dtype=float))
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @staticmethod
    def point(x) -> "Interval":
        x = np.asarray(x, dtype=float)
        return Interval(x, x)

    @staticmethod
    def centered(mid, rad) -> "Interval":
        mid, rad = np.asarray(mid, dtype=float), np.asarray(rad, dtype=float)
        return Interval(down(mid - rad), up(mid + rad))

    @property
    def shape(self):
        return self.lo.shape

    @property
    def mid(self) -> np.ndarray:
        return 0.5 * (self.lo + self.hi)

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo

    def mag(self) -> np.ndarray:
        """Upper bound of |x|."""
        return np.maximum(np.abs(self.lo), np.abs(self.hi))

    def contains(self, x, tol: float = 0.0) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return (self.lo - tol <= x) & (x <= self.hi + tol)

    def __getitem__(self, idx) -> "Interval":
        return Interval(self.lo[idx], self.hi[idx])

    def __neg__(self) -> "Interval":
        return Interval(-self.hi, -self.lo)

    def __add__(self, other) -> "Interval":
        o = _as_interval(other)
        return Interval(down(self.lo + o.lo), up(self.hi + o.hi))

    __radd__ = __add__

    def __sub__(self, other) -> "Interval":
        o = _as_interval(other)
        return Interval(down(self.lo - o.hi), up(self.hi - o.lo))

    def __rsub__(self, other) -> "Interval":
        return _as_interval(other) - self

    def __mul__(self, other) -> "Interval":
        o = _as_interval(other)
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        lo = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
        hi = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
        return Interval(down(lo), up(hi))

    __rmul__ = __mul__

    def hull(self, other) -> "Interval":
        o = _as_interval(other)
        return Interval(np.minimum(self.lo, o.lo), np.maximum(self.hi, o.hi))

    def sum(self, axis) -> "Interval":
        """Sum along an axis, one outward step per addition (sequential accumulation)."""
        lo = np.moveaxis(self.lo, axis, 0)
        hi = np.moveaxis(self.hi, axis, 0)
        acc_lo, acc_hi = lo[0], hi[0]
        for k in range(1, len(lo)):
            acc_lo, acc_hi = down(acc_lo + lo[k]), up(acc_hi + hi[k])
        return Interval(acc_lo, acc_hi)


def _as_interval(x) -> Interval:
    return x if isinstance(x, Interval) else Interval.point(x)


def stack(items, axis=-1) -> Interval:
    return Interval(np.stack([i.lo for i in items], axis), np.stack([i.hi for i in items], axis))


def matvec(M: Interval, x: Interval) -> Interval:
    """(..., I, J) times (..., J) -> (..., I)."""
    return (M * Interval(x.lo[..., None, :], x.hi[..., None, :])).sum(axis=-1)


def cross(x: Interval, y: Interval) -> Interval:
    """Cross product along the last axis (length 3)."""
    i, j = [1, 2, 0], [2, 0, 1]
    return x[..., i] * y[..., j] - x[..., j] * y[..., i]


def _contains_point_of(lo, hi, phase):
    """Whether [lo, hi] may contain phase + 2 pi k for some integer k (conservative near the edges)."""
    two_pi = 2.0 * np.pi
    k = np.ceil((lo - phase) / two_pi - 1e-9)
    return phase + two_pi * k <= hi + 1e-9 * (1.0 + np.abs(hi))


def sin(x: Interval) -> Interval:
    s_lo, s_hi = np.sin(x.lo), np.sin(x.hi)
    lo = np.minimum(s_lo, s_hi) - _LIBM_ABS
    hi = np.maximum(s_lo, s_hi) + _LIBM_ABS
    hi = np.where(_contains_point_of(x.lo, x.hi, 0.5 * np.pi), 1.0, hi)
    lo = np.where(_contains_point_of(x.lo, x.hi, -0.5 * np.pi), -1.0, lo)
    full = ~(x.width < 6.0) | ~np.isfinite(x.width)
    lo = np.where(full, -1.0, lo)
    hi = np.where(full, 1.0, hi)
    return Interval(np.maximum(down(lo), -1.0), np.minimum(up(hi), 1.0))


def cos(x: Interval) -> Interval:
    c_lo, c_hi = np.cos(x.lo), np.cos(x.hi)
    lo = np.minimum(c_lo, c_hi) - _LIBM_ABS
    hi = np.maximum(c_lo, c_hi) + _LIBM_ABS
    hi = np.where(_contains_point_of(x.lo, x.hi, 0.0), 1.0, hi)
    lo = np.where(_contains_point_of(x.lo, x.hi, np.pi), -1.0, lo)
    full = ~(x.width < 6.0) | ~np.isfinite(x.width)
    lo = np.where(full, -1.0, lo)
    hi = np.where(full, 1.0, hi)
    return Interval(np.maximum(down(lo), -1.0), np.minimum(up(hi), 1.0))
