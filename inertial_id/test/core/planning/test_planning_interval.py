"""Interval and affine arithmetic: enclosures checked against dense sampling and exact rationals."""
from fractions import Fraction

import numpy as np

from inertial_id.core.planning import affine
from inertial_id.core.planning.affine import Affine
from inertial_id.core.planning.interval import Interval


def _random_intervals(rng, shape, scale=3.0):
    a = rng.uniform(-scale, scale, shape)
    b = a + rng.exponential(scale / 3, shape) * (rng.random(shape) > 0.1)   # some points
    return Interval(a, b)


def _samples(x: Interval, rng, k=200):
    u = np.concatenate([[0.0, 1.0], rng.random(k - 2)])
    return x.lo[None] + u.reshape((-1,) + (1,) * x.lo.ndim) * (x.hi - x.lo)[None]


def test_arithmetic_contains_sampled_results():
    rng = np.random.default_rng(0)
    x, y = _random_intervals(rng, 500), _random_intervals(rng, 500)
    xs, ys = _samples(x, rng), _samples(y, rng)[rng.permutation(200)]
    for op, f in ((x + y, np.add), (x - y, np.subtract), (x * y, np.multiply)):
        v = f(xs, ys)
        assert np.all(op.lo <= v) and np.all(v <= op.hi)
    # products are tight: the bounds are attained at endpoints
    prod = x * y
    corners = np.stack([x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi])
    np.testing.assert_allclose(prod.lo, corners.min(0), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(prod.hi, corners.max(0), rtol=1e-14, atol=1e-300)


def test_outward_rounding_contains_exact_result():
    a, b = Interval.point(0.1), Interval.point(0.2)
    s = a + b
    exact = Fraction(0.1) + Fraction(0.2)
    assert Fraction(float(s.lo)) <= exact <= Fraction(float(s.hi))
    p = Interval.point(1.0 / 3.0) * 3.0
    exact = Fraction(1.0 / 3.0) * 3
    assert Fraction(float(p.lo)) <= exact <= Fraction(float(p.hi))
    assert s.lo < s.hi and p.lo < p.hi                       # really moved outwards


def _random_affine(rng, S, m, scale=1.0):
    return Affine(rng.normal(0, scale, S), rng.normal(0, 0.1 * scale, (m,) + S), rng.exponential(0.01, S))


def _realise(x: Affine, e: np.ndarray, e0: np.ndarray):
    """Values of x for symbol draws e (N, m) and private remainder draws e0 (N,) + S."""
    return x.c[None] + np.tensordot(e, x.a, axes=([1], [0])) + e0 * x.r[None]


def test_affine_operations_contain_sampled_values():
    rng = np.random.default_rng(3)
    S, m, N = (40, 3), 5, 3000
    x, y = _random_affine(rng, S, m), _random_affine(rng, S, m)
    M = rng.normal(size=(4, 3))
    e = rng.uniform(-1, 1, (N, m))
    e[:2 ** m] = np.array(np.meshgrid(*[[-1, 1]] * m)).reshape(m, -1).T        # all corners
    ex, ey = rng.uniform(-1, 1, (N,) + S), rng.uniform(-1, 1, (N,) + S)
    xs, ys = _realise(x, e, ex), _realise(y, e, ey)
    checks = [(x + y, xs + ys), (x - y, xs - ys), (x * y, xs * ys), (x * 2.5 + 1.0, xs * 2.5 + 1.0),
              (affine.sin(x * 3.0), np.sin(3.0 * xs)), (affine.cos(x * 3.0), np.cos(3.0 * xs)),
              (affine.lincomb(M, x), xs @ M.T), (x.sum(-1), xs.sum(-1)),
              (affine.cross(x, y * x), np.cross(xs, ys * xs))]
    for form, values in checks:
        box = form.to_interval()
        assert np.all(box.lo[None] <= values) and np.all(values <= box.hi[None])


def test_affine_keeps_correlation():
    """x - x is exactly 0, and x*x - 4x near its minimum x = 2 is second-order wide (plain intervals
    are first-order wide: the dependency problem)."""
    rng = np.random.default_rng(4)
    x = Affine(np.array([2.0]), rng.normal(0, 0.1, (3, 1)), np.array([0.0]))
    d = (x - x).to_interval()
    assert d.hi[0] - d.lo[0] < 1e-14
    p = (x * x - x * 4.0).to_interval()
    xi = x.to_interval()
    plain = xi * xi - xi * 4.0
    rho = x.radius()[0]
    assert p.lo[0] <= -4.0 <= p.hi[0]
    assert p.width[0] <= 2.0 * rho * rho + 1e-12
    assert plain.width[0] > 10.0 * rho
