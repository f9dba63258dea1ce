"""The real-data study (inertial-id study realdata) on the real Kinova Gen3 runs, reduced for CI:
leave one run out over all three runs, three payload masses (1.81, 2.72, 3.63 kg) at one COM offset
plus the case without payload, 60 bootstrap replicates. The figures are computed by running the
method; the Done-when targets that the method meets are asserted, those it does not are strict
xfails carrying the measured figure (they fail loudly the day they pass)."""
import json

import numpy as np
import pytest

from inertial_id.cli import main

from paths import REAL_GEN3

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not REAL_GEN3.is_dir():
        pytest.skip(f"real Gen3 recordings absent: {REAL_GEN3.resolve()}")
    out = tmp_path_factory.mktemp("realdata") / "study.json"
    assert main(["study", "realdata", "--data", str(REAL_GEN3), "--com-offsets", "1", "--replicates", "60",
                 "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_guarantees_hold_on_every_case(report):
    s = report["summary"]
    assert s["cases"] == 12 and s["payload_cases"] == 9
    assert s["containment_rate"] == 1.0
    assert s["silent_wrong_answers"] == 0
    assert s["truth_satisfies_rows_rate"] == 1.0
    assert s["data_consistent_rate"] >= 0.9
    assert all(s["no_payload_contains_zero_mass"]) and len(s["no_payload_contains_zero_mass"]) == 3
    for c in report["cases"]:
        # every interval is a real interval and the data narrowed at least the mass or a first moment
        assert np.all(np.array(c["lower"]) <= np.array(c["upper"]))
        assert c["windows_used"] > 0 and c["windows_excluded"] > 0
    # the calibration never saw the held-out run; its own check on that run is reported beside the cases
    for f in report["folds"]:
        assert f["held_out"] not in f["calibrated_on"]
        assert set(f["held_out_validation"]["per_window"]) and len(f["effort_delay_s"]) == 7
    assert len(s["held_out_validation_passed"]) == 3 and s["held_out_max_exceedance_ratio"] > 0


def test_a_box_left_at_the_prior_says_why(report):
    """A mass box that keeps a limit of the prior does so only where a payload at that limit explains
    every error-free row within its stated bound (the floor's witness there): the samples cannot
    determine the mass; every case names its limits and witnesses."""
    s = report["summary"]
    loaded = [c for c in report["cases"] if c["mass_kg"] > 0]
    assert s["cases_at_prior"] == sum(bool(c["mass_at_prior"]) for c in loaded) > 0
    assert s["cases_at_prior_determined"] == 0
    for c in loaded:
        lightest, heaviest = c["sound_mass_witnesses_kg"]
        assert lightest <= c["mass_kg"] <= heaviest
        for limit in c["mass_at_prior"]:
            assert limit["undetermined"] and limit["witness_kg"] == (lightest if limit["limit"] == "lower" else heaviest)


def test_point_estimate_and_statistical_interval_are_reported(report):
    s = report["summary"]
    assert s["statistical_intervals"] == s["cases"]
    assert 0 <= s["statistical_coverage"] <= 1 and 0 <= s["median_mass_error_rel"] < 0.2
    assert all("NOT guaranteed" in c["statistical"]["label"] for c in report["cases"])
    assert set(s["statistical_coverage_per_run"]) == {"run1", "run2", "run3"}
    assert all(c["statistical"]["bias_runs"] == 2 for c in report["cases"])      # each fold: the two other runs


def test_statistical_label_is_the_validated_level(report):
    # called 95 % only when the held-out runs covered the claimed parameters at least that often;
    # otherwise named by the coverage they showed (91.7 % on the full study: run 2's mass bias of
    # 0.27 kg is 6x the RMS runs 1 and 3 show when each is calibrated on the other)
    s = report["summary"]
    assert s["statistical_validated"] == (s["statistical_coverage"] >= s["statistical_level"] == 0.95)
    if s["statistical_validated"]:
        assert s["statistical_label"].startswith("statistical 95%")
    else:
        assert not s["statistical_label"].startswith("statistical 95%")
        assert f"held-out coverage {s['statistical_coverage']:.1%}" in s["statistical_label"]
    assert {c["statistical"]["label"] for c in report["cases"]} == {s["statistical_label"]}


def test_fold_bias_is_measured_without_the_held_out_run(tmp_path):
    """The run-to-run bias the fold's interval adds comes from the other runs only: changing the
    held-out run's torques changes nothing of it."""
    from dataclasses import replace

    from inertial_id.core.robot.model import load_robot
    from inertial_id.studies.realdata import make_fold, read_downsampled_runs
    if not REAL_GEN3.is_dir():
        pytest.skip(f"real Gen3 recordings absent: {REAL_GEN3.resolve()}")
    robot = load_robot("kinova_gen3")
    runs = read_downsampled_runs(REAL_GEN3)
    altered = [*runs[:1], replace(runs[1], tau=runs[1].tau + 5.0), *runs[2:]]
    fold, other = make_fold(robot, runs, 1, tmp_path), make_fold(robot, altered, 1, tmp_path)
    np.testing.assert_array_equal(fold.calibration.payload_bias_rms, other.calibration.payload_bias_rms)
    assert fold.calibration.bias_runs() == len(runs) - 1


@pytest.mark.xfail(strict=True, reason="measured median guaranteed mass width 3.03 kg on the full study (target <= 2.0; "
                   "3.34 kg with one factor for every joint, 3.4 kg with the stated safety factor 2 and no effort delay, "
                   "which a held-out run exceeded by 2.0-2.5x at other window lengths): the bounds must cover a held-out run's largest error, run 1 keeps 55 of "
                   "124 windows outside velocity-limit plateaus and stays near the prior, and the mass trades against "
                   "the first moment along the tool axis up to the prior's limits (a payload at the limit explains "
                   "every error-free row there: test_a_box_left_at_the_prior_says_why); median floor 3.27 kg")
def test_mass_width_target(report):
    assert report["summary"]["median_mass_width_kg"] <= 2.0


def test_mass_at_prior_names_each_limit_kept_and_whether_a_witness_is_there():
    from inertial_id.studies.realdata import mass_at_prior
    # the box keeps the upper limit, its witness is there: undetermined; the lower one it left
    assert mass_at_prior(1.0, 5.2, 0.0, 5.2, (0.9, 5.19)) == [
        {"limit": "upper", "prior_kg": 5.2, "witness_kg": 5.19, "undetermined": True}]
    # the box keeps both limits, the rows would have let a sound box leave the lower one
    kept = mass_at_prior(0.05, 5.2, 0.0, 5.2, (0.5, 5.2))
    assert [(k["limit"], k["undetermined"]) for k in kept] == [("lower", False), ("upper", True)]
    assert mass_at_prior(1.0, 4.0, 0.0, 5.2, (0.0, 5.2)) == []


def test_point_mass_error_target(report):
    # least absolute deviations over the calibrated rows, the effort taken at its calibrated delay:
    # measured 1.6 % on the full study (4.4 % without the delay, least squares 8.8 %)
    assert report["summary"]["median_mass_error_rel"] <= 0.05


def test_point_com_error_target(report):
    # measured 21 mm on the full study (32 mm without the effort delay, least squares 55 mm)
    assert report["summary"]["median_com_error_m"] <= 0.05


@pytest.mark.xfail(strict=True, reason="measured 0.917 on the full study (mass 0.67, first moments 1.0): every run-2 case "
                   "misses the mass by 2.4 half-widths, its estimate biased 0.27 kg by model error that runs 1 and 3 "
                   "(0.044 kg RMS) cannot foresee; the bootstrap's half-width barely moves with blocks of 0.5-3 s")
def test_statistical_coverage_target(report):
    s = report["summary"]
    assert s["statistical_coverage"] >= 0.95


def test_statistical_interval_is_narrower_than_the_guaranteed_box(report):
    s = report["summary"]
    assert s["median_statistical_mass_width_kg"] < s["median_mass_width_kg"]
