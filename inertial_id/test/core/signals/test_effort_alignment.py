"""The effort delay: pairing each state with the effort logged later (core.effort_alignment), the
calibration measuring that delay per joint, and the calibration file carrying it."""
import numpy as np
import pinocchio as pin
import pytest
import yaml

from inertial_id.core.calibration import CALIBRATION_VERSION, CalibrationError, load_calibration
from inertial_id.core.calibration.build import calibrate
from inertial_id.core.data.data_io import Run
from inertial_id.core.signals.effort_alignment import EffortAlignment
from inertial_id.core.robot.model import load_robot


def _stream(n=300, nv=3, rate_hz=100.0):
    t = np.arange(n) / rate_hz + 0.003 * np.sin(np.arange(n))       # uneven stamps
    q = np.sin(t[:, None] * np.arange(1, nv + 1))
    return t, q, np.cos(q), np.sin(3.0 * t[:, None] + np.arange(nv))


def test_samples_carry_the_effort_logged_their_delay_later_whatever_the_batches():
    t, q, qd, tau = _stream()
    delay = np.array([0.0, 0.04, 0.115])
    whole = EffortAlignment(delay).push(t, q, qd, tau)
    ready = t + delay.max() <= t[-1]
    assert whole[0].size == ready.sum() < t.size          # the last 0.115 s wait for their effort
    np.testing.assert_array_equal(whole[0], t[ready])
    np.testing.assert_array_equal(whole[1], q[ready])
    for j, d in enumerate(delay):
        np.testing.assert_allclose(whole[3][:, j], np.interp(t[ready] + d, t, tau[:, j]))
    cut = EffortAlignment(delay)
    parts = [cut.push(t[a:b], q[a:b], qd[a:b], tau[a:b]) for a, b in ((0, 1), (1, 57), (57, 58), (58, 300))]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), whole[0])
    np.testing.assert_array_equal(np.vstack([p[3] for p in parts]), whole[3])


def test_zero_delay_passes_samples_through_and_bad_input_is_refused():
    t, q, qd, tau = _stream()
    out = EffortAlignment(np.zeros(3)).push(t, q, qd, tau)
    for a, b in zip(out, (t, q, qd, tau)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="increasing time"):
        EffortAlignment(np.full(3, 0.01)).push(t[::-1], q, qd, tau)
    with pytest.raises(ValueError, match=">= 0"):
        EffortAlignment([0.1, -0.01, 0.0])


