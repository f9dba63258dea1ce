"""Closed-chain kinematics (seed 001): constraints, IK Gamma, G, Gdot on the four-bar (analytic) and
the Digit-like leg."""
import numpy as np
import pytest

from inertial_id.core.robot import closed_chain as cc
from inertial_id.core.robot import model as robot_model

A_CRANK, B_COUPLER, C_ROCKER, D_GROUND = 0.1, 0.35, 0.3, 0.3   # config/urdf/four_bar.urdf


def load_chain(name):
    robot = robot_model.load_robot(name)
    return cc.chain_from_profile(robot.model, robot.spec)


def four_bar_analytic(theta):
    """(coupler, rocker) angles of the upper assembly mode by intersecting two circles in the x-z
    plane; a rotation by angle phi about y sends the x axis to (cos phi, -sin phi) in (x, z)."""
    P = A_CRANK * np.array([np.cos(theta), -np.sin(theta)])
    D = np.array([D_GROUND, 0.0])
    d = np.linalg.norm(D - P)
    e = (D - P) / d
    along = (B_COUPLER**2 - C_ROCKER**2 + d**2) / (2 * d)
    h = np.sqrt(B_COUPLER**2 - along**2)
    candidates = [P + along * e + s * h * np.array([-e[1], e[0]]) for s in (1, -1)]
    Q = max(candidates, key=lambda x: x[1])          # rocker end above the ground link
    psi = np.arctan2(-(Q[1] - P[1]), Q[0] - P[0])
    phi = np.arctan2(-(Q[1] - D[1]), Q[0] - D[0])
    return np.array([psi - theta, phi])


def wrap(x):
    return np.angle(np.exp(1j * np.asarray(x)))


def leg_samples(n, rng):
    """Actuated leg poses inside the reachable set: toe cranks move as foot pitch P and roll R
    (toe_A = -0.2 - P + R, toe_B = 0.2 + P + R)."""
    hips = rng.uniform([-0.5, -0.4, -0.5], [0.5, 0.4, 0.9], size=(n, 3))
    knee = rng.uniform(-0.45, 0.8, size=(n, 1))
    P = rng.uniform(-0.35, 0.35, size=(n, 1))
    R = rng.uniform(-0.1, 0.1, size=(n, 1))
    return np.hstack([hips, knee, -0.2 - P + R, 0.2 + P + R])


def check_projection(chain, data, q_a, rng):
    q = cc.solve_passive_unique(chain, data, q_a, rng=rng)
    J = cc.constraint_jacobian(chain, data, q)
    G = cc.projection(chain, data, q)
    assert np.abs(cc.constraint(chain, data, q)).max() < 1e-11
    assert np.abs(J @ G).max() < 1e-12
    np.testing.assert_array_equal(G[chain.idx_a], np.eye(chain.na))
    lam = rng.normal(size=chain.nc)
    assert np.abs(G.T @ J.T @ lam).max() < 1e-12 * max(1.0, np.abs(J.T @ lam).max())
    # reconstructed velocities and accelerations satisfy J v = 0 and J a + Jdot v = 0
    v_a, a_a = rng.normal(size=chain.na), rng.normal(size=chain.na)
    s = cc.complete_state(chain, data, q_a, v_a, a_a, q[chain.idx_u])
    assert np.abs(J @ s.v).max() < 1e-12
    assert np.abs(J @ s.a + cc.constraint_drift(chain, data, s.q, s.v)).max() < 1e-11
    # Gdot v_a against a central finite difference of G along the motion
    h = 1e-6
    Gp = cc.projection(chain, data, cc.solve_passive(chain, data, q_a + h * v_a, q[chain.idx_u]))
    Gm = cc.projection(chain, data, cc.solve_passive(chain, data, q_a - h * v_a, q[chain.idx_u]))
    np.testing.assert_allclose(cc.projection_drift(chain, data, s.q, s.v), (Gp - Gm) / (2 * h) @ v_a,
                               atol=1e-6 * max(1.0, np.abs(s.a).max()))
    return q, G


