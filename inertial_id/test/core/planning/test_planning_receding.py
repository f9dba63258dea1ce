"""The receding-horizon state machine: explicit start, C2 switches, planner timeouts and joint-state
dropouts brake on a certified plan without a step, the box only shrinks, resume only on a new start.

The certifier is replaced by a recording stand-in (hull limits only, or a scripted refusal) so that
the failures can be injected; the real certifier is exercised in test_planning_optimizer.py."""
from dataclasses import dataclass, replace

import numpy as np
import pytest

from inertial_id.core.robot.model import load_robot
from inertial_id.core.planning.bezier import BezierPlan
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.optimizer import PlanResult
from inertial_id.core.planning.receding import TRANSITIONS, PlannerState, RecedingHorizon


@dataclass
class FakeCertificate:
    certified: bool
    reason: str = ""


@dataclass
class Tube:
    tracking_position_rad: float = 0.005
    tracking_velocity_rad_s: float = 0.02
    tracking_acceleration_rad_s2: float = 0.2


class Certifier:
    """Certifies plans whose control-point hulls respect the limits; ``refuse`` forces refusals."""

    def __init__(self, robot):
        self.robot = robot
        self.refuse = False
        self.calls = []

    def __call__(self, robot, settings, plan, lower, upper, torque_anchor=None):
        self.calls.append((plan, np.array(lower), np.array(upper)))
        if self.refuse:
            return FakeCertificate(False, "refused by the test")
        r = self.robot
        ok = all(np.all(P <= hi) and np.all(P >= lo) for P, lo, hi in (
            (plan.derivative_points(0), r.position_lower, r.position_upper),
            (plan.derivative_points(1), -r.velocity_limit, r.velocity_limit),
            (plan.derivative_points(2), -r.acceleration_limit, r.acceleration_limit)))
        return FakeCertificate(ok, "" if ok else "hull outside the limits")


@pytest.fixture(scope="module")
def robot():
    return load_robot("kinova_gen3")


@pytest.fixture
def setup(robot):
    settings = replace(PlannerSettings.from_profile(robot), max_plans=20, stop_patience=50)
    cert = Certifier(robot)
    rh = RecedingHorizon(robot, settings, Tube(), certify_fn=cert)
    return rh, settings, cert


def exciting_result(req, settings, amplitude=0.2):
    """A certified-looking plan from the request's state: rest point offset from the centre."""
    m = settings.free_points
    free = np.tile(settings.centre, (m, 1))
    free[:-1] += amplitude * np.array([[1, -1, 1, -1, 1, -1, 1]]) * (1 + np.arange(m - 1))[:, None] / m
    free[-1] += 0.5 * amplitude
    plan = BezierPlan.from_state(req.q, req.qd, req.qdd, free, settings.horizon_s)
    return PlanResult(plan, FakeCertificate(True), cost=1.0, condition_number=10.0, scale=1.0, attempts=1)


def run_to_executing(rh, settings, t0=0.0):
    assert rh.start(t0, settings.centre)
    rid, req = rh.request(t0)
    cmd = rh.offer(t0 + 0.2, rid, exciting_result(req, settings))
    return cmd


def executing_and_next_request(rh, settings):
    """Run to executing: the executing segment, the request id and request for the next plan, and
    the time the next plan would take over."""
    run_to_executing(rh, settings)
    executing = rh.segments[-1]
    rid, req = rh.request(executing.start)
    return executing, rid, req, executing.start + settings.replan_s


def test_nothing_moves_before_start_and_start_plans_from_rest(setup):
    rh, settings, cert = setup
    assert rh.state == "idle" and rh.request(0.0) is None
    assert rh.tick(0.0, 0.0) is None and rh.state == "idle"
    assert rh.start(0.0, settings.centre)
    assert rh.state == "planning"
    rid, req = rh.request(0.0)
    np.testing.assert_array_equal(req.q, settings.centre)
    assert np.all(req.qd == 0) and np.all(req.qdd == 0)
    # the hold certified at the start goes with the request: it is the first plan's braking plan
    hold, hold_cert = req.anchor_certified
    assert hold_cert.certified and hold_cert is rh.segments[0].certificate
    np.testing.assert_array_equal(hold.control_points, np.tile(settings.centre, (settings.degree + 1, 1)))
    cmd = rh.offer(0.3, rid, exciting_result(req, settings))
    assert rh.state == "executing"
    # the first plan starts after the command lead, from the held position
    assert cmd.t_from == pytest.approx(0.3 + settings.command_lead_s)
    q, qd, _ = rh.reference(cmd.t_from)
    np.testing.assert_allclose(q, settings.centre)
    np.testing.assert_allclose(qd, 0.0, atol=1e-12)


