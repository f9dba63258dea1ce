"""The bounds-update schedule shared by the estimator node and the offline pipeline: boundaries in
data time, whatever the arrival times, so the same rows meet the same updates."""
import numpy as np

from inertial_id.core.estimators.schedule import UpdateSchedule


def updates(stamps, period):
    s = UpdateSchedule(period)
    return [t for t in stamps if s.due(t)]


def test_an_update_follows_the_row_that_closes_each_period():
    stamps = np.round(np.arange(0.1, 7.05, 0.1), 10) + 100.0
    assert updates(stamps, 2.0) == [102.1, 104.1, 106.1]


def test_a_gap_longer_than_a_period_gives_one_update_and_keeps_the_grid():
    assert updates([0.0, 0.5, 5.3, 5.9, 6.0, 8.1], 2.0) == [5.3, 6.0, 8.1]


def test_period_zero_never_updates_before_the_end():
    assert updates(np.arange(0.0, 50.0, 0.1), 0.0) == []
