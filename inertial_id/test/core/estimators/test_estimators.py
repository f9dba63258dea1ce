"""Least squares, the consistent (SDP) estimate, and guaranteed bounds."""
import numpy as np
import pytest

from conftest import random_params
from inertial_id.core.robot import params
from inertial_id.core.estimators.batch import WeightedLeastSquares
from inertial_id.core.estimators.bounds import IntervalBounds
from inertial_id.core.estimators.consistent import InfeasibleError, consistent_estimate
from inertial_id.core.estimators.payload import PayloadEstimator
from inertial_id.core.estimators.rls import RecursiveLeastSquares


def noisy_rows(rng, x, n, bound):
    A = rng.normal(size=(n, x.size))
    return A, A @ x + rng.uniform(-bound, bound, n)


def test_rls_equals_batch_least_squares(rng):
    x = rng.normal(size=10)
    rls = RecursiveLeastSquares(np.zeros(10), 1e8 * np.eye(10))
    wls = WeightedLeastSquares(10)
    for _ in range(10):
        A, b = noisy_rows(rng, x, 30, 0.1)
        w = rng.uniform(0.5, 2.0, 30)
        rls.update(A, b, w)
        wls.update(A, b, w)
    x_wls, cov = wls.solve()
    np.testing.assert_allclose(rls.x, x_wls, atol=1e-6)
    np.testing.assert_allclose(rls.P, cov, atol=1e-6)
    assert np.abs(x_wls - x).max() < 0.05


def test_consistent_estimate_projects_only_when_needed(rng):
    pi = random_params(rng)
    info = np.eye(10)
    np.testing.assert_allclose(consistent_estimate(pi, info), pi, atol=1e-6)
    bad = random_params(rng, consistent=False)
    fixed = consistent_estimate(bad, info)
    assert params.is_physically_consistent(fixed, tol=1e-7) and not params.is_physically_consistent(bad)
    with pytest.raises(InfeasibleError):
        consistent_estimate(pi, info, lower=np.r_[-1.0, np.full(9, -1.0)], upper=np.r_[-0.5, np.full(9, 1.0)])


def test_bounds_contain_the_truth_and_never_widen(rng):
    x = rng.normal(size=10)
    box = IntervalBounds(x - 3, x + 3)
    widths = [box.width.copy()]
    for _ in range(5):
        A, b = noisy_rows(rng, x, 200, 0.2)
        assert box.update(A, b, np.full(200, 0.2)).consistent
        assert box.contains(x).all()
        widths.append(box.width.copy())
    assert all(np.all(w1 <= w0) for w0, w1 in zip(widths, widths[1:]))
    assert widths[-1].max() < 0.2 * widths[0].max()


def test_rows_with_a_sloped_bound_give_the_box_of_an_lp_over_their_two_sides(rng):
    """``|A x - b| <= e + S x``: each end of the box is that of scipy's LP over the two one-sided rows
    (to its padding), the truth inside; a wrong bound's slope contradicts the data; such rows are
    refused where bounds keep or archive rows (they hold in their box only)."""
    from scipy.optimize import linprog
    x = np.abs(rng.normal(size=4)) + 0.5
    lo, hi = x - 1.0, x + 1.0
    A = rng.normal(size=(60, 4))
    S = np.abs(rng.normal(size=(60, 4))) * 0.05          # the error grows with x (positive in the box)
    e = np.full(60, 0.05)
    b = A @ x + rng.uniform(-1.0, 1.0, 60) * (e + S @ x)
    box = IntervalBounds(lo, hi)
    assert box.update(A, b, e, slope=S).consistent and box.contains(x).all() and box.rows_used == 60
    for k in range(4):
        for sign, end in ((1.0, box.lower[k]), (-1.0, box.upper[k])):
            c = np.zeros(4)
            c[k] = sign
            res = linprog(c, A_ub=np.vstack([A - S, -A - S]), b_ub=np.r_[b + e, e - b], bounds=list(zip(lo, hi)))
            assert abs(res.x[k] - end) < 1e-6
    flat = IntervalBounds(lo, hi)
    flat.update(A, b, e + S @ hi)          # the bound at the box's worst (S >= 0)
    assert np.all(box.width <= flat.width + 1e-9) and box.width.sum() < 0.9 * flat.width.sum()
    # one row twice, its two readings farther apart than both bounds reach anywhere in the box
    far = 2.0 * (e[0] + S[0] @ hi) + 0.1
    clash = IntervalBounds(lo, hi).update(A[[0, 0]], b[[0, 0]] + [0.0, far], e[:2], slope=S[[0, 0]])
    assert not clash.consistent and clash.max_violation > 0.09
    with pytest.raises(ValueError, match="sloped"):
        IntervalBounds(lo, hi, keep_rows=True).update(A, b, e, slope=S)


