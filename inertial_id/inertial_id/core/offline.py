"""The estimator pipeline offline: recorded samples or rows in, the same estimate and bounds out.

Two sources, in order of preference (:func:`estimate_from_bag` picks):

1. **Recorded rows** (``/regressor_samples`` in a bag recorded with the nodes running): exactly the
   messages the live estimator folded in, in the order it received them (reliable QoS, one
   publisher), so nothing depends on the sensor stream reaching a recorder and the builder alike.
2. **Recorded sensor samples** (``/joint_states`` and ``/wrench``: ``record-sim``, a driver
   recording, converted real runs): :class:`~.row_builder.SampleRows`, the class the builder node
   runs, turns them into rows. Joint states and wrenches go through the live nodes' parsing
   (:mod:`~.sensor_inputs`: unwrapping, checks of the fields the rows use, joints not named
   ignored) and pairing (:func:`~.driver_streams.pair_wrenches`: the wrench interpolated at each
   joint stamp), so a recording is accepted exactly as the live stream would be.

:class:`RowIntake` then does what the estimator node does with each message (the same checks,
:func:`~.estimators.intake.check_rows`, into the same estimator, :func:`~.estimators.factory.make_estimator`),
and updates the bounds every ``bounds_period_s`` of data time plus once at the end — the schedule the estimator node follows
(:class:`~.estimators.schedule.UpdateSchedule`), so the same rows give the same box.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .signals.driver_streams import max_gap_s, pair_wrenches, wrench_sample_bound
from .data import bags
from ..defaults import BOUNDS_PERIOD_S
from .estimators.intake import Skipped
from .estimators.session import EstimationSession
from .estimators.wrench_momentum_box import momentum_wrench_box
from .signals.row_builder import SampleRows
from .signals.sensor_inputs import JointStateParser, Rejected, StampOrder, parse_wrench

STREAM_CHUNK = 1000         # samples formed into rows at once (the rows do not depend on it)


@dataclass
class History:
    """The estimate after every bounds update (data time ``t``)."""

    t: list = field(default_factory=list)
    estimate: list = field(default_factory=list)
    lower: list = field(default_factory=list)
    upper: list = field(default_factory=list)
    samples_used: list = field(default_factory=list)
    condition_number: list = field(default_factory=list)
    offset_checked: list = field(default_factory=list)     # PayloadEstimate.offset_checked


class RowIntake:
    """What the estimator node does with RegressorSample messages, without a node: the same
    :class:`~.estimators.session.EstimationSession`, its drops and failures counted by reason in
    ``dropped``, the box after every update kept in ``history``."""

    def __init__(self, robot, method: str, max_bound_rows: int | None = None,
                 bounds_period_s: float = BOUNDS_PERIOD_S, support_directions=None):
        self.robot = robot
        self.session = EstimationSession(robot, method, max_bound_rows, bounds_period_s, support_directions)
        self.dropped: dict[str, int] = {}
        self.accepted = 0
        self.history = History()
        self.last_t = None

    @property
    def estimator(self):
        """The session's estimator (its kinds, its rows, its state)."""
        return self.session.estimator

    def _drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def add(self, m) -> None:
        """A row message, checked as the estimator node checks it (:func:`~.estimators.intake.check_rows`:
        dropped with a counted reason, or added; another estimator's kinds are passed over)."""
        checked = self.session.check(m.kind, m.parameter_names, m.b.size, m.samples, m.A, m.b, m.noise_bound,
                                     m.noise_sigma, m.kinematics, m.acceleration_bound)
        if isinstance(checked, Skipped):
            if not checked.ignored:
                self._drop(checked.reason)
            return
        added = self.session.add(m.t, checked)
        if added.failure:
            self._drop("solver_failed_on_rows")
            return
        self.accepted += 1
        self.last_t = m.t
        if added.update_failure:
            self._drop("solver_failed_bounds")
        if added.updated:
            self._record(m.t)

    def update(self, t: float, final: bool = False) -> None:
        """Update the bounds (``final``: the end of the data's) and record the result at data time
        ``t`` (s) in the history."""
        if self.session.update_bounds(final):
            self._drop("solver_failed_bounds")
        self._record(t)

    def _record(self, t: float) -> None:
        r = self.session.result()
        h = self.history
        h.t.append(t)
        h.estimate.append(r.estimate)
        h.lower.append(r.lower)
        h.upper.append(r.upper)
        h.samples_used.append(r.samples_used)
        h.condition_number.append(r.condition_number)
        h.offset_checked.append(r.offset_checked)

    def finish(self):
        """Final bounds update over everything received (one LP over every row kept); the estimator's result."""
        self.update(self.last_t if self.last_t is not None else 0.0, final=True)
        return self.session.result()


