"""The bounds study (reduced: one trajectory per trial) and its command."""
import json

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.studies import bounds as study
from inertial_id.core.robot.robot_box import robot_parameter_box
from inertial_id.core.robot.model import load_robot
from inertial_id.core.robot.params import robot_parameters

pytestmark = pytest.mark.slow          # a reduced study

KEYS = ("containment_rate", "median_width", "final_mass_width", "update_time_p50_s", "update_time_p95_s",
        "physically_consistent_rate")


def test_reduced_study_reports_both_methods_side_by_side(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(study, "TRAJECTORIES", 1)
    out = tmp_path / "study.json"
    assert main(["study", "bounds", "--payloads", "4lb,8lb", "--trials", "3", "--overnoise-every", "3",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["trials"] == 3 and report["trials_within_noise_bounds"] == 2 and report["trials_overnoise"] == 1
    assert 0 < report["max_row_error_ratio"] <= 1.0          # the simulated errors respect the stated bounds
    for m in ("guaranteed", "log_cholesky"):
        assert all(k in report[m] for k in KEYS) and len(report[m]["median_width"]) == 10
        assert report[m]["physically_consistent_rate"] == 1.0
        assert np.all(np.asarray(report[m]["median_width"]) < np.asarray(report["initial_width"]))
    g = report["guaranteed"]
    assert g["containment_rate"] == 1.0 and g["bounds_guaranteed_rate"] == 1.0
    assert g["overnoise_excluded_unflagged"] == 0
    assert report["log_cholesky"]["bounds_guaranteed_rate"] == 0.0
    # the count is the one the widths give, and the LP box beats the MVF's on every parameter here
    narrower = np.asarray(g["median_width"]) < np.asarray(report["log_cholesky"]["median_width"])
    assert report["guaranteed_narrower_than_mvf"] == int(narrower.sum()) == 10
    assert "guaranteed narrower than MVF for 10 of 10 parameters" in capsys.readouterr().out


def test_perturbed_robot_stays_in_the_box_and_differs_from_nominal():
    robot = load_robot("kinova_gen3")
    nominal, lo, hi = robot_parameter_box(robot.model)
    true = robot_parameters(study.perturbed_model(robot.model, np.random.default_rng(0)))
    assert np.all((true >= lo) & (true <= hi))
    assert np.abs(true - nominal).max() > 0.01 * np.abs(nominal).max()


def test_unknown_payload_is_a_user_error(capsys):
    assert main(["study", "bounds", "--payloads", "9lb"]) == 2
    assert "unknown payloads" in capsys.readouterr().err
