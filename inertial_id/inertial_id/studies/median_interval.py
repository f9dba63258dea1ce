"""A distribution-free confidence interval for a median over independent trials.

With ``n`` independent draws of a continuous quantity, the number of draws below its median is
Binomial(n, 1/2), so the order statistics ``x_(k) <= x_(n+1-k)`` enclose the median with probability
``1 - 2 P(B <= k - 1)``, whatever the distribution. The largest ``k`` whose coverage is still at least
the level asked for gives the interval (20 trials at 95 %: the 6th and the 15th smallest, coverage
95.9 %). A study's median over its 20 trials is an estimate of the median over many trials (of the
distribution its trials are drawn from); the interval holds that median with the coverage given.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import binom


def median_interval(values, level: float = 0.95) -> tuple[float, float, float] | None:
    """``(low, high, coverage)`` for the median of what ``values`` sample, or None when too few
    values reach ``level`` (fewer than 6 at 95 %)."""
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return None
    tail = 0.5 * (1.0 - level)
    # the largest j with P(B <= j) <= tail: B ~ Binomial(n, 1/2) draws below the median
    below = int(binom.ppf(tail, n, 0.5))                     # the smallest j with P(B <= j) >= tail
    if binom.cdf(below, n, 0.5) > tail:
        below -= 1
    if below < 0:
        return None
    return float(x[below]), float(x[n - 1 - below]), float(1.0 - 2.0 * binom.cdf(below, n, 0.5))
