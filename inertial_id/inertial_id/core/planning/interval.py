"""Outward rounding and plain intervals.

:func:`down` / :func:`up` move a bound one ulp outwards (``np.nextafter``), which covers the rounding
error of one IEEE operation; the affine forms (:mod:`.affine`) round every coefficient this way. An
:class:`Interval` holds elementwise bounds ``lo <= x <= hi`` of arrays of any shape: what an affine
form encloses, and (with +, -, *) the plain interval arithmetic whose dependency problem the affine
forms avoid.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

def down(x):
    """The next float below ``x`` (outward rounding of a lower bound)."""
    return np.nextafter(x, -np.inf)


def up(x):
    """The next float above ``x`` (outward rounding of an upper bound)."""
    return np.nextafter(x, np.inf)


@dataclass(frozen=True)
class Interval:
    """Elementwise closed intervals ``[lo, hi]`` over numpy arrays."""
    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self):
        lo, hi = np.broadcast_arrays(np.asarray(self.lo, dtype=float), np.asarray(self.hi, dtype=float))
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @staticmethod
    def point(x) -> Interval:
        """The degenerate interval ``[x, x]``."""
        x = np.asarray(x, dtype=float)
        return Interval(x, x)

    @staticmethod
    def centered(mid, rad) -> Interval:
        """``[mid - rad, mid + rad]``, rounded outwards."""
        mid, rad = np.asarray(mid, dtype=float), np.asarray(rad, dtype=float)
        return Interval(down(mid - rad), up(mid + rad))

    @property
    def shape(self):
        """Array shape of the bounds."""
        return self.lo.shape

    @property
    def mid(self) -> np.ndarray:
        """Midpoints."""
        return 0.5 * (self.lo + self.hi)

    @property
    def width(self) -> np.ndarray:
        """Widths ``hi - lo``."""
        return self.hi - self.lo

    def mag(self) -> np.ndarray:
        """Upper bound of |x|."""
        return np.maximum(np.abs(self.lo), np.abs(self.hi))

    def contains(self, x, tol: float = 0.0) -> np.ndarray:
        """Elementwise: ``x`` inside the interval widened by ``tol``."""
        x = np.asarray(x, dtype=float)
        return (self.lo - tol <= x) & (x <= self.hi + tol)

    def __getitem__(self, idx) -> Interval:
        return Interval(self.lo[idx], self.hi[idx])

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __add__(self, other) -> Interval:
        o = _as_interval(other)
        return Interval(down(self.lo + o.lo), up(self.hi + o.hi))

    __radd__ = __add__

    def __sub__(self, other) -> Interval:
        o = _as_interval(other)
        return Interval(down(self.lo - o.hi), up(self.hi - o.lo))

    def __rsub__(self, other) -> Interval:
        return _as_interval(other) - self

    def __mul__(self, other) -> Interval:
        o = _as_interval(other)
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        lo = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
        hi = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
        return Interval(down(lo), up(hi))

    __rmul__ = __mul__


def _as_interval(x) -> Interval:
    return x if isinstance(x, Interval) else Interval.point(x)
