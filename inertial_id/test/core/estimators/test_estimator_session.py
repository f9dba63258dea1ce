"""The estimation session the estimator node and the offline pipeline share: one class, one failure
policy."""
import numpy as np
import pytest

from inertial_id.core.estimators import intake, session
from inertial_id.core.estimators.session import MOTION_END, MOTION_FAILED, STREAM_PAUSE, EstimationSession, Job, LiveSchedule
from inertial_id.core.offline import RowIntake, rows_from_stream
from inertial_id.core.robot.model import load_robot
from inertial_id.core.signals.sensors import NoiseModel
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


def test_the_box_says_the_latest_row_stamp_it_holds(monkeypatch):
    """``data_until``: the newest row stamp at the last bounds update that succeeded, what the
    planner's stop criterion compares boxes on (an estimator behind the motion holds older data)."""
    robot = load_robot("kinova_gen3")
    s = EstimationSession(robot, "guaranteed", bounds_period_s=1.0)
    messages = gen3_messages(robot, RowIntake(robot, "guaranteed"))
    assert s.data_until is None
    updates, latest = 0, -np.inf
    for m in messages[:len(messages) // 2]:
        before = s.data_until
        added = s.add(m.t, s.check(m.kind, m.parameter_names, m.b.size, m.samples, m.A, m.b, m.noise_bound,
                                   m.noise_sigma, m.kinematics, m.acceleration_bound))
        latest = max(latest, m.t)
        assert s.data_until == (latest if added.updated else before)
        updates += added.updated
    assert updates >= 1
    held = s.data_until

    def failing():
        raise np.linalg.LinAlgError("singular")
    monkeypatch.setattr(s.estimator, "update_bounds", failing)
    for m in messages[len(messages) // 2:]:
        s.add(m.t, s.check(m.kind, m.parameter_names, m.b.size, m.samples, m.A, m.b, m.noise_bound,
                           m.noise_sigma, m.kinematics, m.acceleration_bound))
    assert s.data_until == held < messages[-1].t       # the box kept its value, and its data
    monkeypatch.undo()
    assert s.update_bounds(final=True) == "" and s.data_until == messages[-1].t


def test_a_session_given_directions_carries_the_final_lps_support_where_its_method_has_one():
    """``support_directions`` (the ``~/apply`` gate's): after a final update the result carries their
    support over the final LP (momentum rows of the Gen3's guaranteed estimator); none before it,
    without directions, or for an estimator with no one LP over its rows (log-Cholesky). On the
    torques of the nominal robot carrying a payload, every bound holds for that payload, and they
    lie well inside the box's own. A session restored from the estimator's state carries the
    support of the rows that state kept."""
    import pinocchio as pin
    from inertial_id.core.payload.payload_apply import ApplyLimits
    from inertial_id.core.robot.model import model_with_payload, payload_params
    robot = load_robot("kinova_gen3")
    truth = payload_params("dumbbell_5lb")
    traj, _ = excitation_from_profile(robot, 4.0)
    model = model_with_payload(robot, truth)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, *x) for x in zip(traj.q, traj.qd, traj.qdd)])
    intake = RowIntake(robot, "guaranteed")
    messages = list(rows_from_stream(robot, intake.estimator.kinds, traj.t, traj.q, traj.qd, tau))
    D, joints = ApplyLimits.from_robot(robot).gate_directions()
    for method, directions in (("guaranteed", (D, joints)), ("guaranteed", None), ("log_cholesky", (D, joints))):
        s = EstimationSession(robot, method, bounds_period_s=1.0, support_directions=directions)
        for m in messages:
            s.add(m.t, s.check(m.kind, m.parameter_names, m.b.size, m.samples, m.A, m.b, m.noise_bound,
                               m.noise_sigma, m.kinematics, m.acceleration_bound))
        assert s.result().final_support is None
        assert s.update_bounds(final=True) == ""
        r = s.result()
        if directions is None or method != "guaranteed":
            assert r.final_support is None
            continue
        assert r.data_consistent
        support = r.final_support
        np.testing.assert_array_equal(support.directions, D)
        assert np.array_equal(support.labels, joints) and support.values.shape == (len(D),)
        box = np.maximum(D * r.lower, D * r.upper).sum(axis=1)
        assert np.all(D @ truth <= support.values + 1e-9) and np.all(support.values <= box + 1e-9)
        assert np.median(box - support.values) > 0.3 * np.median(box - D @ truth)
        # restarted from its saved state: the support of the rows it kept, a subset, so it still
        # holds the truth and is no tighter than the final LP's
        restarted = EstimationSession(robot, method, bounds_period_s=1.0, support_directions=directions)
        restarted.restore(s.estimator.state())
        again = restarted.result().final_support
        assert again is not None and np.all(D @ truth <= again.values + 1e-9)
        assert np.all(support.values <= again.values + 1e-6) and np.median(box - again.values) > 0.0


