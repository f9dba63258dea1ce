"""The excitation_planner node over DDS: nothing moves before ~/start, commands are volatile, a
joint-state dropout brakes on a certified plan that continues the previous command (no step), and
only a new start moves the arm again. The test stands in for the robot: it publishes joint states
that follow the last command exactly."""

import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy

from inertial_id.core.trajectory import interpolate
from inertial_id.nodes.common import RELIABLE_QOS
from ros_helpers import call, node_counters, planner_with_fake_arm, spin_for, spin_until

pytestmark = pytest.mark.ros
# the fake arm interpolates each command's 100 Hz points (quintic Hermite): two commands that carry
# the same reference agree to ~1e-5 between points; a late command steps by far more (tube: 0.03 rad)
STEP_TOLERANCE = 1e-4
JOINT_STATE_PERIOD_S = 0.01      # the fake arm's joint-state timer


@pytest.fixture
def planner(ros_env, tmp_path):
    with planner_with_fake_arm(ros_env, tmp_path) as setup:
        yield setup


def test_planner_node_start_volatile_commands_and_brake_on_dropout(planner, tmp_path):
    node, arm, status, start, robot, settings = planner
    diagnostics = node_counters(node, "excitation_planner")
    topic = robot.spec.controller.topic
    # the command topic is volatile: a late joiner never gets an old trajectory
    info = node.get_publishers_info_by_topic(topic)
    assert info and all(i.qos_profile.durability == DurabilityPolicy.VOLATILE for i in info)
    # nothing moves before a start
    spin_for(node, 3.0)
    assert arm.commands == []
    assert status[-1].state == "idle" and not status[-1].certified

    reply = call(node, start)
    assert reply.success, reply.message
    assert spin_until(node, lambda: len(arm.commands) >= 1, 30.0), f"no plan; logs in {tmp_path}"
    t0, first = arm.commands[0]
    np.testing.assert_allclose(first.q[0], settings.centre, atol=1e-3)   # from where it stood
    np.testing.assert_allclose(first.qd[[0, -1]], 0.0, atol=1e-9)        # from rest, to rest
    assert spin_until(node, lambda: status[-1].state == "executing", 10.0)
    st = status[-1]
    margins = (st.min_joint_margin, st.min_velocity_margin, st.min_torque_margin, st.min_obstacle_clearance)
    assert st.certified and all(np.isfinite(m) and m >= 0 for m in margins)
    assert np.isfinite(st.excitation_cost) and st.condition_number >= 1.0
    # the largest tracking error on /diagnostics: an arm that follows the reference exactly (to the
    # interpolation between its points) uses next to nothing of the tube
    assert spin_until(node, lambda: float(diagnostics.get("tracking.max_tube_share", "nan")) >= 0.0, 5.0)
    assert float(diagnostics["tracking.max_tube_share"]) < 0.05
    assert 0.0 <= float(diagnostics["tracking.max_position_error_rad"]) < 1e-3
    # the first plan was optimised: the optimiser's count on /diagnostics, beside its outcome
    assert spin_until(node, lambda: int(diagnostics.get("optimizer.plans", 0)) >= 1, 5.0), diagnostics
    assert 0 <= int(diagnostics["optimizer.converged"]) <= int(diagnostics["optimizer.plans"])
    assert int(diagnostics["optimizer.last_iterations"]) >= 1 and float(diagnostics["optimizer.last_optimize_s"]) > 0
    assert diagnostics["optimizer.code"] in ("compiling", "compiled") or \
        diagnostics["optimizer.code"].startswith("virtual machine"), diagnostics

    # joint states stop mid-motion: the planner brakes on a certified plan from the desired state
    spin_for(node, 0.5)
    n_before = len(arm.commands)
    arm.publishing = False
    assert spin_until(node, lambda: status[-1].state in ("braking", "failed") and "stale" in status[-1].message,
                      10.0), "no braking"
    # a certified braking plan from the desired state, or (when it could not be sent before it took
    # effect, on a loaded machine) braking on the plan already sent: either way no step. The status
    # can arrive before the command (a small message and a large one on two topics; seen in CI)
    assert spin_until(node, lambda: len(arm.commands) > n_before or "braking command withheld" in status[-1].message,
                      10.0), status[-1].message
    assert max(arm.steps, default=0.0) < STEP_TOLERANCE
    if len(arm.commands) > n_before:
        (before_start, before), (brake_start, brake) = arm.commands[-2:]
        assert brake_start <= arm.now()                       # stamped no later than it was sent
        # no step: the braking command repeats the previous reference until it takes over
        t_abs = brake_start + brake.t[brake.t <= 0.1]
        q_new = interpolate(brake, t_abs - brake_start)[0]
        q_old = interpolate(before, t_abs - before_start)[0]
        np.testing.assert_allclose(q_new, q_old, atol=1e-6)
        assert np.max(np.abs(np.diff(brake.q, axis=0))) <= \
            np.max(robot.velocity_limit) * np.max(np.diff(brake.t)) + 1e-9
        np.testing.assert_allclose(brake.qd[-1], 0.0, atol=1e-9)          # ends at rest
    brake_start, brake = arm.commands[-1]
    # after the brake the arm stays put, even when joint states come back, until a new start
    end = brake_start + brake.t[-1]
    spin_until(node, lambda: arm.now() > end + 0.5, 30.0)
    arm.publishing = True
    spin_for(node, 1.5)
    assert status[-1].state == "failed" and "stale" in status[-1].message
    n_after = len(arm.commands)
    spin_for(node, 2.0)
    assert len(arm.commands) == n_after
    reply = call(node, start)
    assert reply.success, reply.message
    assert spin_until(node, lambda: len(arm.commands) > n_after, 30.0), "a new start did not move it"


