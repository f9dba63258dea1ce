"""A payload the robot profile's prior box excludes, carried by the simulated arm through the whole
suite over DDS (``inertial-id demo``, every node a process): the estimator finds the data
inconsistent from samples taken at rest, and the planner never moves the arm; the demo fails in one
line saying why."""
import re
import subprocess
import sys

import pytest

from inertial_id.core.robot.model import load_payloads, load_robot

pytestmark = pytest.mark.ros


def test_a_payload_outside_the_prior_box_never_moves(tmp_path):
    robot = load_robot("xarm7")
    heavy = load_payloads()["box_7kg"]["mass_kg"]
    assert heavy > robot.payload_prior()[1][0]            # outside the prior box: the premise of the test
    proc = subprocess.run([sys.executable, "-m", "inertial_id.cli", "demo", "--quiet", "--robot", "xarm7",
                           "--payload", "box_7kg", "--duration", "10", "--log-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    last = proc.stderr.strip().splitlines()[-1]
    print(last)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "data inconsistent" in last and "not moving" in last
    planner_log = (tmp_path / "excitation_planner.log").read_text()
    assert not re.search(r"published \d+ points", planner_log), "a command reached the arm"
