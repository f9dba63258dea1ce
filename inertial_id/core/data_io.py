"""Recorded runs for offline identification.

A **run folder** holds ``t.csv`` (seconds, one column), ``q.csv`` (rad), ``qd.csv`` (rad/s),
``tau.csv`` (N m) and optionally ``qdd.csv`` (rad/s^2): whitespace- or comma-separated, one row per
sample, one column per joint in the model's joint order (for closed chains: the actuated joints, or
all joints, of which the actuated columns are used). Errors name the file and the problem.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import filtering

REQUIRED = ("t", "q", "qd", "tau")


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
        return self.t.size

    def select(self, columns) -> "Run":
        """The run restricted to the given joint columns (e.g. the actuated ones)."""
        sel = np.asarray(columns)
        return Run(self.name, self.t, self.q[:, sel], self.qd[:, sel], self.tau[:, sel],
                   None if self.qdd is None else self.qdd[:, sel])


def _read_table(path: Path) -> np.ndarray:
    try:
        text = path.read_text()
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
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


def read_run(folder, n_joints: int | None = None) -> Run:
    """Read a run folder; checks equal lengths, finite values, increasing time, column counts."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"run folder '{folder}' does not exist")
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


@dataclass(frozen=True)
class Pipeline:
    """Seed 001's preprocessing, in its order. ``cutoff_hz=None`` skips the low-pass.

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
