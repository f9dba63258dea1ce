"""Records topics of the running suite into a rosbag2 (``demo --record``): raw subscriptions (the
CDR bytes as received, no decoding), QoS compatible with each publisher, log time = receive time
on this node's clock, as ``ros2 bag record`` does. Runs on its own executor thread."""
from __future__ import annotations

import importlib
import struct
import threading
import time
from dataclasses import dataclass

import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.interfaces import QosDurability, QosReliability

from ..core.data.bags import BagWriter
from ..core.signals.driver_streams import DriverModel
from ..core.signals.stamps import stamp_s
from .compat import SubscriptionEventCallbacks, events_executor

RECORD_DEPTH = 1000     # room for bursts while the writer is busy


def message_class(msgtype: str):
    """``pkg/msg/Name`` -> the rclpy message class."""
    pkg, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{pkg}.msg"), name)


def subscription_qos(offered) -> QoSProfile:
    """The QoS that receives everything a publisher with ``offered`` QoS sends (latched history too).
    From a reliable publisher, everything: keep all, however far this thread falls behind."""
    reliable = offered.reliability == QosReliability.RELIABLE
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if reliable else HistoryPolicy.KEEP_LAST, depth=RECORD_DEPTH,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if offered.durability == QosDurability.TRANSIENT_LOCAL
                    else DurabilityPolicy.VOLATILE))


@dataclass
class RecordingSummary:
    """What a recording holds and what it misses: ``counts`` messages written per topic, ``lost``
    messages per topic that DDS reported lost before the recorder took them or that the bag refused
    (``error``: the first such failure)."""

    path: str
    counts: dict
    lost: dict
    error: str = ""

    @property
    def missed(self) -> int:
        return sum(self.lost.values())

    def describe(self) -> str:
        """One line: how many messages the bag holds, and which it misses."""
        text = f"{sum(self.counts.values())} messages recorded in {self.path}"
        if self.missed:
            per_topic = ", ".join(f"{t} {n}" for t, n in sorted(self.lost.items()) if n)
            text += f"; {self.missed} MISSED ({per_topic}){': ' + self.error if self.error else ''}"
        return text


def header_stamp_ns(cdr: bytes) -> int:
    """The ``header.stamp`` of a serialized message that starts with a std_msgs/Header, read from
    the CDR bytes without deserializing (encapsulation, then int32 sec and uint32 nanosec)."""
    sec, nanosec = struct.unpack_from("<iI" if cdr[1] & 1 else ">iI", cdr, 4)
    return sec * 1_000_000_000 + nanosec


def driver_periods_s(robot) -> dict:
    """topic -> sample period of every stream the profile's driver publishes at a fixed rate."""
    driver = DriverModel.from_robot(robot)
    streams = driver.joint_states + ((driver.wrench,) if driver.wrench is not None else ())
    return {s.topic: 1.0 / s.hz for s in streams}


class RecorderNode(Node):
    """Subscribes to ``topics`` (topic -> (type, offered QoS)) and writes what arrives to ``writer``;
    counts what it could not record per topic in ``lost``: what DDS reports lost, what the bag
    refused, and, on the fixed-rate streams of ``periods_s`` (topic -> sample period), the samples
    missing between consecutive header stamps (DDS says nothing when a reader's queue overflows)."""

    def __init__(self, writer: BagWriter, topics: dict, periods_s: dict | None = None):
        super().__init__("inertial_id_recorder")
        self.writer = writer
        self.lock = threading.Lock()
        self.lost = {topic: 0 for topic in topics}
        self.error = ""
        self.periods_ns = {t: round(p * 1e9) for t, p in (periods_s or {}).items() if t in topics}
        self.last_stamp_ns: dict[str, int] = {}
        for topic, (msgtype, offered) in topics.items():
            self.create_subscription(message_class(msgtype), topic, self._writer_for(topic),
                                     subscription_qos(offered), raw=True,
                                     event_callbacks=SubscriptionEventCallbacks(message_lost=self._lost_on(topic)))

    def _count_lost(self, topic: str, n: int, why: str) -> None:
        with self.lock:
            self.lost[topic] += n
            self.error = self.error or why
        self.get_logger().error(f"{n} message(s) on {topic} not recorded: {why}", throttle_duration_sec=2.0)

    def _lost_on(self, topic: str):
        def on_lost(info) -> None:
            if info.total_count_change > 0:
                self._count_lost(topic, info.total_count_change, "lost in transport (DDS)")
        return on_lost

    def _check_stamp(self, topic: str, data: bytes) -> None:
        period = self.periods_ns[topic]
        stamp, last = header_stamp_ns(data), self.last_stamp_ns.get(topic)
        if last is not None and stamp - last > 1.5 * period:
            self._count_lost(topic, round((stamp - last) / period) - 1, "samples missing between header stamps")
        self.last_stamp_ns[topic] = max(stamp, last or stamp)

    def _writer_for(self, topic: str):
        def write(data: bytes) -> None:
            if topic in self.periods_ns:
                self._check_stamp(topic, data)
            try:
                with self.lock:
                    if self.writer is not None:
                        self.writer.write_cdr(topic, self.get_clock().now().nanoseconds, data)
            except Exception as exc:   # noqa: BLE001 - a full disk, a closed file: counted, reported at the end
                self._count_lost(topic, 1, f"{type(exc).__name__}: {exc}")
        return write


