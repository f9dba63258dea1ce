"""Record a demo run (nodes over DDS), then: ``estimate --bag`` on the recorded rows, the recorded
rows replayed (with /clock) into a fresh estimator process, and the recorded joint states offline
and replayed through fresh builder and estimator processes (lossless transport): all give the same
final bounds within 1e-6 (relative to each parameter's magnitude scale), the live run's too. The demo holds the simulated arm until
the builder, the planner and the recorder have matched its publishers, and the builder listens only
once its rows publisher has matched the estimator and the recorder, so the live nodes consume
exactly the recorded streams (before, the demo waited for the rows' readers in the graph: beside
busy processes the builder's publisher once matched the estimator 14 rows messages later)."""
import numpy as np
import pytest

from inertial_id.cli.demo import run_demo
from inertial_id.core.data import bags
from inertial_id.core import offline
from inertial_id.core.robot.model import load_robot

from ros_helpers import node_counters, start_replay_pipeline


pytestmark = pytest.mark.ros

TOLERANCE = 1e-6       # relative to each parameter's magnitude scale
# slow enough that the replayed builder never stalls for a bounds period (which would add a bounds
# update) on a loaded machine
REPLAY_RATE = 0.25


def last_builder_counts(bag) -> dict:
    counts = {}
    for _, _, msg in bags.messages(bag, [bags.DIAGNOSTICS]):
        for status in msg.status:
            if status.name.endswith("regressor_builder"):
                counts = {v.key: v.value for v in status.values}
    return counts


def test_demo_recording_estimate_and_replay_match_the_live_run(tmp_path, ros_env):
    import rclpy
    rclpy.try_shutdown()                      # run_demo manages its own rclpy context
    bag = tmp_path / "demo"
    live = run_demo("kinova_gen3", "dumbbell_5lb", 6.0, "guaranteed", log_dir=str(tmp_path / "live"),
                    progress=False, record=str(bag))
    robot = load_robot("kinova_gen3")
    # the recorded rows are the estimator's input: the estimator subscribed before the first sample
    _, r, info = offline.estimate_from_bag(bag, robot, "guaranteed", "rows", samples_used=live["samples"])
    diff = offline.bounds_difference(r.lower, r.upper, live["lower"], live["upper"])
    print(f"estimate --bag --as-live vs live: {diff:.3g} ({info['skipped_leading_messages']} leading rows "
          "messages the live estimator never received)")
    assert info["skipped_leading_messages"] == 0
    assert r.samples_used == live["samples"] and diff < TOLERANCE

    # the recorded rows replayed (with /clock) into a fresh estimator process
    _, all_rows, _ = offline.estimate_from_bag(bag, robot, "guaranteed", "rows")
    replayed, _ = replay_through_nodes(ros_env, tmp_path / "rows_replay", bag, [bags.ROWS], all_rows, 1.0)
    diff = offline.bounds_difference(replayed.lower, replayed.upper, all_rows.lower, all_rows.upper)
    diff_live = offline.bounds_difference(replayed.lower, replayed.upper, live["lower"], live["upper"])
    print(f"recorded rows replayed through the estimator node vs offline: {diff:.3g}, vs live: {diff_live:.3g}")
    assert replayed.samples_used == all_rows.samples_used and diff < TOLERANCE and diff_live < TOLERANCE

    # the recorded joint states offline, and replayed losslessly (reliable, keep all) through fresh
    # builder and estimator processes, give the same bounds however loaded the machine is
    _, from_samples, _ = offline.estimate_from_bag(bag, robot, "guaranteed", "samples")
    est, counters = replay_through_nodes(ros_env, tmp_path / "samples_replay", bag, None, from_samples, REPLAY_RATE)
    diff = offline.bounds_difference(est.lower, est.upper, from_samples.lower, from_samples.upper)
    paused = int(counters.get("event.rows_after_idle_update", 0))
    print(f"recorded joint states replayed through builder and estimator nodes vs offline: {diff:.3g} "
          f"(rows came again after {paused} idle-period bounds update(s))")
    assert est.samples_used == from_samples.samples_used
    truth = np.asarray(live["truth"])
    assert est.bounds_guaranteed and np.all((truth >= np.asarray(est.lower)) & (truth <= np.asarray(est.upper)))
    if diff >= TOLERANCE and paused:
        # the rows stopped for a whole bounds period of /clock (a machine too loaded for the replay's
        # rate): the estimator folded in what it had, an update offline makes only at the end; that
        # is its design for a stream that stops, and it is counted
        assert diff < 1e-3, diff
        pytest.xfail(f"{diff:.3g} relative after {paused} pause(s) in the rows")
    assert diff < TOLERANCE

    # and they are what the live builder took (the demo's arm publishes them reliably, builder and
    # recorder keep all), unless a reader fell further behind than the arm's publisher keeps
    # (RELIABLE_SENSOR_DEPTH samples) on an overloaded machine: then the loss must have been counted
    # (the builder's counters, stamp gaps in the recording), never silent
    counts = last_builder_counts(bag)
    lost = {k: int(v) for k, v in counts.items()
            if k in ("dropped.lost_in_transport", "dropped.missed_samples") and int(v) > 0}
    other_drops = {k: v for k, v in counts.items() if k.startswith("dropped.") and k not in lost and int(v) > 0}
    js = bags.read_joint_states(bag, robot.joint_names)
    recorder_gaps = int(np.sum(np.diff(js.t) > 1.5 / robot.sensing.joint_states_hz))
    print(f"joint states: {len(js)} recorded ({recorder_gaps} gaps), {counts.get('accepted')} accepted by the "
          f"live builder, its losses {lost}, other drops {other_drops}")
    assert not other_drops
    diff = offline.bounds_difference(from_samples.lower, from_samples.upper, live["lower"], live["upper"])
    print(f"estimate --bag from the recorded joint states vs live: {diff:.3g}")
    # the builder's last /diagnostics in the bag need not be its final count (the recording stops
    # once the sensor and rows topics settle; one CI run kept the count at 645 of 12088 samples while
    # the estimates agreed exactly): the estimates themselves say whether the input was the same
    if not (from_samples.samples_used == live["samples"] and diff < TOLERANCE):
        assert lost or recorder_gaps, "the live builder's input differs from the recording without a counted loss"


def replay_through_nodes(ros_env, log_dir, bag, topics, expected, rate: float):
    """Replay ``topics`` of ``bag`` (None: the sensor streams) into fresh builder and estimator
    processes on /clock: (estimate, the estimator's /diagnostics counters). The estimate once it
    covers ``expected.samples_used`` with the ``expected`` bounds; if it never does, the last one
    after the replay's tail, which is long enough for the bounds update that follows the last rows
    (an estimate covering every sample may be published before that update)."""
    import rclpy
    from inertial_id.nodes.replay import replay
    rclpy.init()
    log_dir.mkdir()
    nodes, monitor = start_replay_pipeline(ros_env, log_dir, lossless_inputs=True)
    counters = node_counters(monitor, "estimator")
    try:
        def expected_estimate_seen() -> bool:
            rclpy.spin_once(monitor, timeout_sec=0.0)
            est = monitor.estimate
            return est is not None and est.samples_used == expected.samples_used and \
                offline.bounds_difference(est.lower, est.upper, expected.lower, expected.upper) < TOLERANCE

        replay(bag, topics, rate=rate, tail_s=30.0, stop_when=expected_estimate_seen, lossless=True)
        assert monitor.estimate is not None, "the replayed nodes published no estimate"
        return monitor.estimate, counters
    finally:
        monitor.destroy_node()
        nodes.stop()
        rclpy.try_shutdown()
