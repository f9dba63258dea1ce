"""Identification on synthetic data of the Digit-like leg (closed chain) and the Gen3 model: base
parameter recovery, friction/rotor recovery under noise, physical consistency, solvers, bad data."""
import numpy as np
import pytest

from inertial_id.core.robot import closed_chain as cc
from inertial_id.core.robot import model as robot_model
from inertial_id.core.data.data_io import Run
from inertial_id.core.identification import problem as P
from inertial_id.core.identification import solvers, validation
from inertial_id.core.identification.synthetic import fourier_joint_motion, synthesize

FRICTION_TRUE = np.array([  # per actuated leg joint: Fc (N m), Fv (N m s), beta (N m); Ia from the profile
    [1.5, 2.0, 0.2], [1.0, 1.5, -0.1], [2.0, 3.0, 0.3], [2.0, 3.0, -0.2], [0.5, 0.8, 0.05], [0.5, 0.8, 0.05]])


@pytest.fixture(scope="module")
def leg():
    robot = robot_model.load_robot("digit_leg")
    chain = cc.chain_from_profile(robot.model, robot.spec)
    layout = P.make_layout(chain, True, robot.spec.rotor_inertia)
    theta = layout.nominal.copy()
    phi = layout.friction_block(theta).copy()
    phi[:, [0, 1, 3]] = FRICTION_TRUE
    theta[layout.n_inertial:] = phi.ravel()
    return chain, layout, theta


def leg_run(leg, n, seed, noise, duration_s=5.0):
    """``n`` samples of 5 s of exciting leg motion inside the reachable set (toe cranks as foot pitch
    and roll); more samples sample the same motion more densely."""
    chain, layout, theta = leg
    rng = np.random.default_rng(seed)
    t = np.arange(n) * (duration_s / n)
    x, dx, ddx = fourier_joint_motion(t, [0, 0, 0.3, 0.2, 0, 0], [0.5, 0.4, 0.6, 0.5, 0.3, 0.1], rng)
    M = np.eye(6)
    M[4], M[5] = [0, 0, 0, 0, -1, 1], [0, 0, 0, 0, 1, 1]
    offset = np.array([0, 0, 0, 0, -0.2, 0.2])
    return synthesize(chain, layout, theta, t, x @ M.T + offset, dx @ M.T, ddx @ M.T, noise_rel=noise, rng=rng)


def test_noise_free_leg_recovers_base_parameters(leg):
    """Only base parameters of G^T [Y | Yf] are identifiable on a closed chain: compare those."""
    chain, layout, theta = leg
    problem = P.build_problem(chain, layout, [leg_run(leg, 1000, 0, 0.0)])
    assert problem.rows.constraint_residual["position_m"] < 1e-10
    assert problem.rows.constraint_residual["acceleration_m_per_s2"] < 1e-10
    truth = problem.base.base_map @ theta[problem.free]
    significant = np.abs(truth) > 1e-4      # smaller ones (rod cross-section inertias) by absolute error
    # the SDP to Clarabel's accuracy: on one machine its default tolerances end "optimal_inaccurate"
    # here (noise-free rows weighted up to ~1e6): 2.0e-6 relative at worst, 3e-9 absolute on the
    # small ones (earlier machines met 1e-6 and 1e-10, as the exact least-squares answer does)
    for method, relative, absolute in (("ls", 1e-6, 1e-10), ("lmi", 1e-5, 1e-8)):
        est = solvers.solve(problem, method)
        err = np.abs(est.base_values - truth)
        assert np.linalg.norm(err) <= 1e-6 * np.linalg.norm(truth), method
        assert np.all(err[significant] <= relative * np.abs(truth[significant])), method
        assert np.all(err[~significant] <= absolute), method
    assert problem.base.rank < problem.A.shape[1]      # the projection does lose parameters


@pytest.mark.slow
def test_noisy_leg_friction_and_rotor_inertia_with_inertials_fixed(leg):
    """Seed 001's leg procedure: manufacturer inertials held, motor and friction identified."""
    chain, layout, theta = leg
    truth = layout.friction_block(theta)
    errors = []
    for n in (500, 2000, 8000):
        problem = P.build_problem(chain, layout, [leg_run(leg, n, 1, 0.01)], ["inertial"])
        est = solvers.solve(problem, "lmi")
        phi = layout.friction_block(est.theta)
        rel = np.abs(phi - truth) / np.abs(truth)
        errors.append(rel.mean())
        assert np.all(phi[:, :3] >= 0)
        assert min(solvers.lmi_min_eigenvalues(layout, est.theta).values()) > 0
        if n >= 2000:
            assert rel[:, 2].max() < 0.05 and rel[:, 1].max() < 0.05 and rel[:, 0].max() < 0.10
    assert errors[0] > errors[1] > errors[2]


