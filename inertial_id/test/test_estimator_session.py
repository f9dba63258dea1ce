"""The estimation session the estimator node and the offline pipeline share: one class, one failure
policy."""
import numpy as np
import pytest

from inertial_id.core.estimators import intake, session
from inertial_id.core.estimators.session import EstimationSession
from inertial_id.core.offline import RowIntake, rows_from_stream
from inertial_id.core.robot.model import load_robot
from inertial_id.core.trajectory import excitation_from_profile


@pytest.mark.ros
def test_the_node_and_the_offline_pipeline_run_the_same_session_class():
    from inertial_id.core import offline
    from inertial_id.nodes import estimator
    assert estimator.EstimationSession is EstimationSession is offline.EstimationSession
    assert estimator.NUMERICAL_FAILURES is session.NUMERICAL_FAILURES
    assert session.check_rows is intake.check_rows


def gen3_messages(robot, row_intake, seconds=4.0):
    traj, _ = excitation_from_profile(robot, seconds)
    tau = np.zeros_like(traj.q)
    return list(rows_from_stream(robot, row_intake.estimator.kinds, traj.t, traj.q, traj.qd, tau))


def test_rows_the_solver_fails_on_are_counted_and_the_session_goes_on(monkeypatch):
    robot = load_robot("kinova_gen3")
    offline_intake = RowIntake(robot, "guaranteed", bounds_period_s=1.0)
    assert isinstance(offline_intake.session, EstimationSession)
    messages = gen3_messages(robot, offline_intake)
    assert len(messages) > 4
    add = offline_intake.estimator.add
    calls = {"n": 0}

    def failing_once(*rows):
        calls["n"] += 1
        if calls["n"] == 2:
            raise np.linalg.LinAlgError("singular")
        return add(*rows)
    monkeypatch.setattr(offline_intake.estimator, "add", failing_once)
    for m in messages:
        offline_intake.add(m)
    assert offline_intake.dropped.get("solver_failed_on_rows") == 1
    assert offline_intake.accepted == len(messages) - 1 - sum(v for k, v in offline_intake.dropped.items() if k != "solver_failed_on_rows")
    assert offline_intake.history.t, "the bounds were updated on the data-time schedule after the failure"


def test_a_bounds_update_that_fails_keeps_the_box_and_is_counted(monkeypatch):
    robot = load_robot("kinova_gen3")
    offline_intake = RowIntake(robot, "guaranteed", bounds_period_s=0.0)
    for m in gen3_messages(robot, offline_intake):
        offline_intake.add(m)
    before = offline_intake.estimator.result()

    def failing():
        raise np.linalg.LinAlgError("singular")
    for update in ("update_bounds", "final_update_bounds"):
        monkeypatch.setattr(offline_intake.estimator, update, failing)
    after = offline_intake.finish()
    assert offline_intake.dropped == {"solver_failed_bounds": 1}
    np.testing.assert_array_equal(after.lower, before.lower)
    np.testing.assert_array_equal(after.upper, before.upper)
