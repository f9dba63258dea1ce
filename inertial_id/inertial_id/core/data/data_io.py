"""Recorded runs for offline identification.

A **run folder** holds ``t.csv`` (seconds, one column), ``q.csv`` (rad), ``qd.csv`` (rad/s),
``tau.csv`` (N m) and optionally ``qdd.csv`` (rad/s^2): whitespace- or comma-separated, one row per
sample, one column per joint in the model's joint order (for closed chains: the actuated joints, or
all joints, of which the actuated columns are used). Errors name the file and the problem.

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..signals import filtering
from .topics import JOINT_ACCELERATIONS, JOINT_STATES

REQUIRED = ("t", "q", "qd", "tau")
# Largest magnitude a physical reading of each file can have (rad, rad/s, rad/s^2, N m): beyond it
# the file holds a unit or export fault, and squaring such values overflows every fit.
PLAUSIBLE_MAGNITUDE = {"q": 1e4, "qd": 1e3, "qdd": 1e6, "tau": 1e6}
# Fewest samples a run needs: the 4th-order central difference of qd uses five.
MIN_SAMPLES = 5


class DataError(ValueError):
    """A run that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Run:
    """Samples of one recording: ``t`` (N,), ``q``, ``qd``, ``tau`` and optional ``qdd`` (N, n)."""

    name: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    qdd: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """Number of samples N."""
        return self.t.size

    def select(self, columns) -> Run:
        """The run restricted to the given joint columns (e.g. the actuated ones)."""
        sel = np.asarray(columns)
        return Run(self.name, self.t, self.q[:, sel], self.qd[:, sel], self.tau[:, sel],
                   None if self.qdd is None else self.qdd[:, sel])


def _read_table(path: Path) -> np.ndarray:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a text table (binary, or an encoding other than UTF-8/ASCII)") from None
    if "\0" in text:
        raise DataError(f"{path}: not a text table (contains NUL bytes)")
    rows = [line.replace(",", " ").split() for line in text.splitlines() if line.strip()]
    if not rows:
        raise DataError(f"{path}: empty file")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        bad = next(i for i, r in enumerate(rows) if len(r) != len(rows[0]))
        raise DataError(f"{path}: row {bad + 1} has {len(rows[bad])} columns, row 1 has {len(rows[0])}")
    try:
        return np.array(rows, dtype=float)
    except ValueError as exc:
        raise DataError(f"{path}: not numeric ({exc})") from None


def run_tables(path, topic: str = JOINT_STATES) -> dict:
    """The streams of a bag as the tables of a run folder (above): ``t`` (header stamps,
    one column), ``q``, ``qd``, ``tau`` in the recorded joint order and, when the bag has
    ``/joint_accelerations`` (one message per joint state), ``qdd``."""
    from .bags import BagError, read_float_arrays, read_joint_states, topics_in  # optional: rosbags (~0.3 s), for bags only
    try:
        js = read_joint_states(path, topic=topic)
        if js.dropped:
            raise DataError(f"bag '{path}': {topic} has messages that cannot be used: "
                            + ", ".join(f"{k} {v}" for k, v in js.dropped.items()))
        if js.tau is None:
            raise DataError(f"bag '{path}': {topic} has no effort (joint torques)")
        tables = {"t": js.t[:, None], "q": js.q, "qd": js.qd, "tau": js.tau}
        if JOINT_ACCELERATIONS in topics_in(path):
            _, qdd = read_float_arrays(path, JOINT_ACCELERATIONS)
            if qdd.shape != js.q.shape:
                raise DataError(f"bag '{path}': {JOINT_ACCELERATIONS} has {qdd.shape[0]} messages of "
                                f"{qdd.shape[1] if qdd.ndim == 2 else 0} values, {topic} {js.q.shape}")
            tables["qdd"] = qdd
    except BagError as exc:
        raise DataError(str(exc)) from None
    return tables


def read_run(folder, n_joints: int | None = None) -> Run:
    """Read a run folder (or a rosbag2 folder: :func:`run_tables`); checks equal lengths,
    finite values, increasing time, column counts."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"run folder '{folder}' does not exist")
    if (folder / "metadata.yaml").is_file():     # a rosbag2 recording: its streams, same checks below
        tables = run_tables(folder)
        names = tuple(tables)
    else:
        missing = [f"{k}.csv" for k in REQUIRED if not (folder / f"{k}.csv").exists()]
        if missing:
            raise DataError(f"run folder '{folder}' lacks {', '.join(missing)}")
        names = REQUIRED + (("qdd",) if (folder / "qdd.csv").exists() else ())
        tables = {k: _read_table(folder / f"{k}.csv") for k in names}
    lengths = {k: v.shape[0] for k, v in tables.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(f"run '{folder}': files have different numbers of rows: "
                        + ", ".join(f"{k}.csv {n}" for k, n in lengths.items()))
    if tables["t"].shape[1] != 1:
        raise DataError(f"{folder / 't.csv'}: expected one column of time stamps, got {tables['t'].shape[1]}")
    width = tables["q"].shape[1] if n_joints is None else n_joints
    for k in names[1:]:
        if tables[k].shape[1] != width:
            raise DataError(f"{folder / (k + '.csv')}: {tables[k].shape[1]} columns, expected {width} "
                            "(one per joint in the model's joint order)")
    for k, v in tables.items():
        bad = np.flatnonzero(~np.all(np.isfinite(v), axis=1))
        if bad.size:
            raise DataError(f"{folder / (k + '.csv')}: {bad.size} rows with NaN/Inf (first: row {bad[0] + 1})")
    for k, limit in PLAUSIBLE_MAGNITUDE.items():
        if k in tables and np.any(np.abs(tables[k]) > limit):
            row = int(np.flatnonzero(np.any(np.abs(tables[k]) > limit, axis=1))[0])
            raise DataError(f"{folder / (k + '.csv')}: |value| above {limit:g} at row {row + 1}, not a "
                            "physical reading in SI units")
    if lengths["t"] < MIN_SAMPLES:
        raise DataError(f"run '{folder}': {lengths['t']} samples, at least {MIN_SAMPLES} needed")
    t = tables["t"][:, 0]
    if np.any(np.diff(t) <= 0):
        k = int(np.flatnonzero(np.diff(t) <= 0)[0])
        raise DataError(f"{folder / 't.csv'}: time stamps not strictly increasing at row {k + 2}")
    return Run(folder.name, t, tables["q"], tables["qd"], tables["tau"], tables.get("qdd"))


def write_run(folder, run: Run) -> None:
    """Write a run folder (whitespace-separated), the inverse of :func:`read_run`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    np.savetxt(folder / "t.csv", run.t[:, None])
    for k in ("q", "qd", "tau", "qdd"):
        if getattr(run, k) is not None:
            np.savetxt(folder / f"{k}.csv", getattr(run, k))


