"""The robust point estimate of calibrated momentum rows (core.estimators.robust_point): the
least-absolute-deviations fit ignores a few gross errors that pull least squares away, keeps its
bounds, and its row store stays bounded while covering the whole stream."""
import numpy as np
import pytest

from inertial_id.core.estimators.robust_point import WindowRowStore


def rows(rng, windows, per_window=3, cols=4):
    A = rng.normal(size=(windows * per_window, cols))
    x = np.array([2.0, -1.0, 0.5, 0.25])[:cols]
    return A, x


def test_lad_fit_ignores_gross_errors_that_pull_least_squares():
    rng = np.random.default_rng(3)
    A, x = rows(rng, 200)
    u = A @ x + rng.uniform(-0.05, 0.05, size=A.shape[0])
    bad = rng.choice(u.size, size=30, replace=False)      # 5 % of the rows, one-sided gross errors
    u[bad] += 5.0
    store = WindowRowStore(4, 3)
    store.add(A, u, np.full(u.size, 0.1))
    lad = store.fit(np.full(4, -np.inf), np.full(4, np.inf))
    ls = np.linalg.lstsq(A, u, rcond=None)[0]
    assert np.abs(lad - x).max() < 0.02
    assert np.abs(ls - x).max() > 5 * np.abs(lad - x).max()


def test_lad_fit_stays_in_its_bounds():
    rng = np.random.default_rng(4)
    A, x = rows(rng, 50)
    store = WindowRowStore(4, 3)
    store.add(A, A @ x, np.ones(A.shape[0]))
    lo, hi = np.array([-np.inf, -np.inf, -np.inf, 0.3]), np.array([1.5, np.inf, np.inf, np.inf])
    fit = store.fit(lo, hi)
    assert fit[0] <= 1.5 + 1e-9 and fit[3] >= 0.3 - 1e-9
    assert WindowRowStore(4, 3).fit(lo, hi) is None       # no rows, no fit


def test_store_thins_to_cover_the_whole_stream_and_round_trips():
    rng = np.random.default_rng(5)
    store = WindowRowStore(2, 2, max_windows=10)
    for k in range(7):                                    # 7 batches of 5 windows, window k*5+i has u = its index
        idx = np.repeat(np.arange(5 * k, 5 * k + 5), 2).astype(float)
        store.add(rng.normal(size=(10, 2)), idx, np.ones(10))
    kept = store.u[:, 0]
    assert store.windows <= 10 and store.seen == 35
    # evenly spread over the stream (one in ``stride``), first and late windows both present
    assert kept[0] == 0 and kept[-1] >= 35 - store.stride and np.all(np.diff(kept) == store.stride)
    again = WindowRowStore(2, 2, max_windows=10)
    again.restore(store.state())
    assert np.array_equal(again.u, store.u) and again.stride == store.stride
    with pytest.raises(ValueError):
        WindowRowStore(3, 2, max_windows=10).restore(store.state())
