"""The estimator pipeline offline: recorded samples or rows in, the same estimate and bounds out.

Two sources, in order of preference (:func:`estimate_from_bag` picks):

1. **Recorded rows** (``/regressor_samples`` in a bag recorded with the nodes running): exactly the
   messages the live estimator folded in, in the order it received them (reliable QoS, one
   publisher), so nothing depends on the sensor stream reaching a recorder and the builder alike.
2. **Recorded sensor samples** (``/joint_states`` and ``/wrench``: ``record-sim``, a driver
   recording, converted real runs): :class:`~.row_builder.SampleRows`, the class the builder node
   runs, turns them into rows; wrenches are matched by stamp within ``sync_tolerance_s``.

:class:`RowIntake` then does what the estimator node does with each message (kind and column
checks, :func:`~.estimators.factory.make_estimator`), and updates the bounds every
``bounds_period_s`` of data time plus once at the end — the schedule the estimator node follows
(:class:`~.estimators.schedule.UpdateSchedule`), so the same rows give the same box.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .estimators.factory import make_estimator
from .estimators.row_checks import RowLimits
from .estimators.schedule import UpdateSchedule
from .row_builder import SampleRows

SYNC_TOLERANCE_S = 0.0005   # regressor_builder's sync_tolerance_s default
BOUNDS_PERIOD_S = 2.0       # estimator's bounds_period_s default
STREAM_CHUNK = 1000         # samples formed into rows at once (the rows do not depend on it)


def match_wrenches(t_joint, t_wrench, tolerance_s: float = SYNC_TOLERANCE_S) -> np.ndarray:
    """Index of the nearest wrench stamp for every joint stamp, -1 where none lies within tolerance."""
    t_wrench = np.asarray(t_wrench, dtype=float)
    if t_wrench.size == 0:
        return np.full(len(t_joint), -1)
    order = np.argsort(t_wrench, kind="stable")
    ts = t_wrench[order]
    k = np.clip(np.searchsorted(ts, t_joint), 1, ts.size - 1) if ts.size > 1 else np.zeros(len(t_joint), int)
    left = np.maximum(k - 1, 0)
    nearest = np.where(np.abs(ts[left] - t_joint) <= np.abs(ts[k] - t_joint), left, k)
    idx = order[nearest]
    return np.where(np.abs(t_wrench[idx] - t_joint) <= tolerance_s, idx, -1)


@dataclass
class History:
    """The estimate after every bounds update (data time ``t``)."""

    t: list = field(default_factory=list)
    estimate: list = field(default_factory=list)
    lower: list = field(default_factory=list)
    upper: list = field(default_factory=list)
    samples_used: list = field(default_factory=list)
    condition_number: list = field(default_factory=list)


class RowIntake:
    """What the estimator node does with RegressorSample messages, without a node."""

    def __init__(self, robot, method: str, max_bound_rows: int | None = None,
                 bounds_period_s: float = BOUNDS_PERIOD_S):
        self.robot = robot
        self.estimator = make_estimator(robot, method, max_bound_rows)
        self.limits = RowLimits(robot.torque_limit)
        self.schedule = UpdateSchedule(bounds_period_s)
        self.dropped: dict[str, int] = {}
        self.accepted = 0
        self.history = History()
        self.last_t = None

    def _drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def add(self, m) -> None:
        est = self.estimator
        if m.kind not in est.kinds:
            return
        if list(m.parameter_names) != est.column_names:
            return self._drop("parameter_names")
        rows = m.b.size
        bad = self.limits.rejection(m.kind, len(m.parameter_names), rows, m.samples, m.A.ravel(), m.b,
                                    m.noise_bound, m.noise_sigma)
        if bad:
            return self._drop(bad[0])
        kinematics = None
        if est.needs_kinematics:
            if m.kinematics is None or m.kinematics.size != 2 * rows or not np.all(np.isfinite(m.kinematics)):
                return self._drop("pmd_needs_wrench_kinematics")
            kinematics = m.kinematics
        est.add(m.kind, m.A, m.b, m.noise_bound, m.noise_sigma, int(m.samples), kinematics)
        self.accepted += 1
        self.last_t = m.t
        if self.schedule.due(m.t):
            self.update(m.t)

    def update(self, t: float) -> None:
        self.estimator.update_bounds()
        r = self.estimator.result()
        h = self.history
        h.t.append(t)
        h.estimate.append(r.estimate)
        h.lower.append(r.lower)
        h.upper.append(r.upper)
        h.samples_used.append(r.samples_used)
        h.condition_number.append(r.condition_number)

    def finish(self):
        """Final bounds update over everything received; the estimator's result."""
        self.update(self.last_t if self.last_t is not None else 0.0)
        return self.estimator.result()


