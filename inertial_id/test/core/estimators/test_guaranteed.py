"""Guaranteed bounds: LP projection with nuisance parameters, dual certificates, the momentum
estimator on simulated data, and flagging data that break the assumed bounds."""
import numpy as np
import pytest
from scipy.optimize import linprog

from conftest import random_params

from inertial_id.studies import bounds as study
from inertial_id.core.estimators.bounds import IntervalBounds, _dual_lower_bound, _RangeLP
from inertial_id.core.estimators.guaranteed import GuaranteedEstimator
from inertial_id.core.estimators.physical_cuts import pseudo_inertia_diagonal_cuts
from inertial_id.core.robot.robot_box import robot_parameter_box
from inertial_id.core.robot.model import load_robot
from inertial_id.core.robot.params import robot_parameters
from inertial_id.core.signals.sensors import NoiseModel
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


@pytest.mark.parametrize("fixed", [False, True])
def test_optimal_basis_is_the_one_highs_reports(rng, fixed):
    """The basis kept for warm starts is read from the basic variables and the bounds the
    nonbasic ones sit on; it must be HiGHS's own (getBasis), also where that reading cannot
    decide (a fixed variable: getBasis is used)."""
    x, r, A, N, b, e = _nuisance_problem(rng, rows=80)
    M = np.vstack([np.hstack([A, N]), np.eye(8)[:1]])             # plus a one-sided row (a cut)
    lo, hi = np.r_[x - 5, -np.ones(5)], np.r_[x + 5, np.ones(5)]
    if fixed:
        lo[4] = hi[4] = r[1]
    lp = _RangeLP(M, np.r_[b - e, -np.inf], np.r_[b + e, x[0]], lo, hi)
    checked = 0
    for k in range(8):
        for sign in (1.0, -1.0):
            c = np.zeros(8)
            c[k] = sign
            status, _ = lp.minimize(c)
            assert status == "optimal"
            reported = lp.h.getBasis()
            np.testing.assert_array_equal(lp.basis[0], [v.value for v in reported.col_status])
            np.testing.assert_array_equal(lp.basis[1], [v.value for v in reported.row_status])
            checked += 1
    assert checked == 16 and lp._status_from_values == (not fixed)


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
    traj = study.exciting_trajectory(robot, robot.spec.sim.home, study.random_postures(robot, 1, rng)[0],
                                     1.5, seed=4)
    sim = Simulator(robot, pi, 4000.0, noise=NoiseModel.from_profile(robot.spec), seed=4, true_model=true_model)
    sim.command(traj)
    out = []
    for _ in range(6001):
        sim.step()
        m = sim.measure()
        out.append((m.t, m.q, m.qd, m.tau))
    return robot, pi, tuple(np.array(v) for v in zip(*out))


def test_guaranteed_estimator_contains_the_truth_with_a_perturbed_robot(phase):
    robot, pi, (t, q, qd, tau) = phase
    est = GuaranteedEstimator(robot, study.PAYLOAD_PRIOR_LOWER, study.PAYLOAD_PRIOR_UPPER)
    for s in (slice(0, 3001), slice(3001, None)):      # two batches: recursive, never widens
        est.add_samples(t[s], q[s], qd[s], tau[s])
        before = est.bounds.width.copy()
        est.update_bounds()
        assert np.all(est.bounds.width <= before)
    r = est.result()
    assert r.bounds_guaranteed and r.data_consistent and r.method == "guaranteed"
    assert np.all((pi >= r.lower) & (pi <= r.upper))
    assert r.upper[0] - r.lower[0] < 0.5 * (study.PAYLOAD_PRIOR_UPPER[0] - study.PAYLOAD_PRIOR_LOWER[0])
    assert r.physically_consistent and np.all((r.estimate >= r.lower - 1e-6) & (r.estimate <= r.upper + 1e-6))
    assert r.samples_used == 15 * 400


def test_torque_bias_beyond_the_bounds_is_flagged_and_the_box_kept(phase):
    robot, pi, (t, q, qd, tau) = phase
    est = GuaranteedEstimator(robot, study.PAYLOAD_PRIOR_LOWER, study.PAYLOAD_PRIOR_UPPER)
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
        est = GuaranteedEstimator(robot, study.PAYLOAD_PRIOR_LOWER, study.PAYLOAD_PRIOR_UPPER, robot_uncertainty=variant)
        est.add_samples(t, q, qd, tau)
        est.update_bounds()
        r = est.result()
        assert r.bounds_guaranteed and np.all((pi >= r.lower) & (pi <= r.upper))
        widths[variant] = r.upper - r.lower
    assert np.all(widths["lp"] <= widths["interval"] + 1e-9)
    assert widths["lp"].sum() < widths["interval"].sum()