def test_the_support_of_the_final_lp_is_scipys_over_its_rows_cuts_and_boxes(rng):
    """``support(C)``: for each direction, the largest ``c . x`` over the archived rows with a
    nuisance box and a cut, as scipy's LP over the same constraints (to the padding), never above
    the box's own; the box's own with no rows, or once the rows contradict each other."""
    from scipy.optimize import linprog
    x, r = rng.normal(size=4), rng.normal(size=2)
    A, N = rng.normal(size=(40, 4)), rng.normal(size=(40, 2))
    e = np.full(40, 0.2)
    b = A @ x + N @ r + rng.uniform(-1.0, 1.0, 40) * e
    G, g = np.r_[1.0, 1.0, 0.0, 0.0][None, :], np.array([x[0] + x[1] + 0.05])
    lo, hi, r_lo, r_hi = x - 1.0, x + 1.0, r - 0.3, r + 0.3
    bounds = IntervalBounds(lo, hi, nuisance_lower=r_lo, nuisance_upper=r_hi, cuts=(G, g), archive_rows=1000)
    C = rng.normal(size=(12, 4))
    box_support = np.maximum(C * lo, C * hi).sum(axis=1)
    np.testing.assert_array_equal(bounds.support(C), box_support)
    assert bounds.update(A, b, e, A_nuisance=N).consistent
    support = bounds.support(C)
    G_full = np.hstack([G, np.zeros((1, 2))])
    M = np.hstack([A, N])
    for c, value in zip(C, support):
        res = linprog(-np.r_[c, 0.0, 0.0], A_ub=np.vstack([M, -M, G_full]), b_ub=np.r_[b + e, e - b, g],
                      bounds=list(zip(np.r_[bounds.lower, r_lo], np.r_[bounds.upper, r_hi])))
        assert value == pytest.approx(-res.fun, abs=1e-6) and c @ x <= value + 1e-9
    assert np.all(support <= np.maximum(C * bounds.lower, C * bounds.upper).sum(axis=1) + 1e-12)
    assert np.any(support < box_support - 0.1)
    bounds.update(A[:1], b[:1] + 10.0, e[:1], A_nuisance=N[:1])
    assert not bounds.data_consistent
    np.testing.assert_array_equal(bounds.support(C), np.maximum(C * bounds.lower, C * bounds.upper).sum(axis=1))


def test_bounds_flag_data_that_break_the_assumed_noise(rng):
    x = rng.normal(size=10)
    box = IntervalBounds(x - 3, x + 3)
    A, b = noisy_rows(rng, x, 100, 0.1)
    b[[7, 42]] += 5.0
    before = (box.lower.copy(), box.upper.copy())
    upd = box.update(A, b, np.full(100, 0.1))
    assert not upd.consistent and not box.data_consistent
    assert set(upd.violating_rows) <= {7, 42} and upd.violating_rows.size >= 1
    np.testing.assert_array_equal(box.lower, before[0])      # the box is left as it was


@pytest.mark.parametrize("method", ["rls", "lmi"])
def test_payload_estimator_reports_consistent_estimate_inside_bounds(method, rng):
    pi = random_params(rng)
    est = PayloadEstimator(method, params.parameter_names("payload"), pi - 1.0, pi + 1.0)
    for _ in range(5):
        A, b = noisy_rows(rng, pi, 300, 0.01)
        est.add_rows(A, b, np.full(300, 0.01), np.full(300, 0.01 / np.sqrt(3)), samples=300)
        est.update_bounds()
    r = est.result()
    assert r.samples_used == 1500 and r.data_consistent and r.bounds_guaranteed
    assert np.all((pi >= r.lower) & (pi <= r.upper))
    assert np.abs(r.estimate - pi).max() < 1e-2
    assert r.physically_consistent
    with pytest.raises(ValueError, match="unknown estimation method"):
        PayloadEstimator("magic", params.parameter_names("p"), pi - 1, pi + 1)


def test_consistent_point_estimate_while_the_inertia_is_still_undetermined(rng):
    """The first wrench rows of a run (slow motion, unknown sensor offset) determine mass and first
    moment but barely the inertia: the point estimate must still be consistent and inside the box
    (a plain inverse of that information gave values of 1e16 and the conic solver failed)."""
    pi = np.array([2.27, 0.0227, -0.01135, 0.227, 0.02464, 0.00011, 0.04004, -0.00227, 0.00114, 0.01739])
    lo, hi = np.r_[0.0, -0.4, -0.4, -0.2, np.full(6, -0.2)], np.r_[5.2, 0.4, 0.4, 1.0, np.full(6, 0.2)]
    est = PayloadEstimator("guaranteed", params.parameter_names("payload"), lo, hi, offset_bound=[0.5] * 3 + [0.02] * 3)
    samples = 40
    A = rng.normal(size=(6 * samples, 10))
    A[:, 4:] *= 1e-7           # the inertia's columns: almost no angular acceleration or velocity yet
    offset = rng.uniform(-1, 1, 6) * np.r_[[0.5] * 3, [0.02] * 3]
    b = A @ pi + np.tile(offset, samples) + rng.uniform(-1e-3, 1e-3, 6 * samples)
    est.add_rows(A, b, np.full(b.size, 1e-3), np.full(b.size, 1e-3 / np.sqrt(3)), samples=samples)
    est.update_bounds()
    r = est.result()
    assert r.physically_consistent and np.all(np.isfinite(r.estimate)), r.message
    assert np.all((r.estimate >= r.lower) & (r.estimate <= r.upper))
    assert abs(r.estimate[0] - pi[0]) < 0.01
