"""Replay over real DDS: a recorded bag played with /clock through the regressor_builder and
estimator processes (use_sim_time) gives the same final bounds as the offline pipeline on the
same bag (``estimate --bag`` from the recorded joint states)."""
import pytest

from inertial_id.cli.record_sim import record
from inertial_id.core.data import bags
from inertial_id.core import offline
from inertial_id.core.robot.model import load_robot

from ros_helpers import node_counters, spin_until, start_replay_pipeline
from ros_helpers import final_estimate_seen as final_estimate_seen_by

pytestmark = pytest.mark.ros


def test_replayed_bag_through_the_nodes_matches_offline_estimate(ros_env, tmp_path):
    from inertial_id.nodes.replay import replay

    robot = load_robot("kinova_gen3")
    bag = tmp_path / "sim"
    record(robot, "dumbbell_5lb", 2.5, bag, "mcap", seed=3, start_time_s=1000.0)
    # the estimator node's schedule: an update every 2 s of data time, and at the end
    _, offline_result, info = offline.estimate_from_bag(bag, robot, "guaranteed", "samples")
    assert info["messages_accepted"] >= 20          # 2.5 s of 0.1 s windows

    # lossless transport (reliable, keep all, both ends): a busy machine slows the replay, loses nothing
    nodes, monitor = start_replay_pipeline(ros_env, tmp_path, lossless_inputs=True)
    try:
        spin_until(monitor, lambda: False, 3.0)      # builder and estimator discover each other too
        builder = node_counters(monitor)
        seen, final_estimate_seen = final_estimate_seen_by(monitor, offline_result.samples_used)
        counts = replay(bag, rate=0.125, tail_s=30.0, stop_when=final_estimate_seen, lossless=True)
        assert counts[bags.JOINT_STATES] == 2500
        lost = {k: v for k, v in builder.items() if k.startswith("dropped.") and int(v) > 0}
        assert not lost, f"the builder dropped replayed samples: {lost}"
        assert len(set(seen)) >= 2, f"last live estimate: {monitor.estimate and monitor.estimate.samples_used} " \
                                    f"samples, offline {offline_result.samples_used}"
        est = monitor.estimate
    finally:
        monitor.destroy_node()
        nodes.stop()
    diff = offline.bounds_difference(est.lower, est.upper, offline_result.lower, offline_result.upper)
    print(f"replay through the nodes vs offline: largest relative bound difference {diff:.3g}")
    assert diff < 1e-6, diff
    assert est.bounds_guaranteed and est.data_consistent