def test_refuses_to_move_when_holding_is_not_certified(robot):
    settings = replace(PlannerSettings.from_profile(robot), hold_wait_s=0.0)
    cert = Certifier(robot)
    cert.refuse = True
    rh = RecedingHorizon(robot, settings, Tube(), certify_fn=cert)
    assert not rh.start(0.0, settings.centre)
    assert rh.state == "failed"
    assert "holding still" in rh.message and "refused by the test" in rh.message
    assert rh.request(0.0) is None


def test_start_waits_for_bounds_that_certify_holding_still(setup):
    rh, settings, cert = setup
    cert.refuse = True
    assert rh.start(0.0, settings.centre)
    assert rh.state == "planning" and rh.request(0.0) is None and "waiting" in rh.message
    rh.tick(1.0, 0.0)
    assert rh.request(0.0) is None                       # same box: not certified again
    cert.refuse = False
    assert rh.update_box(rh.lower, rh.upper - 0.01 * (rh.upper - rh.lower), True, True)
    rh.tick(2.0, 0.0)
    assert rh.state == "planning" and rh.request(2.0) is not None
    # and a start whose hold never certifies fails at the deadline, still without moving
    rh2 = RecedingHorizon(robot_of(rh), settings, Tube(), certify_fn=Certifier(robot_of(rh)))
    rh2.certify.refuse = True
    rh2.start(0.0, settings.centre)
    rh2.tick(settings.hold_wait_s + 0.1, 0.0)
    assert rh2.state == "failed" and rh2.request(settings.hold_wait_s + 0.1) is None and not rh2.segments


def robot_of(rh):
    return rh.robot


def test_switch_is_c2_continuous(setup):
    rh, settings, _ = setup
    first, rid, req, switch = executing_and_next_request(rh, settings)
    q, qd, qdd = (x[0] for x in first.plan.evaluate([settings.replan_s]))
    np.testing.assert_allclose(req.q, q)
    np.testing.assert_allclose(req.qd, qd)
    np.testing.assert_allclose(req.qdd, qdd)
    cmd = rh.offer(switch - 0.5, rid, exciting_result(req, settings, amplitude=-0.15))
    assert cmd is not None and cmd.t_from == pytest.approx(switch - 0.5)   # issued now, not in the future
    eps = 1e-7
    before = rh.reference(switch - eps)
    after = rh.reference(switch + eps)
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert rh.plans == 2 and rh.state == "executing"


def assert_no_step(rh_before_ref, rh, t_from, t_to):
    """The reference after a command equals the one before it up to the command's start."""
    for t in np.linspace(t_from, t_to, 5):
        for a, b in zip(rh_before_ref(t), rh.reference(t)):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_planner_timeout_brakes_on_the_executing_plan_and_resumes_only_on_start(setup):
    rh, settings, _ = setup
    executing, rid, req, switch = executing_and_next_request(rh, settings)
    # the planner is still busy when the switch comes: the tick notices, nothing is published
    assert rh.tick(switch - settings.command_lead_s + 0.01, 0.0) is None
    assert rh.state == "braking" and "deadline" in rh.message
    assert rh.fallbacks == 1
    # the late result is ignored and the timeline is the executing plan, ending at rest
    assert rh.offer(switch + 0.1, rid, exciting_result(req, settings)) is None
    assert rh.segments[-1] is executing
    q_end, qd_end, qdd_end = rh.reference(executing.end)
    np.testing.assert_allclose(qd_end, 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd_end, 0.0, atol=1e-9)
    rh.tick(executing.end + 0.01, 0.0)
    assert rh.state == "done" and rh.request(0.0) is None
    # only a new start moves it again
    rh.tick(executing.end + 5.0, 0.0)
    assert rh.state == "done" and rh.request(0.0) is None
    assert rh.start(executing.end + 6.0, q_end)
    assert rh.state == "planning" and rh.request(executing.end + 6.0) is not None


