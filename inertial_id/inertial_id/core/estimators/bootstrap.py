"""A statistical interval beside the guaranteed box: moving-block bootstrap over momentum windows.

Not guaranteed. The windows' errors on a real arm are correlated over seconds (slow model error,
offset drift), so rows are not resampled one by one (which gave intervals 40-50x too narrow on the
real Gen3): consecutive blocks of windows (``block_s`` of data) are drawn with replacement until the
replicate holds as many windows as the data, the weighted least-squares problem (payload plus the
nuisance columns, e.g. the run's torque offsets) is solved per replicate, and each parameter's
interval is the percentile interval of the physically consistent estimates at the given level.
Resampling within one run cannot see a bias common to the whole run (the real Gen3's model error
differs from run to run): the calibration measures that bias on its own runs
(:func:`~..calibration.build.payload_bias_rms`) and :func:`widen_by_bias` adds it, at the
Student-t quantile of the few runs that RMS rests on (:func:`bias_quantile`).

The level is nominal until held-out runs with known payloads show the coverage:
:func:`interval_label` says which (on the real Gen3, ``inertial-id study realdata`` measures it).
Per-window normal equations are kept (their cumulative sums give any block in O(1)).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t

from .consistent import InfeasibleError, SolverFailure, payload_estimate


class WindowBootstrap:
    """Per-window weighted normal equations of rows ``A x = u`` (first ``n_payload`` columns the
    payload, the rest nuisance), weights ``1 / e^2``."""

    def __init__(self, n_cols: int, n_payload: int = 10):
        self.n_cols, self.n_payload = n_cols, n_payload
        self._info: list[np.ndarray] = []
        self._rhs: list[np.ndarray] = []

    @property
    def windows(self) -> int:
        """Number of windows taken so far."""
        return sum(x.shape[0] for x in self._info)

    def add(self, A, u, e, rows_per_window: int) -> None:
        """Rows of whole windows, window-major (``rows_per_window`` rows each)."""
        w = 1.0 / np.maximum(np.asarray(e, dtype=float), 1e-12) ** 2
        A = np.asarray(A, dtype=float).reshape(-1, rows_per_window, self.n_cols)
        u = np.asarray(u, dtype=float).reshape(-1, rows_per_window)
        w = w.reshape(-1, rows_per_window)
        self._info.append(np.einsum("wrc,wr,wrd->wcd", A, w, A))
        self._rhs.append(np.einsum("wrc,wr,wr->wc", A, w, u))

    def interval(self, lower_box, upper_box, block: int, level: float = 0.95, replicates: int = 200,
                 seed: int = 0) -> dict | None:
        """``{"lower", "upper", "replicates", "block_windows", "level"}`` of the payload parameters
        (blocks of ``block`` consecutive windows), or None with fewer than two blocks of data. The
        consistent estimate of each replicate stays in the box ``lower_box..upper_box`` (the
        guaranteed one)."""
        if not self._info:
            return None
        info = np.concatenate(self._info)
        rhs = np.concatenate(self._rhs)
        n = info.shape[0]
        block = max(1, int(block))
        if n < 2 * block:
            return None
        c_info = np.concatenate([np.zeros((1,) + info.shape[1:]), np.cumsum(info, axis=0)])
        c_rhs = np.concatenate([np.zeros((1, rhs.shape[1])), np.cumsum(rhs, axis=0)])
        rng = np.random.default_rng(seed)
        k = int(np.ceil(n / block))
        estimates = []
        for _ in range(replicates):
            starts = rng.integers(0, n - block + 1, size=k)
            I = (c_info[starts + block] - c_info[starts]).sum(axis=0)
            b = (c_rhs[starts + block] - c_rhs[starts]).sum(axis=0)
            try:
                estimates.append(payload_estimate(I, b, self.n_payload, lower_box, upper_box))
            except (InfeasibleError, SolverFailure, np.linalg.LinAlgError):
                continue
        if len(estimates) < replicates // 2:
            return None
        est = np.array(estimates)
        alpha = 0.5 * (1.0 - level)
        return {"lower": np.quantile(est, alpha, axis=0), "upper": np.quantile(est, 1.0 - alpha, axis=0),
                "median": np.median(est, axis=0), "replicates": len(estimates), "block_windows": block, "level": level}


def bias_quantile(level: float, bias_runs: int) -> float:
    """The two-sided ``level`` quantile of a new run's bias in units of an RMS measured on
    ``bias_runs`` runs whose truth is known (zero payload). With ``n`` such runs ``n s^2 / sigma^2``
    is chi-square with ``n`` degrees of freedom and independent of the new run, so the ratio is
    Student t with ``n`` degrees of freedom: the normal quantile would trust an RMS of two or three
    runs as if it were the true spread (95 %: 4.30 for two runs, 3.18 for three, against 1.96)."""
    return float(student_t.ppf(0.5 + 0.5 * level, df=max(1, int(bias_runs))))


def widen_by_bias(interval: dict, bias_rms, bias_runs: int) -> dict:
    """The interval with a run-to-run bias of RMS ``bias_rms`` (10,), measured on ``bias_runs`` runs,
    added in quadrature on each side: the bootstrap half-widths about the median combined with
    :func:`bias_quantile` times the bias."""
    z = bias_quantile(interval["level"], bias_runs)
    c, extra = interval["median"], (z * np.asarray(bias_rms, dtype=float)) ** 2
    out = dict(interval)
    out["lower"] = c - np.sqrt((c - interval["lower"]) ** 2 + extra)
    out["upper"] = c + np.sqrt((interval["upper"] - c) ** 2 + extra)
    out["bias_rms"] = np.asarray(bias_rms, dtype=float)
    out["bias_runs"] = int(bias_runs)
    return out


def interval_label(level: float, held_out_coverage: float | None = None) -> str:
    """What the interval may be called: its level only when held-out runs with known payloads
    covered at least that often; otherwise the coverage they did show, or that none was shown."""
    method = "moving-block bootstrap + calibrated run-to-run bias"
    if held_out_coverage is None:
        return f"statistical, nominal {level:.0%}, coverage NOT validated ({method}), NOT guaranteed"
    if held_out_coverage >= level:
        return f"statistical {level:.0%} (held-out coverage {held_out_coverage:.1%}; {method}), NOT guaranteed"
    return (f"statistical, held-out coverage {held_out_coverage:.1%} (nominal {level:.0%} NOT reached; {method}), "
            "NOT guaranteed")