class BackgroundRecorder:
    """A :class:`RecorderNode` spinning on its own thread until :meth:`stop` (needs rclpy.init)."""

    def __init__(self, path, topics: dict, storage: str = "mcap", periods_s: dict | None = None):
        self.path = str(path)
        self.writer = BagWriter(path, storage, topics)
        self.node = RecorderNode(self.writer, topics, periods_s)
        # a kHz sensor stream costs ~0.8 ms of CPU per message through the default executor (a core
        # at 1 kHz: the recorder falls seconds behind, and its log times with it), a quarter of that
        # through the events executor (single-threaded where rclpy has none: Humble)
        self.executor = events_executor()
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, name="bag-recorder", daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def stop(self, settle_topics=(), quiet_s: float = 2.0, max_wait_s: float = 30.0) -> RecordingSummary:
        """Stop receiving, close the bag; what it holds and misses. ``settle_topics``: streams that
        have ended (their source stopped); first wait until none of them was written for
        ``quiet_s``: on a busy machine this thread may still be working through its queue."""
        deadline = time.monotonic() + max_wait_s
        last, since = None, time.monotonic()
        while settle_topics and time.monotonic() < deadline:
            with self.node.lock:
                counts = [self.writer.counts.get(t, 0) for t in settle_topics]
            if counts != last:
                last, since = counts, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                break
            time.sleep(0.1)
        self._stop.set()
        self.thread.join()
        with self.node.lock:
            writer, self.node.writer = self.node.writer, None
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        lost, error = dict(self.node.lost), self.node.error
        try:
            writer.close()
        except Exception as exc:   # noqa: BLE001 - the bag's end not written: every message is in doubt
            lost = {t: n + writer.counts.get(t, 0) for t, n in lost.items()}
            error = error or f"closing the bag failed: {type(exc).__name__}: {exc}"
        return RecordingSummary(self.path, dict(writer.counts), lost, error)


def finish_recording(monitor, quiet_sim_s: float = 5.0, max_wait_s: float = 60.0) -> None:
    """Once the simulated arm has ended its sensor streams (``~/end_streams``; its /clock goes on),
    spin ``monitor`` until the estimate has not changed for ``quiet_sim_s`` of simulated time and its
    box holds the last rows message the monitor received (its ``data_stamp`` at that message's
    stamp): the estimator folds in the rows left over after a bounds period without rows (on the
    simulated clock, which is why the arm keeps running), so the monitor's last estimate covers
    exactly the recorded data, which is what replay and ``estimate --bag`` see. The quiet window
    alone once ended before that update on a loaded machine (its final LP and the ``~/apply``
    gate's support LPs took longer), and the estimate taken was the one before it."""
    def state():
        est = monitor.estimate
        return None if est is None else (est.samples_used, tuple(est.lower), tuple(est.upper))

    def holds_every_row() -> bool:
        est = monitor.estimate
        return not monitor.rows or (est is not None and
                                    stamp_s(est.data_stamp) >= stamp_s(monitor.rows[-1].header.stamp))
    deadline = time.monotonic() + max_wait_s
    last, since = state(), monitor.sim_elapsed_s()
    while (monitor.sim_elapsed_s() - since < quiet_sim_s or not holds_every_row()) and time.monotonic() < deadline:
        rclpy.spin_once(monitor, timeout_sec=0.1)
        if state() != last:
            last, since = state(), monitor.sim_elapsed_s()