def test_late_or_uncertified_result_is_a_fallback(setup):
    rh, settings, _ = setup
    executing, rid, req, _ = executing_and_next_request(rh, settings)
    refused = PlanResult(None, FakeCertificate(False, "torque"), reason="no certificate: torque")
    assert rh.offer(executing.start + 0.5, rid, refused) is None
    assert rh.state == "braking" and "torque" in rh.message
    assert rh.segments[-1] is executing


def test_optimised_results_and_their_convergence_are_counted(setup):
    """Every result IPOPT optimised counts, in time or not, certified or not; a result it did not
    optimise (no IPOPT status) does not."""
    rh, settings, _ = setup
    executing, rid, req, _ = executing_and_next_request(rh, settings)
    assert (rh.optimized, rh.converged) == (0, 0)            # the stand-in results carry no status
    refused = PlanResult(None, FakeCertificate(False, "torque"), reason="no certificate: torque",
                         converged=False, iterations=40, status="Maximum_WallTime_Exceeded")
    rh.offer(executing.start + 0.5, rid, refused)
    rh.offer(executing.start + 0.6, rid + 1, replace(refused, converged=True, status="Solve_Succeeded"))
    assert (rh.optimized, rh.converged) == (2, 1)


def test_joint_state_dropout_brakes_on_a_certified_plan_without_a_step(setup, robot):
    rh, settings, cert = setup
    run_to_executing(rh, settings)
    executing = rh.segments[-1]
    t = executing.start + 0.8                          # mid-motion
    old = list(rh.segments)

    def old_reference(tt):
        s = [x for x in old if x.start <= tt][-1]
        q, qd, qdd = s.plan.evaluate([tt - s.start])
        return q[0], qd[0], qdd[0]

    assert np.max(np.abs(old_reference(t)[1])) > 0.01   # it is moving
    n_calls = len(cert.calls)
    compute_s = rh.brake_compute_s                      # the hold's certification time, measured at start
    assert compute_s > 0
    quick = rh.tick(t, joint_state_age_s=settings.stale_after_s + 0.05)
    # at once, nothing computed: braking on the executing plan (certified, ends at rest)
    assert rh.state == "braking" and "stale" in rh.message and "executing plan" in rh.message
    assert len(cert.calls) == n_calls and quick is not None and quick.kind == "brake"
    assert rh.segments[-1] is executing and quick.t_to == executing.end
    # then the shorter braking plan, from the desired state ahead
    cmd = rh.shorter_brake(t)
    assert cmd is not None and cmd.t_from <= t and rh.state == "braking" and "certified" in rh.message
    brake = rh.segments[-1]
    assert brake.kind == "brake" and brake.certificate.certified and brake.end < executing.end
    assert len(cert.calls) > n_calls                    # the braking plan went through the certifier
    assert rh.shorter_brake(t) is None                  # once per fault
    t_b = t + settings.command_lead_s + 2 * compute_s    # room for certifying it before it takes effect
    assert brake.start == pytest.approx(t_b) and cmd.takes_effect == pytest.approx(t_b)
    # the commanded reference is unchanged up to the brake start and continuous (C2) at it
    assert_no_step(old_reference, rh, cmd.t_from, t_b - 1e-9)
    for a, b in zip(old_reference(t_b), rh.reference(t_b)):
        np.testing.assert_allclose(a, b, atol=1e-9)
    # sampled command: no jump between consecutive points beyond what the velocity limit allows
    ts, q, qd, _ = rh.sample(cmd.t_from, cmd.t_to, 1000.0)
    assert np.max(np.abs(np.diff(q, axis=0))) <= np.max(robot.velocity_limit) * 1e-3 + 1e-9
    np.testing.assert_allclose(qd[-1], 0.0, atol=1e-12)
    assert rh.request(0.0) is None
    rh.tick(brake.end + 0.01, joint_state_age_s=5.0)
    assert rh.state == "failed" and "stale" in rh.message
    assert rh.start(brake.end + 1.0, q[-1])


