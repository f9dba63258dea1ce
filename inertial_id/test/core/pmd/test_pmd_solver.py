import numpy as np
import pinocchio as pin

from inertial_id.core.robot import params
from inertial_id.core.pmd.samples import WristSamples
from inertial_id.core.pmd.shapes import Box, sample_points
from inertial_id.core.pmd.solver import NormalEquations, PmdProblem, dynamism, dynamism_weight, point_mass_basis


def _samples(rng, K, pi_S, speed=1.0, at_rest=False):
    g_S = np.array([pin.exp3(rng.normal(size=3)).T @ [0, 0, -9.81] for _ in range(K)])
    kin = [np.zeros((K, 3)) if at_rest else rng.normal(scale=s * speed, size=(K, 3)) for s in (0.3, 1.0, 3.0)]
    s = WristSamples(*kin, g_S, np.zeros((K, 6)))
    return WristSamples(*kin, g_S, s.full_regressors() @ pi_S)


def test_point_mass_basis_recovers_the_parameters_of_point_masses():
    rng = np.random.default_rng(0)
    p, m = rng.normal(scale=0.1, size=(7, 3)), rng.uniform(0.01, 0.2, 7)
    expected = sum(params.params_from_com(mi, pi, np.zeros((3, 3))) for mi, pi in zip(m, p))
    pi = point_mass_basis(p) @ m
    np.testing.assert_allclose(pi, expected, atol=1e-14)
    assert params.is_physically_consistent(pi)


def test_dynamism_and_weight_follow_eqs_4_and_9():
    s = WristSamples(np.array([[3.0, 0, 0]]), np.array([[0, 0.5, 0]]), np.array([[0, 0, 2.0]]),
                     np.array([[0, 0, -9.81]]), np.zeros((1, 6)))
    nu = dynamism(s)
    np.testing.assert_allclose(nu, [9.0 + 4.0 + 1.0])
    np.testing.assert_allclose(dynamism_weight(nu, 300.0), np.tanh(3 * 14.0 / 300.0))
    assert dynamism_weight(np.array([0.0]))[0] == 0.0 and dynamism_weight(np.array([1e6]))[0] > 0.999


def test_square_root_of_normal_equations_keeps_the_residual_norm():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(40, 6)) @ np.diag([1, 1, 1, 1, 0, 0]) @ rng.normal(size=(6, 6))   # rank deficient
    c = rng.normal(size=40)
    eq = NormalEquations(6)
    eq.add(M[:25], c[:25])
    eq.add(M[25:], c[25:])
    R, d, r0 = eq.square_root()
    for _ in range(5):
        m = rng.normal(size=6)
        np.testing.assert_allclose(np.sum((M @ m - c) ** 2), np.sum((R @ m - d) ** 2) + r0**2, rtol=1e-9)


def test_static_data_give_exact_mass_and_com_and_a_consistent_estimate():
    rng = np.random.default_rng(2)
    p_S = sample_points(Box((0.2, 0.1, 0.05)), 0.04, pin.SE3(np.eye(3), np.array([0, 0, 0.03])))
    masses = rng.uniform(0.0, 0.02, len(p_S))
    pi_true = point_mass_basis(p_S) @ masses
    problem = PmdProblem(p_S)
    pi = problem.estimate(_samples(rng, 60, pi_true, at_rest=True))
    assert abs(pi[0] / pi_true[0] - 1) < 1e-6
    np.testing.assert_allclose(pi[1:4] / pi[0], pi_true[1:4] / pi_true[0], atol=1e-7)
    assert params.is_physically_consistent(pi)


def test_dynamic_data_identify_the_inertia_and_accumulation_equals_batch():
    rng = np.random.default_rng(3)
    p_S = sample_points(Box((0.2, 0.1, 0.05)), 0.04)
    masses = np.zeros(len(p_S))
    masses[[0, 5, 30, 55]] = [0.1, 0.05, 0.2, 0.08]          # far from homogeneous
    pi_true = point_mass_basis(p_S) @ masses
    samples = _samples(rng, 100, pi_true, speed=10.0)       # dynamism high: w ~ 1
    problem = PmdProblem(p_S)
    pi = problem.estimate(samples)
    np.testing.assert_allclose(pi, pi_true, atol=2e-3 * pi_true[0])
    static, full = NormalEquations(len(p_S)), NormalEquations(len(p_S))
    for k in range(0, 100, 7):
        problem.accumulate(samples[k:k + 7], static, full)
    np.testing.assert_allclose(problem.Phi @ problem.solve(static, full), pi, atol=1e-6)
