"""RPNA (seed 000): operators, the paper's numbers, and agreement with sampled regressors."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import builtin_models as bm
from inertial_id.core.robot import params
from inertial_id.core.identifiability import kinematic_tree as kt
from inertial_id.core.identifiability import numeric, rpna, spatial


def analyse(model, motors=False, gravity=True, floating=False, static=False, gear_ratio=50.0):
    if floating:
        model = kt.with_floating_base(model)
    if not gravity:
        model = kt.without_gravity(model)
    rotors = kt.default_rotors(model, gear_ratio) if motors else None
    return model, rotors, rpna.rpna(kt.tree_from_model(model, rotors), gravity=gravity, static=static)


def dims(result):
    return ([b.dim_V for b in result.bodies], [b.dim_K for b in result.bodies],
            [b.dim_T for b in result.bodies])


# --- operators -----------------------------------------------------------------------------------

def test_spatial_inertia_matches_pinocchio_and_vee_inverts_it():
    pi = pin.Inertia.Random().toDynamicParameters()
    I6 = spatial.spatial_inertia(pi)
    assert np.allclose(I6, pin.Inertia.FromDynamicParameters(pi).matrix())
    assert np.allclose(spatial.vee(I6), pi)


def test_transfer_matrix_is_the_parameter_transform_of_params():
    X = pin.SE3.Random()
    assert np.allclose(spatial.transfer_matrix(X), params.transform_matrix(X), atol=1e-12)


def test_rotation_operator_is_the_rate_of_the_transfer():
    # B(X(q)) with X(q) the joint displaced by q about phi: d/dq B = -A(phi) B at q = 0
    phi = np.concatenate([np.random.default_rng(0).normal(size=3), [0.3, -0.5, 0.8]])
    h = 1e-6
    B = [spatial.transfer_matrix(pin.exp6(pin.Motion(s * h * phi))) for s in (1, -1)]
    assert np.allclose((B[0] - B[1]) / (2 * h), -spatial.rotation_operator(phi), atol=1e-6)


def test_ctrb_gives_the_invariant_span():
    F = spatial.cross_motion([0, 0, 0, 0, 0, 1.0])          # rotation about z
    V = spatial.ctrb([F], np.array([[1.0, 0, 0, 0, 0, 0]]).T)  # linear x -> linear x, y
    assert V.shape[1] == 2 and np.allclose(V[2:], 0)


# --- the paper's numbers (seed 000 Tables 2, 4, 5, Fig. 4) --------------------------------------

def test_puma560():
    _, _, g = analyse(bm.puma560())
    assert dims(g) == ([2, 5, 6, 6, 6, 6], [1, 8, 10, 10, 10, 10], [9, 3, 3, 3, 3, 3])
    assert g.num_base_parameters == 36
    _, _, ng = analyse(bm.puma560(), gravity=False)
    assert dims(ng)[:2] == ([1, 3, 6, 6, 6, 6], [1, 6, 10, 10, 10, 10])
    assert dims(ng)[2] == [9, 5, 3, 3, 3, 3] and ng.num_base_parameters == 34
    assert analyse(bm.puma560(), motors=True)[2].num_base_parameters == 40


def test_scara():
    _, _, g = analyse(bm.scara())
    assert dims(g) == ([2, 4, 4, 4], [1, 4, 4, 4], [9, 7, 9, 7])
    assert g.num_base_parameters == 8
    _, _, ng = analyse(bm.scara(), gravity=False)
    assert dims(ng)[:2] == ([1, 3, 4, 4], [1, 4, 4, 4])
    assert analyse(bm.scara(), motors=True)[2].num_base_parameters == 11


def test_cheetah_leg_fixed_and_floating():
    _, _, g = analyse(bm.cheetah_leg())
    assert dims(g) == ([3, 6, 6], [3, 9, 10], [7, 3, 3]) and g.num_base_parameters == 17
    _, _, ng = analyse(bm.cheetah_leg(), gravity=False)
    assert dims(ng)[:2] == ([1, 3, 6], [1, 6, 10])
    assert analyse(bm.cheetah_leg(), motors=True)[2].num_base_parameters == 18
    _, _, f = analyse(bm.cheetah_leg(), floating=True)
    legs = f.bodies[1:]       # the torso (free body) is always fully identifiable: T = {0}
    assert f.bodies[0].dim_T == 0
    assert [(b.dim_V, b.dim_K, b.dim_T) for b in legs] == [(6, 10, 3)] * 3
    assert f.num_base_parameters - 10 == 21
    assert analyse(bm.cheetah_leg(), floating=True, motors=True)[2].num_base_parameters - 10 == 24


def test_planar_2r_combinations_and_motors():
    _, _, r = analyse(bm.planar_2r(), gravity=False)
    assert dims(r)[2] == [9, 7] and r.num_base_parameters == 4
    names = rpna.parameter_names(r.tree, short=True)
    assert sorted(rpna.base_parameters(r).combinations(names)) == sorted(
        ["Izz1 + 0.09*m2", "Izz2", "mcx2", "mcy2"])
    model = kt.without_gravity(bm.planar_2r())
    full = kt.default_rotors(model)
    only = [lambda i: (full[0], None), lambda i: (None, full[1])]
    added = [rpna.rpna(kt.tree_from_model(model, f(0)), gravity=False).num_base_parameters - 4
             for f in only]
    assert added == [0, 1]     # motor 1 adds 0, motor 2 adds 1


def test_perpendicular_2r():
    _, _, r = analyse(bm.planar_2r_perp(), gravity=False)
    assert r.num_base_parameters == 8 and dims(r)[0][1] == 4
    assert analyse(bm.planar_2r_perp(), gravity=False, motors=True)[2].num_base_parameters == 8
    # undetectable changes of body 2 (seed 000 Sec. 4): no Ixz, Iyz, Izz (momentum) and
    # no hx, hy, Ixx - Iyy, Ixy (mapping)
    T2 = spatial.null_space(r.bodies[1].N)
    assert T2.shape[1] == 3
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = T2
    for row in (ixz, iyz, izz, hx, hy, ixx - iyy, ixy):
        assert np.allclose(row, 0, atol=1e-9)


def free_parent_with(joint):
    model = pin.Model()
    model.gravity = pin.Motion(np.array([0, 0, -9.81]), np.zeros(3))
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    model.appendBodyToJoint(root, pin.Inertia.Random(), pin.SE3.Identity())
    child = model.addJoint(root, joint, pin.SE3.Random(), "child")
    model.appendBodyToJoint(child, pin.Inertia.Random(), pin.SE3.Identity())
    return model


@pytest.mark.parametrize("joint, adds", [(pin.JointModelRZ(), 7), (pin.JointModelPZ(), 4)])
def test_free_parent_child_adds(joint, adds):
    _, _, r = analyse(free_parent_with(joint))
    assert r.num_base_parameters == 10 + adds


@pytest.mark.parametrize("gear_ratio, tilt, adds", [(1.0, 0.0, 0), (50.0, 0.0, 1), (1.0, 0.4, 1)])
def test_rotor_on_free_parent(gear_ratio, tilt, adds):
    model = free_parent_with(pin.JointModelRZ())
    X = model.jointPlacements[2] * pin.SE3(pin.utils.rotate("x", tilt), np.array([0.1, 0, 0]))
    rotors = (None, kt.Rotor(X, gear_ratio))
    r = rpna.rpna(kt.tree_from_model(model, rotors))
    assert r.num_base_parameters == 17 + adds
    assert numeric.svd_rank(numeric.model_regressor(model, rotors)) == 17 + adds


def test_unsupported_joint_is_refused_with_its_name():
    model = pin.Model()
    model.addJoint(0, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "wrist_ball")
    with pytest.raises(kt.UnsupportedModelError, match="wrist_ball"):
        kt.tree_from_model(model)


# --- agreement with the numerical method --------------------------------------------------------

def check_against_numeric(model, rotors, result, static=False):
    R, N_sys = rpna.system_bases(result)
    n = result.n_params
    assert spatial.rank(R) + spatial.rank(N_sys) == n
    assert np.allclose(N_sys @ R, 0, atol=1e-8)
    # twice as many rows as columns is plenty for generic random states (and keeps the suite fast)
    W = numeric.model_regressor(model, rotors, static=static,
                                n_samples=int(np.ceil(2 * n / model.nv)) + 4)
    assert np.allclose(W @ R, 0, atol=1e-8 * max(1.0, np.abs(W).max()))
    assert numeric.svd_rank(W) == result.num_base_parameters == numeric.base_parameters(W).rank


@pytest.mark.parametrize("name", sorted(bm.BUILTIN_MODELS))
@pytest.mark.parametrize("motors, floating", [(False, False), (True, False), (False, True)])
def test_builtin_models_agree_with_numeric(name, motors, floating):
    model, rotors, result = analyse(bm.BUILTIN_MODELS[name](), motors=motors, floating=floating)
    check_against_numeric(model, rotors, result)


@pytest.mark.parametrize("seed", range(56))
def test_random_robots_agree_with_numeric(seed):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 13))
    model = bm.random_model(rng, n, tree=bool(seed % 2), prismatic_fraction=0.3)
    variant = seed % 7
    model, rotors, result = analyse(model, motors=variant == 3, gravity=variant != 4,
                                    floating=variant == 5, static=variant == 6)
    assert result.tree.n_bodies == n + (variant == 5)
    check_against_numeric(model, rotors, result, static=variant == 6)