def bounds_difference(lo_a, hi_a, lo_b, hi_b) -> float:
    """Largest difference between two boxes' bounds, relative to each parameter's magnitude scale
    ``max(|lo|, |hi|)`` over both (how the same rows' boxes from two runs of the estimator compare)."""
    a, b = np.stack([lo_a, hi_a]), np.stack([lo_b, hi_b])
    scale = np.maximum(np.abs(a).max(axis=0), np.abs(b).max(axis=0))
    return float(np.max(np.abs(a - b) / np.maximum(scale, 1e-12)))


def rows_from_stream(robot, kinds, t, q, qd, tau, wrenches=None, wrench_max_gap_s: float | None = None,
                     progress=None, counts: dict | None = None):
    """Rows messages from a parsed stream (arrays in profile joint order, increasing stamps;
    ``wrenches`` as ``(t_w, w)`` when the profile uses wrench rows). Each joint sample gets the
    wrench interpolated at its stamp, as the builder pairs them (tolerance: ``wrench_max_gap_s``,
    default from the profile's ``sensing.wrench_hz``); samples that cannot be paired are dropped and
    counted by reason in ``counts`` (also ``paired``, ``interpolated``, ``accepted``: samples
    that entered the row builder, and ``missed_samples``: samples absent from the stream judging by
    the stamps at the driver's rate, as the builder node counts them). Yields
    :class:`~.row_builder.RowMessage`."""
    builder = SampleRows.from_profile(robot, kinds)
    use_wrench = builder.rows.use_wrench and builder.need_rows
    counts = {} if counts is None else counts
    t = np.asarray(t, dtype=float)
    keep = np.ones(t.size, dtype=bool)
    w = extra = None
    if use_wrench:
        gap = max_gap_s(robot.sensing.wrench_hz) if wrench_max_gap_s is None else wrench_max_gap_s
        pairs = pair_wrenches(t, wrenches[0], wrenches[1], gap, wrench_sample_bound(robot))
        keep = pairs.ok
        for r in pairs.reason:
            if r is not None:
                counts[r] = counts.get(r, 0) + 1
        counts["paired"] = int(keep.sum())
        counts["interpolated"] = pairs.interpolated
        w, extra = pairs.wrench[keep], pairs.extra_bound[keep]
    idx = np.flatnonzero(keep)
    tau = None if tau is None else np.asarray(tau)[idx]
    q, qd, t = np.asarray(q)[idx], np.asarray(qd)[idx], t[idx]
    for a in range(0, idx.size, STREAM_CHUNK):
        chunk = slice(a, a + STREAM_CHUNK)
        pushed = builder.push_many(t[chunk], q[chunk], qd[chunk], None if tau is None else tau[chunk],
                                   None if w is None else w[chunk], None if extra is None else extra[chunk])
        for reason, _ in pushed.drops + pushed.events:
            counts[reason] = counts.get(reason, 0) + 1
        if pushed.missed:       # stamp gaps at the driver's rate, as the builder node counts them
            counts["missed_samples"] = counts.get("missed_samples", 0) + pushed.missed
        counts["accepted"] = counts.get("accepted", 0) + pushed.accepted
        yield from pushed.messages
        if progress is not None:
            progress(t[chunk].size)


def wrenches_accepted(msgs, frame_id: str, counts: dict | None = None):
    """``(t (M,), w (M, 6))`` of ``[(log_time_ns, WrenchStamped)]`` as the builder takes them
    (:func:`~.sensor_inputs.parse_wrench`, increasing stamps); the rest counted by reason."""
    counts = {} if counts is None else counts
    order = StampOrder("wrench_stamp_not_increasing")
    ts: list[float] = []
    ws: list[np.ndarray] = []
    for _, msg in msgs:
        try:
            t, w = parse_wrench(msg, frame_id)
            if order.check(t):           # the stream restarted: pair with the new one, as live
                ts, ws = [], []
        except Rejected as r:
            counts[r.reason] = counts.get(r.reason, 0) + 1
            continue
        ts.append(t)
        ws.append(w)
    return np.array(ts), np.array(ws, dtype=float).reshape(-1, 6)


