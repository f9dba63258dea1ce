"""A stop while the estimator's worker is inside a bounds update: the process ends within
``stop_wait_s`` with exit code 0, says what it left running, and does not abort. Before: a worker
inside HiGHS at interpreter exit took the process down with "terminate called without an active
exception" (exit -6), seen at the end of a demo whose rows had paused."""
import pytest

from inertial_id.core.robot import model as robot_model
from ros_helpers import spin_until

pytestmark = pytest.mark.ros

EVENT = "event.final_update_on_motion_end"


def test_a_stop_while_the_worker_updates_ends_the_process_with_exit_0(ros_env, tmp_path):
    from test_integrity_core import honest_wrench_rows
    from test_integrity_ros import Rig

    from inertial_id_msgs.msg import ExcitationStatus
    from inertial_id.core.estimators.session import MOTION_END
    from inertial_id.nodes.common import FINAL_ESTIMATE_REASON
    from inertial_id.nodes.launch import start_node_set
    robot = robot_model.load_robot("xarm7")
    rows = honest_wrench_rows(robot, 20.0)
    procs = start_node_set("xarm7", ros_env, str(tmp_path), nodes=("estimator",),
                           estimator={"state_file": "none", "bounds_period_s": 0.5, "stop_wait_s": 0.0})
    rig = Rig(robot)
    status = rig.node.create_publisher(ExcitationStatus, "/excitation_status", 10)
    try:
        assert spin_until(rig.node, lambda: rig.pub.get_subscription_count() >= 1 and
                          status.get_subscription_count() >= 1, 60.0), f"the estimator is not up; log in {tmp_path}"
        rig.send(rows)
        assert spin_until(rig.node, lambda: int(rig.status.get("accepted", 0)) == len(rows), 60.0), rig.status
        for state in ("executing", "done"):
            status.publish(ExcitationStatus(state=state))
        # the motion's final update over 20 s of rows (its F/T offset check: about 10 s) has begun,
        # its estimate is not out: the worker is inside it (a final update of the stream's pause,
        # when the rows paused for a bounds period before the motion ended, may have come first)
        assert spin_until(rig.node, lambda: int(rig.status.get(EVENT, 0)) >= 1, 60.0), rig.status
        assert rig.status.get(FINAL_ESTIMATE_REASON) != MOTION_END, "the final update ended before the stop"
    finally:
        rig.node.destroy_node()
        codes = procs.stop()
    log = (tmp_path / "estimator.log").read_text()
    assert codes == {"estimator": 0}, log[-3000:]
    for word in ("Traceback", "terminate called", "Fatal Python error"):
        assert word not in log, log[-3000:]
    assert "finished (SIGINT); the worker, inside a bounds update (state as last saved) left running" in log, \
        log[-3000:]
