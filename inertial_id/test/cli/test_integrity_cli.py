"""Every CLI case of issue 23 that used to end in a traceback or in exit 0 on nonsense: one line on
stderr, a non-zero exit. Fixtures are generated in tmp_path (a 0.3 s bag of the simulated xArm7,
damaged copies of it, small profiles and URDFs)."""
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.robot.model import _find_config, resolve_model_path


def run_cli(argv, capsys) -> tuple[int, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:          # argparse usage errors
        code = exc.code
    return code, capsys.readouterr().err


def assert_one_line(code, err):
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert code not in (0, None), err


@pytest.fixture(scope="module")
def bag(tmp_path_factory) -> Path:
    from inertial_id.cli.record_sim import record
    from inertial_id.core.robot.model import load_robot
    out = tmp_path_factory.mktemp("bags") / "good"
    record(load_robot("xarm7"), "dumbbell_5lb", 0.3, out)
    return out


def damaged_bag(bag: Path, tmp_path: Path, damage: str) -> Path:
    out = tmp_path / damage
    shutil.copytree(bag, out)
    mcap = next(out.glob("*.mcap"))
    data = bytearray(mcap.read_bytes())
    if damage == "corrupted-chunk":       # a record length of 2^64 - 1: rosbags raised OverflowError
        start = data.find(b"\x06", 8)     # the first chunk record (opcode 0x06)
        data[start + 1 + 8 + 40:start + 1 + 8 + 48] = b"\xff" * 8
    elif damage == "flipped-bytes":
        for i in range(400, len(data) - 400, 997):
            data[i] ^= 0xFF
    elif damage == "truncated":
        data = data[:len(data) // 2]
    mcap.write_bytes(bytes(data))
    if damage == "empty-metadata":
        (out / "metadata.yaml").write_text("")
    return out


BAG_DAMAGE = ["corrupted-chunk", "flipped-bytes", "truncated", "empty-metadata"]


@pytest.mark.parametrize("damage", BAG_DAMAGE)
@pytest.mark.parametrize("command", ["estimate", "replay", "report"])
def test_damaged_bags_are_one_line(bag, tmp_path, capsys, damage, command):
    path = damaged_bag(bag, tmp_path, damage)
    argv = {"estimate": ["estimate", "--bag", path, "--robot", "xarm7"],
            "replay": ["bag", "replay", path],
            "report": ["report", path, "--out", tmp_path / "report", "--robot", "xarm7"]}[command]
    code, err = run_cli(argv, capsys)
    assert_one_line(code, err)
    assert "bag" in err


def test_the_good_bag_is_read(bag, tmp_path, capsys):
    """The fixture itself is fine: the damage is what the commands above refuse."""
    code, err = run_cli(["estimate", "--bag", bag, "--robot", "xarm7"], capsys)
    assert code == 0, err


def test_report_on_a_json_list_and_onto_an_existing_file(bag, tmp_path, capsys):
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2, 3]\n")
    assert_one_line(*run_cli(["report", listing, "--out", tmp_path / "r1"], capsys))
    broken = tmp_path / "broken.json"
    broken.write_text('{"parameter_names": ["m"], "lower": [0], "history": {"t": 5}}')
    assert_one_line(*run_cli(["report", broken, "--out", tmp_path / "r2"], capsys))
    existing = tmp_path / "existing_file"
    existing.write_text("keep me\n")
    assert_one_line(*run_cli(["report", bag, "--out", existing, "--robot", "xarm7"], capsys))
    assert existing.read_text() == "keep me\n"


NUMBERS = [
    ["demo", "--real-time-factor", "0"],
    ["demo", "--real-time-factor", "nan"],
    ["bench", "builder", "--rate", "0"],
    ["bench", "builder", "--rate", "nan"],
    ["bench", "bounds", "--minutes", "-1"],
    ["bench", "estimate", "--seconds", "0"],
    ["bench", "estimate", "--bag", "no_such_bag"],
    ["bag", "record-sim", "--rate-hz", "0", "--out", "x"],      # no such option any more: still one line
]


@pytest.mark.parametrize("argv", NUMBERS, ids=["-".join(a).replace("--", "") for a in NUMBERS])
def test_meaningless_numbers_are_one_line(capsys, argv):
    assert_one_line(*run_cli(argv, capsys))


def test_estimate_bounds_period_nan_and_replay_tail_nan(bag, capsys):
    """Both used to exit 0 (NaN in the JSON; a replay without a tail)."""
    assert_one_line(*run_cli(["estimate", "--bag", bag, "--robot", "xarm7", "--bounds-period", "nan"], capsys))
    assert_one_line(*run_cli(["bag", "replay", bag, "--tail", "nan"], capsys))


def xarm7_profile(tmp_path: Path, urdf_edit=None, text_edit=None) -> Path:
    """A copy of the xarm7 profile (and, with ``urdf_edit``, of its URDF) with one change."""
    text = _find_config("robots/xarm7.yaml").read_text()
    if urdf_edit is not None:
        urdf = resolve_model_path(re.search(r"urdf: (\S+)", text).group(1))
        changed = tmp_path / "xarm7_changed.urdf"
        changed.write_text(urdf_edit(urdf.read_text()))
        text = re.sub(r"urdf: \S+", f"urdf: {changed}", text, count=1)
    if text_edit is not None:
        text = text_edit(text)
    path = tmp_path / "xarm7_changed.yaml"
    path.write_text(text)
    return path


def second_link(attribute_edit):
    """Edit the inertial of the second <inertial> element of the URDF (a moving link)."""
    def edit(text):
        starts = [m.start() for m in re.finditer("<inertial>", text)]
        end = text.index("</inertial>", starts[1])
        return text[:starts[1]] + attribute_edit(text[starts[1]:end]) + text[end:]
    return edit


PROFILES = {
    "mass-1e300": dict(urdf_edit=second_link(lambda s: re.sub(r'mass value="[^"]*"', 'mass value="1e300"', s))),
    "negative-inertia": dict(urdf_edit=second_link(lambda s: re.sub(r'ixx="[^"]*"', 'ixx="-0.5"', s))),
    "non-positive-definite-inertia": dict(urdf_edit=second_link(
        lambda s: re.sub(r'ixy="[^"]*"', 'ixy="5.0"', s))),
    "all-torque-limits-zero": dict(text_edit=lambda t: re.sub(r"torque: \[[^\]]*\]", "torque: [0, 0, 0, 0, 0, 0, 0]",
                                                              t, count=1)),
    "duplicate-yaml-key": dict(text_edit=lambda t: t.replace("\nname: xarm7", "\nname: xarm7\nname: other", 1)),
    "400-digit-integer": dict(text_edit=lambda t: re.sub(r"robot_relative_error: [0-9.]+",
                                                         "robot_relative_error: " + "9" * 400, t, count=1)),
}


@pytest.mark.parametrize("case", PROFILES)
@pytest.mark.parametrize("command", ["record-sim", "estimate"])
def test_impossible_models_and_profiles_are_refused(bag, tmp_path, capsys, case, command):
    """record-sim used to write a bag of NaN joint states for the 1e300 kg link and exit 0; the
    others ran with an impossible robot or a silently chosen duplicate."""
    profile = xarm7_profile(tmp_path, **PROFILES[case])
    argv = {"record-sim": ["bag", "record-sim", "--robot", profile, "--duration", "0.2", "--out", tmp_path / "bag"],
            "estimate": ["estimate", "--bag", bag, "--robot", profile]}[command]
    code, err = run_cli(argv, capsys)
    assert_one_line(code, err)
    assert code == 2 and not (tmp_path / "bag").exists()


def test_the_unchanged_profile_copy_is_accepted(tmp_path, capsys):
    """The copies above differ from a working profile only by the change each names."""
    from inertial_id.core.robot.model import load_robot
    profile = xarm7_profile(tmp_path, urdf_edit=second_link(lambda s: s), text_edit=lambda t: t)
    assert load_robot(str(profile)).nv == 7


def test_any_damaged_record_is_a_bag_error(bag, tmp_path):
    """Eight 0xFF bytes written at 40 offsets across the MCAP file (a record length so damaged made
    rosbags raise OverflowError): reading the bag ends with a BagError or reads it, never with
    anything else (the commands turn a BagError into one line)."""
    from inertial_id.core.data import bags
    path = tmp_path / "swept"
    shutil.copytree(bag, path)
    mcap = next(path.glob("*.mcap"))
    original = mcap.read_bytes()
    outcomes = {"read": 0, "BagError": 0}
    for offset in np.linspace(0, len(original) - 8, 40).astype(int):
        data = bytearray(original)
        data[offset:offset + 8] = b"\xff" * 8
        mcap.write_bytes(bytes(data))
        try:
            bags.check_readable(path)
            bags.read_topics(path, list(bags.topics_in(path)))
            outcomes["read"] += 1
        except bags.BagError:
            outcomes["BagError"] += 1
    assert outcomes["BagError"] >= 10, outcomes