def test_dropout_when_no_braking_plan_certifies_keeps_the_executing_plan(setup):
    rh, settings, cert = setup
    run_to_executing(rh, settings)
    executing = rh.segments[-1]
    cert.refuse = True
    cmd = rh.tick(executing.start + 0.5, joint_state_age_s=1.0)
    assert rh.shorter_brake(executing.start + 0.5) is None
    assert rh.state == "braking" and "executing plan" in rh.message
    assert cmd is not None and rh.segments[-1] is executing   # certified, ends at rest


def test_tracking_breach_is_a_fault(setup):
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.5
    q, qd, _ = rh.reference(t)
    assert rh.tick(t, 0.0, (t, q + 0.001, qd)) is None and rh.state == "executing"
    cmd = rh.tick(t, 0.0, (t, q + np.r_[0.0, 0.02, 0, 0, 0, 0, 0], qd))
    assert cmd is not None and rh.state == "braking"
    assert "tracking error" in rh.message and "joint 2" in rh.message


def test_box_only_shrinks_and_needs_guaranteed_consistent_bounds(setup, robot):
    rh, settings, _ = setup
    lo0, hi0 = rh.lower.copy(), rh.upper.copy()
    narrower_lo, narrower_hi = lo0 + 0.1 * (hi0 - lo0), hi0 - 0.1 * (hi0 - lo0)
    assert not rh.update_box(narrower_lo, narrower_hi, bounds_guaranteed=False, data_consistent=True)
    assert not rh.update_box(narrower_lo, narrower_hi, bounds_guaranteed=True, data_consistent=False)
    np.testing.assert_array_equal(rh.lower, lo0)
    assert rh.update_box(narrower_lo, narrower_hi, True, True)
    np.testing.assert_array_equal(rh.lower, narrower_lo)
    wider_lo, wider_hi = lo0 - 1.0, hi0 + 1.0
    assert rh.update_box(wider_lo, wider_hi, True, True)          # intersected: nothing widens
    np.testing.assert_array_equal(rh.lower, narrower_lo)
    np.testing.assert_array_equal(rh.upper, narrower_hi)
    disjoint = narrower_hi + 1.0
    assert not rh.update_box(disjoint, disjoint + 1.0, True, True)
    np.testing.assert_array_equal(rh.upper, narrower_hi)
    # requests carry the box in use
    run_to_executing(rh, settings)
    _, req = rh.request(rh.segments[-1].start)
    np.testing.assert_array_equal(req.lower, narrower_lo)


def test_an_inconsistent_estimate_brakes_at_once_and_forbids_a_start(setup):
    rh, settings, _ = setup
    lo, hi = rh.lower.copy(), rh.upper.copy()
    assert rh.on_estimate(0.0, lo, hi, True, True) is None
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.3
    cmd = rh.on_estimate(t, lo, hi, True, False)
    assert cmd is not None and cmd.t_from <= t and rh.state == "braking"
    assert "data inconsistent" in rh.message
    rh.tick(rh.end_time + 0.01, 0.0)
    assert rh.state == "failed"
    assert not rh.start(rh.end_time + 0.1, rh.reference(rh.end_time)[0])
    assert "not starting" in rh.message and rh.state == "failed"
    assert rh.on_estimate(rh.end_time + 0.2, lo, hi, True, True) is None     # trusted again: may start
    assert rh.start(rh.end_time + 0.3, rh.reference(rh.end_time)[0])


def test_bounds_that_stop_being_guaranteed_or_exclude_the_box_brake(setup):
    rh, settings, _ = setup
    lo, hi = rh.lower.copy(), rh.upper.copy()
    rh.on_estimate(0.0, lo, hi, True, True)
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.3
    assert rh.on_estimate(t, lo, hi, False, True) is not None and rh.state == "braking"
    assert "stopped being guaranteed" in rh.message


