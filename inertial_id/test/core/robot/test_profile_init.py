"""``inertial-id profile init`` (issue 50): a profile written from a URDF the package does not ship
loads as written, with the URDF's joints and limits; bad input is one line and a non-zero exit; and
the profile errors a hand-written profile meets name the field and the fix."""
import json
import shutil
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from inertial_id.cli import main
from inertial_id.core.robot.model import load_profile, load_robot, resolve_model_path
from inertial_id.core.robot.profile import ProfileError, validate
from inertial_id.core.robot.profile_init import RATED_PAYLOAD_SAFETY, init_profile, payload_prior

from paths import DATA, PACKAGE

GEN3 = PACKAGE / "config" / "robots" / "kinova_gen3.yaml"
# (URDF, payload link, rated payload kg): the manufacturers' figures (sources in each URDF)
ARMS = [("ur5e.urdf", "tool0", 5.0), ("fr3.urdf", "fr3_link8", 3.0)]


def beside(tmp_path: Path, urdf: str) -> Path:
    """The URDF copied into a folder of its own, as a user keeps an arm's files."""
    shutil.copy(DATA / urdf, tmp_path / urdf)
    return tmp_path / urdf


@pytest.mark.parametrize("urdf, link, rated_kg", ARMS, ids=[a[0] for a in ARMS])
@pytest.mark.parametrize("sensing", ["joint_torque", "wrench"])
def test_the_written_profile_loads_with_the_urdfs_joints_and_limits(tmp_path, urdf, link, rated_kg, sensing):
    out = init_profile(beside(tmp_path, urdf), link, rated_kg, tmp_path / "arm.yaml", sensing=sensing)
    robot = load_robot(str(out))
    model = pin.buildModelFromUrdf(str(DATA / urdf))
    assert robot.joint_names == tuple(model.names[1:])
    np.testing.assert_array_equal(robot.position_lower, model.lowerPositionLimit)
    np.testing.assert_array_equal(robot.position_upper, model.upperPositionLimit)
    np.testing.assert_array_equal(robot.velocity_limit, model.velocityLimit)
    np.testing.assert_array_equal(robot.torque_limit, model.effortLimit)
    assert robot.payload_frame == link and getattr(robot.sensing, sensing) and not getattr(
        robot.sensing, "wrench" if sensing == "joint_torque" else "joint_torque")
    assert (robot.ft_frame == link) == (sensing == "wrench")
    lower, upper = robot.payload_prior()
    assert lower[0] == 0.0 and upper[0] == pytest.approx(RATED_PAYLOAD_SAFETY * rated_kg)
    assert np.all(robot.acceleration_limit > 0) and (sensing == "joint_torque") == np.all(np.isinf(robot.jerk_limit))
    # the file names the URDF beside it: the pair moves together
    assert yaml.safe_load(out.read_text())["model"]["urdf"] == urdf


@pytest.mark.parametrize("urdf, link, rated_kg", ARMS, ids=[a[0] for a in ARMS])
def test_the_home_holds_the_heaviest_prior_payload_well_within_the_torque_limits(tmp_path, urdf, link, rated_kg):
    """At mid-range the FR3's wrist needs 105 % of its torque limit to hold the prior's heaviest
    payload 0.2 m out; at the written home, under 60 % of any joint's, with the excitation's room inside
    the position limits."""
    from inertial_id.core.robot.model import model_with_payload
    robot = load_robot(str(init_profile(beside(tmp_path, urdf), link, rated_kg, tmp_path / "arm.yaml")))
    home = np.asarray(robot.spec.sim.home)
    reach = np.asarray(robot.spec.planner.reach_rad)
    # (the file holds 6 significant digits)
    assert np.all(home - reach >= robot.position_lower - 1e-5) and np.all(home + reach <= robot.position_upper + 1e-5)
    assert robot.spec.planner.centre == robot.spec.sim.home
    heaviest_kg = robot.payload_prior()[1][0]
    for p_FP in np.vstack([np.eye(3), -np.eye(3)]) * 0.2:
        pi = np.zeros(10)
        pi[0], pi[1:4] = heaviest_kg, heaviest_kg * p_FP
        model = model_with_payload(robot, pi)
        gravity_Nm = pin.computeGeneralizedGravity(model, model.createData(), home)
        assert np.all(np.abs(gravity_Nm) < 0.6 * robot.torque_limit)