def _synthetic_run(robot, name, phase, delay_s, duration_s=12.0, rate_hz=100.0):
    """Smooth motion; torque = rigid body + viscous and Coulomb friction, logged ``delay_s`` late."""
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    # two incommensurate sines per joint: the speed peaks differ, so few look like a velocity limit
    w1, w2 = 0.5 + 0.15 * np.arange(robot.nv), 1.7 + 0.23 * np.arange(robot.nv)
    q = 0.5 * np.sin(w1 * t[:, None] + phase) + 0.2 * np.sin(w2 * t[:, None] + 2 * phase)
    qd = 0.5 * w1 * np.cos(w1 * t[:, None] + phase) + 0.2 * w2 * np.cos(w2 * t[:, None] + 2 * phase)
    qdd = -0.5 * w1 ** 2 * np.sin(w1 * t[:, None] + phase) - 0.2 * w2 ** 2 * np.sin(w2 * t[:, None] + 2 * phase)
    data = robot.model.createData()
    tau = np.array([pin.rnea(robot.model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    tau += 8.0 * qd + 1.5 * np.tanh(50.0 * qd)
    logged = np.column_stack([np.interp(t - d, t, tau[:, j]) for j, d in enumerate(delay_s)])
    return Run(name, t, q, qd, logged, qdd)


def test_calibration_finds_the_delay_of_each_joint():
    robot = load_robot("kinova_gen3")
    delay = np.array([0.0, 0.03, 0.06, 0.06, 0.09, 0.12, 0.12])
    runs = [_synthetic_run(robot, f"run{k}", 1.3 * k, delay) for k in range(2)]
    cal = calibrate(robot, runs, payload_bias=False)
    np.testing.assert_allclose(cal.delays(), delay, atol=0.011)
    rms = np.array(cal.report["effort_delay"]["rms_Nm"])
    at_zero = rms[0]
    chosen = rms.min(axis=0)
    assert np.all(chosen[1:] < 0.5 * at_zero[1:])      # the lag was most of the error where there was one


def test_calibration_file_carries_the_delays(tmp_path):
    robot = load_robot("kinova_gen3")
    runs = [_synthetic_run(robot, f"run{k}", 0.7 * k, np.full(7, 0.05), duration_s=6.0) for k in range(2)]
    cal = calibrate(robot, runs, payload_bias=False, effort_delay_grid_s=(0.0, 0.05))
    path = tmp_path / "c.yaml"
    cal.write(path)
    back = load_calibration(path)
    np.testing.assert_allclose(back.delays(), cal.delays())
    assert back.window_options(10)["effort_delay_s"].tolist() == cal.delays().tolist()
    d = yaml.safe_load(path.read_text())
    assert d["version"] == CALIBRATION_VERSION
    # the bounds hold up to the torque of the windows measured: within the runs' largest; near it,
    # the windows leave out only each run's tail (the delay, an unfinished 0.2 s window)
    logged_max = np.max([np.abs(r.tau).max(axis=0) for r in runs], axis=0)
    assert np.all(np.array(d["torque_range_Nm"]) <= logged_max)
    assert np.all(np.array(d["torque_range_Nm"]) >= 0.8 * logged_max)
    # a version-1 file was measured without a delay: read as none
    d["version"] = 1
    del d["effort_delay_s"]
    path.write_text(yaml.safe_dump(d))
    assert load_calibration(path).delays().tolist() == [0.0] * 7
    # nor did it say up to which torque its bounds hold: every N m counts as beyond
    del d["torque_range_Nm"]
    path.write_text(yaml.safe_dump(d))
    assert load_calibration(path).torque_range().tolist() == [0.0] * 7
    d["version"] = 2
    d["effort_delay_s"] = [0.05] * 6 + [2.0]
    path.write_text(yaml.safe_dump(d))
    with pytest.raises(CalibrationError, match="effort_delay_s"):
        load_calibration(path)


def test_delayed_effort_sums_equal_the_rows_at_that_delay():
    """The calibration compares the delays of its grid on one set of windows, forming each window's
    effort sum itself: those sums are the rows' U of the estimator's windows at that delay."""
    from inertial_id.core.calibration.fit import joint_windows
    robot = load_robot("kinova_gen3")
    run = _synthetic_run(robot, "run", 0.4, np.zeros(7), duration_s=3.0)
    grid = np.array([0.0, 0.02, 0.05])
    aligned = joint_windows(robot, run, 10, None, np.full(7, grid[-1]), grid)
    for g, d in enumerate(grid):
        rows = joint_windows(robot, run, 10, None, np.full(7, d))
        same = np.isin(rows.close_t, aligned.close_t)
        assert same.sum() == aligned.windows > 0
        np.testing.assert_allclose(aligned.y_grid[g], rows.y[same], rtol=1e-12, atol=1e-12)


def test_a_delay_at_the_edge_of_the_search_is_not_kept():
    """A lag beyond the delays tried puts the best fit on the grid's largest value: not identified
    (the error may keep falling beyond it, as for a periodic motion where half a period looks like a
    sign flip), so no delay is kept and the report says why."""
    robot = load_robot("kinova_gen3")
    runs = [_synthetic_run(robot, f"run{k}", 1.1 * k, np.full(7, 0.15), duration_s=8.0) for k in range(2)]
    cal = calibrate(robot, runs, payload_bias=False, effort_delay_grid_s=np.round(np.arange(0.0, 0.101, 0.01), 3))
    assert cal.delays().tolist() == [0.0] * 7
    refused = cal.report["term_support"]["refused"]
    assert {r["joint"] for r in refused if "not identified" in r["why"]} == set(range(7))
    rms = np.array(cal.report["effort_delay"]["rms_Nm"])
    assert np.all(np.argmin(rms, axis=0) == rms.shape[0] - 1)      # the fit ran to the edge