def rows_from_stream(robot, kinds, t, q, qd, tau, wrenches=None, sync_tolerance_s: float = SYNC_TOLERANCE_S,
                     progress=None):
    """Rows messages from a recorded stream (arrays in profile joint order, ``wrenches`` as
    ``(t_w, w)`` when the profile uses wrench rows). Samples without a wrench are skipped, as the
    builder drops them. Yields :class:`~.row_builder.RowMessage`."""
    builder = SampleRows.from_profile(robot, kinds)
    use_wrench = builder.rows.use_wrench and builder.need_rows
    t = np.asarray(t, dtype=float)
    # the builder drops stamps that do not increase, and samples without a wrench
    keep = t > np.maximum.accumulate(np.concatenate([[-np.inf], t[:-1]]))
    w = None
    if use_wrench:
        match = match_wrenches(t, wrenches[0], sync_tolerance_s)
        keep &= match >= 0
        w = np.asarray(wrenches[1])[match[keep]]
    idx = np.flatnonzero(keep)
    tau = None if tau is None else np.asarray(tau)[idx]
    q, qd, t = np.asarray(q)[idx], np.asarray(qd)[idx], t[idx]
    for a in range(0, idx.size, STREAM_CHUNK):
        chunk = slice(a, a + STREAM_CHUNK)
        yield from builder.push_many(t[chunk], q[chunk], qd[chunk], None if tau is None else tau[chunk],
                                     None if w is None else w[chunk]).messages
        if progress is not None:
            progress(t[chunk].size)


def bag_rows(path, robot, kinds, source: str = "auto", info: dict | None = None, progress=None):
    """Rows messages of a bag for an estimator consuming ``kinds``: the recorded
    /regressor_samples (``rows``), rows built from the recorded sensor streams (``samples``), or
    ``auto`` (rows when the bag has some of these kinds). ``info`` receives the source and counts."""
    from . import bags
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
    sensing = robot.sensing
    js_topic, wrench_topic = sensing["joint_states_topic"], sensing["wrench_topic"]
    if js_topic not in topics:
        raise bags.BagError(f"bag '{path}' has no {js_topic}")
    use_wrench = sensing["wrench"] and "momentum" not in kinds
    if use_wrench and wrench_topic not in topics:
        raise bags.BagError(f"bag '{path}' has no {wrench_topic}; the profile's rows need the wrench")
    streams = bags.read_topics(path, [js_topic, wrench_topic] if use_wrench else [js_topic])   # one pass
    js = bags.joint_states_of(streams[js_topic], robot.joint_names,
                              f"bag '{path}' has no usable messages on {js_topic}")
    wrenches = None
    if use_wrench:
        t_w, frames, w = bags.wrenches_of(streams[wrench_topic])
        ok = np.array([f == robot.wrench_frame_id for f in frames], dtype=bool)
        wrenches = (t_w[ok], w[ok])
        info["wrenches_wrong_frame"] = int((~ok).sum())
    if "momentum" in kinds and js.tau is None:
        raise bags.BagError(f"bag '{path}': momentum rows need joint torques (JointState.effort)")
    info["joint_states"] = len(js)
    info["joint_states_dropped"] = js.dropped
    yield from rows_from_stream(robot, kinds, js.t, js.q, js.qd, js.tau, wrenches, progress=progress)


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