def test_a_disjoint_estimate_brakes(setup):
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.3
    assert rh.on_estimate(t, rh.upper + 1.0, rh.upper + 2.0, True, True) is not None
    assert rh.state == "braking" and "exclude the box" in rh.message


def test_commands_say_when_they_take_effect(setup):
    rh, settings, _ = setup
    first = run_to_executing(rh, settings)
    assert first.kind == "first" and first.takes_effect == pytest.approx(0.2 + settings.command_lead_s)
    rid, req = rh.request(rh.segments[-1].start)
    switch = rh.segments[-1].start + settings.replan_s
    nxt = rh.offer(switch - 0.5, rid, exciting_result(req, settings))
    assert nxt.kind == "next" and nxt.takes_effect == pytest.approx(switch) and nxt.t_from < nxt.takes_effect
    # braking at once drops the next plan: it must arrive before that plan's switch
    brake = rh.fault(switch - 0.4, "test fault")
    assert brake.kind == "brake" and brake.takes_effect == pytest.approx(switch)
    assert rh.end_time < nxt.t_to
    compute_s = rh.brake_compute_s
    shorter = rh.shorter_brake(switch - 0.4)      # the shorter brake starts after the time certifying takes
    assert shorter.kind == "brake" and shorter.takes_effect == pytest.approx(switch - 0.4 + settings.command_lead_s
                                                                            + 2 * compute_s)


def test_a_withheld_next_plan_brakes_on_what_was_sent(setup):
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    sent = list(rh.segments)
    end_sent = rh.end_time
    rid, req = rh.request(rh.segments[-1].start)
    cmd = rh.offer(rh.segments[-1].start + settings.replan_s - 0.5, rid, exciting_result(req, settings))
    assert rh.plans == 2
    rh.withdraw(cmd, "late")
    assert rh.segments == sent and rh.end_time == end_sent and rh.plans == 1
    assert rh.state == "braking" and "next plan withheld (late)" in rh.message and rh.pending is None
    rh.tick(rh.end_time + 0.01, 0.0)
    assert rh.state == "done"


def test_a_withheld_braking_command_keeps_the_fault_and_the_sent_timeline(setup):
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.5
    rid, req = rh.request(rh.segments[-1].start)
    rh.offer(t, rid, exciting_result(req, settings))
    sent = list(rh.segments)
    cmd = rh.fault(t, "joint states stale (0.3 s)")
    assert rh.segments != sent                    # the next plan dropped
    rh.withdraw(cmd, "late")
    assert rh.segments == sent and rh.state == "braking" and "braking command withheld" in rh.message
    braking_on = list(rh.segments)
    shorter = rh.shorter_brake(t)
    assert shorter is not None and rh.segments != braking_on
    rh.withdraw(shorter, "late")                  # the shorter brake withheld too: back to what was sent
    assert rh.segments == braking_on and rh.state == "braking"
    rh.tick(rh.end_time + 0.01, 0.0)
    assert rh.state == "failed"


def test_a_withheld_first_plan_is_planned_again_from_rest(setup):
    rh, settings, _ = setup
    assert rh.start(0.0, settings.centre)
    hold = list(rh.segments)
    rid, req = rh.request(0.0)
    cmd = rh.offer(0.2, rid, exciting_result(req, settings))
    rh.withdraw(cmd, "late")
    assert rh.state == "planning" and rh.segments == hold and rh.plans == 0
    rid2, req2 = rh.request(0.3)
    assert rid2 != rid and req2 is req
    assert rh.offer(0.5, rid2, exciting_result(req2, settings)).kind == "first"


