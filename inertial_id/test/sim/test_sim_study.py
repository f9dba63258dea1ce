"""``inertial-id study sim``: cases across the payload range on MuJoCo, scored; no silent wrong answer."""
import json
from dataclasses import replace

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.estimators.run_floor import RECORDED_FLOOR_TOLERANCE, wrench_floor_kg
from inertial_id.core.robot.model import load_robot
from inertial_id.sim import harness


def test_cases_span_the_payload_range_with_offsets_inside_the_stated_box():
    cases = harness.study_cases("xarm7", 12, seed=3)
    masses = [c.mass_kg for c in cases]
    assert min(masses) < 1.0 and max(masses) > 2.0
    assert {c.distribution for c in cases} == {"uniform", "gaussian_clipped", "bias"}
    assert all(max(abs(o) for o in c.wrench_offset[:3]) <= 0.5 and max(abs(o) for o in c.wrench_offset[3:]) <= 0.02
               for c in cases)
    assert len({c.trajectory_seed for c in cases}) == 12


def test_a_short_study_reports_its_figures(tmp_path, capsys):
    out = tmp_path / "study.json"
    assert main(["study", "sim", "--cases", "2", "--duration", "3", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    s = report["summary"]
    assert s["cases"] == 2 and len(report["cases"]) == 2
    assert s["silent_wrong_answers"] == 0
    printed = capsys.readouterr().out
    assert "silent wrong answers in 2 cases" in printed
    # every box holds the witnesses of its rows as recorded (the truth, offset included, known whole)
    assert s["cases_with_recorded_floor"] == 2 and s["boxes_below_recorded_floor"] == 0
    assert s["min_width_over_recorded_floor"] >= 1.0 - RECORDED_FLOOR_TOLERANCE
    assert "0 boxes narrower than the floor of their rows as recorded, in 2 cases" in printed
    # the force rows' bound: the stated sensor and model part, and the acceleration share for the truth
    stated = load_robot("xarm7").spec.noise.wrench_row_floor()[0]
    assert s["median_force_row_noise_N"] == pytest.approx(stated)
    assert 0.0 < s["median_force_row_acceleration_share_N"] < np.inf
    # with every error zero: what no sound box beats, and the estimator's box, which beats nothing
    assert 0.0 < s["median_sound_mass_width_floor_kg"] <= s["median_error_free_mass_width_kg"] < np.inf
    # the integrated wrench rows' one-LP box, beside the estimator's: no silent wrong answer, inside the prior
    assert s["momentum_wrench_cases"] == 2 and s["momentum_wrench_silent_wrong_answers"] == 0
    assert 0.0 < s["momentum_wrench_median_mass_width_kg"] < 5.2
    assert 0.0 < s["momentum_wrench_median_error_free_mass_width_kg"] < 5.2


def test_error_free_rows_give_a_box_no_narrower_than_the_sound_floor():
    """The same rows with every error zero: the estimator's box holds the truth and is at least the
    floor no sound box beats (two physical payloads that explain the data); halving the stated bounds
    (the sensor's and the differentiated acceleration's) narrows both: the bounds set them."""
    case = harness.study_cases("xarm7", 1, seed=5, duration_s=3.0)[0]
    robot, pi_true, rec, _ = harness.simulate(case)
    _, _, rows, _ = harness.estimate(robot, rec)
    lower, upper = harness.error_free_box(robot, rows, pi_true, case.wrench_offset)
    assert np.all((lower <= pi_true) & (pi_true <= upper)) and upper[0] > lower[0]
    halved = [replace(m, noise_bound=0.5 * m.noise_bound, acceleration_bound=0.5 * m.acceleration_bound)
              for m in rows]
    lower2, upper2 = harness.error_free_box(robot, halved, pi_true, case.wrench_offset)
    assert np.all((lower2 <= pi_true) & (pi_true <= upper2))
    assert upper2[0] - lower2[0] < upper[0] - lower[0]
    # two physical payloads explain such data within the sensor's bound: the box holds both
    floor = wrench_floor_kg(robot, rows, pi_true, case.wrench_offset)
    assert 0.0 < floor <= upper[0] - lower[0]
    assert wrench_floor_kg(robot, halved, pi_true, case.wrench_offset) < floor
    assert harness.error_free_box(robot, [], pi_true, case.wrench_offset) is None
    assert wrench_floor_kg(robot, [], pi_true, case.wrench_offset) is None


def test_integrated_wrench_rows_on_mujoco_hold_the_truth_and_an_offset_beyond_its_box_is_never_silent():
    """The integrated rows' box on MuJoCo (a physics the rows do not model: armature, friction, the
    simulator's own integration) holds the truth; a force offset
    twice its stated box leaves no box labelled guaranteed without the truth."""
    from inertial_id.sim.momentum_wrench_score import momentum_wrench_score
    case = harness.study_cases("xarm7", 1, seed=5, duration_s=6.0)[0]
    robot, pi_true, rec, _ = harness.simulate(case)
    score = momentum_wrench_score(robot, rec, pi_true, case.wrench_offset)
    assert score["guaranteed"] and score["all_inside"]
    # every row's residual on the true payload and offset within its bound: the quadrature stated
    # inside the model error holds on the simulator's physics too
    from inertial_id.core.estimators.wrench_momentum_box import sample_bound
    from inertial_id.core.signals.sensors import NoiseModel
    from inertial_id.core.signals.wrench_momentum import WrenchMomentumRegressor, window_rows
    drift = NoiseModel.from_profile(robot.spec).wrench_offset_drift()
    rows = window_rows(WrenchMomentumRegressor(robot).terms(rec.q, rec.qd), rec.t, rec.wrench, sample_bound(robot), 1,
                       *robot.payload_prior(), drift_per_s=drift)
    residual = rows.A @ pi_true + rows.O @ np.asarray(case.wrench_offset) - rows.b
    assert np.all(np.abs(residual) <= rows.bound)
    beyond = np.zeros(6)
    beyond[0] = 2.0 * robot.spec.noise.wrench.offset_N
    rec.wrench = rec.wrench + beyond
    untared = momentum_wrench_score(robot, rec, pi_true, np.asarray(case.wrench_offset) + beyond)
    assert not untared["silent_wrong_answer"]
    assert untared["all_inside"] or not untared["guaranteed"]


def test_a_meaningless_duration_is_a_one_line_error(capsys):
    assert main(["study", "sim", "--duration", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_rate_that_does_not_divide_the_steps_is_a_one_line_error(capsys):
    assert main(["study", "sim", "--rate-hz", "300"]) == 2
    assert "does not divide" in capsys.readouterr().err


def test_a_faster_stream_shrinks_the_acceleration_share_of_the_force_rows(tmp_path):
    """The central difference's error bound grows with the sample period (jerk limit times period):
    the same cases sampled at 500 Hz instead of the driver's 100 Hz carry a share several times smaller."""
    cases = harness.study_cases("xarm7", 2, seed=5, duration_s=3.0)
    share = {}
    for rate in (None, 500.0):
        results = harness.run_cases([replace(c, rate_hz=rate) for c in cases])
        assert sum(r["silent_wrong_answer"] for r in results) == 0
        share[rate] = harness.summary(results)["median_force_row_acceleration_share_N"]
    assert share[500.0] < share[None] / 2.5


@pytest.mark.slow            # three calibrations, three cases
def test_a_torque_sensing_arm_is_calibrated_on_its_own_sensor_first(tmp_path):
    """The Gen3's cases name a calibration from payload-free runs of the same arm and sensor (one per
    error distribution, the bias with the cases' signs); its boxes then hold the truth."""
    cases = harness.study_cases("kinova_gen3", 3, seed=1, duration_s=8.0)
    calibrated = harness.with_calibrations(cases, tmp_path)
    assert len({c.calibration for c in calibrated}) == 3 and all(c.calibration for c in calibrated)
    for c in calibrated:
        free = harness.payload_free(c, 0)
        assert free.bias_signs == c.bias_signs and free.distribution == c.distribution and free.mass_kg < 1e-5
    assert harness.with_calibrations(harness.study_cases("xarm7", 2), tmp_path)[0].calibration is None
    results = harness.run_cases(calibrated)
    assert sum(r["silent_wrong_answer"] for r in results) == 0
    assert all(r["samples_used"] > 0 for r in results)