def _exact_interval(M, lo_rows, hi_rows, col_lo, col_hi, k):
    """min and max of z_k over the polytope, each LP solved on its own (scipy HiGHS, no warm start)."""
    A_ub, b_ub = np.vstack([M, -M]), np.r_[hi_rows, -lo_rows]
    bounds = list(zip(col_lo, col_hi))
    c = np.zeros(M.shape[1])
    c[k] = 1.0
    low, high = (linprog(s * c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs") for s in (1.0, -1.0))
    assert low.status == 0 and high.status == 0
    return low.fun, -high.fun


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_warm_started_bounds_equal_independently_solved_lps(seed):
    """Each update starts every LP from that objective's basis at the previous update (rows pruned
    to max_rows, so some saved bases lose active rows and must be completed): the box after every
    update equals the per-parameter LP optima over the same rows and previous box, each solved
    from scratch. One column no row touches keeps its prior interval (LPs optimal at the box,
    the most degenerate case)."""
    rng = np.random.default_rng(seed)
    n, n_r = 5, 4
    x, r = rng.normal(size=n), rng.uniform(-1, 1, n_r)
    r_lo, r_hi = r - rng.uniform(0.05, 0.5, n_r), r + rng.uniform(0.05, 0.5, n_r)
    box = IntervalBounds(x - 4, x + 4, nuisance_lower=r_lo, nuisance_upper=r_hi, keep_rows=True, max_rows=14)
    for _ in range(8):
        A, N = rng.normal(size=(10, n)), rng.normal(size=(10, n_r))
        A[:, -1] = 0.0
        e = rng.uniform(0.02, 0.2, 10)
        b = A @ x + N @ r + rng.uniform(-1, 1, 10) * e
        M_old, b_old, e_old = box.kept_rows
        M_all, b_all, e_all = np.vstack([M_old, np.hstack([A, N])]), np.r_[b_old, b], np.r_[e_old, e]
        col_lo, col_hi = np.r_[box.lower, r_lo], np.r_[box.upper, r_hi]
        assert box.update(A, b, e, A_nuisance=N).consistent
        for k in range(n):
            low, high = _exact_interval(M_all, b_all - e_all, b_all + e_all, col_lo, col_hi, k)
            tol = 2e-9 * (1 + max(abs(low), abs(high)))   # the outward pad is 1e-9 (1 + |value|)
            assert abs(box.lower[k] - low) <= tol and abs(box.upper[k] - high) <= tol
        assert box.contains(x).all()
    assert box.lp_warm_starts >= 5 * 2 * n            # the saved bases were used, not only chained solves
    assert box.upper[-1] - box.lower[-1] == pytest.approx(8.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_final_lp_is_the_exact_box_of_every_archived_row(seed):
    """Batches of rows pruned to ``max_rows`` and the nuisance shared across them: the online box
    loses what pruning cost; :meth:`final_update` gives the per-parameter LP optima over every row
    at once (solved here from scratch), never wider than the online box, and narrower here; with a
    short archive only the latest rows enter it."""
    rng = np.random.default_rng(seed)
    n, n_r = 4, 6
    x, r = rng.normal(size=n), rng.uniform(-1, 1, n_r)
    r_lo, r_hi = r - 0.5, r + 0.5
    box = IntervalBounds(x - 4, x + 4, nuisance_lower=r_lo, nuisance_upper=r_hi, keep_rows=True, max_rows=8,
                         archive_rows=10_000)
    rows = []
    for _ in range(10):
        A, N = rng.normal(size=(12, n)), rng.normal(size=(12, n_r))
        e = rng.uniform(0.02, 0.2, 12)
        b = A @ x + N @ r + rng.uniform(-1, 1, 12) * e
        rows.append((np.hstack([A, N]), b, e))
        assert box.update(A, b, e, A_nuisance=N).consistent
    online = box.lower.copy(), box.upper.copy()
    assert box.archived_rows == 120
    assert box.final_update().consistent
    M, b, e = (np.concatenate([row[i] for row in rows]) for i in range(3))
    for k in range(n):
        low, high = _exact_interval(M, b - e, b + e, np.r_[x - 4, r_lo], np.r_[x + 4, r_hi], k)
        tol = 2e-9 * (1 + max(abs(low), abs(high)))
        assert box.lower[k] >= max(low, online[0][k]) - tol and box.upper[k] <= min(high, online[1][k]) + tol
        assert box.lower[k] <= max(low, online[0][k]) + tol and box.upper[k] >= min(high, online[1][k]) - tol
    assert box.contains(x).all()
    assert np.sum(box.upper - box.lower) < np.sum(online[1] - online[0]) - 1e-6
    short = IntervalBounds(x - 4, x + 4, archive_rows=30)
    for A, b_, e_ in rows:
        short.update(A[:, :n], b_ - A[:, n:] @ r, e_)
    assert short.archived_rows == 36          # whole batches, the latest, at least 30 rows


def test_data_contradicting_the_box_are_still_reported_after_warm_starts(rng):
    """Saved bases do not hide an empty polytope: a batch far off the model after warm-started
    updates leaves the box as it was and names the offending rows."""
    x, r, A, N, b, e = _nuisance_problem(rng, rows=90)
    box = IntervalBounds(x - 5, x + 5, nuisance_lower=np.full(5, -1.0), nuisance_upper=np.full(5, 1.0),
                         keep_rows=True, max_rows=40)
    for s in (slice(0, 30), slice(30, 60)):
        assert box.update(A[s], b[s], e[s], A_nuisance=N[s]).consistent
    assert box.lp_warm_starts > 0
    lower, upper = box.lower.copy(), box.upper.copy()
    b_bad = b[60:].copy()
    b_bad[[3, 7]] += 100.0                       # beyond anything the boxes allow
    result = box.update(A[60:], b_bad, e[60:], A_nuisance=N[60:])
    assert not result.consistent and not box.data_consistent
    n_kept = box.kept_rows[1].size
    assert {n_kept + 3, n_kept + 7} <= set(result.violating_rows.tolist())   # the elastic LP may name more
    np.testing.assert_array_equal(box.lower, lower)
    np.testing.assert_array_equal(box.upper, upper)


def test_an_lp_without_optimal_status_keeps_its_old_bound_and_is_counted(rng, monkeypatch):
    """No certificate, no tightening: the bound of an LP HiGHS does not solve to optimality keeps its
    previous value (here: the prior), the others tighten as usual."""
    from inertial_id.core.estimators import bounds
    x, r, A, N, b, e = _nuisance_problem(rng)
    minimize = bounds._RangeLP.minimize

    def fail_max_of_first(self, c, start=None):
        return ("failed", np.nan) if c[0] < 0 else minimize(self, c, start)

    monkeypatch.setattr(bounds._RangeLP, "minimize", fail_max_of_first)
    box = IntervalBounds(x - 5, x + 5, nuisance_lower=np.full(5, -1.0), nuisance_upper=np.full(5, 1.0))
    assert box.update(A, b, e, A_nuisance=N).consistent
    assert box.upper[0] == x[0] + 5 and box.lower[0] > x[0] - 5 and np.all(box.upper[1:] < x[1:] + 5)
    assert box.lp_failures == 1 and box.contains(x).all()


def test_a_solve_stalled_unperturbed_is_repeated_with_highs_defaults(rng, monkeypatch):
    """LPs are solved without cost perturbation; one that stops short of optimal (here: an iteration
    limit of one) is solved again from scratch with HiGHS's perturbation and scaling, gives the same
    bound as an undisturbed solve, and leaves the options as they were for the next LP."""
    x, r, A, N, b, e = _nuisance_problem(rng)
    M, lo, hi = np.hstack([A, N]), np.r_[x - 5, -np.ones(5)], np.r_[x + 5, np.ones(5)]
    c = np.zeros(8)
    c[1] = -1.0
    expected = _RangeLP(M, b - e, b + e, lo, hi).minimize(c)
    run = _RangeLP._run
    limits = []

    def stall_first(self, start, limit=None):
        limits.append(limit)
        return run(self, start, 1 if len(limits) == 1 else limit)

    monkeypatch.setattr(_RangeLP, "_run", stall_first)
    lp = _RangeLP(M, b - e, b + e, lo, hi)
    assert lp.h.getOptionValue("dual_simplex_cost_perturbation_multiplier")[1] == 0.0
    status, bound = lp.minimize(c)
    assert status == "optimal" and bound == pytest.approx(expected[1], rel=1e-9, abs=1e-12)
    assert len(limits) == 2 and limits[1] is not None and limits[1] > 10**9     # the retry had no limit
    assert lp.h.getOptionValue("dual_simplex_cost_perturbation_multiplier")[1] == 0.0
    assert lp.h.getOptionValue("simplex_scale_strategy")[1] == 0
