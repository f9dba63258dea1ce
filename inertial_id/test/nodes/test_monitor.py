"""The demo's monitor ends a run on the estimator's box from its final update after the motion ended,
or a later one still checked: never on a provisional final update's (a stream's pause, withdrawn when
the rows go on) nor on the online boxes after it, which rest on the F/T offset's stated box unchecked
again. Over DDS, as the estimator says them (its estimates and its /diagnostics values)."""
import pytest

from ros_helpers import spin_until

pytestmark = pytest.mark.ros


def test_the_final_estimate_is_the_motion_ends_or_a_checked_one_after_it(ros_env):
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    from inertial_id_msgs.msg import InertialEstimate
    from inertial_id.core.estimators.session import MOTION_END, STREAM_PAUSE
    from inertial_id.nodes.common import FINAL_ESTIMATE_REASON, FINAL_ESTIMATE_STAMP, RELIABLE_QOS
    from inertial_id.nodes.monitor import MonitorNode
    monitor = MonitorNode()
    node = rclpy.create_node("estimator_stand_in")
    estimates = node.create_publisher(InertialEstimate, "inertial_estimate", RELIABLE_QOS)
    diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)

    def estimate(sec: int, offset_checked: bool, guaranteed: bool = True) -> InertialEstimate:
        msg = InertialEstimate(offset_checked=offset_checked, bounds_guaranteed=guaranteed)
        msg.header.stamp.sec = sec
        estimates.publish(msg)
        assert spin_until(monitor, lambda: monitor.estimate is not None and monitor.estimate.header.stamp.sec == sec, 10.0)
        return msg

    def final(msg: InertialEstimate, reason: str) -> None:
        said = monitor.diagnostics_received
        stamp = msg.header.stamp.sec * 10**9
        diagnostics.publish(DiagnosticArray(status=[DiagnosticStatus(name="estimator", values=[
            KeyValue(key=FINAL_ESTIMATE_STAMP, value=str(stamp)), KeyValue(key=FINAL_ESTIMATE_REASON, value=reason)])]))
        assert spin_until(monitor, lambda: monitor.diagnostics_received > said, 10.0)

    def final_sec():
        return None if monitor.final_estimate is None else monitor.final_estimate.header.stamp.sec
    try:
        assert spin_until(monitor, lambda: estimates.get_subscription_count() > 0 and
                          diagnostics.get_subscription_count() > 0, 20.0)
        # a stream's pause in the motion: its final box is checked, then withdrawn as the rows go on
        final(estimate(1, offset_checked=True), STREAM_PAUSE)
        assert final_sec() is None
        estimate(2, offset_checked=False)
        assert final_sec() is None
        # the motion's end, said after an online box that followed it (rows at rest, then a pause
        # whose provisional update was withdrawn)
        end = estimate(3, offset_checked=True)
        estimate(4, offset_checked=False)
        final(end, MOTION_END)
        assert final_sec() == 3
        estimate(5, offset_checked=True)
        assert final_sec() == 5
        estimate(6, offset_checked=False)
        assert final_sec() == 5
        # a box that is not guaranteed (another method) has no offset box to check
        estimate(7, offset_checked=False, guaranteed=False)
        assert final_sec() == 7
    finally:
        node.destroy_node()
        monitor.destroy_node()
