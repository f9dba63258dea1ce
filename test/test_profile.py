"""The profile schema: every shipped profile validates; a wrong type, a missing required field, a
vector of the wrong length or an unknown key is one line naming the field (CLI: exit 2)."""
from pathlib import Path

import pytest
import yaml

from inertial_id.cli import main
from inertial_id.core.model import available_profiles, load_profile, load_robot
from inertial_id.core.profile import ProfileError, validate

GEN3 = Path(__file__).resolve().parents[1] / "config" / "robots" / "kinova_gen3.yaml"


@pytest.mark.parametrize("name", available_profiles())
def test_shipped_profiles_validate_and_fill_defaults(name):
    p = load_profile(name)
    assert p["sensing"]["joint_states_topic"].startswith("/")
    assert p["identification"]["momentum_window_s"] >= 0.0
    load_robot(p)   # a validated profile validates again (it may be passed around as a dict)


def raw():
    return yaml.safe_load(GEN3.read_text())


@pytest.mark.parametrize("change, field, words", [
    (lambda p: p.update(joints=5), "joints", "list of names"),
    (lambda p: p.pop("frames"), "frames", "missing"),
    (lambda p: p["frames"].pop("payload"), "frames.payload", "missing"),
    (lambda p: p["limits"].update(torque=[39.0, 39.0]), "limits.torque", "expected 7 numbers"),
    (lambda p: p["limits"].update(velocity=[1.0] * 6 + ["fast"]), "limits.velocity[6]", "finite number"),
    (lambda p: p["noise"]["joint_torque"].update(relative="2.5 %"), "noise.joint_torque.relative", "finite number"),
    (lambda p: p["identification"].update(momentum_window=50), "identification.momentum_window", "unknown field"),
    (lambda p: p["sensing"].update(joint_torque="yes"), "sensing.joint_torque", "true or false"),
    (lambda p: p["sensing"].update(joint_states_hz=0.0), "sensing.joint_states_hz", "must lie in"),
    (lambda p: p.update(obstacles=[{"name": "table", "center": [0, 0, 0]}]), "obstacles[0].size", "missing"),
    (lambda p: p.update(limitz={}), "limitz", "unknown field"),
])
def test_a_bad_field_is_named(change, field, words):
    p = raw()
    change(p)
    with pytest.raises(ProfileError) as err:
        validate(p, "kinova_gen3.yaml")
    msg = str(err.value)
    assert msg.startswith(f"kinova_gen3.yaml: {field}: ") and words in msg and "\n" not in msg


@pytest.mark.parametrize("text", ["joints: [a, b\nmodel: {", "joints: 5\n", "- a list\n", "\x00\x01binary"])
def test_cli_reports_a_broken_profile_in_one_line_with_exit_2(text, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert main(["identifiability", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml" in err[0], err
