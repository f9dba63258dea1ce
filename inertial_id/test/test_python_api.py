"""The documented Python API: the example file runs (arrays and a bag in, bounds out; recorded runs
in, whole-robot model out) and its results hold; every public function has a docstring."""
import subprocess
import sys

import numpy as np
import pytest

from inertial_id import api

from paths import PACKAGE

EXAMPLE = PACKAGE / "examples" / "python_api.py"


def test_the_example_runs_and_its_results_hold():
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=300)
    print(proc.stdout[-3000:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "truth inside every interval: True; arrays give the same bounds: True" in proc.stdout
    assert proc.stdout.rstrip().endswith("python API example: ok")


def test_public_names_are_documented():
    for name in api.__all__:
        assert (getattr(api, name).__doc__ or "").strip(), name


def test_samples_that_form_no_rows_are_an_error_not_a_box():
    robot = api.load_robot("xarm7")
    n = len(robot.joint_names)
    with pytest.raises(ValueError, match="no rows"):
        api.payload_bounds(robot, np.array([0.0, 0.001]), np.zeros((2, n)), np.zeros((2, n)),
                           wrench=(np.array([0.0, 0.001]), np.zeros((2, 6))))