def test_four_bar_matches_analytic_solution():
    chain = load_chain("four_bar")
    data = chain.model.createData()
    rng = np.random.default_rng(0)
    assert chain.na == 1 and chain.nc == 2 and chain.passive_joints == ("coupler", "rocker")
    for theta in rng.uniform(-np.pi, np.pi, 100):
        q, G = check_projection(chain, data, np.array([theta]), rng)
        np.testing.assert_allclose(wrap(q[chain.idx_u] - four_bar_analytic(theta)), 0.0, atol=1e-10)
        h = 1e-6
        dq_u = wrap(four_bar_analytic(theta + h) - four_bar_analytic(theta - h)) / (2 * h)
        np.testing.assert_allclose(G[chain.idx_u, 0], dq_u, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_digit_leg_closed_chain_checks_over_100_samples():
    chain = load_chain("digit_leg")
    data = chain.model.createData()
    assert (chain.na, chain.nc, len(chain.passive_joints)) == (6, 9, 9)
    rng = np.random.default_rng(1)
    for q_a in leg_samples(100, rng):
        check_projection(chain, data, q_a, rng)


def test_digit_leg_ik_matches_published_zero_pose():
    """At actuated angles 0 the passive solution is known (digit_v3_closed_loops.md, section 8)."""
    chain = load_chain("digit_leg")
    q = cc.solve_passive(chain, chain.model.createData(), np.zeros(6))
    got = dict(zip(chain.passive_joints, q[chain.idx_u]))
    assert got["left_tarsus"] == pytest.approx(-0.010078, abs=2e-4)
    assert got["left_achilles_rod"] == pytest.approx(0.000312, abs=2e-4)
    assert got["left_toe_pitch"] == pytest.approx(-0.001777, abs=2e-4)


def test_unreachable_pose_and_bad_declarations_are_named():
    chain = load_chain("digit_leg")
    data = chain.model.createData()
    with pytest.raises(cc.ClosureError, match="cannot be satisfied|outside their limits"):
        cc.solve_passive(chain, data, np.array([0, 0, 0, 0, 0.27, 0.72]))
    model = chain.model
    with pytest.raises(cc.ClosureError, match="nc == nu"):
        cc.ClosedChain(model, chain.closures[:2], chain.actuated_joints)
    with pytest.raises(cc.ClosureError, match="not in the model"):
        cc.ClosedChain(model, [cc.LoopClosure("x", "nowhere", (0, 0, 0), "left_A2", (0, 0, 0))],
                       chain.actuated_joints)
    spec = robot_model.load_robot("digit_leg").spec
    closure = spec.loop_closures[0].model_copy(update={"components": ["x", "w"]})
    with pytest.raises(cc.ClosureError, match="'w' is not among x, y, z"):
        cc.closures_from_profile(spec.model_copy(update={"loop_closures": [closure]}))


def test_open_chain_projection_is_identity():
    chain = load_chain("digit_arm")
    data = chain.model.createData()
    q = cc.solve_passive(chain, data, np.full(4, 0.3))
    np.testing.assert_array_equal(cc.projection(chain, data, q), np.eye(4))
    assert cc.constraint(chain, data, q).size == 0


def test_digit_profile_combines_leg_loops_and_open_arm():
    chain = load_chain("digit")
    leg = load_chain("digit_leg")
    assert (chain.na, chain.nc) == (10, 9)
    q_a = leg_samples(1, np.random.default_rng(3))[0]
    q = cc.solve_passive(chain, chain.model.createData(), np.concatenate([q_a, [0.1, -0.2, 0.3, 0.4]]))
    q_leg = cc.solve_passive(leg, leg.model.createData(), q_a)
    np.testing.assert_allclose(q[:15], q_leg, atol=1e-10)
