import numpy as np
import pytest

from inertial_id.core.signals import filtering


def test_central_difference_is_fourth_order_accurate():
    t = np.linspace(0, 2, 2001)
    x = np.sin(3 * t)[:, None]
    d = filtering.central_difference(x, t)
    np.testing.assert_allclose(d[2:-2, 0], 3 * np.cos(3 * t[2:-2]), atol=1e-9)
    with pytest.raises(ValueError, match="increasing"):
        filtering.central_difference(x, t[::-1])


def test_zero_phase_lowpass_has_no_lag_and_removes_noise():
    fs = 1000.0
    t = np.arange(0, 4, 1 / fs)
    clean = np.sin(2 * np.pi * 1.0 * t)
    noisy = clean + 0.1 * np.random.default_rng(0).normal(size=t.size)
    y = filtering.zero_phase_lowpass(noisy, fs, 5.0)
    inner = slice(200, -200)
    assert np.abs(y[inner] - clean[inner]).max() < 0.05
    assert np.argmax(np.correlate(y[inner], clean[inner], "full")) == t[inner].size - 1   # no lag
    with pytest.raises(ValueError, match="Nyquist"):
        filtering.butterworth_sos(600.0, fs)


def test_streaming_differentiator_is_exact_on_quadratics_with_one_sample_latency():
    d = filtering.StreamingDifferentiator(2)
    out = []
    for k in range(10):
        t = 0.002 * k
        qd = np.array([1.0 + 3.0 * t, -2.0 * t])          # constant acceleration (3, -2)
        out.append(d.push(t, np.zeros(2), qd, np.ones(2)))
    assert out[0] is None and out[1] is None
    t1, _, v1, a1, _ = out[2]
    assert t1 == pytest.approx(0.002)
    np.testing.assert_allclose(a1, [3.0, -2.0], atol=1e-12)
