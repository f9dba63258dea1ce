"""Recordings with time gaps: each stretch between gaps is differentiated and filtered on its own."""
import numpy as np
import pytest

from inertial_id.core.signals import filtering
from inertial_id.core.data.data_io import DataError, Pipeline, Run, segment_bounds


def gapped_run(gaps=((300, 0.94), (700, 0.49)), n=1000, dt=0.01):
    """``qd = sin(2 t)`` sampled at ``dt`` with the given (sample index, seconds) gaps; torque is a
    different constant on each stretch."""
    steps = np.full(n - 1, dt)
    for k, gap in gaps:
        steps[k - 1] = gap
    t = np.concatenate([[0.0], np.cumsum(steps)])
    qd = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    tau = np.zeros_like(qd)
    for i, (s, e) in enumerate(segment_bounds(t)):
        tau[s:e] = i + 1.0
    return Run("gapped", t, np.zeros_like(qd), qd, tau)


def test_segment_bounds_split_at_gaps_only():
    run = gapped_run()
    assert segment_bounds(run.t) == [(0, 300), (300, 700), (700, 1000)]
    assert segment_bounds(np.arange(50) * 0.01) == [(0, 50)]
    jitter = np.cumsum(np.random.default_rng(0).uniform(0.008, 0.012, 50))
    assert len(segment_bounds(jitter)) == 1     # sampling jitter is not a gap


def test_differentiation_never_reaches_across_a_gap():
    run = gapped_run()
    truth = np.column_stack([2 * np.cos(2 * run.t), -3 * np.sin(3 * run.t)])
    out = Pipeline(differentiate=True).apply(run)
    assert out.n_samples == run.n_samples
    assert np.abs(out.qdd - truth).max() < 2e-3          # one-sided 2nd-order ends at each gap
    across = filtering.central_difference(run.qd, run.t)   # the whole run at once: wrong at the gaps
    assert np.abs(across - truth).max() > 1.0


def test_filtering_never_smears_across_a_gap():
    run = gapped_run()
    out = Pipeline(cutoff_hz=5.0).apply(run)
    expected = np.repeat([1.0, 2.0, 3.0], [300, 400, 300])
    np.testing.assert_allclose(out.tau[:, 0], expected, atol=1e-9)
    assert out.qdd.shape == run.qd.shape


def test_stretches_too_short_are_left_out_and_all_short_is_an_error():
    run = gapped_run(gaps=((300, 0.5), (303, 0.5)))       # a 3-sample stretch between two gaps
    pipeline = Pipeline(differentiate=True, downsample=2)
    parts = pipeline.segments(run)
    assert [p is None for p in parts] == [False, True, False]
    out = pipeline.apply(run)
    assert out.n_samples == 150 + 349
    assert np.all(np.diff(out.t) > 0)
    tiny = Run("tiny", np.array([0.0, 0.01, 0.02, 1.0, 1.01, 1.02]), *(np.zeros((6, 1)),) * 3)
    with pytest.raises(DataError, match="no stretch between time gaps is long enough"):
        pipeline.apply(tiny)
    with_qdd = Run("tiny", tiny.t, tiny.q, tiny.qd, tiny.tau, np.zeros((6, 1)))
    assert Pipeline().apply(with_qdd).n_samples == 6      # nothing to differentiate or filter: all kept
