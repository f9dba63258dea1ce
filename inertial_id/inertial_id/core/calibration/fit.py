"""Fit the robot calibration from recordings without payload, and measure its remaining error.

Per joint ``j`` every momentum window (:class:`~..momentum.MomentumWindows`, the rows the payload
estimator uses) gives one equation, with the nominal link inertials moved to the right side::

    s_j U_j - (link part)_j = Ia_j dqd_j + Fc_j sum(sign qd_j dt) + Fv_j sum(qd_j dt) + beta_{j,run} sum(dt) + r

``s_j = ±1`` the torque sign of the logged effort relative to the rigid-body model, ``beta`` a
torque offset of each run (a nuisance: it drifts from run to run), ``r`` the remaining model error
(link inertials, friction shape, sensor errors, the forward-Euler sum). ``Fc, Fv, Ia`` are shared by
all runs (least squares); the error bound of a window length is the largest ``|r|`` over the runs,
each run with its own best (minimax) offset, times that joint's factor (:func:`.build.calibrate`):
the estimator gets the offset as an unknown too, so that is the error it must cover. Windows
touching a velocity-limit plateau are left out (:mod:`.plateaus`) and counted.

The logged effort may lag the logged states (a filter in the drive's torque channel): ``U`` is
formed from the effort ``d_j`` later (:mod:`..effort_alignment`).

What is fitted per joint is chosen on held-out data (:func:`select_structure`): the profile's model
is sign +1, no delay and the profile's armature; a sign flip, an effort delay and an armature beyond
the profile's are features that must each pay for themselves on data the fit did not see. Coulomb
and viscous friction are always fitted, within >= 0 (a frictionless arm fits ~0). Fitting a
richer model always lowers the error on the data it was fitted to (a 300 ms delay of a periodic
motion can pass for a sign flip, a delay trades against rotor inertia and viscous friction), so
only held-out error can tell structure from coincidence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from itertools import product

import numpy as np

from ..data.data_io import Run, split_at_gaps
from ..robot.params import robot_parameters
from ..signals.momentum import MomentumWindows
from .plateaus import PlateauDetector

TERMS = ("Fc", "Fv", "Ia")
FEATURES = ("sign", "delay", *TERMS)
# The selection rule (select_structure): a model with extra features is kept over a simpler one only
# when its held-out RMS is below the simpler one's times the product of (1 - margin) over the extra
# features. A real flip leaves twice the rigid-body torque in the residual of the unflipped model
# (held-out error falls by far more than half), so a quarter separates it from a coincidence with
# room to spare. A delay is a parameter searched over a grid of 31 values, more freedom than a
# single linear term, so it must earn more than the armature; on the real Gen3 it lowers the held-out
# error by 15-70 %. An armature beyond the profile's is a single linear term: 5 %, about the relative
# standard error of an RMS over the ~100-200 windows of a 10-15 s run.
FEATURE_MARGIN = {"sign": 0.25, "delay": 0.10, "Ia": 0.05}
# Coulomb and viscous friction are fitted on every joint, within >= 0, never selected away: every
# drive has them (a frictionless arm fits ~0), and the row bounds rest on the largest error, which an
# RMS margin does not see: dropping a Coulomb term whose RMS gain was 4.7 % raised a held-out real
# Gen3 run's largest error from 2.5x to 3.0x the calibration's (joint 7), beyond the safety factor.
ALWAYS_FITTED = ("Fc", "Fv")
# A single calibration run is cut into this many consecutive blocks for the held-out comparison
# (each block with its own offset, like a run).
SINGLE_RUN_BLOCKS = 3


@dataclass
class JointWindows:
    """Window equations of one run, per joint: ``y`` (windows, nv) the measured side before the
    sign, ``link`` the nominal link part (link inertials only, no armature), ``X`` (windows, nv, 3)
    the [Fc, Fv, Ia] columns, ``duration`` (windows,) the beta column; ``excluded`` windows dropped
    at plateaus; ``close_t`` (windows,) each window's closing time; ``y_grid`` (delays, windows, nv)
    the measured side with the effort taken each delay of a grid later (None unless asked for);
    ``peak_tau_Nm`` (nv,) the largest |effort| the windows integrated (None for a subset of them)."""

    run: str
    y: np.ndarray
    link: np.ndarray
    X: np.ndarray
    duration: np.ndarray
    excluded: int
    close_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    y_grid: np.ndarray | None = None
    peak_tau_Nm: np.ndarray | None = None

    @property
    def windows(self) -> int:
        """Number of windows."""
        return self.duration.size

    def take(self, index) -> JointWindows:
        """The windows at ``index`` (a slice or index array), as a run of the same name."""
        return JointWindows(self.run, self.y[index], self.link[index], self.X[index], self.duration[index],
                            self.excluded, self.close_t[index], None if self.y_grid is None else self.y_grid[:, index])


def joint_windows(robot, run: Run, window: int, detector: PlateauDetector | None, effort_delay_s=None,
                  delay_grid_s=None) -> JointWindows:
    """The window equations of ``run`` (each stretch between time gaps on its own), the effort taken
    ``effort_delay_s`` (nv,) after each state (None: at its stamp). ``delay_grid_s``: also the
    measured side with the effort taken each of these delays later (``y_grid``), on the same
    windows; every delay of the grid must be at most the largest of ``effort_delay_s``, whose
    alignment decides which windows have their effort in the run."""
    n, nb = robot.nv, 10 * (robot.model.njoints - 1)
    nominal = robot_parameters(robot.model)[:nb]
    grid = None if delay_grid_s is None else np.asarray(delay_grid_s, dtype=float)
    if grid is not None and grid.max() > (0.0 if effort_delay_s is None else np.max(effort_delay_s)) + 1e-12:
        raise ValueError("the delay grid goes beyond the delay the windows were aligned for")
    parts, excluded, closes, grids, peak = [], 0, [], [], np.zeros(n)
    for seg in split_at_gaps(run):
        if seg.n_samples <= window:
            continue
        mw = MomentumWindows(robot, window, 0.0, 0.0, 0.0, exclude=detector, effort_delay_s=effort_delay_s)
        mw.add_samples(seg.t, seg.q, seg.qd, seg.tau)
        taken = mw.take_windows()
        excluded += mw.excluded_windows
        peak = np.maximum(peak, mw.peak_tau_Nm)
        if taken:
            parts += [w for _, w in taken]
            close_t = np.array([c for c, _ in taken])
            closes.append(close_t)
            if grid is not None:
                grids.append(_delayed_effort_sums(seg, close_t, window, grid))
    if not parts:
        empty = np.zeros((0, n))
        return JointWindows(run.name, empty, empty, np.zeros((0, n, 3)), np.zeros(0), excluded, np.zeros(0),
                            None if grid is None else np.zeros((grid.size, 0, n)), peak)
    Yr = np.vstack([p.Y_r for p in parts]).reshape(-1, n, parts[0].Y_r.shape[1])
    U = np.concatenate([p.U for p in parts]).reshape(-1, n)
    idx = np.arange(n)
    fric = Yr[:, idx, nb:].reshape(-1, n, n, 4)[:, idx, idx, :]      # each joint's own [Fc, Fv, Ia, beta]
    duration = fric[:, 0, 3]
    return JointWindows(run.name, U, Yr[:, idx, :nb] @ nominal, fric[:, :, :3], duration, excluded,
                        np.concatenate(closes), None if grid is None else np.concatenate(grids, axis=1), peak)


def _delayed_effort_sums(seg: Run, close_t, window: int, grid) -> np.ndarray:
    """(delays, windows, nv): ``sum_k tau(t_k + delay) dt_k`` over each window's steps, as
    :class:`~..momentum.MomentumWindows` forms ``U`` with :class:`~..effort_alignment.EffortAlignment`
    (a window closing at sample ``c`` integrates samples ``c - window .. c - 1``, each held to the
    next stamp; the effort interpolated linearly in the stretch). One pass over the states serves
    every delay, so the delays are compared on the same windows."""
    end = np.searchsorted(seg.t, close_t)
    steps = end[:, None] - window + np.arange(window)          # (windows, window) sample indices
    t_k, dt_k = seg.t[steps], seg.t[steps + 1] - seg.t[steps]
    out = np.empty((grid.size, close_t.size, seg.tau.shape[1]))
    for g, d in enumerate(grid):
        for j in range(seg.tau.shape[1]):
            out[g, :, j] = np.sum(np.interp(t_k + d, seg.t, seg.tau[:, j]) * dt_k, axis=1)
    return out


@dataclass
class JointFit:
    """``sign`` (nv,), ``friction`` (nv, 3) [Fc, Fv, Ia]; per run: ``offsets`` (runs, nv) minimax
    offsets and ``half_range`` (runs, nv) the largest |r| with that offset."""

    sign: np.ndarray
    friction: np.ndarray
    offsets: np.ndarray
    half_range: np.ndarray


def profile_friction(robot) -> np.ndarray:
    """(nv, 3) the simplest model's [Fc, Fv, Ia]: no Coulomb or viscous friction, the profile's
    armature (the model's, which RNEA and ABA include)."""
    out = np.zeros((robot.nv, 3))
    out[:, 2] = robot.model.armature
    return out


def fit_friction(data: list[JointWindows], sign, terms=None, default=None) -> JointFit:
    """Least-squares friction and per-run offsets with the torque ``sign`` (nv,): the terms of
    [Fc, Fv, Ia] marked in ``terms`` ((nv, 3) bool; None: all) are fitted, within their physical
    range (:func:`_fit_terms`), the others held at ``default`` ((nv, 3); None: zeros)."""
    n = data[0].y.shape[1]
    sign = np.asarray(sign, dtype=float)
    terms = np.ones((n, 3), dtype=bool) if terms is None else np.asarray(terms, dtype=bool)
    default = np.zeros((n, 3)) if default is None else np.asarray(default, dtype=float)
    friction = np.empty((n, 3))
    for j in range(n):
        measured = sign[j] * np.concatenate([d.y[:, j] for d in data])
        fitted, _ = _fit_terms(data, j, np.flatnonzero(terms[j]), default[j], measured[None, :])
        friction[j] = fitted[0]
    offsets, half = residual_ranges(data, sign, friction)
    return JointFit(sign.copy(), friction, offsets, half)


def _fit_terms(data: list[JointWindows], j: int, free, default_j, measured) -> tuple[np.ndarray, np.ndarray]:
    """Joint ``j``'s friction terms ``free`` (indices into [Fc, Fv, Ia]) and one offset per run by
    least squares subject to Fc, Fv, Ia >= 0 (the others at ``default_j``), for every row of
    ``measured`` ((candidates, windows): the signed effort sums) at once: ``(friction (candidates,
    3), squared error (candidates,))``.

    Bounded exactly: the optimum has some set of terms at their bound (0) and the others at the
    unconstrained optimum with those held; every such set is solved (at most 8) and the best one
    that respects the bounds kept. Refusing a fit that goes out of range instead would throw away
    exactly the case of a true value on the bound: an arm whose torque sensor sits after the gear
    (the rotor inertia in no logged torque) fits an armature of -0.001 as often as +0.001."""
    free = [int(k) for k in free]
    m = measured.shape[0]
    best_sse = np.full(m, np.inf)
    best = np.tile(np.asarray(default_j, dtype=float), (m, 1))
    for clamped in product((False, True), repeat=len(free)):
        fitted = [k for k, c in zip(free, clamped) if not c]
        held = np.array(default_j, dtype=float)
        held[free] = 0.0            # clamped terms sit on their bound; fitted ones move to the solve
        A = _design(data, j, fitted)
        rest = np.concatenate([d.link[:, j] + d.X[:, j] @ held for d in data])
        B = (measured - rest).T
        x = _least_squares(A, B)
        sse = np.sum((A @ x - B) ** 2, axis=0)
        ok = np.all(x[:len(fitted)] >= 0, axis=0) & (sse < best_sse)
        if ok.any():
            best_sse[ok] = sse[ok]
            best[ok] = held
            if fitted:
                best[np.ix_(ok, fitted)] = x[:len(fitted), ok].T
    return best, best_sse


def _least_squares(A, B) -> np.ndarray:
    """Minimum-norm least-squares solution of ``A x = B`` for every column of ``B``, through the
    normal equations of the column-scaled ``A`` (a handful of columns: friction terms and offsets).
    LAPACK's least squares with many right-hand sides took 0.3 s per call on a loaded two-core
    machine (threads contending) against 0.2 ms here; near-collinear columns (a joint that never
    reverses: Fc against its offset) are cut where ``A``'s singular values fall below 1e-7 of the
    largest (the solution is then the shortest in the scaled columns; the fit is the same)."""
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    As = A / norms
    return (np.linalg.pinv(As.T @ As, rcond=1e-14, hermitian=True) @ (As.T @ B)) / norms[:, None]


def _design(data: list[JointWindows], j: int, free) -> np.ndarray:
    """Columns: the fitted friction terms of joint ``j``, then one offset column per run."""
    total = sum(d.windows for d in data)
    A = np.zeros((total, len(free) + len(data)))
    row = 0
    for k, d in enumerate(data):
        A[row:row + d.windows, :len(free)] = d.X[:, j, free]
        A[row:row + d.windows, len(free) + k] = d.duration
        row += d.windows
    return A


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


def internal_exceedance(data: list[JointWindows], sign, terms=None, default=None, others=None) -> Any:
    """(nv,) largest ratio, over the runs, of a run's remaining error (friction fitted on the other
    runs, the same terms) to the others' own largest error: how far new data went beyond the
    calibration here. ``others``: window lengths -> the same runs' windows of that length; then a
    dict length -> (nv,) ratio, the friction still fitted on ``data`` (as :func:`~.build.calibrate`
    fits it) and the errors compared on each length's windows."""
    sets = {None: data} if others is None else others
    ratios: dict[Any, list[np.ndarray]] = {h: [] for h in sets}
    for k in range(len(data)):
        rest = [d for i, d in enumerate(data) if i != k]
        fit = fit_friction(rest, sign, terms, default)
        for h, runs in sets.items():
            _, half = residual_ranges(runs, fit.sign, fit.friction)
            seen = np.delete(half, k, axis=0).max(axis=0)
            ratios[h].append(half[k] / np.maximum(seen, 1e-12))
    out = {h: np.max(r, axis=0) if r else np.ones(data[0].y.shape[1]) for h, r in ratios.items()}
    return out[None] if others is None else out


# --- which structure the data support -----------------------------------------------------------

@dataclass
class Structure:
    """What :func:`select_structure` keeps per joint: ``sign`` (nv,) ±1, ``delay_s`` (nv,),
    ``terms`` (nv, 3) bool (which of [Fc, Fv, Ia] are fitted; the others stay at the profile's
    value), and the evidence: ``held_out_rms_Nm`` (nv,) of the kept structure, ``simple_rms_Nm``
    (nv,) of the profile's model, ``toggled_rms_Nm`` per feature (nv,) with that one feature
    switched (inf: that structure cannot be fitted), ``refused`` (per joint, why a better-scoring
    structure was not kept), ``train_rms_Nm`` (delays, nv) the error on all the data at each delay
    of ``grid_s`` with the kept sign and terms."""

    sign: np.ndarray
    delay_s: np.ndarray
    terms: np.ndarray
    held_out_rms_Nm: np.ndarray
    simple_rms_Nm: np.ndarray
    toggled_rms_Nm: dict
    refused: list
    grid_s: np.ndarray
    train_rms_Nm: np.ndarray
    folds: int
    keys: list = field(default_factory=list)    # per joint (fit sign, fit delay, terms): what was fitted

    def supported(self, feature: str) -> np.ndarray:
        """(nv,) bool: whether the joint keeps ``feature`` (``sign``: flipped, ``delay``: > 0)."""
        if feature == "sign":
            return self.sign < 0
        if feature == "delay":
            return self.delay_s > 0
        return self.terms[:, TERMS.index(feature)].copy()

    def report(self) -> dict:
        """The evidence as plain lists (the calibration file's ``report.term_support``)."""
        out = {"rule": selection_rule(), "folds": self.folds, "held_out_rms_Nm": self.held_out_rms_Nm.tolist(),
               "simple_model_held_out_rms_Nm": self.simple_rms_Nm.tolist(), "refused": self.refused}
        for f in FEATURES:
            out[f"{f}_supported"] = self.supported(f).tolist()
            out[f"held_out_rms_toggling_{f}_Nm"] = [None if not np.isfinite(v) else float(v)
                                                   for v in self.toggled_rms_Nm[f]]
        return out


def selection_rule() -> str:
    """The rule :func:`select_structure` applies, in words (kept in the calibration file)."""
    margins = ", ".join(f"{f} {100 * m:g} %" for f, m in FEATURE_MARGIN.items())
    return ("per joint, Fc and Fv fitted within >= 0; each structure of sign flip, effort delay and armature beyond "
            "the profile's (each fitted or at the profile's value) scored by its held-out RMS (fitted without each "
            "run in turn, or each third of a single run; the held-out part's offset its own) divided by the product "
            f"of (1 - margin) over its fitted features (margins: {margins}); the lowest score is kept unless its "
            "delay fitted on all the data is the largest tried (a delay at the search edge is not identified), "
            "else the next")


def select_structure(units: list[JointWindows], fit_units: list[JointWindows], grid_s, default) -> Structure:
    """Per joint, the torque sign, effort delay and friction terms the held-out data support.

    ``units``: the windows the held-out comparison leaves out one at a time (the runs, or blocks of
    a single run), each with ``y_grid`` at the delays ``grid_s`` (ascending, starting at 0);
    ``fit_units``: the same windows grouped by run, for the fit on all the data; ``default``
    (nv, 3): the profile's [Fc, Fv, Ia].

    Rule (:data:`FEATURE_MARGIN`): Coulomb and viscous friction are always fitted, within >= 0
    (:data:`ALWAYS_FITTED`); every combination of sign flip, effort delay and extra armature (8
    structures; all 32 with Fc, Fv switched too for the report) is fitted without each unit in
    turn and scored on the unit left out (RMS of the window error as a torque,
    the held-out unit's offset fitted to it, since the estimator treats a run's offset as unknown
    too); a fitted sign or delay is chosen on the training units only (least squares over the grid,
    friction refitted at each candidate, Fc, Fv and the armature within >= 0), so the search is part
    of what is held out. A structure's score is that RMS divided by ``prod(1 - margin)`` over its
    fitted features: a richer model wins over a simpler one only by lowering the held-out error by
    the margins of what it adds. The best score is kept unless its delay fitted on all the data is
    the largest of the grid (a minimum on the edge is not bracketed: the fit runs away, e.g. a
    periodic motion delayed half a period looks like a sign flip); then the next best."""
    grid = np.asarray(grid_s, dtype=float)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0):
        raise ValueError("the delay grid must start at 0 and increase")
    n = units[0].y.shape[1]
    units = [u for u in units if u.windows]
    fit_units = [u for u in fit_units if u.windows]
    default = np.asarray(default, dtype=float)
    sign, delay, terms = np.ones(n), np.zeros(n), np.zeros((n, 3), dtype=bool)
    held, simple = np.zeros(n), np.zeros(n)
    toggled = {f: np.full(n, np.inf) for f in FEATURES}
    train = np.zeros((grid.size, n))
    refused, keys = [], []
    for j in range(n):
        scores = _joint_scores(units, fit_units, j, grid, default[j])
        base = (False, False, (False,) * 3)
        simple[j] = scores[base]["rms"]
        key = None
        eligible = {k: v for k, v in scores.items() if all(k[2][TERMS.index(t)] for t in ALWAYS_FITTED)}
        for candidate, s in sorted(eligible.items(), key=lambda kv: kv[1]["score"]):
            if s["final"] is not None:
                key = candidate
                break
            if np.isfinite(s["score"]):
                refused.append({"joint": j, "structure": _describe(candidate), "why": s["why"]})
        if key is None:         # nothing could be held out: no sign flip, delay or extra armature
            key = (False, False, tuple(t in ALWAYS_FITTED for t in TERMS))
            scores[key]["final"] = scores[key]["fit"]
            refused.append({"joint": j, "structure": "any beyond Fc, Fv", "why": "no windows to hold out"})
        sign[j], delay_index, _ = scores[key]["final"]
        delay[j] = grid[delay_index]
        terms[j] = key[2]
        held[j] = scores[key]["rms"]
        for f_index, f in enumerate(FEATURES):
            flipped = _toggle(key, f_index)
            toggled[f][j] = scores[flipped]["rms"]
        train[:, j] = _train_rms_by_delay(fit_units, j, sign[j], terms[j], default[j])
        keys.append(key)
    return Structure(sign, delay, terms, held, simple, toggled, refused, grid, train, len(units), keys)


