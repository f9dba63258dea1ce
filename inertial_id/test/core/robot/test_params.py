"""Conventions of core/robot/params.py: orders, pseudo-inertia, consistency, log-Cholesky, frames."""
import numpy as np
import pinocchio as pin
import pytest

from conftest import random_params
from inertial_id.core.robot import params


def test_pinocchio_order_is_to_dynamic_parameters(rng):
    I = pin.Inertia.Random()
    pi = I.toDynamicParameters()
    m, c, I_C = params.com_from_params(pi)
    assert m == pytest.approx(I.mass)
    np.testing.assert_allclose(c, I.lever, atol=1e-12)
    np.testing.assert_allclose(I_C, I.inertia, atol=1e-12)
    np.testing.assert_allclose(params.params_from_com(m, c, I_C), pi, atol=1e-12)


@pytest.mark.parametrize("to, frm, first, names", [
    (params.to_diagonal_first, params.from_diagonal_first, "m", ["m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Ixy", "Iyz", "Ixz"]),
    (params.to_row_major, params.from_row_major, "m", ["m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"]),
    (params.to_inertia_first, params.from_inertia_first, "Ixx", ["Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz", "mcx", "mcy", "mcz", "m"]),
])
def test_paper_orders_round_trip_and_meaning(to, frm, first, names, rng):
    labels = np.arange(10.0)   # label k = position of the name in pinocchio order
    converted = to(labels)
    assert [params.PARAMETER_NAMES[int(k)] for k in converted] == names
    x = rng.normal(size=(4, 10))
    np.testing.assert_array_equal(frm(to(x)), x)


def test_pseudo_inertia_round_trip_and_consistency(rng):
    for _ in range(20):
        pi = random_params(rng)
        assert params.is_physically_consistent(pi)
        np.testing.assert_allclose(params.params_from_pseudo_inertia(params.pseudo_inertia(pi)), pi, atol=1e-12)
    assert not params.is_physically_consistent(random_params(rng, consistent=False))
    assert not params.is_physically_consistent(np.r_[-1.0, np.zeros(9)])


def test_log_cholesky_maps_onto_consistent_set_and_inverts(rng):
    for _ in range(50):
        eta = rng.normal(size=10)
        pi = params.log_cholesky_to_params(eta)
        assert np.linalg.eigvalsh(params.pseudo_inertia(pi))[0] > 0
        np.testing.assert_allclose(params.params_to_log_cholesky(pi), eta, atol=1e-9)
    with pytest.raises(ValueError):
        params.params_to_log_cholesky(random_params(rng, consistent=False))


def test_log_cholesky_matches_seed003_eq16(rng):
    a, d1, d2, d3, s12, s13, s23, s14, s24, s34 = eta = rng.normal(size=10)
    e = np.exp
    expected_seed003 = e(2 * a) * np.array([
        s14**2 + s24**2 + s34**2 + 1, s14 * e(d1), s14 * s12 + s24 * e(d2), s14 * s13 + s24 * s23 + s34 * e(d3),
        s12**2 + s13**2 + s23**2 + e(2 * d2) + e(2 * d3), s13**2 + s23**2 + e(2 * d1) + e(2 * d3),
        s12**2 + e(2 * d1) + e(2 * d2), -s12 * e(d1), -s12 * s13 - s23 * e(d2), -s13 * e(d1)])
    np.testing.assert_allclose(params.to_diagonal_first(params.log_cholesky_to_params(eta)), expected_seed003, rtol=1e-12)


def test_frame_transform_matches_pinocchio_and_is_linear(rng):
    X = pin.SE3.Random()
    pi = random_params(rng)
    expected = X.act(pin.Inertia.FromDynamicParameters(pi)).toDynamicParameters()
    np.testing.assert_allclose(params.transform_params(pi, X), expected, atol=1e-12)
    np.testing.assert_allclose(params.transform_matrix(X) @ pi, expected, atol=1e-12)
    np.testing.assert_allclose(params.transform_params(expected, X.inverse()), pi, atol=1e-12)


def test_box_and_cylinder_inertia():
    pi = params.box_inertia_params(12.0, (1.0, 2.0, 3.0))
    np.testing.assert_allclose(np.diag(params.inertia_matrix(pi)), [13.0, 10.0, 5.0])
    pi = params.cylinder_inertia_params(2.0, 0.5, 1.0, p_BC=(0, 0, 1.0))
    m, c, I_C = params.com_from_params(pi)
    np.testing.assert_allclose(c, [0, 0, 1.0])
    np.testing.assert_allclose(np.diag(I_C), [2 * (3 * 0.25 + 1) / 12] * 2 + [0.25])


def test_robot_parameter_groups_follow_the_robot_vector():
    model = pin.buildSampleModelManipulator()
    groups = params.robot_parameter_groups(model)
    assert groups.shape == params.robot_parameters(model).shape
    friction = groups[10 * (model.njoints - 1):].reshape(model.nv, 4)
    assert set(groups[:10 * (model.njoints - 1)]) == {"link inertials"}
    assert list(friction[0]) == ["friction", "friction", "armature", "joint torque offsets"]