# A step longer than this many median sample periods is a gap in the recording (dropped packets,
# a paused logger): the stretches on either side are processed as separate segments.
GAP_FACTOR = 5.0


def segment_bounds(t, factor: float = GAP_FACTOR) -> list[tuple[int, int]]:
    """``[start, end)`` sample ranges of the stretches between gaps of the time stamps ``t``."""
    t = np.asarray(t, dtype=float)
    if t.size < 2:
        return [(0, t.size)]
    dt = np.diff(t)
    cuts = (np.flatnonzero(dt > factor * np.median(dt)) + 1).tolist()
    return list(zip([0, *cuts], [*cuts, t.size]))


def split_at_gaps(run: Run, factor: float = GAP_FACTOR) -> list[Run]:
    """The run's stretches between gaps, as runs of the same name."""
    def part(x, s, e):
        return None if x is None else x[s:e]
    return [Run(run.name, run.t[s:e], run.q[s:e], run.qd[s:e], run.tau[s:e], part(run.qdd, s, e))
            for s, e in segment_bounds(run.t, factor)]


def concatenate(name: str, parts) -> Run:
    """One run from consecutive segments (all with or all without ``qdd``)."""
    parts = list(parts)
    qdd = None if parts[0].qdd is None else np.concatenate([p.qdd for p in parts])
    t, q, qd, tau = (np.concatenate([getattr(p, k) for p in parts]) for k in ("t", "q", "qd", "tau"))
    return Run(name, t, q, qd, tau, qdd)


@dataclass(frozen=True)
class Pipeline:
    """The whole-robot identification's preprocessing (Zhang, Haugk & Vasudevan), in its order. ``cutoff_hz=None`` skips the low-pass.

    1. ``qdd`` by the 4th-order central difference of ``qd`` when the run has none (or
       ``differentiate`` forces it);
    2. zero-phase Butterworth low-pass (order ``order``, applied forward and backward) on ``qd``,
       ``qdd`` and ``tau``;
    3. keep every ``downsample``-th sample.
    (The passive joints are completed from the actuated ones afterwards, when rows are built.)
    """

    cutoff_hz: float | None = None
    order: int = 4
    downsample: int = 1
    differentiate: bool = False

    def apply(self, run: Run) -> Run:
        """The processed run: each stretch between gaps (:func:`segment_bounds`) on its own, so that
        no derivative or filter reaches across a gap; stretches too short to differentiate or
        filter are left out (:meth:`segments` says which)."""
        kept = [p for p in self.segments(run) if p is not None]
        if not kept:
            raise DataError(f"run '{run.name}': no stretch between time gaps is long enough to "
                            f"{'filter' if self.cutoff_hz is not None else 'differentiate'}")
        return concatenate(run.name, kept)

    def min_samples(self, run: Run) -> int:
        """Fewest samples a stretch needs: 5 for the central difference, more than scipy's largest
        padding (``3 (2 n_sections + 1)``) for the forward-backward filter, else one."""
        need = 1
        if run.qdd is None or self.differentiate:
            need = 5
        if self.cutoff_hz is not None:
            need = max(need, 3 * (2 * ((self.order + 1) // 2) + 1) + 1)
        return need

    def segments(self, run: Run) -> list:
        """Each stretch between gaps processed, or ``None`` where it is too short to process."""
        return [self._segment(part) for part in split_at_gaps(run)]

    def _segment(self, run: Run):
        if run.n_samples < self.min_samples(run):
            return None
        qdd = run.qdd
        if qdd is None or self.differentiate:
            qdd = filtering.central_difference(run.qd, run.t)
        qd, tau = run.qd, run.tau
        if self.cutoff_hz is not None:
            fs = 1.0 / np.mean(np.diff(run.t))
            try:
                qd, qdd, tau = (filtering.zero_phase_lowpass(x, fs, self.cutoff_hz, self.order)
                                for x in (qd, qdd, tau))
            except ValueError as exc:
                raise DataError(f"run '{run.name}': {exc}") from None
        k = self.downsample
        return Run(run.name, filtering.downsample(run.t, k), filtering.downsample(run.q, k),
                   filtering.downsample(qd, k), filtering.downsample(tau, k), filtering.downsample(qdd, k))