def refit_structure(fit_units: list[JointWindows], keys, grid_s, default) -> Structure:
    """The features ``keys`` (per joint, from :func:`select_structure` on other data) fitted on
    ``fit_units`` without selecting them again: the sign and delay chosen on these windows where the
    key fits them (a delay at the grid's largest value is not identified: none), the terms of the
    key fitted. For measuring how a calibration's values vary from run to run (the run-to-run bias
    of :func:`~.build.payload_bias_rms`) apart from whether one run alone would support them."""
    grid = np.asarray(grid_s, dtype=float)
    fit_units = [u for u in fit_units if u.windows]
    n = fit_units[0].y.shape[1]
    default = np.asarray(default, dtype=float)
    sign, delay, terms = np.ones(n), np.zeros(n), np.zeros((n, 3), dtype=bool)
    train = np.zeros((grid.size, n))
    for j, (fit_sign, fit_delay, t) in enumerate(keys):
        cand = _fit_all_candidates(fit_units, j, np.flatnonzero(t), default[j])
        s, g, _ = _best(cand, _allowed(fit_sign, fit_delay, grid.size))
        if fit_delay and grid.size > 1 and g == grid.size - 1:
            s, g, _ = _best(cand, _allowed(fit_sign, False, grid.size))
        sign[j], delay[j], terms[j] = s, grid[g], t
        train[:, j] = _train_rms_by_delay(fit_units, j, s, t, default[j])
    nan = np.full(n, np.nan)
    return Structure(sign, delay, terms, nan, nan, {f: nan for f in FEATURES}, [], grid, train, 0, list(keys))


