"""The estimator over DDS makes its final update (one LP over every row kept, the F/T offset's
stated box checked) when the planner's motion ends, not only when the row stream pauses: an arm at
rest keeps streaming rows, so without it a live box would never be checked. Once per motion: a
status repeated, or one that never followed a motion, triggers nothing. The box it made is named on
/diagnostics by the stamp of its estimate (what the demo waits for), one the estimator published."""
import pytest

from ros_helpers import node_counters, spin_until

pytestmark = pytest.mark.ros

EVENT = "event.final_update_on_motion_end"
FINAL_STAMP = "final_estimate_stamp"


def test_a_motion_that_ends_makes_one_final_update(ros_env, tmp_path):
    import rclpy
    from inertial_id_msgs.msg import ExcitationStatus, InertialEstimate

    from inertial_id.core.signals.stamps import stamp_ns
    from inertial_id.nodes.estimator import ESTIMATE_QOS
    from inertial_id.nodes.launch import start_node_set
    procs = start_node_set("xarm7", ros_env, str(tmp_path), nodes=("estimator",), estimator={"state_file": "none"})
    node = rclpy.create_node("motion_end_test")
    counters = node_counters(node, "estimator")
    status = node.create_publisher(ExcitationStatus, "/excitation_status", 10)
    estimate_stamps: list[int] = []
    node.create_subscription(InertialEstimate, "/inertial_estimate",
                             lambda m: estimate_stamps.append(stamp_ns(m.header.stamp)), ESTIMATE_QOS)

    def say(state: str) -> None:
        status.publish(ExcitationStatus(state=state))

    def updates() -> int:
        return int(counters.get(EVENT, 0))
    try:
        assert spin_until(node, lambda: "accepted" in counters and status.get_subscription_count() > 0, 60.0), \
            f"the estimator is not up; log in {tmp_path}"
        for state in ("idle", "done", "done"):         # no motion before: nothing to finish
            say(state)
        for state in ("planning", "executing", "braking", "done", "done"):
            say(state)
        assert spin_until(node, lambda: updates() >= 1, 20.0), counters
        # the final update's estimate, named on /diagnostics once it is out
        assert spin_until(node, lambda: FINAL_STAMP in counters and int(counters[FINAL_STAMP]) in estimate_stamps,
                          20.0), (counters, estimate_stamps)
        first_final = int(counters[FINAL_STAMP])
        say("executing")
        say("failed")
        assert spin_until(node, lambda: updates() >= 2, 20.0), counters
        assert spin_until(node, lambda: int(counters[FINAL_STAMP]) > first_final, 20.0), counters
        spin_until(node, lambda: updates() > 2, 3.0)
        assert updates() == 2
        assert procs.dead() == []
    finally:
        node.destroy_node()
        procs.stop()
    assert "Traceback" not in (tmp_path / "estimator.log").read_text()