def test_under_sim_time_the_planner_says_which_code_serves_before_any_clock(ros_env, tmp_path):
    """A demo waits, before its simulated arm publishes the first /clock, until the planner's optimiser
    no longer compiles: the planner's /diagnostics, on the steady clock, say which code serves while
    the ROS clock has not started, and the worker's word on it reaches them without any plan."""
    import rclpy

    from inertial_id.core.planning.native import STATUS_COMPILING
    from inertial_id.nodes.launch import start_node_set
    from ros_helpers import planner_test_profile
    path, _, _ = planner_test_profile(tmp_path)
    procs = start_node_set(str(path), ros_env, str(tmp_path), nodes=("excitation_planner",),
                           excitation_planner={"use_sim_time": True})
    node = rclpy.create_node("planner_code_test")
    try:
        diagnostics = node_counters(node, "excitation_planner")
        assert spin_until(node, lambda: diagnostics.get("optimizer.code", STATUS_COMPILING) != STATUS_COMPILING,
                          300.0), f"{diagnostics}; logs in {tmp_path}"
        assert diagnostics["optimizer.code"] == "compiled" or diagnostics["optimizer.code"].startswith("virtual machine")
        assert "optimizer.plans" in diagnostics and int(diagnostics["optimizer.plans"]) == 0
    finally:
        node.destroy_node()
        procs.stop()


def test_estimates_are_attributed_only_to_the_sole_publisher_named_estimator():
    """The graph decides who sent an estimate (the same on every distribution): only the topic's sole
    publisher being the node named estimator_node, and the only node of that name, counts."""
    from inertial_id.nodes.excitation_planner import estimate_sender_refusal as refusal
    est, planner_node = ("estimator", "/"), ("excitation_planner", "/")
    assert refusal([est], [est, planner_node], "estimator") == ""
    assert refusal([("estimator", "/arm")], [("estimator", "/arm"), est], "estimator") == ""   # one per namespace
    assert "published by /intruder, not 'estimator'" in refusal([("intruder", "/")], [est], "estimator")
    # another publisher beside the estimator: which of them sent it cannot be told, so neither counts
    assert "not the only publisher of estimates: /intruder too" in refusal([est, ("intruder", "/")], [est], "estimator")
    assert "2 publishers of estimates named 'estimator'" in refusal([est, ("estimator", "/x")], [est], "estimator")
    assert "2 nodes named '/estimator'" in refusal([est], [est, est, planner_node], "estimator")
    assert "no publisher of estimates" in refusal([], [est], "estimator")
    # a publisher whose node is not announced yet carries rmw's placeholder name
    assert "not 'estimator'" in refusal([("_NODE_NAME_UNKNOWN_", "_NODE_NAMESPACE_UNKNOWN_")], [est], "estimator")


