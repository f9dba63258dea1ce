"""The robust point estimate of calibrated momentum rows (core.estimators.robust_point): it reaches
the least-absolute-deviations optimum (checked against the LP), ignores a few gross errors that pull
least squares away, leaves undetermined directions at their minimum norm, and its row store stays
bounded while covering the whole stream."""
import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

from inertial_id.core.estimators.robust_point import WindowRowStore

X_TRUE = np.array([2.0, -1.0, 0.5, 0.25])


def stream(rng, windows=200, per_window=3):
    A = rng.normal(size=(windows * per_window, X_TRUE.size))
    u = A @ X_TRUE + rng.uniform(-0.05, 0.05, size=A.shape[0])
    bad = rng.choice(u.size, size=u.size // 20, replace=False)      # 5 % one-sided gross errors
    u[bad] += 5.0
    e = rng.uniform(0.05, 0.2, size=u.size)
    return A, u, e


def lad_objective(A, u, e, x):
    return float(np.sum(np.abs(A @ x - u) / e))


def test_fit_reaches_the_least_absolute_deviations_optimum_and_ignores_gross_errors():
    rng = np.random.default_rng(3)
    A, u, e = stream(rng)
    store = WindowRowStore(4, 3)
    store.add(A, u, e)
    fit = store.fit()
    # the LP form of the same problem: variables [x, s], min sum s/e, |A x - u| <= s
    m = u.size
    I = sparse.identity(m)
    lp = linprog(np.concatenate([np.zeros(4), 1 / e]), A_ub=sparse.vstack([sparse.hstack([A, -I]), sparse.hstack([-A, -I])]),
                 b_ub=np.concatenate([u, -u]), bounds=[(None, None)] * 4 + [(0, None)] * m, method="highs")
    assert lad_objective(A, u, e, fit) <= lp.fun * (1 + 1e-4)
    assert np.abs(fit - X_TRUE).max() < 0.02
    ls = np.linalg.lstsq(A, u, rcond=None)[0]
    assert np.abs(ls - X_TRUE).max() > 5 * np.abs(fit - X_TRUE).max()


def test_undetermined_directions_stay_at_minimum_norm():
    rng = np.random.default_rng(4)
    A, u, e = stream(rng, windows=50)
    A[:, 3] = 0.0                                        # the rows say nothing about the last column
    store = WindowRowStore(4, 3)
    store.add(A, u, e)
    assert store.fit()[3] == pytest.approx(0.0, abs=1e-9)
    assert WindowRowStore(4, 3).fit() is None            # no rows, no fit


def test_store_thins_to_cover_the_whole_stream_and_round_trips():
    rng = np.random.default_rng(5)
    store = WindowRowStore(2, 2, max_windows=10)
    for k in range(7):                                   # 7 batches of 5 windows; window i has u = i
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
