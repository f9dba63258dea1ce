"""Fit the robot calibration from recordings without payload, and measure its remaining error.

Per joint ``j`` every momentum window (:class:`~..momentum.MomentumWindows`, the rows the payload
estimator uses) gives one equation, with the nominal link inertials moved to the right side::

    s_j U_j - (link part)_j = Ia_j dqd_j + Fc_j sum(sign qd_j dt) + Fv_j sum(qd_j dt) + beta_{j,run} sum(dt) + r

``s_j = ±1`` the torque sign of the logged effort relative to the rigid-body model, ``beta`` a
torque offset of each run (a nuisance: it drifts from run to run), ``r`` the remaining model error
(link inertials, friction shape, sensor errors, the forward-Euler sum). ``Fc, Fv, Ia`` are shared by
all runs (least squares); the error bound of a window length is the largest ``|r|`` over the runs,
each run with its own best (minimax) offset, times the safety factor (:func:`.build.calibrate`):
the estimator gets the offset as an unknown too, so that is the error it must cover. Windows
touching a velocity-limit plateau are left out (:mod:`.plateaus`) and counted.

The logged effort may lag the logged states (a filter in the drive's torque channel): ``U`` is
formed from the effort ``d_j`` later (:mod:`..effort_alignment`), ``d_j`` per joint the delay on a
grid that gives the smallest remaining error (RMS, each run with its own offset) with the friction
refitted at each delay; on the real Gen3 80-140 ms, halving the held-out error of joints 1 and 5-7.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data_io import Run, split_at_gaps
from ..momentum import MomentumWindows, robot_parameters
from .plateaus import PlateauDetector

TERMS = ("Fc", "Fv", "Ia")


@dataclass
class JointWindows:
    """Window equations of one run, per joint: ``y`` (windows, nv) the measured side before the
    sign, ``link`` the nominal link part, ``X`` (windows, nv, 3) the [Fc, Fv, Ia] columns,
    ``duration`` (windows,) the beta column; ``excluded`` windows dropped at plateaus."""

    run: str
    y: np.ndarray
    link: np.ndarray
    X: np.ndarray
    duration: np.ndarray
    excluded: int

    @property
    def windows(self) -> int:
        """Number of windows."""
        return self.duration.size


def joint_windows(robot, run: Run, window: int, detector: PlateauDetector | None, effort_delay_s=None) -> JointWindows:
    """The window equations of ``run`` (each stretch between time gaps on its own), the effort taken
    ``effort_delay_s`` (nv,) after each state (None: at its stamp)."""
    n, nb = robot.nv, 10 * (robot.model.njoints - 1)
    nominal = robot_parameters(robot.model)[:nb]
    parts, excluded = [], 0
    for seg in split_at_gaps(run):
        if seg.n_samples <= window:
            continue
        mw = MomentumWindows(robot, window, 0.0, 0.0, 0.0, exclude=detector, effort_delay_s=effort_delay_s)
        mw.add_samples(seg.t, seg.q, seg.qd, seg.tau)
        rows = mw.take_rows()
        excluded += mw.excluded_windows
        if rows.rows:
            parts.append(rows)
    if not parts:
        return JointWindows(run.name, np.zeros((0, n)), np.zeros((0, n)), np.zeros((0, n, 3)), np.zeros(0), excluded)
    Yr = np.vstack([p.Y_r for p in parts]).reshape(-1, n, parts[0].Y_r.shape[1])
    U = np.concatenate([p.U for p in parts]).reshape(-1, n)
    idx = np.arange(n)
    fric = Yr[:, idx, nb:].reshape(-1, n, n, 4)[:, idx, idx, :]      # each joint's own [Fc, Fv, Ia, beta]
    duration = fric[:, 0, 3]
    return JointWindows(run.name, U, Yr[:, idx, :nb] @ nominal, fric[:, :, :3], duration, excluded)


@dataclass
class JointFit:
    """``sign`` (nv,), ``friction`` (nv, 3) [Fc, Fv, Ia]; per run: ``offsets`` (runs, nv) minimax
    offsets and ``half_range`` (runs, nv) the largest |r| with that offset."""

    sign: np.ndarray
    friction: np.ndarray
    offsets: np.ndarray
    half_range: np.ndarray


def _design(data: list[JointWindows], j: int, terms: tuple[int, ...]):
    """Columns: the chosen friction terms, then one offset column per run."""
    total = sum(d.windows for d in data)
    A = np.zeros((total, len(terms) + len(data)))
    row = 0
    for k, d in enumerate(data):
        A[row:row + d.windows, :len(terms)] = d.X[:, j, list(terms)]
        A[row:row + d.windows, len(terms) + k] = d.duration
        row += d.windows
    return A


def fit_friction(data: list[JointWindows], terms=(0, 1, 2), sign=None) -> JointFit:
    """Least-squares friction (the ``terms`` of [Fc, Fv, Ia]; others zero) and per-run offsets;
    ``sign`` None: chosen per joint as the one that fits better among those giving a physical drive
    (viscous friction and rotor inertia not negative: with a link part far below the friction, as
    on a wrist joint, a flipped sign with negative friction can fit slightly better)."""
    n = data[0].y.shape[1]
    signs = np.ones(n) if sign is None else np.asarray(sign, dtype=float)
    friction = np.zeros((n, 3))
    for j in range(n):
        A = _design(data, j, tuple(terms))
        best = None
        for s in ((1.0, -1.0) if sign is None else (signs[j],)):
            b = np.concatenate([s * d.y[:, j] - d.link[:, j] for d in data])
            x, *_ = np.linalg.lstsq(A, b, rcond=None)
            cost = float(np.sum((A @ x - b) ** 2))
            physical = all(x[k] >= 0 for k, t in enumerate(terms) if t in (1, 2))
            if sign is None and not physical:
                cost = np.inf
            if best is None or cost < best[0]:
                best = (cost, s, x)
        _, signs[j], x = best
        friction[j, list(terms)] = x[:len(terms)]
    offsets, half = residual_ranges(data, signs, friction)
    return JointFit(signs, friction, offsets, half)


def residuals(d: JointWindows, sign, friction) -> np.ndarray:
    """(windows, nv) remaining error before the offset, N m s."""
    return sign * d.y - d.link - np.einsum("wjk,jk->wj", d.X, friction)


def residual_ranges(data: list[JointWindows], sign, friction) -> tuple[np.ndarray, np.ndarray]:
    """Per run and joint: the minimax offset (N m) and the largest |r| left with it (N m s)."""
    offsets, half = [], []
    for d in data:
        r = residuals(d, sign, friction)
        per_s = r / d.duration[:, None]
        beta = 0.5 * (per_s.max(axis=0) + per_s.min(axis=0)) if d.windows else np.zeros(r.shape[1])
        offsets.append(beta)
        half.append(np.abs(r - d.duration[:, None] * beta).max(axis=0) if d.windows else np.zeros(r.shape[1]))
    return np.array(offsets), np.array(half)


def rms_with_offsets(data: list[JointWindows], sign, friction) -> np.ndarray:
    """(nv,) RMS of the remaining error per joint with each run's least-squares offset, as a torque
    (N m: divided by the window duration)."""
    out = []
    for d in data:
        r = residuals(d, sign, friction) / d.duration[:, None]
        out.append(r - r.mean(axis=0))
    r = np.vstack(out)
    return np.sqrt(np.mean(r ** 2, axis=0))


def term_support(data: list[JointWindows], sign) -> dict:
    """Held-out RMS (leave one run out over ``data``) with all of [Fc, Fv, Ia] and without each:
    a term is supported on a joint when leaving it out raises the held-out error by more than 2 %."""
    if len(data) < 2:
        return {}
    def held_out(terms):
        rms = []
        for k in range(len(data)):
            fit = fit_friction([d for i, d in enumerate(data) if i != k], terms, sign)
            rms.append(rms_with_offsets([data[k]], fit.sign, fit.friction))
        return np.sqrt(np.mean(np.square(rms), axis=0))
    full = held_out((0, 1, 2))
    out = {"held_out_rms_Nm": full.tolist()}
    for t, name in enumerate(TERMS):
        without = held_out(tuple(k for k in range(3) if k != t))
        out[f"held_out_rms_without_{name}_Nm"] = without.tolist()
        out[f"{name}_supported"] = (without > 1.02 * full).tolist()
    return out


def internal_exceedance(data: list[JointWindows], sign) -> np.ndarray:
    """(nv,) largest ratio, over the runs, of a run's remaining error (friction fitted on the other
    runs) to the others' own largest error: how far new data went beyond the calibration here."""
    ratios = []
    for k in range(len(data)):
        rest = [d for i, d in enumerate(data) if i != k]
        fit = fit_friction(rest, sign=sign)
        _, held = residual_ranges([data[k]], fit.sign, fit.friction)
        ratios.append(held[0] / np.maximum(fit.half_range.max(axis=0), 1e-12))
    return np.max(ratios, axis=0) if ratios else np.ones(data[0].y.shape[1])


@dataclass
class DelayFit:
    """``delay_s`` (nv,) the chosen effort delay per joint; ``grid_s`` the delays tried and
    ``rms_Nm`` (grid, nv) the remaining error at each."""

    delay_s: np.ndarray
    grid_s: np.ndarray
    rms_Nm: np.ndarray


def fit_effort_delay(robot, runs: list[Run], window: int, detector: PlateauDetector | None, grid_s) -> DelayFit:
    """Per joint, the delay of ``grid_s`` at which friction and offsets fit the runs best (a joint's
    rows use only its own effort, so the joints are chosen independently)."""
    grid = np.asarray(grid_s, dtype=float)
    n = robot.nv
    rms = np.empty((grid.size, n))
    for k, d in enumerate(grid):
        data = [joint_windows(robot, r, window, detector, np.full(n, d)) for r in runs]
        fit = fit_friction(data)
        rms[k] = rms_with_offsets(data, fit.sign, fit.friction)
    return DelayFit(grid[np.argmin(rms, axis=0)], grid, rms)
