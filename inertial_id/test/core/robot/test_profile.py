"""The profile schema: every shipped profile validates; a wrong type, a missing required field, a
vector of the wrong length or an unknown key anywhere is one line naming the field (CLI: exit 2)."""
import copy

import pytest
import yaml

from inertial_id.cli import main
from inertial_id.core.robot.model import available_profiles, load_profile, load_robot, profile_file
from inertial_id.core.robot.profile import ProfileError, validate

from paths import PACKAGE

GEN3 = PACKAGE / "config" / "robots" / "kinova_gen3.yaml"


@pytest.mark.parametrize("name", available_profiles())
def test_shipped_profiles_validate_and_fill_defaults(name):
    p = load_profile(name)
    assert p["sensing"]["joint_states_topic"].startswith("/")
    assert p["identification"]["momentum_window_s"] >= 0.0
    load_robot(p)   # a validated profile validates again (it may be passed around as a dict)


def test_an_edited_profile_is_checked_again():
    """Settings read the typed profile; an edited section, typed or as a mapping, is checked again
    with the whole profile, and the settings follow the edit."""
    from inertial_id.core.planning.config import PlannerSettings
    robot = load_robot("kinova_gen3")
    planner = validate(robot.spec, robot.name)["planner"]
    edited = robot.with_profile(planner=robot.spec.planner.model_copy(update={"max_plans": 3}))
    assert (PlannerSettings.from_profile(robot).max_plans, PlannerSettings.from_profile(edited).max_plans) == (
        robot.spec.planner.max_plans, 3)
    with pytest.raises(ProfileError, match="planner.max_plans"):
        robot.with_profile(planner={**planner, "max_plans": "many"})
    with pytest.raises(ProfileError, match="planner.replan_s"):
        robot.with_profile(planner={**planner, "replan_s": planner["horizon_s"]})
    # the model is built from the limits: an edit there would leave the model and the profile apart
    with pytest.raises(ValueError, match="cannot change limits"):
        robot.with_profile(limits=robot.spec.limits.model_copy(update={"velocity": [0.1] * robot.nv}))


def raw():
    return yaml.safe_load(GEN3.read_text())


@pytest.mark.parametrize("change, field, words", [
    (lambda p: p.update(joints=5), "joints", "expected a list"),
    (lambda p: p.pop("frames"), "frames", "missing"),
    (lambda p: p["frames"].pop("payload"), "frames.payload", "missing"),
    (lambda p: p["limits"].update(torque=[39.0, 39.0]), "limits.torque", "expected 7 numbers"),
    (lambda p: p["limits"].update(velocity=[1.0] * 6 + ["fast"]), "limits.velocity[6]", "finite number"),
    (lambda p: p["noise"]["joint_torque"].update(relative="2.5 %"), "noise.joint_torque.relative", "finite number"),
    (lambda p: p["identification"].update(momentum_window=50), "identification.momentum_window", "unknown key"),
    (lambda p: p["sensing"].update(joint_torque="yes"), "sensing.joint_torque", "true or false"),
    (lambda p: p["sensing"].update(joint_states_hz=0.0), "sensing.joint_states_hz", "must be >= 1"),
    (lambda p: p.update(obstacles=[{"name": "table", "center": [0, 0, 0]}]), "obstacles[0].size", "missing"),
    (lambda p: p.update(limitz={}), "limitz", "unknown key"),
    (lambda p: p["planner"]["tracking_error"].update(positon_rad=0.1), "planner.tracking_error.positon_rad",
     "unknown key"),
    (lambda p: p["planner"].update(acceleration_fractoin=0.5), "planner.acceleration_fractoin", "unknown key"),
    (lambda p: p["planner"].update(replan_s=3.5), "planner.replan_s", "shorter than horizon_s"),
    (lambda p: p["planner"].update(deadline_s=1.45), "planner.command_lead_s", "shorter than replan_s"),
    (lambda p: p["planner"].update(torque_margin_Nm=[1.0, 1.0]), "planner.torque_margin_Nm", "expected 7 numbers"),
    (lambda p: p["planner"]["capsules"][1].update(radius=-0.1), "planner.capsules[1].radius", "must be >= 0"),
    (lambda p: p["planner"]["robot_absolute_floor"].pop("mass_kg"), "planner.robot_absolute_floor.mass_kg",
     "missing"),
    (lambda p: p["planner"].update(time_intervals=64.0), "planner.time_intervals", "expected an integer"),
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
    assert main(["study", "identifiability", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml" in err[0], err


def _sections(node, path=""):
    """(path, mapping) of every mapping in a raw profile, list entries included."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if path != "rotor_inertia":         # keyed by joint name, values checked as numbers
                yield from _sections(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _sections(value, f"{path}[{i}]")


def _leaves(node, path=""):
    """Paths of every value in a raw profile that is not a mapping (vectors whole, not per entry)."""
    for where, mapping in _sections(node, path):
        for key, value in mapping.items():
            if not isinstance(value, dict) and not (isinstance(value, list) and value and
                                                     isinstance(value[0], dict)):
                yield f"{where}.{key}" if where else key


def _at(profile, path):
    """The mapping holding ``path``'s last key, and that key."""
    parts = path.replace("[", ".[").split(".")
    node = profile
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node, parts[-1]


SHIPPED = {name: yaml.safe_load(profile_file(name).read_text()) for name in available_profiles()}
EVERY_SECTION = sorted({(name, path) for name, raw_profile in SHIPPED.items() for path, _ in _sections(raw_profile)})
EVERY_FIELD = sorted({(name, path) for name, raw_profile in SHIPPED.items() for path in _leaves(raw_profile)})


def test_the_walk_reaches_every_kind_of_section():
    paths = {path for _, path in EVERY_SECTION}
    for path in ("planner", "planner.tracking_error", "planner.robot_absolute_floor", "planner.capsules[0]",
                 "loop_closures[0]", "payload.shape", "payload.shape.pose", "payload.pmd", "noise.joint_torque",
                 "sensing", "identification", "controller", "excitation", "sim", "frames", "model"):
        assert path in paths, path


@pytest.mark.parametrize("name, path", EVERY_SECTION)
def test_an_unknown_key_anywhere_is_named(name, path):
    profile = copy.deepcopy(SHIPPED[name])
    node = profile
    if path:
        holder, key = _at(profile, path)
        node = holder[int(key[1:-1])] if key.startswith("[") else holder[key]
    node["colour"] = 1.0
    field = f"{path}.colour" if path else "colour"
    with pytest.raises(ProfileError) as err:
        validate(profile, f"{name}.yaml")
    assert str(err.value) == f"{name}.yaml: {field}: unknown key"


@pytest.mark.parametrize("name, path", EVERY_FIELD)
def test_a_wrong_type_anywhere_is_named(name, path):
    profile = copy.deepcopy(SHIPPED[name])
    holder, key = _at(profile, path)
    holder[key] = {"wrong": "type"}
    with pytest.raises(ProfileError) as err:
        validate(profile, f"{name}.yaml")
    msg = str(err.value)
    assert msg.startswith(f"{name}.yaml: {path}") and "\n" not in msg, msg
