"""Numerical base parameters: reduced regressors have full rank and reproduce RNEA torques."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import builtin_models as bm
from inertial_id.core.identifiability import kinematic_tree as kt
from inertial_id.core.identifiability import numeric, rpna


def true_params(model):
    return np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])


def random_states(model, rng, n):
    for _ in range(n):
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-np.pi, np.pi, model.nv))
        yield q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def models():
    rng = np.random.default_rng(7)
    out = [(name, f()) for name, f in sorted(bm.BUILTIN_MODELS.items())]
    out += [(f"random{i}", bm.random_model(rng, int(rng.integers(2, 9)), tree=bool(i % 2)))
            for i in range(6)]
    out += [("floating_puma", kt.with_floating_base(bm.puma560()))]
    return out


@pytest.mark.parametrize("name, model", models(), ids=[n for n, _ in models()])
@pytest.mark.parametrize("source", ["numeric", "rpna"])
def test_reduced_model_is_full_rank_and_reproduces_rnea(name, model, source):
    rng = np.random.default_rng(1)
    W = numeric.model_regressor(model, seed=2)
    if source == "numeric":
        base = numeric.base_parameters(W)
    else:
        base = rpna.base_parameters(rpna.rpna(kt.tree_from_model(model)))
    count = rpna.rpna(kt.tree_from_model(model)).num_base_parameters
    assert base.rank == count
    theta_b = base.base_map @ true_params(model)
    data = model.createData()
    rows, tau_err = [], 0.0
    for q, v, a in random_states(model, rng, 30):
        Y_b = base.reduce(pin.computeJointTorqueRegressor(model, data, q, v, a))
        rows.append(Y_b)
        tau_err = max(tau_err, np.abs(Y_b @ theta_b - pin.rnea(model, data, q, v, a)).max())
    assert tau_err < 1e-9
    assert np.linalg.matrix_rank(np.vstack(rows)) == count


def test_base_map_and_kd_are_consistent():
    W = numeric.model_regressor(bm.puma560())
    base = numeric.base_parameters(W)
    assert np.allclose(W @ base.Pd, W @ base.Pb @ base.Kd, atol=1e-9 * np.abs(W).max())
    assert np.allclose(base.Pb.T @ base.Pb, np.eye(base.rank))


def test_roundoff_columns_do_not_count():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(40, 5))
    W = np.column_stack([W, 1e-17 * rng.normal(size=40), W[:, 0] + W[:, 1]])
    assert numeric.svd_rank(W) == 5 == numeric.base_parameters(W).rank


def test_rows_follow_the_preference_order():
    # identifiable directions: x0 + 2 x2 and x1 (x2's column is parallel to x0's)
    rows = np.array([[1.0, 0, 2], [0, 1, 0]])
    first = numeric.base_parameters_from_rows(rows, [0, 1, 2])
    assert list(first.independent) == [0, 1] and first.combinations(["a", "b", "c"])[0] == "a + 2*c"
    last = numeric.base_parameters_from_rows(rows, [2, 1, 0])
    assert list(last.independent) == [2, 1] and last.combinations(["a", "b", "c"])[0] == "0.5*a + c"


def test_motor_columns_follow_the_rpna_layout():
    model = bm.planar_2r()
    rotors = kt.default_rotors(model)
    W = numeric.model_regressor(model, rotors)
    assert W.shape[1] == 28
    # columns 10..13 are rotor 1: [m, mcz, Ixx=Iyy, Izz]; its Izz enters tau_1 (as n^2 qdd_1) only
    assert np.all(W[0::2, 13] != 0)
    assert np.allclose(W[1::2, 10:14], 0)    # joint 2 never feels rotor 1 (it sits on the world)
