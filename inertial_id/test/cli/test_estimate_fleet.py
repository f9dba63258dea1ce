"""`estimate --bag FOLDER` over a fleet of bags: each bag on its own (spawned processes here; a Dask
scheduler with --scheduler), one JSON per bag, a summary table; a damaged bag fails alone."""
import json
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow          # estimates a set of bags


def cli(*args):
    return subprocess.run([sys.executable, "-m", "inertial_id.cli", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    for seed in (1, 2):
        done = cli("bag", "record-sim", "--robot", "xarm7", "--duration", "3", "--seed", str(seed),
                   "--out", str(root / f"arm{seed}"))
        assert done.returncode == 0, done.stderr
    return root


def test_every_bag_is_estimated_on_its_own_and_summarised(fleet, tmp_path):
    out = tmp_path / "results"
    done = cli("estimate", "--bag", str(fleet), "--robot", "xarm7", "--out-dir", str(out), "--workers", "2",
               "--json", str(tmp_path / "summary.json"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["bags"] == 2 and summary["failed"] == 0
    for name in ("arm1", "arm2"):
        one = json.loads((out / f"{name}.json").read_text())
        single = cli("estimate", "--bag", str(fleet / name), "--robot", "xarm7", "--json", "-")
        alone = json.loads(single.stdout[:single.stdout.rindex("}") + 1])
        np.testing.assert_allclose(one["lower"], alone["lower"], rtol=1e-12)      # same as on its own
        np.testing.assert_allclose(one["upper"], alone["upper"], rtol=1e-12)
        assert one["truth_inside_bounds"] and one["bounds_guaranteed"]
        assert name in done.stdout


def test_a_damaged_bag_fails_alone_and_the_run_says_so(fleet, tmp_path):
    (fleet / "broken").mkdir(exist_ok=True)
    (fleet / "broken" / "metadata.yaml").write_text("")
    try:
        done = cli("estimate", "--bag", str(fleet), "--robot", "xarm7", "--out-dir", str(tmp_path), "--workers", "1")
    finally:
        (fleet / "broken" / "metadata.yaml").unlink()
        (fleet / "broken").rmdir()
    assert done.returncode == 1
    assert "broken" in done.stdout and "FAILED" in done.stdout and "Traceback" not in done.stderr
    assert (tmp_path / "arm1.json").exists() and not (tmp_path / "broken.json").exists()


def test_a_fleet_needs_an_output_folder(fleet):
    done = cli("estimate", "--bag", str(fleet), "--robot", "xarm7")
    assert done.returncode == 2 and "--out-dir" in done.stderr and len(done.stderr.strip().splitlines()) == 1
