"""The wrench regressor PMD is built on, against an independent Newton-Euler computation, and the
rank of the gravity-only model (seed 004, Appendix A)."""
import numpy as np
import pinocchio as pin

from inertial_id.core.robot import params
from inertial_id.core.pmd.samples import WristSamples
from inertial_id.core.pmd.solver import point_mass_basis
from inertial_id.core.robot.regressor import wrench_regressor


def _newton_euler(m, c, I_C, a, g, w, alpha):
    """Wrench about the sensor origin that moves a rigid body: f = m (a_c - g), n = I_c alpha + w x I_c w + c x f."""
    a_c = a + np.cross(alpha, c) + np.cross(w, np.cross(w, c))
    f = m * (a_c - g)
    return np.concatenate([f, I_C @ alpha + np.cross(w, I_C @ w) + np.cross(c, f)])


def test_wrench_regressor_matches_newton_euler_at_random_states():
    rng = np.random.default_rng(3)
    for _ in range(50):
        m = rng.uniform(0.1, 5.0)
        c = rng.normal(scale=0.2, size=3)
        L = rng.normal(scale=0.1, size=(3, 3))
        I_C = L @ L.T + 0.01 * np.eye(3)
        a, g, w, alpha = (rng.normal(scale=s, size=3) for s in (2.0, 9.81, 2.0, 10.0))
        pi = params.params_from_com(m, c, I_C)
        np.testing.assert_allclose(wrench_regressor(a - g, w, alpha) @ pi, _newton_euler(m, c, I_C, a, g, w, alpha),
                                   rtol=0, atol=1e-9)


def _random_rotations(rng, k):
    return [pin.exp3(rng.normal(size=3)) for _ in range(k)]


def test_static_model_rank_is_four_and_its_kernel_keeps_mass_and_com():
    rng = np.random.default_rng(0)
    p = rng.uniform(-0.1, 0.1, size=(20, 3))         # non-coplanar points
    g_W = np.array([0.0, 0.0, -9.81])
    g_S = np.array([R.T @ g_W for R in _random_rotations(rng, 30)])
    zero = np.zeros_like(g_S)
    At = (WristSamples(zero, zero, zero, g_S, np.zeros((30, 6))).static_regressors() @ point_mass_basis(p)).reshape(-1, 20)
    assert np.linalg.matrix_rank(At) == 4
    kernel = np.linalg.svd(At)[2][4:].T
    # mass and first moment are the same for every mass vector differing by a kernel element
    np.testing.assert_allclose(point_mass_basis(p)[:4] @ kernel, 0.0, atol=1e-9)


def test_world_frame_torque_model_of_the_paper_has_rank_four():
    """Eq. 13-16: torques about the world origin of points moved by (R_j, t_j)."""
    rng = np.random.default_rng(1)
    p = rng.uniform(-0.1, 0.1, size=(12, 3))
    g = np.array([0.0, 0.0, -9.81])
    rows = [-np.column_stack([np.cross(R @ pi + t, g) for pi in p])
            for R, t in zip(_random_rotations(rng, 25), rng.normal(scale=0.5, size=(25, 3)))]
    assert np.linalg.matrix_rank(np.vstack(rows)) == 4
    coplanar = p.copy()
    coplanar[:, 2] = 0.0
    assert np.linalg.matrix_rank(point_mass_basis(coplanar)[:4]) == 3
