"""Timing helpers for benchmarks: repeat a callable and report robust statistics."""
from __future__ import annotations

import time

import numpy as np


def time_calls(fn, n_calls: int, repeats: int = 5) -> dict:
    """Run ``fn()`` ``n_calls`` times per repeat; per-call seconds: best, median over repeats."""
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n_calls):
            fn()
        per_call.append((time.perf_counter() - t0) / n_calls)
    per_call = np.array(per_call)
    return {"per_call_s_best": float(per_call.min()), "per_call_s_median": float(np.median(per_call)),
            "calls_per_s_best": float(1.0 / per_call.min()), "calls_per_s_median": float(1.0 / np.median(per_call))}
