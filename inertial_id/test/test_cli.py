"""The inertial-id command: benchmarks report figures; user errors are one line and exit 2."""
import json
import subprocess
import sys

import pytest

from inertial_id.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "inertial_id.cli", *args], capture_output=True, text=True, timeout=120)


def test_bench_regressor_reports_both_throughputs(tmp_path):
    out = tmp_path / "bench.json"
    assert main(["bench", "regressor", "--robot", "kinova_gen3", "--samples", "200", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["builder_core_samples_per_s"] > 0
    assert report["pinocchio_joint_torque_regressor_samples_per_s"] > 0
    assert report["rows_per_sample"] == 7


@pytest.mark.slow
def test_bench_estimate_times_the_stages_and_reads_as_the_reference_does(tmp_path):
    out = tmp_path / "bench.json"
    assert main(["bench", "estimate", "--seconds", "2", "--repeats", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["streams_identical_to_reference"] and report["joint_states"] >= 1900
    assert report["source"] == "samples" and 0 < report["mass_width_kg"] < 5.2
    stages = [report[f"{stage}_cpu_s"] for stage in ("read_joint_states", "rows", "estimator")]
    assert all(s > 0 for s in stages) and report["speed_vs_real_time"] > 0
    assert report["rosbags_and_pinocchio_cpu_s"] > 0 and report["speed_ceiling_vs_real_time"] > 0   # momentum rows


@pytest.mark.slow
def test_bench_bounds_reports_the_update_and_its_simplex_work(tmp_path):
    out = tmp_path / "bench.json"
    assert main(["bench", "bounds", "--trials", "1", "--repeats", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["rows"] > 100 and report["guaranteed_update_p95_s"] > 0
    assert 0 < report["guaranteed_lp_iterations_p50"] <= report["guaranteed_lp_iterations_max"]


@pytest.mark.slow
def test_bench_planner_reports_ipopt_per_plan(tmp_path):
    out = tmp_path / "bench.json"
    # a budget that leaves room for iterations on a loaded machine
    assert main(["bench", "planner", "--chains", "1", "--optimize-s", "0.5", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["optimize_budget_s"] == 0.5
    assert report["plans_timed"] >= 1 and report["certified"] >= 1
    assert 0 <= report["optimizer_converged_fraction"] <= 1 and 0 <= report["plan_certify_within_replan_fraction"] <= 1
    assert report["optimizer_iterations_p50"] >= 1 and report["plan_certify_p95_s"] > 0
    assert report["optimize_s_per_iteration_p50"] > 0
    assert len(report["plans"]) == report["plans_timed"]
    assert sum(report["optimizer_statuses"].values()) == report["plans_timed"]
    for plan in report["plans"]:
        assert plan["iterations"] >= 0 and plan["status"]
        assert plan["converged"] == (plan["status"] in ("Solve_Succeeded", "Solved_To_Acceptable_Level"))
        assert plan["optimize_s"] <= 0.5 + 0.3      # stopped between iterations at the budget
    if report["optimizer_converged_fraction"] > 0:     # otherwise nan: no plan converged
        assert report["optimizer_iterations_when_converged_min"] >= 1


def test_user_errors_are_one_line_without_traceback():
    for args in (["demo", "--robot", "no_such_robot"], ["demo", "--duration", "500"],
                 ["demo", "--payload", "anvil"], ["bench", "regressor", "--robot", "no_such_robot"]):
        p = run_cli(*args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "error" in p.stderr