def _allowed(fit_sign: bool, fit_delay: bool, delays: int) -> np.ndarray:
    """(2, delays) bool: the (sign +1/-1, delay) candidates a structure may pick from."""
    allowed = np.zeros((2, delays), dtype=bool)
    allowed[0, 0] = True
    allowed[1, 0] = fit_sign
    if fit_delay:
        allowed[0, :] = True
        allowed[1, :] = fit_sign
    return allowed


def _describe(key) -> str:
    fit_sign, fit_delay, t = key
    names = [n for n, on in zip(("sign", "delay"), (fit_sign, fit_delay)) if on] + [n for n, on in zip(TERMS, t) if on]
    return "+".join(names) or "profile"


def _toggle(key, f_index: int):
    fit_sign, fit_delay, t = key
    if f_index == 0:
        return (not fit_sign, fit_delay, t)
    if f_index == 1:
        return (fit_sign, not fit_delay, t)
    t = list(t)
    t[f_index - 2] = not t[f_index - 2]
    return (fit_sign, fit_delay, tuple(t))


def _joint_scores(units, fit_units, j: int, grid, default_j) -> dict:
    """Per structure key ``(fit sign, fit delay, terms)``: held-out ``rms``, ``score``, the fit on
    all the data (``fit`` = (sign, delay index, friction)) and ``final``: that fit when it may be
    kept, else None and ``why`` not."""
    out = {}
    for t in product((False, True), repeat=3):
        free = np.flatnonzero(t)
        # per training set (all units but one; then all runs): every (sign, delay) fitted at once
        loo = [_fit_all_candidates([u for i, u in enumerate(units) if i != k], j, free, default_j)
               for k in range(len(units))] if len(units) > 1 else []
        full = _fit_all_candidates(fit_units, j, free, default_j)
        for fit_sign, fit_delay in product((False, True), repeat=2):
            allowed = _allowed(fit_sign, fit_delay, grid.size)
            sq, count = 0.0, 0
            for k, cand in enumerate(loo):
                r = _unit_residual(units[k], j, *_best(cand, allowed))
                sq += float(np.sum((r - r.mean()) ** 2))       # the held-out unit's own offset
                count += r.size
            rms = np.sqrt(sq / count) if count else np.inf
            features = [fit_sign, fit_delay, *t]
            penalty = np.prod([1.0 - FEATURE_MARGIN.get(f, 0.0) for f, on in zip(FEATURES, features) if on])
            pick = _best(full, allowed)
            entry = {"rms": rms, "score": rms / penalty, "fit": pick, "final": None, "why": None}
            if fit_delay and grid.size > 1 and pick[1] == grid.size - 1:
                entry["why"] = f"delay at the largest tried ({grid[-1]:g} s): not identified"
            elif np.isfinite(rms):
                entry["final"] = pick
            else:
                entry["why"] = "no windows to hold out"
            out[(fit_sign, fit_delay, t)] = entry
    return out


