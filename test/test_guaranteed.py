"""Guaranteed bounds: LP projection with nuisance parameters, dual certificates, the momentum
estimator on simulated data, and flagging data that break the assumed bounds."""
import numpy as np
import pytest
from scipy.optimize import linprog

from conftest import random_params

from inertial_id.core.studies import bounds as study
from inertial_id.core.estimators.bounds import IntervalBounds, _dual_lower_bound
from inertial_id.core.estimators.guaranteed import (GuaranteedEstimator, pseudo_inertia_diagonal_cuts,
                                                   robot_parameter_box)
from inertial_id.core.model import load_robot
from inertial_id.core.momentum import robot_parameters
from inertial_id.core.sensors import NoiseModel
from inertial_id.core.sim import Simulator


def _nuisance_problem(rng, rows=60):
    x, r = rng.normal(size=3), rng.uniform(-1, 1, 5)
    A, N = rng.normal(size=(rows, 3)), rng.normal(size=(rows, 5))
    e = np.full(rows, 0.05)
    b = A @ x + N @ r + rng.uniform(-1, 1, rows) * e
    return x, r, A, N, b, e


def test_nuisance_bounds_are_the_exact_projection_and_contain_the_truth(rng):
    x, r, A, N, b, e = _nuisance_problem(rng)
    box = IntervalBounds(x - 5, x + 5, nuisance_lower=np.full(5, -1.0), nuisance_upper=np.full(5, 1.0))
    assert box.update(A, b, e, A_nuisance=N).consistent
    assert box.contains(x).all()
    M = np.hstack([A, N])
    bounds = list(zip(np.r_[x - 5, -np.ones(5)], np.r_[x + 5, np.ones(5)]))
    for k in range(3):
        c = np.zeros(8)
        c[k] = 1.0
        lo = linprog(c, A_ub=np.vstack([M, -M]), b_ub=np.r_[b + e, e - b], bounds=bounds, method="highs").fun
        hi = -linprog(-c, A_ub=np.vstack([M, -M]), b_ub=np.r_[b + e, e - b], bounds=bounds, method="highs").fun
        assert box.lower[k] <= lo and box.upper[k] >= hi               # never tighter than exact
        assert lo - box.lower[k] < 1e-7 and box.upper[k] - hi < 1e-7    # and no looser


def test_kept_rows_share_the_nuisance_and_are_tighter_than_per_batch_boxes(rng):
    x, r, A, N, b, e = _nuisance_problem(rng, rows=120)
    kw = dict(nuisance_lower=np.full(5, -1.0), nuisance_upper=np.full(5, 1.0))
    kept, per_batch = IntervalBounds(x - 5, x + 5, keep_rows=True, **kw), IntervalBounds(x - 5, x + 5, **kw)
    widths = [kept.width.copy()]
    for s in (slice(0, 40), slice(40, 80), slice(80, 120)):
        for box in (kept, per_batch):
            assert box.update(A[s], b[s], e[s], A_nuisance=N[s]).consistent
            assert box.contains(x).all()
        widths.append(kept.width.copy())
    assert all(np.all(w1 <= w0) for w0, w1 in zip(widths, widths[1:]))
    assert np.all(kept.width <= per_batch.width + 1e-9) and kept.width.sum() < 0.9 * per_batch.width.sum()


def test_dual_bound_is_valid_for_any_multipliers(rng):
    x, r, A, N, b, e = _nuisance_problem(rng)
    M = np.hstack([A, N])
    lo, hi = np.r_[x - 5, -np.ones(5)], np.r_[x + 5, np.ones(5)]
    c = rng.normal(size=8)
    best = linprog(c, A_ub=np.vstack([M, -M]), b_ub=np.r_[b + e, e - b], bounds=list(zip(lo, hi)),
                   method="highs").fun
    for _ in range(50):
        assert _dual_lower_bound(c, M, b - e, b + e, lo, hi, rng.normal(size=b.size)) <= best + 1e-9


def test_physical_cuts_hold_for_consistent_bodies_and_cut_inconsistent_ones(rng):
    G, g = pseudo_inertia_diagonal_cuts()
    assert all(np.all(G @ random_params(rng) <= g + 1e-12) for _ in range(100))
    assert np.any(G @ random_params(rng, consistent=False) > 0)


