"""The physical cuts (estimators.physical_cuts.pseudo_inertia_cuts): every
physically consistent body satisfies them, and they remove what the diagonal cuts alone let through
(a light payload whose COM sits far out while its rotational inertia stays small)."""
import numpy as np

from inertial_id.core.robot import params
from inertial_id.core.estimators.physical_cuts import pseudo_inertia_cuts, pseudo_inertia_diagonal_cuts


def random_body(rng):
    """A random physically consistent body: its pseudo-inertia ``L L^T`` is positive definite."""
    L = np.tril(rng.normal(size=(4, 4)) * rng.uniform(0.02, 1.5))
    return params.params_from_pseudo_inertia(L @ L.T + 1e-9 * np.eye(4))


def test_consistent_bodies_satisfy_every_cut():
    rng = np.random.default_rng(7)
    G, g = pseudo_inertia_cuts()
    for _ in range(500):
        pi = random_body(rng)
        assert params.is_physically_consistent(pi)
        assert np.all(G @ pi <= g + 1e-9 * (1 + np.abs(pi).max()))


def test_cuts_remove_a_far_com_with_small_inertia_the_diagonal_cuts_keep():
    # 1 kg, first moment 0.7 kg m along z (COM 0.7 m out), rotational inertia about the origin 0.2 kg m^2:
    # a point mass there alone would need 0.49 kg m^2
    pi = np.array([1.0, 0.0, 0.0, 0.7, 0.2, 0.0, 0.2, 0.0, 0.0, 0.05])
    assert not params.is_physically_consistent(pi)
    G0, g0 = pseudo_inertia_diagonal_cuts()
    assert np.all(G0 @ pi <= g0)
    G, g = pseudo_inertia_cuts()
    assert np.any(G @ pi > g)
