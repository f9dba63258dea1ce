"""The seed 004 study through the CLI (one noise draw per object instead of the default three, to keep
the suite fast) and the benchmark entry. Thresholds are the issue's; the numbers come from the run."""
import json

import pytest

from inertial_id.cli import main

pytestmark = pytest.mark.slow          # a reduced study

SPEEDS = ("1", "1.5", "2")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("pmd") / "study.json"
    assert main(["study", "pmd", "--trials", "1", "--json", str(path)]) == 0
    return json.loads(path.read_text())


def test_pmd_meets_the_accuracy_thresholds_at_each_speed(report):
    assert sorted(report["speeds"]) == sorted(SPEEDS) and report["samples"] == 150
    for speed in SPEEDS:
        entry = report["speeds"][speed]
        assert abs(entry["mean_speed_rad_s"] - float(speed)) < 0.02
        pmd = entry["methods"]["PMD"]
        assert pmd["mass_err_pct"] <= 2.5 and pmd["com_err_pct"] <= 17.0 and pmd["inertia_err_pct"] <= 50.0
        assert pmd["consistent_rate"] == 1.0
        assert pmd["inertia_err_pct"] < entry["methods"]["OLS"]["inertia_err_pct"]


def test_pmd_beats_ols_at_cobot_speeds_and_the_consistency_rates_are_reported(report):
    for speed in ("1", "1.5"):
        methods = report["speeds"][speed]["methods"]
        assert methods["PMD"]["com_err_pct"] < methods["OLS"]["com_err_pct"]
    for speed in SPEEDS:
        methods = report["speeds"][speed]["methods"]
        for name in ("OLS", "RTLS"):
            assert 0.0 <= methods[name]["consistent_rate"] < 1.0
        assert methods["GEO"]["consistent_rate"] == 1.0
        assert all(m["solve_time_p50_s"] > 0 for m in methods.values())


def test_stop_and_go_mass_and_com_errors_are_below_a_tenth_of_a_percent(report):
    s = report["stop_and_go"]
    assert s["mass_err_pct"] < 0.1 and s["com_err_pct"] < 0.1


@pytest.mark.parametrize("argv", [["study", "pmd", "--speeds", "0"], ["study", "pmd", "--samples", "3"],
                                  ["study", "pmd", "--density", "0.00001", "--speeds", "1"],
                                  ["study", "pmd", "--seed", "-1"], ["study", "pmd", "--workers", "0"]])
def test_bad_study_arguments_are_one_line_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("inertial-id study pmd: error:") and "\n" not in err


def test_pmd_benchmark_reports_the_solve_time_of_56_points(tmp_path):
    path = tmp_path / "bench.json"
    assert main(["bench", "pmd", "--repeats", "3", "--json", str(path)]) == 0
    bench = json.loads(path.read_text())
    assert bench["points"] == 56 and bench["samples"] == 150 and bench["pmd_total_p50_s"] > 0
