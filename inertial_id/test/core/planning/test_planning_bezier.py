"""Bezier plans: evaluation, derivatives, subdivision, hulls, continuity of from_state."""
import numpy as np
import pytest

from inertial_id.core.planning.bezier import BezierPlan, restrict, segment_points


def _random_plan(rng, degree=6, n=3, T=2.5):
    return BezierPlan(rng.normal(size=(degree + 1, n)), T)


def test_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    plan = _random_plan(rng)
    t = np.linspace(0.1, 2.4, 17)
    h = 1e-6
    q, qd, qdd = plan.evaluate(t)
    qp, qdp, _ = plan.evaluate(t + h)
    qm, qdm, _ = plan.evaluate(t - h)
    np.testing.assert_allclose(qd, (qp - qm) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(qdd, (qdp - qdm) / (2 * h), atol=1e-5)


def test_derivative_points_are_the_derivative_curve():
    rng = np.random.default_rng(1)
    plan = _random_plan(rng)
    t = np.linspace(0.0, plan.duration_s, 11)
    _, qd, qdd = plan.evaluate(t)
    np.testing.assert_allclose(BezierPlan(plan.derivative_points(1), plan.duration_s).evaluate(t)[0], qd, atol=1e-12)
    np.testing.assert_allclose(BezierPlan(plan.derivative_points(2), plan.duration_s).evaluate(t)[0], qdd,
                               atol=1e-10)
    assert plan.derivative_points(2).shape == (plan.degree - 1, plan.n_joints)


def test_from_state_continuity_and_rest_at_end():
    rng = np.random.default_rng(2)
    n = 7
    q0, qd0, qdd0 = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    for n_free in (1, 2, 3):
        free = rng.normal(size=(n_free, n))
        plan = BezierPlan.from_state(q0, qd0, qdd0, free, 3.0)
        assert plan.degree == n_free + 4
        q, qd, qdd = plan.evaluate([0.0, 3.0])
        np.testing.assert_allclose(q[0], q0, atol=1e-12)
        np.testing.assert_allclose(qd[0], qd0, atol=1e-12)
        np.testing.assert_allclose(qdd[0], qdd0, atol=1e-10)
        np.testing.assert_allclose(q[1], free[-1], atol=1e-12)
        np.testing.assert_allclose(qd[1], 0.0, atol=1e-12)
        np.testing.assert_allclose(qdd[1], 0.0, atol=1e-10)
        # clamped beyond T: the plan holds its rest point
        qa, qda, _ = plan.evaluate([4.0])
        np.testing.assert_allclose(qa[0], free[-1])
        np.testing.assert_allclose(qda[0], 0.0)


def test_split_reproduces_the_curve():
    rng = np.random.default_rng(3)
    plan = _random_plan(rng)
    left, right = plan.split(0.3)
    assert left.duration_s == pytest.approx(0.75) and right.duration_s == pytest.approx(1.75)
    t = np.linspace(0.0, 0.75, 9)
    for a, b in zip(left.evaluate(t), plan.evaluate(t)):
        np.testing.assert_allclose(a, b, atol=1e-10)
    t = np.linspace(0.0, 1.75, 9)
    for a, b in zip(right.evaluate(t), plan.evaluate(t + 0.75)):
        np.testing.assert_allclose(a, b, atol=1e-10)


def test_segment_hulls_contain_dense_samples():
    rng = np.random.default_rng(4)
    plan = _random_plan(rng, degree=7)
    K = 16
    t = np.linspace(0.0, plan.duration_s, 4001)
    k = np.minimum((t / plan.duration_s * K).astype(int), K - 1)
    for order, values in enumerate(plan.evaluate(t)):
        seg = segment_points(plan.derivative_points(order), K)
        lo, hi = seg.min(axis=1), seg.max(axis=1)
        slack = 1e-12 * (1 + np.abs(seg).max())
        assert np.all(values >= lo[k] - slack) and np.all(values <= hi[k] + slack)
        # the hull is not trivially wide: it is within 10 % of the sampled range plus a little
        assert np.all((hi - lo) <= 1.1 * (np.array([np.ptp(values[k == s], axis=0) for s in range(K)]))
                      + 0.02 * np.abs(seg).max())


def test_restrict_matches_uniform_segments():
    rng = np.random.default_rng(5)
    P = rng.normal(size=(6, 4))
    seg = segment_points(P, 8)
    sub = restrict(P, np.arange(8) / 8, np.arange(1, 9) / 8)
    np.testing.assert_allclose(sub, seg, atol=1e-13)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        BezierPlan(np.zeros((3, 2)), 0.0)
    with pytest.raises(ValueError):
        BezierPlan(np.full((3, 2), np.nan), 1.0)
    with pytest.raises(ValueError):
        BezierPlan.from_state(np.zeros(3), np.zeros(2), np.zeros(3), np.zeros((1, 3)), 1.0)
    with pytest.raises(ValueError):
        BezierPlan(np.zeros((3, 2)), 1.0).split(1.0)