@pytest.fixture(scope="module")
def phase():
    """1.5 s of a 4 kHz simulation: perturbed robot, 7 lb dumbbell at a random grasp."""
    robot = load_robot("kinova_gen3")
    rng = np.random.default_rng(4)
    pi = study.grasped_payload("dumbbell_7lb", rng)
    true_model = study.perturbed_model(robot.model, rng)
    nominal, lo, hi = robot_parameter_box(robot.model)
    theta_true = robot_parameters(true_model)
    assert np.all((theta_true >= lo) & (theta_true <= hi)) and np.any(theta_true != nominal)
    traj = study.exciting_trajectory(robot, robot.profile["sim"]["home"], study.random_postures(robot, 1, rng)[0],
                                     1.5, seed=4)
    sim = Simulator(robot, pi, 4000.0, noise=NoiseModel.from_profile(robot.profile), seed=4, true_model=true_model)
    sim.command(traj)
    out = []
    for _ in range(6001):
        sim.step()
        m = sim.measure()
        out.append((m.t, m.q, m.qd, m.tau))
    return robot, pi, tuple(np.array(v) for v in zip(*out))


def test_guaranteed_estimator_contains_the_truth_with_a_perturbed_robot(phase):
    robot, pi, (t, q, qd, tau) = phase
    est = GuaranteedEstimator(robot, study.TABLE_I_LOWER, study.TABLE_I_UPPER)
    for s in (slice(0, 3001), slice(3001, None)):      # two batches: recursive, never widens
        est.add_samples(t[s], q[s], qd[s], tau[s])
        before = est.bounds.width.copy()
        est.update_bounds()
        assert np.all(est.bounds.width <= before)
    r = est.result()
    assert r.bounds_guaranteed and r.data_consistent and r.method == "guaranteed"
    assert np.all((pi >= r.lower) & (pi <= r.upper))
    assert r.upper[0] - r.lower[0] < 0.5 * (study.TABLE_I_UPPER[0] - study.TABLE_I_LOWER[0])
    assert r.physically_consistent and np.all((r.estimate >= r.lower - 1e-6) & (r.estimate <= r.upper + 1e-6))
    assert r.samples_used == 15 * 400


def test_torque_bias_beyond_the_bounds_is_flagged_and_the_box_kept(phase):
    robot, pi, (t, q, qd, tau) = phase
    est = GuaranteedEstimator(robot, study.TABLE_I_LOWER, study.TABLE_I_UPPER)
    est.add_samples(t[:3001], q[:3001], qd[:3001], tau[:3001])
    est.update_bounds()
    box = (est.bounds.lower.copy(), est.bounds.upper.copy())
    biased = tau.copy()
    biased[3001:, 1] += 3.0                              # a 3 N m offset on joint 2
    est.add_samples(t[3001:], q[3001:], qd[3001:], biased[3001:])
    est.update_bounds()
    r = est.result()
    assert not r.data_consistent and not r.bounds_guaranteed
    np.testing.assert_array_equal(r.lower, box[0])
    np.testing.assert_array_equal(r.upper, box[1])
    assert est.violating_rows.size > 0 and "contradict" in r.message
    # the minimum-violation diagnosis blames mostly joint-2 rows (index = window * nv + joint),
    # biased windows among them
    rows = est.violating_rows
    assert np.mean(rows % robot.nv == 1) >= 0.5 and rows.max() >= 7 * robot.nv


def test_interval_arithmetic_variant_is_guaranteed_but_looser(phase):
    robot, pi, (t, q, qd, tau) = phase
    widths = {}
    for variant in ("lp", "interval"):
        est = GuaranteedEstimator(robot, study.TABLE_I_LOWER, study.TABLE_I_UPPER, robot_uncertainty=variant)
        est.add_samples(t, q, qd, tau)
        est.update_bounds()
        r = est.result()
        assert r.bounds_guaranteed and np.all((pi >= r.lower) & (pi <= r.upper))
        widths[variant] = r.upper - r.lower
    assert np.all(widths["lp"] <= widths["interval"] + 1e-9)
    assert widths["lp"].sum() < widths["interval"].sum()
