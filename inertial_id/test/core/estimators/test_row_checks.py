"""Absurd rows are refused with a reason; estimators fed them anyway do not die; stamps ahead of
the clock do not poison a stream; the bounded LP keeps its guarantee; state survives a restart."""
import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators.bounds import IntervalBounds
from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.estimators.persistence import load_state, save_state
from inertial_id.core.estimators.row_checks import RowLimits
from inertial_id.nodes.inputs import Rejected, StampOrder, checked_stamp

TRUTH = np.r_[2.0, 0.02, 0.0, 0.2, 0.03, 0.0, 0.04, 0.0, 0.0, 0.02]


def rows(rng, n=60, scale=1.0):
    A = rng.normal(size=(n, 10)) * scale
    return A, A @ TRUTH + rng.uniform(-1e-3, 1e-3, n), np.full(n, 1e-3), np.full(n, 1e-3)


@pytest.mark.parametrize("change, reason", [
    (lambda A, b, e, s: (A * 0 + 1e300, b, e, s), "absurd_regressor"),
    (lambda A, b, e, s: (A, b * 0 + 1e300, e, s), "absurd_measurement"),
    (lambda A, b, e, s: (A, b, e * 0 + 1e300, s), "absurd_measurement"),
    (lambda A, b, e, s: (A, b * np.nan, e, s), "non_finite"),
    (lambda A, b, e, s: (A, b, -e, s), "non_positive_noise"),
    (lambda A, b, e, s: (A, b, e, s * 0), "non_positive_noise"),
    (lambda A, b, e, s: (A[:-1], b, e, s), "wrong_length"),
])
def test_absurd_rows_are_refused_with_a_reason(rng, change, reason):
    limits = RowLimits(robot_model.load_robot("xarm7").torque_limit)
    A, b, e, s = rows(rng, 6)
    assert limits.rejection("wrench", 10, 6, 1, A.ravel(), b, e, s) is None
    A, b, e, s = change(A, b, e, s)
    assert limits.rejection("wrench", 10, 6, 1, np.ravel(A), b, e, s)[0] == reason
    assert limits.rejection("wrench", 10, 0, 1, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))[0] == "row_count"


@pytest.mark.parametrize("robot, method, kind", [("xarm7", "lmi", "wrench"), ("xarm7", "rls", "wrench"),
                                                 ("kinova_gen3", "guaranteed", "momentum")])
def test_estimators_fed_absurd_rows_do_not_die(rng, robot, method, kind):
    """The node refuses such rows; the estimators themselves must still fail soft (no exception,
    no box wider than before) if they ever get them."""
    est = make_estimator(robot_model.load_robot(robot), method)
    cols = len(est.column_names)
    A = np.zeros((3, cols))
    A[:, :10] = rng.normal(size=(3, 10))
    est.add(kind, A, A[:, :10] @ TRUTH, np.full(3, 0.01), np.full(3, 0.01), 3)
    est.update_bounds()
    before = est.result()
    est.add(kind, np.full((2, cols), 1e300), np.full(2, 1e300), np.full(2, 0.1), np.full(2, 0.1), 2)
    est.update_bounds()
    after = est.result()
    assert np.all(after.lower >= before.lower) and np.all(after.upper <= before.upper)
    assert np.all(np.isfinite(after.lower)) and np.all(np.isfinite(after.upper))


class Stamp:
    def __init__(self, t=0.0, nanosec=None):
        self.sec = int(np.floor(t))
        self.nanosec = int(round((t - self.sec) * 1e9)) if nanosec is None else nanosec


def test_stamps_ahead_of_the_clock_are_refused_and_do_not_poison():
    with pytest.raises(Rejected) as r:
        checked_stamp(Stamp(1000.0 + 1e6), now_s=1000.0)
    assert r.value.reason == "stamp_in_future"
    with pytest.raises(Rejected) as r:
        checked_stamp(Stamp(1000.0, nanosec=4294967295), now_s=1000.0)
    assert r.value.reason == "invalid_stamp"
    order = StampOrder(resync_after=5)
    for k in range(10):
        assert not order.check(100.0 + 0.002 * k)
    assert not order.check(100.2)            # an outlier within the clock tolerance, accepted
    refused = 0
    for k in range(10, 30):
        try:
            order.check(100.0 + 0.002 * k)
        except Rejected:
            refused += 1
    assert refused == 4                       # the stream is followed again after 5 older stamps


def test_bounded_lp_keeps_the_truth_and_its_size(rng):
    n_r = 5
    r_true = rng.uniform(-0.5, 0.5, n_r)
    box = IntervalBounds(TRUTH - 3, TRUTH + 3, nuisance_lower=-np.ones(n_r), nuisance_upper=np.ones(n_r),
                         keep_rows=True, max_rows=150)
    widths = []
    for _ in range(8):
        A, N = rng.normal(size=(100, 10)), rng.normal(size=(100, n_r))
        b = A @ TRUTH + N @ r_true + rng.uniform(-0.05, 0.05, 100)
        assert box.update(A, b, np.full(100, 0.05), N).consistent
        assert np.all(box.contains(TRUTH)) and box.kept_rows[1].size <= 150
        widths.append(box.width.sum())
    assert np.all(np.diff(widths) <= 1e-12) and widths[-1] < 0.2 * widths[0]


@pytest.mark.parametrize("robot, method, kind", [("xarm7", "lmi", "wrench"), ("kinova_gen3", "guaranteed", "momentum")])
def test_state_round_trip(tmp_path, rng, robot, method, kind):
    r = robot_model.load_robot(robot)
    est = make_estimator(r, method)
    cols = len(est.column_names)
    A = np.zeros((40, cols))
    A[:, :10] = rng.normal(size=(40, 10))
    est.add(kind, A, A[:, :10] @ TRUTH, np.full(40, 0.01), np.full(40, 0.01), 40)
    est.update_bounds()
    header = {"method": method, "robot": robot}
    save_state(tmp_path / "s.npz", header, est.state())
    state, why, _ = load_state(tmp_path / "s.npz", header, max_age_s=60.0)
    assert why == ""
    fresh = make_estimator(r, method)
    fresh.restore(state)
    a, b = est.result(), fresh.result()
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    np.testing.assert_allclose(a.estimate, b.estimate, atol=1e-6)
    assert b.samples_used == a.samples_used
    assert load_state(tmp_path / "s.npz", {**header, "method": "rls"}, 60.0)[0] is None
    assert load_state(tmp_path / "s.npz", header, max_age_s=-1.0)[0] is None
