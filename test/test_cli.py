"""The inertial-id command: benchmarks report figures; user errors are one line and exit 2."""
import json
import subprocess
import sys

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


def test_user_errors_are_one_line_without_traceback():
    for args in (["demo", "--robot", "no_such_robot"], ["demo", "--duration", "500"],
                 ["demo", "--payload", "anvil"], ["bench", "regressor", "--robot", "no_such_robot"]):
        p = run_cli(*args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "error" in p.stderr