@pytest.mark.parametrize("data_lag_plans, plans_made, why", [
    # the boxes at the starts of plans 1..3 (data of 2 plans) are equal, so plan 4, accepted then, is the last
    (0.0, 4, "stopped shrinking"),
    # an estimator 1.5 plans behind the motion (a loaded computer): the same data reach the planner
    # two plans later, and so does the stop
    (1.5, 6, "stopped shrinking"),
    # no estimate holds any of the motion's data: nothing says the bounds stopped shrinking
    (None, 8, "8 plans made"),
])
def test_stops_when_bounds_stop_shrinking_on_the_data_of_the_plans(robot, data_lag_plans, plans_made, why):
    """Every plan's request comes with an estimate of an unchanged box whose data end
    ``data_lag_plans`` plans before that plan starts (None: no estimate)."""
    settings = replace(PlannerSettings.from_profile(robot), max_plans=8, stop_patience=2, stop_shrink=0.05)
    rh = RecedingHorizon(robot, settings, Tube(), certify_fn=Certifier(robot))
    run_to_executing(rh, settings)
    t = rh.segments[-1].start
    plans = 1
    while rh.request(rh.segments[-1].start) is not None:
        rid, req = rh.request(rh.segments[-1].start)
        if data_lag_plans is not None:
            start = rh.segments[-1].start
            rh.on_estimate(start, rh.lower, rh.upper, True, True, start - data_lag_plans * settings.replan_s)
        t += settings.replan_s
        assert rh.offer(t - 0.5, rid, exciting_result(req, settings)) is not None
        plans += 1
        assert plans <= settings.max_plans
    assert plans == plans_made
    assert why in rh.message
    rh.tick(rh.end_time + 0.01, 0.0)
    assert rh.state == "done"


def test_next_plan_is_requested_at_once_with_the_box_in_use(setup):
    rh, settings, _ = setup
    lo, hi = rh.lower.copy(), rh.upper.copy()
    assert rh.update_box(lo, hi - 0.1 * (hi - lo), True, True)
    run_to_executing(rh, settings)
    start = rh.segments[-1].start
    assert rh.request(start - 0.6) is None          # not planned far ahead: the box would be stale
    _, req = rh.request(start - 0.4)                # planning starts shortly before the plan does
    np.testing.assert_array_equal(req.upper, hi - 0.1 * (hi - lo))


def test_stale_joint_states_before_moving_delay_the_start(setup):
    rh, settings, _ = setup
    assert rh.start(0.0, settings.centre)
    rid, req = rh.request(0.0)
    rh.tick(0.5, joint_state_age_s=settings.stale_after_s + 1.0)
    assert rh.state == "planning"
    assert rh.offer(0.6, rid, exciting_result(req, settings)) is None     # not moving on stale data
    assert rh.state == "planning" and not [s for s in rh.segments if s.kind == "excite"]
    rid2, req2 = rh.request(0.7)
    assert rid2 != rid
    rh.tick(0.8, joint_state_age_s=0.01)
    assert rh.offer(0.9, rid2, exciting_result(req2, settings)) is not None
    assert rh.state == "executing"


def test_sampled_commands_end_exactly_at_rest(setup):
    """Every command ends at the end of the timeline with velocity and acceleration exactly zero,
    whatever the span (joint_trajectory_controller refuses a non-zero end velocity by default)."""
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    for t_from in (0.0, 0.0037, 0.1234567, rh.segments[-1].start - 0.00123):
        t, q, qd, qdd = rh.sample(t_from, rh.end_time, 100.0)
        assert t[-1] == rh.end_time - t_from and np.all(np.diff(t) > 0)
        assert np.all(qd[-1] == 0.0) and np.all(qdd[-1] == 0.0)
        assert np.max(np.abs(qd[-2])) < 0.05          # it was coming to rest anyway


def test_states_follow_the_transition_table(setup):
    rh, settings, _ = setup
    assert rh.state == PlannerState.IDLE == "idle" and isinstance(rh.state, str)
    # as enum.StrEnum (Python 3.11+) on every Python: str() and format() give the value
    assert str(PlannerState.BRAKING) == f"{PlannerState.BRAKING}" == "braking"
    with pytest.raises(RuntimeError, match="idle -> executing is not a transition"):
        rh._enter(PlannerState.EXECUTING, "a bug")
    seen = [rh.state]
    enter = rh._enter
    rh._enter = lambda state, message: (enter(state, message), seen.append(rh.state))
    run_to_executing(rh, settings)
    rh.stop(rh.segments[-1].start + 0.5)
    rh.tick(rh.end_time + 0.01, 0.0)
    assert [s for k, s in enumerate(seen) if k == 0 or s != seen[k - 1]] == \
        ["idle", "planning", "executing", "braking", "done"]
    # done and failed are final until a start
    assert TRANSITIONS[PlannerState.DONE] == {PlannerState.PLANNING} == TRANSITIONS[PlannerState.FAILED]


