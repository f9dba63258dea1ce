"""Plays a rosbag2 onto live topics, paced by the recorded log times, with /clock (simulated time)
so that nodes started with ``use_sim_time`` run on the recorded time line, as ``ros2 bag play
--clock`` does. Messages go out as the recorded CDR bytes with the QoS their publisher offered.
After the last message the clock keeps running for ``tail_s`` simulated seconds, so that timers of
the receiving nodes (the estimator's bounds update) fire on the last data."""
from __future__ import annotations

import time

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.highlevel import AnyReader
from rosbags.interfaces import QosDurability, QosReliability
from rosgraph_msgs.msg import Clock

from ..core.data import bags
from .recorder import message_class

CLOCK_PERIOD_S = 0.01     # simulated seconds between /clock messages when no data message sets it


def publisher_qos(offered_profiles, lossless: bool = False) -> QoSProfile:
    """The recorded publisher's QoS (its first offered profile), or sensor-data QoS if none.
    ``lossless``: reliable and keep-all instead; with subscribers that ask the same (the builder's
    ``lossless_inputs``) a slow reader holds the player back (flow control) instead of losing messages."""
    q = offered_profiles[0] if offered_profiles else bags.SENSOR_QOS
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if lossless else HistoryPolicy.KEEP_LAST, depth=max(int(q.depth), 1),
        reliability=(ReliabilityPolicy.RELIABLE if lossless or q.reliability == QosReliability.RELIABLE
                     else ReliabilityPolicy.BEST_EFFORT),
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if q.durability == QosDurability.TRANSIENT_LOCAL
                    else DurabilityPolicy.VOLATILE))


def default_topics(connections) -> list[str]:
    """What a replay feeds the nodes: the sensor streams (JointState, WrenchStamped) and the
    simulator's truth. Never the recorded commands (JointTrajectory: a real arm would move) nor
    the nodes' own outputs, which the running nodes publish again."""
    sensor_types = {bags.JOINT_STATE_TYPE, bags.WRENCH_TYPE}
    return sorted({c.topic for c in connections if c.msgtype in sensor_types or c.topic == bags.TRUTH})


class Player(Node):
    def __init__(self, connections, clock: bool = True, lossless: bool = False):
        super().__init__("inertial_id_replay")
        self.pubs = {c.id: self.create_publisher(message_class(c.msgtype), c.topic,
                                                 publisher_qos(c.ext.offered_qos_profiles, lossless))
                     for c in connections}
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if clock else None
        self.last_clock_ns = None

    def clock(self, t_ns: int) -> None:
        if self.clock_pub is None or t_ns == self.last_clock_ns:
            return
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(int(t_ns), 1_000_000_000)
        self.clock_pub.publish(msg)
        self.last_clock_ns = t_ns

    def publish(self, conn_id: int, data: bytes) -> None:
        self.pubs[conn_id].publish(bytes(data))


def replay(path, topics=None, rate: float = 1.0, clock: bool = True, tail_s: float = 5.0,
           start_delay_s: float = 1.0, progress=None, stop_when=None, lossless: bool = False) -> dict:
    """Publish the bag (call after rclpy.init). ``topics``: None for :func:`default_topics`.
    ``lossless``: publish reliably, keep all (see :func:`publisher_qos`).
    Returns message counts per topic. ``start_delay_s``: wall time for subscribers to match the
    new publishers before the first message. ``stop_when``: polled during the tail; True ends it
    (e.g. once the receiving nodes have published their final result)."""
    if not rate > 0:
        raise ValueError("rate must be > 0")
    counts: dict[str, int] = {}
    with AnyReader([bags.bag_dir(path)], default_typestore=bags.typestore()) as reader:
        wanted = set(default_topics(reader.connections) if topics is None else topics)
        missing = wanted - {c.topic for c in reader.connections}
        if missing:
            raise bags.BagError(f"bag '{path}' has no topic(s) {', '.join(sorted(missing))}")
        conns = [c for c in reader.connections if c.topic in wanted]
        player = Player(conns, clock, lossless)
        try:
            time.sleep(start_delay_s)
            wall0 = t0 = None
            t_ns = 0
            for conn, t_ns, raw in reader.messages(connections=conns):
                if t0 is None:
                    wall0, t0 = time.monotonic(), t_ns
                    player.clock(t_ns)
                due = wall0 + (t_ns - t0) * 1e-9 / rate
                while True:   # the clock runs between sparse messages too
                    now = time.monotonic()
                    if now >= due:
                        break
                    sim_now = t0 + int((now - wall0) * rate * 1e9)
                    if player.last_clock_ns is not None and sim_now - player.last_clock_ns >= CLOCK_PERIOD_S * 1e9:
                        player.clock(sim_now)
                    time.sleep(min(due - now, CLOCK_PERIOD_S / rate))
                player.clock(t_ns)
                player.publish(conn.id, raw)
                counts[conn.topic] = counts.get(conn.topic, 0) + 1
                if progress is not None:
                    progress(1)
            end = time.monotonic() + tail_s / rate
            while clock and t0 is not None and time.monotonic() < end:
                if stop_when is not None and stop_when():
                    break
                time.sleep(CLOCK_PERIOD_S / rate)
                player.clock(player.last_clock_ns + int(CLOCK_PERIOD_S * 1e9))
        finally:
            player.destroy_node()
    return counts
