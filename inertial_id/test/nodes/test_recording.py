"""Recording is lossless or fails loudly: ``demo --record`` writes complete sqlite3 and MCAP bags
(the recorder writes from its own thread), and a recording that misses messages says how many and
exits non-zero."""
import json
import time

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.data import bags
from inertial_id.core.signals.stamps import stamp_s
from inertial_id.core.robot.model import load_robot

pytestmark = pytest.mark.ros


def run_demo_cli(tmp_path, storage: str, capfd) -> tuple[int, str, dict]:
    import rclpy
    rclpy.try_shutdown()                      # the demo manages its own rclpy context
    out = tmp_path / "result.json"
    rc = main(["demo", "--duration", "2", "--quiet", "--record", str(tmp_path / "bag"), "--storage", storage,
               "--log-dir", str(tmp_path / "logs"), "--json", str(out)])
    err = capfd.readouterr().err
    return rc, err, json.loads(out.read_text()) if out.exists() else {}


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_demo_recording_is_complete(tmp_path, ros_env, capfd, storage):
    rc, err, result = run_demo_cli(tmp_path, storage, capfd)
    assert rc == 0, err
    assert result["recording_missed"] == 0, result["recording"]
    bag = tmp_path / "bag"
    robot = load_robot("kinova_gen3")
    counts = {t: len(v) for t, v in bags.read_topics(bag, [], times_only=bags.suite_topics(robot)).items()}
    assert bags.check_readable(bag) == sum(counts.values())
    # every stream of the run is in it: sensor samples, rows, estimates, planner status and commands
    for topic in (bags.JOINT_STATES, bags.ROWS, bags.ESTIMATE, bags.STATUS, bags.TRUTH,
                  robot.spec.controller.topic):
        assert counts[topic] > 0, topic
    # and the 1 kHz joint states without a gap from the first to the last
    stamps = np.array([stamp_s(m.header.stamp) for _, m in bags.read_topics(bag, [bags.JOINT_STATES])[bags.JOINT_STATES]])
    assert np.max(np.diff(stamps)) < 1.5e-3
    assert counts[bags.JOINT_STATES] == round((stamps[-1] - stamps[0]) * 1000) + 1


def slow_writes(monkeypatch, delay_s: float) -> None:
    """Every bag write takes ``delay_s``: the recorder falls behind its subscriptions' queues."""
    write = bags.BagWriter.write_cdr

    def slow(self, *args):
        time.sleep(delay_s)
        return write(self, *args)
    monkeypatch.setattr(bags.BagWriter, "write_cdr", slow)


def test_recorder_counts_every_message_it_loses(tmp_path, ros_env, monkeypatch):
    """A best-effort 1 kHz stream flooded at a recorder that writes at most 500 messages a second:
    its queue overflows (DDS reports nothing); recorded + missed = every message published from the
    first recorded stamp to the last. (Messages lost after the last one a recorder receives leave no
    trace in the stamps; the demo ends its streams with an acknowledged end, ~/end_streams.)"""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from inertial_id.nodes.recorder import BackgroundRecorder
    slow_writes(monkeypatch, 0.002)
    recorder = BackgroundRecorder(tmp_path / "bag", {bags.JOINT_STATES: bags.TOPICS[bags.JOINT_STATES]}, "mcap",
                                  {bags.JOINT_STATES: 1e-3})
    node = rclpy.create_node("flood")
    pub = node.create_publisher(JointState, bags.JOINT_STATES,
                                QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT))
    deadline = time.monotonic() + 20
    while pub.get_subscription_count() < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    published = 4000
    for i in range(published):
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 1_000_000, 1_000_000_000)
        pub.publish(msg)
    summary = recorder.stop(settle_topics=(bags.JOINT_STATES,), quiet_s=1.0)
    node.destroy_node()
    print(summary.describe())
    assert summary.missed > 0 and "MISSED" in summary.describe()
    recorded = summary.counts[bags.JOINT_STATES]
    assert recorded == bags.check_readable(tmp_path / "bag")
    stamps_ms = [round(stamp_s(m.header.stamp) * 1e3) for _, _, m in bags.messages(tmp_path / "bag", [bags.JOINT_STATES])]
    print(f"recorded stamps {stamps_ms[0]}..{stamps_ms[-1]} ms of 0..{published - 1}")
    assert recorded + summary.missed == stamps_ms[-1] - stamps_ms[0] + 1 <= published


def test_demo_recording_that_misses_messages_exits_nonzero(tmp_path, ros_env, capfd, monkeypatch):
    """A disk that refuses 50 writes (full for a moment) during a demo: the demo still identifies the
    payload, then fails with one line saying how many messages the recording misses (a recorder
    that falls behind and loses samples in DDS is counted the same way: the test above)."""
    write = bags.BagWriter.write_cdr
    calls = iter(range(10**9))

    def refusing(self, *args):
        if 1000 <= next(calls) < 1050:
            raise OSError(28, "No space left on device")
        return write(self, *args)
    monkeypatch.setattr(bags.BagWriter, "write_cdr", refusing)
    rc, err, result = run_demo_cli(tmp_path, "mcap", capfd)
    last = err.strip().splitlines()[-1]
    print(last)
    assert rc == 1 and result["recording_missed"] == 50
    assert last.startswith("inertial-id demo: failed: the recording is incomplete:")
    assert "50 MISSED" in last and "No space left on device" in last
    assert "Traceback" not in err