def test_an_inconsistent_estimate_brakes_at_once_and_no_start_follows(planner, tmp_path):
    """An estimate whose data are inconsistent: from another node it is dropped (only the configured
    estimator counts), and so is the estimator's own while another node publishes estimates too (the
    sender cannot be told); from the estimator alone, published while the arm moves, the next command
    is a certified braking plan issued on it, the reason is published, and a start is refused."""
    import rclpy
    from inertial_id_msgs.msg import InertialEstimate
    from inertial_id.core.robot import params
    node, arm, status, start, robot, settings = planner
    counters = node_counters(node, "excitation_planner")

    def count(key: str) -> int:
        return int(counters.get(key, 0))

    estimator = rclpy.create_node("estimator")
    intruder = rclpy.create_node("intruder")
    estimates = estimator.create_publisher(InertialEstimate, "inertial_estimate", RELIABLE_QOS)
    spoofed = intruder.create_publisher(InertialEstimate, "inertial_estimate", RELIABLE_QOS)
    # both matched with the planner (a reliable message sent before the match would be lost, not dropped)
    assert spin_until(node, lambda: estimates.get_subscription_count() >= 1 and spoofed.get_subscription_count() >= 1,
                      10.0)
    lo, hi = robot.payload_prior()
    msg = InertialEstimate(body="payload", method="guaranteed", parameter_names=params.parameter_names("payload"),
                           estimate=(0.5 * (lo + hi)).tolist(), lower=lo.tolist(), upper=hi.tolist(),
                           physically_consistent=True, bounds_guaranteed=True, data_consistent=False)
    msg.header.frame_id = robot.payload_frame
    # the intruder's estimate is dropped, and so is the estimator's own while the intruder publishes
    # estimates too (which of them sent it cannot be told). Either, taken, would refuse the start below
    # ("not starting: the estimator reports data inconsistent"); sent before it, they leave the arm at
    # rest on a loaded machine where the plans' time budget would run out while the drops are awaited
    for publisher, dropped in ((spoofed, 1), (estimates, 2)):
        publisher.publish(msg)
        assert spin_until(node, lambda: count("dropped.estimate_from_other_node") >= dropped, 10.0), \
            f"estimate {dropped} not dropped; logs in {tmp_path}"
    assert count("event.estimate_used") == 0
    intruder.destroy_node()
    reply = call(node, start)
    assert reply.success, f"an estimate of unknown origin was taken: {reply.message}"
    assert spin_until(node, lambda: status[-1].state == "executing", 30.0), f"no motion; logs in {tmp_path}"
    spin_for(node, 0.5)
    # the intruder has left: the estimator's estimate counts once the planner's graph has lost it too
    # (each estimate is either used or dropped, both counted on /diagnostics)
    for _ in range(10):
        used, dropped = count("event.estimate_used"), count("dropped.estimate_from_other_node")
        n_before = len(arm.commands)
        moving = status[-1].state == "executing"       # a loaded machine may already have braked (missed deadline)
        sent_at = arm.now()
        estimates.publish(msg)
        assert spin_until(node, lambda: count("event.estimate_used") > used
                          or count("dropped.estimate_from_other_node") > dropped, 10.0), "the estimate went unseen"
        if count("event.estimate_used") > used:
            break
    else:
        pytest.fail(f"the estimator's estimates were still dropped after the intruder left; logs in {tmp_path}")
    if moving:
        assert spin_until(node, lambda: "data inconsistent" in status[-1].message or status[-1].state != "executing",
                          10.0), "no stop on the estimate"
        # a loaded machine may have braked on something else (stale joint states) before the estimate
        # was taken; then only the refused start below shows it was
        moving = "data inconsistent" in status[-1].message
    if moving:
        assert status[-1].state in ("braking", "failed")
        spin_for(node, 0.5)
        # braking on the plan already sent is issued at once, computing nothing (the next plan dropped);
        # a shorter certified braking plan follows. Each ends at rest, and neither steps the reference
        assert len(arm.commands) > n_before, "no braking command"
        for _, traj in arm.commands[n_before:]:
            np.testing.assert_allclose(traj.qd[-1], 0.0, atol=1e-12)
        reacted_after_s = arm.arrived[n_before] - sent_at
        print(f"braking command {reacted_after_s * 1000:.1f} ms after the inconsistent estimate was sent "
              f"(joint-state period {JOINT_STATE_PERIOD_S * 1000:.0f} ms); {len(arm.commands) - n_before} commands")
        # the first braking command is issued on the estimate itself, before any certification: it
        # arrives before the shorter brake (when there is one). Its transport (a ~500-point trajectory,
        # serialised and written by Python over DDS) takes longer than one joint-state period here:
        # the figure is printed, not asserted (issue note)
        if len(arm.arrived) > n_before + 1:
            assert arm.arrived[n_before] < arm.arrived[n_before + 1]
    assert max(arm.steps, default=0.0) < STEP_TOLERANCE
    assert spin_until(node, lambda: status[-1].state in ("failed", "done"), 30.0)
    assert spin_until(node, lambda: np.max(np.abs(arm.reference(arm.now())[1])) == 0.0, 30.0)   # at rest
    spin_for(node, 1.0)                     # the planner has seen it at rest
    reply = call(node, start)
    for _ in range(10):                     # a loaded test process may publish its rest a little late
        if reply is None or "arm is moving" not in reply.message:
            break
        spin_for(node, 1.0)
        reply = call(node, start)
    assert not reply.success and "data inconsistent" in reply.message
    estimator.destroy_node()


