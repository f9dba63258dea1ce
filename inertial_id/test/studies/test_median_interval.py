"""The distribution-free interval of a median: its order statistics and coverage follow the
binomial law, and on draws of a known distribution it holds the true median about as often as it
says."""
import numpy as np
import pytest

from inertial_id.studies.median_interval import median_interval


def test_twenty_trials_give_the_6th_and_15th_values_at_95_percent():
    values = np.random.default_rng(0).permutation(np.arange(1.0, 21.0))
    low, high, coverage = median_interval(values)
    assert (low, high) == (6.0, 15.0)
    assert coverage == pytest.approx(1.0 - 2.0 * 21700 / 2 ** 20)     # P(B <= 5) = 21700 / 2^20


def test_too_few_trials_give_no_interval():
    assert median_interval([]) is None
    assert median_interval(np.arange(5.0)) is None                      # 2 / 2^5 > 5 %
    assert median_interval(np.arange(6.0)) == (0.0, 5.0, pytest.approx(1.0 - 2.0 / 2 ** 6))


def test_the_interval_holds_a_known_median_as_often_as_it_says():
    rng = np.random.default_rng(1)
    held = [low <= 1.0 <= high
            for low, high, _ in (median_interval(rng.lognormal(0.0, 0.5, 20)) for _ in range(2000))]
    # coverage 95.9 %: 2000 draws put the rate within about 0.9 % of it (two standard deviations)
    assert abs(np.mean(held) - 0.9586) < 0.012
