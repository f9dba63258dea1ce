"""First-order affine arithmetic with rigorous remainders, vectorised over numpy arrays.

An :class:`Affine` ``x`` stands for the set ``{c + sum_i a_i e_i + r e_0 : e in [-1, 1]}`` with m shared
noise symbols e_i (here: time within a sub-interval and the tracking-error tube) and one private
remainder r >= 0. Linear operations keep the correlation between quantities that depend on the same
symbols exactly, which is what removes the wrapping of plain intervals; nonlinear terms (products,
sin/cos) put their second-order part into r with a proven bound.

Rounding: every operation computes in round-to-nearest and adds to r a bound on the rounding error of
its coefficients (a multiple of 2^-52 of their magnitudes, plus a tiny absolute for underflow), then
rounds r upwards. Constants (model placements, axes) are taken as exact.

Shapes: ``c`` and ``r`` have shape ``S``; ``a`` has shape ``(m,) + S`` (symbols first, so that linear maps
along the last axis are single matrix products). "Vectors" use the last axis of S. A form may use only
a prefix of the symbols (its m is smaller): quantities that depend on few symbols (positions only,
say) stay cheap, and operations with forms over more symbols embed it (missing coefficients are 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .interval import Interval, down, up

U = 2.0 ** -52          # twice the unit roundoff
TINY = 1.0e-290         # absolute rounding floor (underflow)
# numpy's float64 sin/cos are accurate to a few ulp (<= 4 ulp on the SIMD paths); 1e-14 absolute
# covers that with room to spare for values of magnitude <= 1.
_LIBM_ABS = 1.0e-14


def _close(c, a, r0, scale):
    """Affine with remainder r0 plus the rounding bound U * scale."""
    return Affine(c, a, up(r0 + (U * scale + TINY)))


@dataclass(frozen=True)
class Affine:
    """The set ``{c + sum_i a_i e_i + r e_0 : e in [-1, 1]}``: centre, coefficients of the shared symbols, rigorous remainder (module docstring)."""
    c: np.ndarray
    a: np.ndarray
    r: np.ndarray
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def sabs(self) -> np.ndarray:
        """sum_i |a_i| (computed once; each form is used by several operations)."""
        value = self.cache.get("sabs")
        if value is None:
            value = self.cache["sabs"] = np.abs(self.a).sum(0)
        return value

    @staticmethod
    def constant(x, m: int) -> Affine:
        """``x`` exactly, as a form over ``m`` symbols."""
        x = np.asarray(x, dtype=float)
        return Affine(x, np.zeros((m,) + x.shape), np.zeros(x.shape))

    @property
    def m(self) -> int:
        """Number of noise symbols the form uses."""
        return self.a.shape[0]

    def radius(self) -> np.ndarray:
        """Upper bound of |x - c|."""
        return up(self.sabs * (1.0 + (self.m + 1) * U) + self.r)

    def to_interval(self) -> Interval:
        """An interval (outward rounded) enclosing the set."""
        rad = self.radius()
        return Interval(down(self.c - rad), up(self.c + rad))

    def mag(self) -> np.ndarray:
        """Upper bound of |x|."""
        return up(np.abs(self.c) + self.radius())

    def comp(self, idx) -> Affine:
        """Select along the last (vector) axis."""
        return Affine(self.c[..., idx], self.a[..., idx], self.r[..., idx])

    def comp_row(self, i: int) -> Affine:
        """Select index i of the second-to-last axis of S."""
        return Affine(self.c[..., i, :], self.a[..., i, :], self.r[..., i, :])

    def expand(self, axis: int) -> Affine:
        """Insert a length-1 axis into S (negative axes count from the end of S)."""
        nd = self.c.ndim + 1
        axis = axis % nd
        shape = self.c.shape[:axis] + (1,) + self.c.shape[axis:]
        cache = {"sabs": self.cache["sabs"].reshape(shape)} if "sabs" in self.cache else {}
        return Affine(self.c.reshape(shape), self.a.reshape((self.m,) + shape), self.r.reshape(shape), cache)

    def reshape(self, *shape) -> Affine:
        """The same form with its value shape ``S`` reshaped."""
        c = self.c.reshape(*shape)
        return Affine(c, self.a.reshape((self.m,) + c.shape), self.r.reshape(c.shape))

    def __neg__(self) -> Affine:
        return Affine(-self.c, -self.a, self.r)

    def __add__(self, other) -> Affine:
        if isinstance(other, Affine):
            c = self.c + other.c
            a = _add_prefix(self.a, other.a)
            r0 = self.r + other.r
            s = self.sabs + other.sabs                  # >= sum |a| of the result
        else:
            c = self.c + np.asarray(other, dtype=float)
            a = np.broadcast_to(self.a, (self.m,) + c.shape)
            r0 = np.broadcast_to(self.r, c.shape)
            s = self.sabs
        return _close(c, a, r0, 2.0 * (np.abs(c) + s + r0))

    __radd__ = __add__

    def __sub__(self, other) -> Affine:
        return self + (-other)

    def __rsub__(self, other) -> Affine:
        return (-self) + other

    def __mul__(self, other) -> Affine:
        if not isinstance(other, Affine):
            w = np.asarray(other, dtype=float)
            c = w * self.c
            a = w * self.a
            r0 = np.abs(w) * self.r
            return _close(c, a, r0, 2.0 * (np.abs(c) + np.abs(w) * self.sabs + r0))
        x, y = self, other
        c = x.c * y.c
        if x.m < y.m:
            x, y = y, x                             # x has the longer symbol prefix
        a = y.c * x.a                               # a fresh array of the full shape
        a[:y.m] += x.c * y.a
        ax, ay = np.abs(x.c), np.abs(y.c)
        rho_x, rho_y = x.sabs + x.r, y.sabs + y.r
        r0 = ax * y.r + ay * x.r + rho_x * rho_y
        # |c| + |x.c| sum|y.a| + |y.c| sum|x.a| + r0 <= (|x.c| + rho_x)(|y.c| + rho_y); the sums in rho are
        # m-term sums, so everything here carries a relative rounding error below (m + 4) u
        return _close(c, a, r0, (x.m + 8) * (ax + rho_x) * (ay + rho_y))

    __rmul__ = __mul__

    def sum(self, axis: int) -> Affine:
        """Sum along an axis of S."""
        axis = _neg(axis, self.c.ndim)
        n = self.c.shape[axis]
        c = self.c.sum(axis)
        a = self.a.sum(axis)
        r0 = self.r.sum(axis)
        scale = (np.abs(self.c).sum(axis) + self.sabs.sum(axis) + r0) * (2 * n + 2)
        return _close(c, a, r0, scale)


def _neg(axis: int, ndim: int) -> int:
    """An axis of S as a negative index, valid for c, r and a alike."""
    return axis - ndim if axis >= 0 else axis


def _add_prefix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b for coefficient arrays over symbol prefixes of possibly different lengths."""
    if len(a) == len(b):
        return a + b
    if len(a) < len(b):
        a, b = b, a
    out = np.array(np.broadcast_to(a, (len(a),) + np.broadcast_shapes(a.shape[1:], b.shape[1:])))
    out[:len(b)] += b
    return out


