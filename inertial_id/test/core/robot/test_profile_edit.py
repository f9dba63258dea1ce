"""Measured figures written into a profile file: the tube's one line replaced, rounded up, every
comment kept, the file still loading; the calibration named in the identification section, once;
a file it cannot place them in is refused in one line."""
import shutil

import numpy as np
import pytest

from inertial_id.core.robot import strict_yaml
from inertial_id.core.robot.model import ProfileError, load_robot
from inertial_id.core.robot.profile import parse
from inertial_id.core.robot.profile_edit import (read_profile_text, tube_yaml, with_calibration, with_tracking_tube,
                                                 write_profile_text)
from inertial_id.share import config_dirs


def shipped(name: str):
    return next(d / "robots" / f"{name}.yaml" for d in config_dirs() if (d / "robots" / f"{name}.yaml").is_file())


def test_values_are_rounded_up_to_two_significant_digits():
    text = tube_yaml([[0.00221, 0.003], [0.0191, 0.1], [0.4335, 1.2301]])
    assert text == ("{position_rad: [0.0023, 0.003], velocity_rad_s: [0.02, 0.1], "
                    "acceleration_rad_s2: [0.44, 1.3]}")
    rng = np.random.default_rng(0)
    tube = 10.0 ** rng.uniform(-4, 1, (3, 7))
    back = strict_yaml.load(tube_yaml(tube))
    written = np.array([back[k] for k in ("position_rad", "velocity_rad_s", "acceleration_rad_s2")])
    assert np.all(written >= tube) and np.all(written <= 1.1 * tube)


def test_the_tube_line_is_replaced_and_everything_else_kept(tmp_path):
    path = tmp_path / "digit_arm.yaml"
    shutil.copy(shipped("digit_arm"), path)
    shutil.copytree(shipped("digit_arm").parent.parent / "urdf", tmp_path / "urdf")
    before = path.read_text().splitlines()
    tube = np.array([[0.002, 0.003, 0.005, 0.005], [0.02, 0.013, 0.016, 0.049], [0.44, 0.25, 0.4, 0.6]])
    write_profile_text(path, with_tracking_tube(read_profile_text(path), tube, "measured: a test"))
    after = path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(after) == len(before) and len(changed) == 1
    assert changed[0][1].endswith("# measured: a test")
    settings = load_robot(str(path)).spec.planner.tracking_error
    np.testing.assert_allclose(settings.acceleration_rad_s2, tube[2])


def test_a_profile_without_one_tube_line_is_refused():
    with pytest.raises(ProfileError, match="tracking_error.*by hand"):
        with_tracking_tube("planner:\n  horizon_s: 3.0\n", np.ones((3, 2)), "x")


def test_the_calibration_is_named_once_in_the_identification_section():
    text = shipped("kinova_gen3").read_text()
    once = with_calibration(text, "gen3_cal.yaml", "a test")
    twice = with_calibration(once, "other_cal.yaml", "again")
    for written, name in ((once, "gen3_cal.yaml"), (twice, "other_cal.yaml")):
        assert parse(strict_yaml.load(written), "written").identification.calibration == name
        assert sum("calibration:" in line and line.startswith("  calibration") for line in written.splitlines()) == 1
        assert len(written.splitlines()) == len(text.splitlines()) + 1
    with pytest.raises(ProfileError, match="identification.calibration"):
        with_calibration("planner:\n  horizon_s: 3.0\n", "x.yaml", "x")