@pytest.mark.parametrize("stall_s", [0.7, 2.5])
def test_a_stalled_planner_never_makes_the_reference_step(planner, tmp_path, stall_s):
    """The planner process stopped (SIGSTOP) mid-motion for 0.5-3 s: the arm goes on along what was
    sent (certified, ending at rest); on resuming, whatever the planner sends continues that
    reference (the fake arm measures the step each command makes on arrival), and it moves again
    only on a new start."""
    import os
    import signal
    node, arm, status, start, robot, settings = planner
    reply = call(node, start)
    assert reply.success, reply.message
    assert spin_until(node, lambda: status[-1].state == "executing", 30.0), f"no motion; logs in {tmp_path}"
    spin_for(node, 1.0)
    pid = planner_pid(tmp_path)
    os.kill(pid, signal.SIGSTOP)
    try:
        spin_for(node, stall_s)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert spin_until(node, lambda: status[-1].state in ("braking", "failed", "done"), 30.0)
    assert spin_until(node, lambda: status[-1].state in ("failed", "done"), 30.0)
    n_after = len(arm.commands)
    spin_for(node, 2.0)
    print(f"stall {stall_s} s: {len(arm.commands)} commands, largest step {max(arm.steps, default=0.0):.2e}; "
          f"{status[-1].state}: {status[-1].message}")
    assert max(arm.steps, default=0.0) < STEP_TOLERANCE
    assert len(arm.commands) == n_after                  # nothing more without a new start


def planner_pid(log_dir) -> int:
    """The planner process of the fixture (the one node it started)."""
    import subprocess
    out = subprocess.run(["pgrep", "-f", "inertial_id.nodes.entry excitation_planner"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    mine = [p for p in pids if str(log_dir) in open(f"/proc/{p}/cmdline").read().replace("\0", " ")]
    assert len(mine) == 1, (pids, mine)
    return mine[0]