def bag_rows(path, robot, kinds, source: str = "auto", info: dict | None = None, progress=None):
    """Rows messages of a bag for an estimator consuming ``kinds``: the recorded
    /regressor_samples (``rows``), rows built from the recorded sensor streams (``samples``), or
    ``auto`` (rows when the bag has some of these kinds). ``info`` receives the source and counts."""
    info = {} if info is None else info
    topics = bags.topics_in(path)
    if source == "rows" or (source == "auto" and bags.ROWS in topics):
        if bags.ROWS not in topics:
            raise bags.BagError(f"bag '{path}' has no {bags.ROWS}")
        info["source"] = "rows"
        found = False
        for m in bags.read_rows(path):
            if m.kind in kinds:
                found = True
                yield m
                if progress is not None:
                    progress(m.samples)
        if found or source == "rows":
            return
        # auto, and none of the rows are for this estimator: build them from the samples
    info["source"] = "samples"
    if source not in ("samples", "auto"):
        raise ValueError(f"unknown source '{source}' (rows, samples or auto)")
    needs_effort = SampleRows.from_profile(robot, kinds).needs_effort
    js, wrenches = bag_samples(path, robot, robot.sensing.wrench and "momentum" not in kinds, needs_effort, info)
    counts: dict[str, int] = {}
    info["sample_counts"] = counts
    yield from rows_from_stream(robot, kinds, js.t, js.q, js.qd, js.tau, wrenches, progress=progress, counts=counts)


def bag_samples(path, robot, use_wrench: bool, needs_effort: bool, info: dict):
    """``(joint_states, wrenches)`` of a bag's sensor streams, parsed as the live nodes parse them
    (``wrenches``: ``(t_w, w)``, None unless ``use_wrench``); ``info`` receives the counts."""
    sensing = robot.sensing
    js_topic, wrench_topic = sensing.joint_states_topic, sensing.wrench_topic
    topics = bags.topics_in(path)
    if js_topic not in topics:
        raise bags.BagError(f"bag '{path}' has no {js_topic}")
    if use_wrench and wrench_topic not in topics:
        raise bags.BagError(f"bag '{path}' has no {wrench_topic}; the profile's rows need the wrench")
    streams = bags.read_topics(path, [wrench_topic] if use_wrench else [], joint_states=[js_topic])   # one pass
    js = bags.joint_states_of(streams[js_topic], empty_error=f"bag '{path}' has no usable messages on {js_topic}",
                              parser=JointStateParser(robot, need_effort=needs_effort))
    wrenches = None
    info["wrenches_dropped"] = {}
    if use_wrench:
        wrenches = wrenches_accepted(streams[wrench_topic], robot.wrench_frame_id, info["wrenches_dropped"])
        info["wrenches"] = int(wrenches[0].size)
    if needs_effort and js.tau is None:
        raise bags.BagError(f"bag '{path}': the rows need joint torques (JointState.effort)")
    info["joint_states"] = len(js)
    info["joint_states_dropped"] = js.dropped
    return js, wrenches


def momentum_wrench_from_bag(path, robot):
    """The integrated wrench rows' one-LP box (:func:`~.estimators.wrench_momentum_box.momentum_wrench_box`)
    of a bag's joint states and wrenches, each joint sample paired with the wrench interpolated at its
    stamp (unpaired samples left out; a window across them gives no rows)."""
    js, (t_w, w) = bag_samples(path, robot, True, False, {})
    pairs = pair_wrenches(js.t, t_w, w, max_gap_s(robot.sensing.wrench_hz), wrench_sample_bound(robot))
    keep = pairs.ok
    return momentum_wrench_box(robot, js.t[keep], js.q[keep], js.qd[keep], pairs.wrench[keep], pairs.extra_bound[keep])


def estimate_from_bag(path, robot, method: str, source: str = "auto", max_bound_rows: int | None = None,
                      bounds_period_s: float = BOUNDS_PERIOD_S, progress=None, keep_rows: bool = False,
                      samples_used: int | None = None) -> tuple:
    """``(intake, result, info)`` of the estimator run on the rows of :func:`bag_rows`
    (``keep_rows``: ``info["rows"]`` lists them, e.g. for residuals).

    ``samples_used``: the live estimator's count (its last recorded estimate). Rows reach it
    reliably once its subscription has matched; those the builder published before (the recorder
    may have been up earlier) it never saw. The leading rows messages beyond that count are
    skipped, so that the input is the live estimator's."""
    intake = RowIntake(robot, method, max_bound_rows, bounds_period_s)
    info: dict = {}
    kept = []
    rows = list(bag_rows(path, robot, intake.estimator.kinds, source, info, progress))
    if samples_used is not None:
        total = sum(m.samples for m in rows)
        skip = 0
        while total > samples_used and skip < len(rows):
            total -= rows[skip].samples
            skip += 1
        if total != samples_used:
            raise ValueError(f"the bag's rows cannot be the live estimator's input: {total} samples after "
                             f"skipping {skip} leading messages, the live estimate used {samples_used}")
        rows = rows[skip:]
        info["skipped_leading_messages"] = skip
    for m in rows:
        intake.add(m)
        if keep_rows:
            kept.append(m)
    result = intake.finish()
    info["messages_accepted"] = intake.accepted
    info["messages_dropped"] = intake.dropped
    if keep_rows:
        info["rows"] = kept
    return intake, result, info