def xarm7_hold_then_motion(rest_s=3.0, motion_s=8.0, rate_hz=100.0, seed=5):
    """``(robot, payload, messages)``: the xArm7's F/T rows while the arm holds, then turns the sensor
    (each joint ``q0 + a (1 - cos wt)^2 / 4``: velocity and acceleration start at zero), the true
    wrench plus an F/T offset at half its stated box and sensor noise at its bound."""
    from test_wrench_momentum import random_payload, true_wrenches
    robot = load_robot("xarm7")
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, rest_s + motion_s, 1.0 / rate_hz)
    tau = np.maximum(t - rest_s, 0.0)[:, None]
    q0 = rng.uniform(robot.position_lower, robot.position_upper).clip(-1.5, 1.5)
    a, w = rng.uniform(0.6, 0.9, robot.nv), rng.uniform(0.6, 1.2, robot.nv)
    c, s = np.cos(w * tau), np.sin(w * tau)
    q, qd, qdd = q0 + a * (1 - c) ** 2 / 4, a / 2 * (1 - c) * w * s, a / 2 * w**2 * (s * s + (1 - c) * c)
    pi = random_payload(rng)
    noise = NoiseModel.from_profile(robot.spec)
    offset = 0.5 * noise.wrench_offset_bound() * np.array([1, -1, 1, -1, 1, -1])
    wrench = true_wrenches(robot, pi, q, qd, qdd) + offset + \
        rng.uniform(-1, 1, (t.size, 6)) * noise.bound_sigmas * noise.wrench_sigma()
    kinds = RowIntake(robot, robot.spec.identification.method).estimator.kinds
    return robot, pi, list(rows_from_stream(robot, kinds, t, q, qd, None, (t, wrench)))


def test_a_pause_the_stream_resumes_from_is_withdrawn_with_its_offset_check():
    """A pause while the arm holds: its final update checks the F/T offset on rows that cannot tell
    it from the payload's weight, frees every axis, and the box goes back to the prior. Rows again:
    the update is withdrawn, and the box that follows is the one without the pause. Had it stood, the
    motion's rows, with the offset free, would have left the box ten times as wide (measured: 3.1
    against 0.31 kg)."""
    robot, pi, messages = xarm7_hold_then_motion()
    still = [k for k, m in enumerate(messages) if m.t < 2.0]

    def online(pause_after=None, resume=True):
        intake = RowIntake(robot, robot.spec.identification.method, bounds_period_s=1.0)
        at_pause = None
        for k, m in enumerate(messages):
            if k - 1 == pause_after and resume:
                intake.session.resume()
            intake.add(m)
            if k == pause_after:
                assert intake.session.update_bounds(final=True, provisional=True) == ""
                at_pause = intake.session.result()
        return intake.session.result(), at_pause

    width = lambda r: r.upper[0] - r.lower[0]          # noqa: E731
    unpaused, _ = online()
    resumed, at_pause = online(pause_after=still[-1])
    stood, _ = online(pause_after=still[-1], resume=False)
    assert "leave the F/T offset at its stated box" in at_pause.message
    assert width(at_pause) == pytest.approx(5.2)
    np.testing.assert_allclose(resumed.lower, unpaused.lower, atol=1e-9)
    np.testing.assert_allclose(resumed.upper, unpaused.upper, atol=1e-9)
    assert resumed.bounds_guaranteed and "F/T offset" not in resumed.message
    assert np.all((pi >= resumed.lower) & (pi <= resumed.upper))
    assert width(resumed) < 0.5 and width(stood) > 5 * width(resumed)


def test_a_failed_motions_final_update_is_withdrawn_after_the_rows_at_rest_that_follow_it():
    """A motion braked early: its final update's offset check frees every axis on rows that cannot
    tell the offset from the weight, the box back at the prior; the arm at rest streams on (data-time
    updates). When the planner moves again the update is withdrawn: the box is the one from before
    it, narrower than the prior (which the planner needs to start), resting on the stated offset box."""
    robot, pi, messages = xarm7_hold_then_motion()
    intake = RowIntake(robot, robot.spec.identification.method, bounds_period_s=1.0)
    still = [m for m in messages if m.t < 2.0]
    for m in still:
        intake.add(m)
    before = intake.session.result()
    assert intake.session.update_bounds(final=True, provisional=True) == ""
    assert intake.session.result().upper[0] - intake.session.result().lower[0] == pytest.approx(5.2)
    for m in still[-3:]:                   # rows at rest again, then a data-time update
        intake.add(m)
    assert intake.session.update_bounds() == ""
    intake.session.resume()
    after = intake.session.result()
    assert after.upper[0] - after.lower[0] <= before.upper[0] - before.lower[0] + 1e-9 < 1.0
    assert not intake.estimator.estimator.offset_freed.any() and "F/T offset" not in after.message
    assert np.all((pi >= after.lower) & (pi <= after.upper))


# --- LiveSchedule: the estimator node's final updates and publications, without ROS or threads

NOTHING = Job()


def rows(live: LiveSchedule, n: int = 1, updated: bool = False) -> None:
    """The worker takes and folds in ``n`` rows messages."""
    for _ in range(n):
        live.take_rows()
        live.rows_added(updated)