def test_with_wait_for_estimate_nothing_moves_before_a_trusted_estimate(robot):
    """A start waits for an estimate whose bounds are guaranteed and whose data fit the box; one that
    says the data contradict the box (a payload outside it) fails the start without any motion."""
    settings, cert = PlannerSettings.from_profile(robot), Certifier(robot)
    rh = RecedingHorizon(robot, settings, Tube(), certify_fn=cert, wait_for_estimate=True)
    assert rh.start(0.0, settings.centre) and rh.state == "planning"
    assert "no estimate" in rh.message and rh.request(0.0) is None and not cert.calls
    rh.tick(0.5, 0.0)
    assert rh.request(0.5) is None and not cert.calls          # still waiting: nothing certified, nothing planned
    lo, hi = rh.lower.copy(), rh.upper.copy()
    rh.on_estimate(0.6, lo, hi, True, True)                    # the prior itself: no data behind it yet
    rh.tick(0.7, 0.0)
    assert rh.request(0.7) is None and not cert.calls
    rh.on_estimate(0.8, lo, hi - 0.01 * (hi - lo), True, True)
    rh.tick(0.9, 0.0)
    assert cert.calls and rh.request(0.9) is not None           # the hold certified, the first plan requested
    # a payload outside the box: the first estimate says so, and nothing ever moved
    rh2 = RecedingHorizon(robot, settings, Tube(), certify_fn=Certifier(robot), wait_for_estimate=True)
    assert rh2.start(0.0, settings.centre)
    assert rh2.on_estimate(0.5, lo, hi, True, False) is None
    assert rh2.state == "failed" and "data inconsistent" in rh2.message and not rh2.segments
    assert not rh2.start(1.0, settings.centre) and "data inconsistent" in rh2.message
    # no trusted estimate before the hold deadline: the start fails saying so
    rh3 = RecedingHorizon(robot, settings, Tube(), certify_fn=Certifier(robot), wait_for_estimate=True)
    assert rh3.start(0.0, settings.centre)
    rh3.tick(settings.hold_wait_s + 0.1, 0.0)
    assert rh3.state == "failed" and "no estimate" in rh3.message and not rh3.segments
    assert rh3.message.endswith("; none has arrived")
    # estimates that arrived and were refused: how many and why, instead
    rh4 = RecedingHorizon(robot, settings, Tube(), certify_fn=Certifier(robot), wait_for_estimate=True)
    assert rh4.start(0.0, settings.centre)
    rh4.on_estimate(0.5, lo, hi - 0.01 * (hi - lo), False, True)
    rh4.tick(settings.hold_wait_s + 0.1, 0.0)
    assert rh4.state == "failed" and rh4.message.endswith("; 1 estimates not used (bounds not guaranteed)")


def test_a_fault_at_rest_at_the_end_of_the_timeline_sends_nothing(setup):
    """At rest at the end of what was sent, a fault has nothing to send: a trajectory that ends in
    the past is one joint_trajectory_controller rejects."""
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    end = rh.end_time
    assert rh.fault(end + 1.0, "joint states stale (0.7 s)") is None
    assert rh.state == "braking" and rh.message.endswith("at rest") and rh.shorter_brake(end + 1.0) is None
    rh.tick(end + 1.1, 0.0)
    assert rh.state == "failed"


def test_a_stop_during_a_faults_braking_keeps_the_fault(setup):
    rh, settings, _ = setup
    run_to_executing(rh, settings)
    t = rh.segments[-1].start + 0.5
    rh.fault(t, "joint states stale (0.7 s)")
    rh.stop(t + 0.1)
    rh.tick(rh.end_time + 0.01, 0.0)
    assert rh.state == "failed" and "stale" in rh.message