def test_names_yaml_would_misread_are_quoted(tmp_path):
    text = (DATA / "ur5e.urdf").read_text().replace('<robot name="ur5e">', '<robot name="arm: v2 #1">')
    text = text.replace('"tool0"', '"true"')
    urdf = tmp_path / "odd.urdf"
    urdf.write_text(text)
    robot = load_robot(str(init_profile(urdf, "true", 5.0, tmp_path / "odd.yaml")))
    assert (robot.name, robot.payload_frame) == ("arm: v2 #1", "true")


def test_the_prior_holds_every_payload_within_the_reach():
    """The prior's rule: a point mass of the largest mass anywhere within the reach is inside the box."""
    from inertial_id.core.robot import params
    from inertial_id.core.robot.profile_init import PAYLOAD_REACH_M
    lower, upper = payload_prior(4.0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.normal(size=3)
        p *= PAYLOAD_REACH_M * rng.uniform() ** (1 / 3) / np.linalg.norm(p)
        pi = params.transform_params(params.box_inertia_params(upper[0], [0.0, 0.0, 0.0]), pin.SE3(np.eye(3), p))
        assert np.all(pi >= lower - 1e-12) and np.all(pi <= upper + 1e-12)


def test_the_cli_writes_and_refuses_to_overwrite_without_force(tmp_path, capsys):
    urdf = beside(tmp_path, "ur5e.urdf")
    out = tmp_path / "ur5e.yaml"
    argv = ["profile", "init", "--urdf", str(urdf), "--payload-link", "tool0", "--rated-payload-kg", "5", "--out", str(out),
            "--tube-seconds", "0"]
    assert main(argv) == 0
    assert "# placeholder" in next(line for line in out.read_text().splitlines() if "tracking_error:" in line)
    written = out.read_text()
    out.write_text(written + "# edited by hand\n")
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--force" in err and len(err.strip().splitlines()) == 1
    assert out.read_text().endswith("# edited by hand\n")
    assert main([*argv, "--force"]) == 0 and out.read_text() == written


@pytest.mark.slow
def test_init_measures_the_tube_and_profile_tube_writes_only_into_a_file(tmp_path, capsys):
    """By default ``profile init`` measures the simulated arm's tube into the profile; ``profile tube
    --write`` refuses a shipped name (the package's own files) in one line."""
    out = tmp_path / "ur5e.yaml"
    assert main(["profile", "init", "--urdf", str(beside(tmp_path, "ur5e.urdf")), "--payload-link", "tool0",
                 "--rated-payload-kg", "5", "--out", str(out), "--tube-seconds", "6"]) == 0
    line = next(line for line in out.read_text().splitlines() if "tracking_error:" in line)
    assert "# measured: inertial-id profile tube" in line
    tube = load_robot(str(out)).spec.planner.tracking_error
    assert len(set(tube.position_rad)) > 1          # per joint, from the errors measured on each
    capsys.readouterr()
    assert main(["profile", "tube", "--robot", "kinova_gen3", "--write"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--write takes a profile file" in err and len(err.splitlines()) == 1


def broken_urdf(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text("<robot name='x'><link name='a'>")
    return str(path)


def continuous_urdf(tmp_path):
    text = (DATA / "ur5e.urdf").read_text().replace('name="elbow_joint" type="revolute"', 'name="elbow_joint" type="continuous"')
    path = tmp_path / "continuous.urdf"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("argv, words", [
    (lambda p: ["--urdf", broken_urdf(p), "--payload-link", "a"], "cannot parse URDF"),
    (lambda p: ["--urdf", str(p / "missing.urdf"), "--payload-link", "tool0"], "not found"),
    (lambda p: ["--urdf", str(beside(p, "ur5e.urdf")), "--payload-link", "gripper"], "no link 'gripper'"),
    (lambda p: ["--urdf", str(beside(p, "ur5e.urdf")), "--payload-link", "base_link"], "does not move"),
    (lambda p: ["--urdf", continuous_urdf(p), "--payload-link", "tool0"], "elbow_joint are continuous"),
    (lambda p: ["--urdf", str(beside(p, "ur5e.urdf")), "--payload-link", "tool0", "--ft-frame", "tool0"],
     "only with wrench sensing"),
    (lambda p: ["--urdf", str(beside(p, "ur5e.urdf")), "--payload-link", "tool0", "--sensing", "wrench",
                "--ft-frame", "sensor"], "no link 'sensor'"),
], ids=["broken-urdf", "missing-urdf", "unknown-link", "link-on-the-base", "continuous-joint", "ft-frame-without-wrench",
        "unknown-ft-frame"])
def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path, capsys, argv, words):
    out = tmp_path / "out.yaml"
    code = main(["profile", "init", *argv(tmp_path), "--rated-payload-kg", "5", "--out", str(out)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("rated", ["0", "-3", "nan", "heavy"])
def test_a_rated_payload_that_is_no_mass_is_a_usage_error(tmp_path, capsys, rated):
    with pytest.raises(SystemExit) as exit_:
        main(["profile", "init", "--urdf", str(DATA / "ur5e.urdf"), "--payload-link", "tool0",
              "--rated-payload-kg", rated, "--out", str(tmp_path / "x.yaml")])
    assert exit_.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_profile_finds_its_urdf_in_its_own_folder_first(tmp_path):
    urdf = beside(tmp_path, "fr3.urdf")
    (tmp_path / "urdf").mkdir()
    shutil.copy(DATA / "ur5e.urdf", tmp_path / "urdf" / "fr3.urdf")     # a namesake one folder up the old rule
    profile = tmp_path / "robots" / "fr3.yaml"
    profile.parent.mkdir()
    assert resolve_model_path("fr3.urdf", str(tmp_path / "fr3.yaml")) == urdf
    # a shipped-style layout (config/robots/x.yaml naming urdf/x.urdf) still resolves
    assert resolve_model_path("urdf/fr3.urdf", str(profile)) == tmp_path / "urdf" / "fr3.urdf"


def gen3_raw() -> dict:
    return yaml.safe_load(GEN3.read_text())


def test_a_missing_payload_prior_names_the_field_and_the_fix():
    raw = gen3_raw()
    del raw["payload"]["prior_lower"], raw["payload"]["prior_upper"]
    raw["model"]["urdf"] = str(GEN3.parent.parent / raw["model"]["urdf"])
    robot = load_robot(raw)
    with pytest.raises(ProfileError, match=r"payload\.prior_lower: missing .*profile init") as err:
        robot.payload_prior()
    assert "\n" not in str(err.value) and "cuts" not in str(err.value)


@pytest.mark.parametrize("noise", [{}, {"joint_torque": {"relative": 0.0, "absolute_Nm": 0.0}}],
                         ids=["missing", "zero"])
def test_a_torque_sensing_profile_without_a_torque_bound_is_refused_at_load(noise):
    raw = gen3_raw()
    raw["noise"] = noise
    with pytest.raises(ProfileError) as err:
        validate(raw, "arm.yaml")
    msg = str(err.value)
    assert msg.startswith("arm.yaml: noise.joint_torque.absolute_Nm: ") and "calibrate" in msg and "\n" not in msg


def test_whole_robot_profiles_without_a_payload_prior_need_no_torque_bound():
    """digit_leg and four_bar identify the robot, not a payload: their profiles state no torque bound."""
    for name in ("four_bar", "digit_leg"):
        assert load_profile(name)["noise"]["joint_torque"]["absolute_Nm"] == 0.0


@pytest.mark.parametrize("urdf, link, rated_kg", ARMS, ids=[a[0] for a in ARMS])
@pytest.mark.parametrize("sensing", ["joint_torque", "wrench"])
def test_estimate_accepts_the_written_profile_on_a_simulated_run(tmp_path, urdf, link, rated_kg, sensing):
    """record-sim then estimate on the profile as written: guaranteed, consistent, the truth inside."""
    profile = str(init_profile(beside(tmp_path, urdf), link, rated_kg, tmp_path / "arm.yaml", sensing=sensing))
    bag, result = str(tmp_path / "bag"), tmp_path / "result.json"
    assert main(["bag", "record-sim", "--robot", profile, "--duration", "4", "--out", bag, "--start-time", "0"]) == 0
    assert main(["estimate", "--bag", bag, "--robot", profile, "--json", str(result)]) == 0
    data = json.loads(result.read_text())
    assert data["bounds_guaranteed"] and data["data_consistent"] and data["truth_inside_bounds"], data["message"]
    assert not data["joint_states_dropped"]


@pytest.mark.slow
@pytest.mark.parametrize("urdf, link, rated_kg", ARMS, ids=[a[0] for a in ARMS])
def test_init_with_runs_calibrates_and_estimate_and_identify_accept_the_profile_on_mujoco_runs(tmp_path, urdf, link,
                                                                                               rated_kg):
    """The route of the tutorial on MuJoCo (friction, damping, armature the model lacks): two
    payload-free runs of the written profile, ``profile init --runs`` on them (the calibration
    written beside the profile and named there, no edit), then a 1.5 kg payload's run estimated with
    the profile as written: guaranteed, consistent, the truth inside; ``identify`` takes the same
    profile and runs."""
    from dataclasses import replace

    from inertial_id.core.data.data_io import Run, write_run
    from inertial_id.sim import harness
    name = Path(urdf).stem
    urdf = beside(tmp_path, urdf)
    profile = str(init_profile(urdf, link, rated_kg, tmp_path / f"{name}.yaml"))
    # the harness's default damping is the xArm7's, one figure per joint of a 7-DoF arm
    case = harness.Case(name, robot=profile, mass_kg=1.5, duration_s=8.0, damping_Nms_rad=0.5)
    free = []
    for k in range(2):
        _, _, rec, _ = harness.simulate(harness.payload_free(case, k))
        write_run(tmp_path / f"free{k}", Run(f"free{k}", rec.t, rec.q, rec.qd, rec.tau))
        free.append(str(tmp_path / f"free{k}"))
    assert main(["profile", "init", "--urdf", str(urdf), "--payload-link", link, "--rated-payload-kg", str(rated_kg),
                 "--out", profile, "--force", "--runs", *free, "--tube-seconds", "0"]) == 0
    cal = tmp_path / f"{name}_calibration.yaml"
    assert cal.is_file() and load_robot(profile).spec.identification.calibration == cal.name
    # the whole arm identified from the same runs, the written profile as its model
    assert main(["identify", "--model", profile, "--data", free[0], "--validate", free[1], "--friction",
                 "--json", str(tmp_path / "identified.json")]) == 0
    links = json.loads((tmp_path / "identified.json").read_text())["links"]
    assert len(links) == load_robot(profile).nv
    for link in links.values():     # inside the plausibility bounds (a solver's tolerance on a bound)
        lower, upper = link["mass_bounds_kg"]
        assert lower - 1e-6 <= link["mass_kg"] <= upper + 1e-6, links
    robot, pi_true, rec, _ = harness.simulate(replace(case, calibration=str(cal)))
    result, _, _, _ = harness.estimate(load_robot(profile), rec)
    assert result.bounds_guaranteed and result.data_consistent, result.message
    assert np.all((pi_true >= np.asarray(result.lower)) & (pi_true <= np.asarray(result.upper)))


def test_runs_are_refused_for_a_wrench_profile_and_validate_needs_runs(tmp_path, capsys):
    urdf = str(beside(tmp_path, "fr3.urdf"))
    out = tmp_path / "fr3.yaml"
    base = ["profile", "init", "--urdf", urdf, "--payload-link", "fr3_link8", "--rated-payload-kg", "3",
            "--tube-seconds", "0", "--force", "--out", str(out)]
    assert main([*base, "--sensing", "wrench", "--runs", str(tmp_path)]) == 2
    assert "no joint torque sensing" in capsys.readouterr().err
    assert main([*base, "--validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "--validate" in err and len(err.splitlines()) == 1
    # runs that are no recordings: the calibration fails, and no profile is left half made
    assert main([*base, "--runs", str(tmp_path / "nothing")]) != 0
    assert not out.exists()