def _y_grid(d: JointWindows) -> np.ndarray:
    """``d.y_grid``: the delay candidates are fitted on windows built with a delay grid only."""
    assert d.y_grid is not None
    return d.y_grid


def _fit_all_candidates(data: list[JointWindows], j: int, free, default_j) -> dict:
    """Bounded least squares (:func:`_fit_terms`) of joint ``j`` on ``data`` for every sign and
    delay of the grid at once: friction (2, delays, 3) with the fitted terms and squared error
    (2, delays), sign +1 first."""
    Y = np.concatenate([_y_grid(d)[:, :, j] for d in data], axis=1)       # (delays, windows)
    friction, sse = _fit_terms(data, j, free, default_j, np.concatenate([Y, -Y]))
    G = Y.shape[0]
    return {"friction": friction.reshape(2, G, 3), "sse": sse.reshape(2, G)}


def _best(cand: dict, allowed) -> tuple:
    """(sign, delay index, friction) of the smallest training error among the allowed fits."""
    sse = np.where(allowed, cand["sse"], np.inf)
    s, g = np.unravel_index(int(np.argmin(sse)), sse.shape)
    return (1.0 if s == 0 else -1.0), int(g), cand["friction"][s, g]


def _unit_residual(d: JointWindows, j: int, sign: float, g: int, friction_j) -> np.ndarray:
    """Joint ``j``'s window errors on ``d`` as a torque (N m), before the offset."""
    r = sign * _y_grid(d)[g, :, j] - d.link[:, j] - d.X[:, j] @ friction_j
    return r / d.duration


def _train_rms_by_delay(data: list[JointWindows], j: int, sign: float, terms_j, default_j) -> np.ndarray:
    """(delays,) RMS on all the data of joint ``j`` at each delay (terms refitted, each run its own
    offset): the curve the delay was read from."""
    cand = _fit_all_candidates(data, j, np.flatnonzero(terms_j), default_j)
    windows = sum(d.windows for d in data)
    sse = cand["sse"][0 if sign > 0 else 1]
    return np.sqrt(sse / max(windows, 1)) / np.median(np.concatenate([d.duration for d in data]))


def held_out_units(data: list[JointWindows], blocks: int = SINGLE_RUN_BLOCKS) -> list[JointWindows]:
    """What the held-out comparison leaves out in turn: the runs, or with a single run its windows in
    ``blocks`` consecutive blocks (each then with its own offset)."""
    if len(data) > 1:
        return list(data)
    d = data[0]
    return [d.take(part) for part in np.array_split(np.arange(d.windows), blocks) if part.size]
