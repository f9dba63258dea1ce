import numpy as np

from inertial_id.core.robot import params
from inertial_id.core.pmd import baselines
from inertial_id.core.pmd.samples import WristSamples, stack_rows

from conftest import random_params


def _rows(rng, pi, K=80, sigma=0.0):
    g = rng.normal(size=(K, 3))
    g *= 9.81 / np.linalg.norm(g, axis=1, keepdims=True)
    s = WristSamples(rng.normal(size=(K, 3)), rng.normal(size=(K, 3)), rng.normal(scale=5, size=(K, 3)), g, np.zeros((K, 6)))
    A = s.full_regressors()
    return stack_rows(A, A @ pi + sigma * rng.normal(size=(K, 6)))


def test_ols_and_rtls_are_exact_without_noise(rng):
    pi = random_params(rng)
    A, b = _rows(rng, pi)
    np.testing.assert_allclose(baselines.ols(A, b), pi, atol=1e-9)
    np.testing.assert_allclose(baselines.rtls(A, b), pi, atol=1e-7)


def test_recursive_tls_equals_batch_tls(rng):
    pi = random_params(rng)
    A, b = _rows(rng, pi, sigma=0.05)
    scale = 1.0 / np.linalg.norm(np.column_stack([A, b]), axis=0)
    v = np.linalg.svd(np.column_stack([A, b]) * scale)[2][-1] * scale
    np.testing.assert_allclose(baselines.rtls(A, b), -v[:-1] / v[-1], rtol=1e-6)


def test_geo_is_consistent_and_follows_the_data(rng):
    pi = random_params(rng)
    A, b = _rows(rng, pi, sigma=0.01)
    prior = params.params_from_com(pi[0] * 1.3, np.zeros(3), np.eye(3) * pi[0] * 0.01)
    estimate = baselines.geo(A, b, prior, gamma=1e-4)
    assert params.is_physically_consistent(estimate)
    np.testing.assert_allclose(estimate, pi, atol=0.01 * np.abs(pi).max())
    # a heavy weight pulls the estimate to the prior
    np.testing.assert_allclose(baselines.geo(A, b, prior, gamma=1e6)[0], prior[0], rtol=1e-2)