def test_lmi_keeps_every_body_consistent_where_ls_does_not(leg):
    chain, layout, theta = leg
    problem = P.build_problem(chain, layout, [leg_run(leg, 600, 2, 0.05)])
    ls = solvers.solve(problem, "ls")
    lmi = solvers.solve(problem, "lmi", lmi_margin=1e-8)
    eig_lmi = solvers.lmi_min_eigenvalues(layout, lmi.theta)
    assert min(eig_lmi.values()) >= 0.99e-8
    assert np.all(layout.friction_block(lmi.theta)[:, :3] >= -1e-9)
    assert min(solvers.lmi_min_eigenvalues(layout, ls.theta).values()) < 0   # LS needs the constraints


def test_fixed_group_moves_known_parameters_to_the_right_side(leg):
    chain, layout, theta = leg
    run = leg_run(leg, 400, 3, 0.0)
    problem = P.build_problem(chain, layout, [run], ["inertial", "beta"], theta_fixed=theta)
    assert problem.A.shape[1] == 3 * chain.na
    est = solvers.solve(problem, "ls")
    np.testing.assert_allclose(layout.friction_block(est.theta), layout.friction_block(theta), rtol=1e-8,
                               atol=1e-10)
    with pytest.raises(P.IdentificationError, match="unknown parameter group"):
        P.build_problem(chain, layout, [run], ["gearbox"])


def gen3_run(gen3, n, seed, noise=0.0, amplitude=0.9):
    chain, layout, theta = gen3
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.01
    return synthesize(chain, layout, theta, t, *fourier_joint_motion(t, np.zeros(7), np.full(7, amplitude), rng),
                      noise_rel=noise, rng=rng)


def test_rank_deficient_data_names_the_unidentified_base_parameters(gen3):
    chain, layout, _ = gen3
    run = gen3_run(gen3, 400, 0)
    frozen = Run("frozen", run.t, run.q.copy(), run.qd.copy(), run.tau, run.qdd.copy())
    frozen.q[:, 6] = 0.3                              # joint 7 never moves
    frozen.qd[:, 6] = 0.0
    frozen.qdd[:, 6] = 0.0
    with pytest.raises(P.IdentificationError, match=r"do not excite .* base parameters.*joint_7\.(Fv|Fc|Ia)"):
        P.build_problem(chain, layout, [frozen])


def test_irls_resists_outliers_and_wls_balances_joints(gen3):
    chain, layout, theta = gen3
    run = gen3_run(gen3, 1500, 1, noise=0.01)
    rng = np.random.default_rng(5)
    spikes = rng.choice(run.n_samples, 40, replace=False)
    tau = run.tau.copy()
    tau[spikes] += rng.choice([-1, 1], size=(40, 7)) * 20.0
    problem = P.build_problem(chain, layout, [Run("spiky", run.t, run.q, run.qd, tau, run.qdd)])
    truth = problem.base.base_map @ theta[problem.free]
    err = {m: np.linalg.norm(solvers.solve(problem, m).base_values - truth) for m in ("ls", "wls", "irls")}
    irls = solvers.solve(problem, "irls")
    assert irls.info["converged"]
    assert err["irls"] < 0.3 * err["ls"]
    w = solvers.solve(problem, "wls").joint_weights
    assert w.shape == (7,) and np.all(w > 0)


def test_forward_simulation_metric_is_small_for_the_true_model(gen3):
    chain, layout, theta = gen3
    run = gen3_run(gen3, 300, 2)
    truth = validation.simulate_segments(chain, layout, theta, run, substeps=20)
    wrong = theta.copy()
    wrong[layout.n_inertial:] = 0.0                   # no friction, no rotor inertia
    off = validation.simulate_segments(chain, layout, wrong, run, substeps=20)
    assert truth["segments"] == 6
    assert np.all(truth["l2"] < 0.1)                  # what remains is the zero-order hold at 100 Hz
    assert np.all(off["l2"] > 5 * truth["l2"])


def test_closed_chain_forward_simulation_follows_the_true_model(leg):
    chain, layout, theta = leg
    run = leg_run(leg, 100, 4, 0.0, duration_s=0.5)
    sim = validation.simulate_segments(chain, layout, theta, run, segment_s=0.25, substeps=5)
    assert sim["segments"] == 2
    assert np.all(sim["l2"] < 0.01)


def test_digit_arm_open_chain_recovers_base_parameters_noise_free():
    robot = robot_model.load_robot("digit_arm")
    chain = cc.chain_from_profile(robot.model, robot.spec)
    layout = P.make_layout(chain, True, robot.spec.rotor_inertia)
    theta = layout.nominal.copy()
    theta[layout.n_inertial:] = np.tile([0.8, 1.2, 0.15, 0.05], 4)
    rng = np.random.default_rng(7)
    t = np.arange(600) * 0.01
    run = synthesize(chain, layout, theta, t, *fourier_joint_motion(t, np.zeros(4), np.full(4, 1.0), rng))
    problem = P.build_problem(chain, layout, [run])
    truth = problem.base.base_map @ theta[problem.free]
    est = solvers.solve(problem, "lmi")
    assert np.linalg.norm(est.base_values - truth) <= 1e-6 * np.linalg.norm(truth)
    assert min(solvers.lmi_min_eigenvalues(layout, est.theta).values()) > 0
