"""Input checks of the nodes: the parsing itself is ROS-free and shared with the offline
converters (:mod:`inertial_id.core.signals.sensor_inputs`); here what only a subscription has."""
from __future__ import annotations

import time
from collections import deque

from ..core.signals.sensor_inputs import (ABSURD_FACTOR, FUTURE_TOLERANCE_S, JointSample, JointStateParser,  # noqa: F401
                                          Rejected, StampOrder, checked_stamp, parse_wrench)
from .common import when_active
from .compat import SubscriptionEventCallbacks


def lost_message_events(drops, reason: str):
    """Event callbacks that count, under ``reason``, the messages DDS reports lost on a
    subscription (sequence gaps from a writer, samples overwritten before this node took them):
    input lost to load is counted like any other drop."""
    def on_lost(info) -> None:
        if info.total_count_change > 0:
            drops.counts[reason] += info.total_count_change
            drops.node.get_logger().warning(f"{info.total_count_change} messages lost before this node "
                                            f"took them ({info.total_count} so far)", throttle_duration_sec=2.0)
    return SubscriptionEventCallbacks(message_lost=on_lost)


class SensorIntake:
    """The driver's joint states and wrist wrench as the regressor builder and the payload compensator
    take them: parsed, and each joint sample paired with the wrench interpolated at its stamp, in stamp
    order. The two topics arrive in any order: a joint sample waits until the wrench stream has passed
    its stamp, for at most ``wrench_wait_s`` of wall time and ``WAITING_SAMPLES`` samples, and one the
    wrench stream cannot pair is dropped with the reason. Paired samples are processed in batches of
    ``process_batch`` (cheaper per sample at kHz rates; :meth:`flush` also runs on the node's timer).
    A node calls :meth:`setup_intake`, sets ``wrench_frame_id`` when it subscribes to the wrench and
    ``process_batch``, and implements ``process(t, q, qd, tau, wrench, interpolation_bound)`` (one
    list per field; wrench and bound None when it does not pair), which returns the batch's
    :class:`~inertial_id.core.signals.row_builder.Pushed`-like accounting (``accepted``, ``missed``, ``drops``)."""

    WAITING_SAMPLES = 100

    def setup_intake(self, parser: JointStateParser, wrenches, pair_wrench: bool, wrench_wait_s: float) -> None:
        """``wrenches``: the node's :class:`~inertial_id.core.signals.driver_streams.WrenchBuffer`;
        ``pair_wrench``: joint samples wait for their wrench (else they are taken at once)."""
        self.parser, self.wrenches, self.pair_wrench = parser, wrenches, pair_wrench
        self.wrench_wait_s = wrench_wait_s
        self.wrench_order = StampOrder("wrench_stamp_not_increasing")
        self.joint_samples = deque()       # (sample, wall time it arrived) waiting for the wrench stream
        self.ready: list = []              # (sample, wrench, interpolation bound) paired, not yet processed

    @when_active
    def on_wrench(self, msg) -> None:
        """A driver wrench into the pairing buffer (a stream that went back in time restarts it)."""
        try:
            t, w = parse_wrench(msg, self.wrench_frame_id, now_s=self.now_s(), future_tolerance_s=self.future_tolerance)
            if self.wrench_order.check(t):
                self.wrenches.reset()
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.wrenches.add(t, w)
        self.drops.ok()         # every input message is counted once: this one as taken
        self.drain()

    @when_active
    def on_joint_state(self, msg) -> None:
        """A driver joint state: taken at once without wrench input, else queued for its wrench."""
        try:
            sample = self.parser.parse(msg)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        if not self.pair_wrench:
            self.take(sample, None, None)
            return
        if self.joint_samples and sample.t <= self.joint_samples[-1][0].t:
            # the stream went back in time (the parser followed it): what waits belongs to the old one
            self.drop_waiting("stream_restarted")
        self.joint_samples.append((sample, time.monotonic()))
        self.drain()

    def drop_waiting(self, why: str) -> None:
        """Drop every joint sample still waiting for its wrench, saying ``why``."""
        while self.joint_samples:
            s, _ = self.joint_samples.popleft()
            self.drops.drop("no_matching_wrench", f"sample at {s.t:.4f} s: {why}")

    def drain(self) -> None:
        """Pair the waiting joint samples in order, as far as the wrench stream allows."""
        while self.joint_samples:
            s, arrived = self.joint_samples[0]
            if (not self.wrenches.ready(s.t) and len(self.joint_samples) < self.WAITING_SAMPLES
                    and time.monotonic() - arrived < self.wrench_wait_s):
                return   # its wrenches may still come
            self.joint_samples.popleft()
            wrench, extra, why = self.wrenches.pair(s.t)
            if why is not None:
                self.drops.drop(why, f"no wrench pair within {self.wrenches.max_gap:.4g} s around {s.t:.4f} s")
                continue
            self.take(s, wrench, extra)

    def take(self, sample, wrench, extra) -> None:
        """A paired sample into the batch; a full batch is processed at once."""
        self.ready.append((sample, wrench, extra))
        if len(self.ready) >= self.process_batch:
            self.flush()

    def flush(self) -> None:
        """The batched samples through ``process``; what it dropped, and the samples the driver sent
        that never reached this node (stamp gaps at the driver's rate: a full DDS queue under load),
        are counted, not silently lost."""
        if not self.ready:
            return
        ready, self.ready = self.ready, []
        samples = [s for s, _, _ in ready]
        pushed = self.process([s.t for s in samples], [s.q for s in samples], [s.qd for s in samples],
                              None if any(s.tau is None for s in samples) else [s.tau for s in samples],
                              [w for _, w, _ in ready] if self.pair_wrench else None,
                              [e for _, _, e in ready] if self.pair_wrench else None)
        if pushed.missed:
            self.drops.counts["missed_samples"] += pushed.missed
        for reason, detail in pushed.drops:
            self.drops.drop(reason, detail)
        for reason, detail in pushed.events:      # the sample counts as accepted: not a dropped input
            self.drops.event(reason, detail=detail)
        if pushed.accepted:
            self.drops.ok(pushed.accepted)