def _common(items) -> list:
    """The forms over the same (longest) symbol prefix."""
    m = max(x.m for x in items)
    return [x if x.m == m else Affine(x.c, np.concatenate([x.a, np.zeros((m - x.m,) + x.c.shape)]), x.r)
            for x in items]


def stack(items, axis: int = -1) -> Affine:
    """Stack along a new axis of S."""
    items = _common(list(items))
    axis = _neg(axis, items[0].c.ndim + 1)
    return Affine(np.stack([x.c for x in items], axis), np.stack([x.a for x in items], axis),
                  np.stack([x.r for x in items], axis))


def concatenate(items, axis: int) -> Affine:
    """Concatenate along an existing axis of S."""
    items = _common(list(items))
    axis = _neg(axis, items[0].c.ndim)
    return Affine(np.concatenate([x.c for x in items], axis), np.concatenate([x.a for x in items], axis),
                  np.concatenate([x.r for x in items], axis))


def _apply(x: np.ndarray, M: np.ndarray) -> np.ndarray:
    """x @ M.T along the last axis as one 2-D matrix product."""
    return (x.reshape(-1, x.shape[-1]) @ M.T).reshape(x.shape[:-1] + (M.shape[0],))


def lincomb(M: np.ndarray, x: Affine) -> Affine:
    """y_i = sum_j M_ij x_j along the last (vector) axis of S, M constant (I, J)."""
    M = np.asarray(M, dtype=float)
    absM = np.abs(M)
    c = _apply(x.c, M)
    a = _apply(x.a, M)
    r0, scale = _apply(np.stack([x.r, np.abs(x.c) + x.sabs + x.r]), absM)
    scale = scale * (2 * M.shape[1] + 4)
    return _close(c, a, r0, scale)


def cross(x: Affine, y: Affine) -> Affine:
    """Cross product along the last axis (length 3) of two affine vectors."""
    i, j = [1, 2, 0], [2, 0, 1]
    return x.comp(i) * y.comp(j) - x.comp(j) * y.comp(i)


def cross_matrix(k) -> np.ndarray:
    """(3, 3) matrix ``[k]x`` with ``[k]x v = k x v``."""
    k = np.asarray(k, dtype=float)
    return np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])


def sin(x: Affine) -> Affine:
    """sin(c) + cos(c) (x - c) + R with |R| <= rho^2/2 * min(1, |sin c| + rho) (Lagrange remainder)."""
    return _sincos(x, np.sin(x.c), np.cos(x.c))


def cos(x: Affine) -> Affine:
    """cos(c) - sin(c) (x - c) + R, the same remainder bound as :func:`sin`."""
    return _sincos(x, np.cos(x.c), -np.sin(x.c))


def _sincos(x: Affine, f, df) -> Affine:
    rho = x.radius()
    sx = x.sabs
    second = np.minimum(1.0, np.abs(f) + rho + _LIBM_ABS)      # bound of |f''| on [c - rho, c + rho]
    a = df * x.a
    r0 = np.abs(df) * x.r + 0.5 * rho * rho * second + _LIBM_ABS * (1.0 + sx + x.r)
    return _close(f, a, r0, np.abs(f) + 2.0 * np.abs(df) * sx + 4.0 * r0)