def test_new_rows_wait_for_the_publication_period_and_are_saved_first():
    live = LiveSchedule()
    assert live.next_job() == NOTHING
    rows(live, 3)
    assert live.next_job() == NOTHING
    live.request_result()
    assert live.next_job() == Job(publish=True, save=True)
    live.request_result()
    assert live.next_job() == NOTHING, "nothing changed since the last publication"


def test_a_new_box_is_handed_on_at_once():
    live = LiveSchedule()
    rows(live, updated=True)
    assert live.next_job() == Job(publish=True, save=True)
    assert live.next_job() == NOTHING


def test_a_restored_box_is_published_before_any_row_and_not_saved_again():
    live = LiveSchedule(publish_first=True)
    assert live.next_job() == Job(publish=True, save=False)
    assert live.next_job() == NOTHING


@pytest.mark.parametrize("states, ends", [
    (["idle", "planning", "executing", "done"], [False, False, False, True]),
    (["executing", "braking", "failed", "failed"], [False, False, True, False]),
    (["idle", "done"], [False, False]),        # a status seen first at rest ends no motion of ours
    (["planning", "idle"], [False, False]),
])
def test_the_final_update_follows_the_end_of_a_motion_only(states, ends):
    live = LiveSchedule()
    assert [live.planner_status(s) for s in states] == ends


def test_a_motion_end_makes_one_final_update_saved_and_published():
    live = LiveSchedule()
    rows(live, 2)
    live.planner_status("executing")
    live.planner_status("done")
    assert live.next_job() == Job(final=MOTION_END, publish=True, save=True)
    assert live.next_job() == NOTHING
    assert not live.take_rows(), "rows after a motion's end are no resumed stream"


def test_a_failed_motions_final_update_is_withdrawn_when_the_planner_moves_again():
    live = LiveSchedule()
    rows(live, 2)
    live.planner_status("executing")
    assert live.planner_status("failed")
    assert live.next_job() == Job(final=MOTION_FAILED, publish=True, save=True)
    rows(live, 3)                          # the arm at rest streams on
    assert live.next_job() == NOTHING
    assert live.planner_status("planning"), "moving again after a failure withdraws that update"
    assert live.next_job() == Job(publish=True, save=True, resume=True)
    live.planner_status("executing")
    assert live.planner_status("done")
    assert live.next_job() == Job(final=MOTION_END, publish=True, save=True)
    assert not live.planner_status("planning"), "a motion that ended done leaves its update standing"
    assert live.next_job() == NOTHING
    live.planner_status("executing")
    live.planner_status("failed")
    live.planner_status("planning")        # before the worker came to it: no update to withdraw
    assert live.next_job() == Job(publish=True, save=False, resume=True)


def test_a_pause_folds_in_the_rows_left_once_and_rows_after_it_are_a_resumed_stream():
    live = LiveSchedule()
    assert not live.idle_tick(0)
    rows(live, 2)
    assert not live.idle_tick(2)
    assert live.next_job() == NOTHING
    assert live.idle_tick(2), "a period without rows"
    assert live.next_job() == Job(final=STREAM_PAUSE, publish=True, save=True)
    assert live.idle_tick(2)
    assert live.next_job() == NOTHING, "the rows left are in already"
    assert live.take_rows()
    live.rows_added(False)
    assert not live.take_rows()


def test_no_pause_update_without_rows_since_the_last_final_one_nor_when_rows_came_after_it():
    live = LiveSchedule()
    live.idle_tick(0)
    assert live.idle_tick(0)
    assert live.next_job() == NOTHING, "nothing to fold in"
    rows(live, 1)
    assert live.next_job() == NOTHING, "the request does not wait for the first rows of a late stream"
    rows(live, 1, updated=True)
    live.next_job()
    live.idle_tick(2)
    assert live.idle_tick(2)
    assert live.next_job() == Job(final=STREAM_PAUSE, publish=True, save=True), (
        "the last rows closed an online update, which is not the one LP over every row")
    live.planner_status("executing")
    assert live.planner_status("done")
    assert live.next_job() == Job(final=MOTION_END, publish=True, save=True)
    live.idle_tick(2)
    assert live.idle_tick(2)
    assert live.next_job() == NOTHING, "no rows since the motion's final update"
    rows(live, 1)
    live.idle_tick(3)
    assert live.idle_tick(3)      # the node's queue had one more message the worker had not taken
    live.take_rows()
    live.rows_added(False)
    assert live.next_job() == NOTHING, "rows came after the pause"


def test_a_reset_hands_on_the_prior_box_and_forgets_the_rows_before_it():
    live = LiveSchedule()
    live.idle_tick(0)
    rows(live, 1)
    live.reset()
    assert live.next_job() == Job(publish=True, save=False)
    live.request_result()
    assert live.next_job() == NOTHING
    live.idle_tick(1)
    assert live.idle_tick(1)
    assert live.next_job() == NOTHING, "the rows taken before the reset are gone"
