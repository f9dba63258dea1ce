"""The static-pose baseline (gravity-only mass and COM from a few held poses) and the baseline study."""
import json

import numpy as np
import pinocchio as pin
import pytest

from inertial_id.cli import main
from inertial_id.core.robot.model import load_robot, model_with_payload
from inertial_id.core.robot.regressor import PayloadRegressor
from inertial_id.studies import static_baseline as sb
from inertial_id.studies.bounds import PAYLOADS, grasped_payload

from paths import REAL_GEN3

pytestmark = pytest.mark.slow          # a reduced study

ROBOTS = ("xarm7", "kinova_gen3")


def exact_measurement(robot, pi, q):
    """What the arm's sensor reads holding payload ``pi`` still at ``q``, without noise."""
    zero = np.zeros(robot.nv)
    if robot.ft_frame_id is not None:
        A, _ = PayloadRegressor(robot).wrench_rows(q, zero, zero, np.zeros(6))
        return A @ pi
    model = model_with_payload(robot, pi)
    return pin.rnea(model, model.createData(), q, zero, zero)


@pytest.mark.parametrize("name", ROBOTS)
def test_static_solve_recovers_mass_and_com_exactly_without_noise(name):
    robot = load_robot(name)
    pi = grasped_payload(PAYLOADS["6lb"], np.random.default_rng(3))
    reg = PayloadRegressor(robot)
    rows = [sb.gravity_rows(reg, q, exact_measurement(robot, pi, q)) for q in sb.static_poses(robot, 4)]
    mass, com = sb.solve_mass_com(np.vstack([A for A, _ in rows]), np.concatenate([b for _, b in rows]))
    assert mass == pytest.approx(pi[0], rel=1e-9)
    np.testing.assert_allclose(com, pi[1:4] / pi[0], atol=1e-9)
    # at rest the full regressor has no rotational-inertia columns: gravity-only is the whole model
    zero = np.zeros(robot.nv)
    q = sb.static_poses(robot, 2)[1]
    full = reg.wrench_rows(q, zero, zero, np.zeros(6))[0] if robot.ft_frame_id is not None else \
        reg.torque_rows(q, zero, zero, np.zeros(robot.nv))[0]
    assert np.abs(full[:, 4:]).max() < 1e-12 < np.abs(full[:, :4]).max()


@pytest.mark.parametrize("name", ROBOTS)
def test_one_pose_does_not_determine_the_com_along_gravity(name):
    robot = load_robot(name)
    pi = grasped_payload(PAYLOADS["4lb"], np.random.default_rng(0))
    q = sb.static_poses(robot, 2)[0]
    A, b = sb.gravity_rows(PayloadRegressor(robot), q, exact_measurement(robot, pi, q))
    assert sb.solve_mass_com(A, b) is None


@pytest.mark.parametrize("name", ROBOTS)
def test_moves_run_at_the_profile_limits(name):
    robot = load_robot(name)
    poses = sb.static_poses(robot, 3)
    traj = sb.move(robot, poses[0], poses[2], 1000.0)
    # the limiting joint reaches its velocity or acceleration limit (to the sampling), none exceeds it
    use = np.maximum(np.abs(traj.qd).max(axis=0) / robot.velocity_limit,
                     np.abs(traj.qdd).max(axis=0) / robot.acceleration_limit)
    assert 0.99 <= use.max() <= 1.0 + 1e-9


def test_usable_since_is_the_start_of_the_final_usable_stretch():
    assert sb.usable_since([1, 2, 3, 4], [True, False, True, True]) == 3
    assert sb.usable_since([1, 2, 3], [True, True, False]) is None
    assert sb.usable_since([1.25, 2], [True, True]) == 1.25


def test_still_segments_of_a_recording_with_holds_are_the_poses():
    from inertial_id.studies.static_baseline_real import still_segments
    robot = load_robot("kinova_gen3")
    pi = grasped_payload(PAYLOADS["5lb"], np.random.default_rng(1))
    sim = sb.new_simulator(robot, pi, robot.model, 0)
    poses = sb.static_poses(robot, 3)
    segments, q_now = [], sim.q
    for q in poses[1:]:
        segments += [sb.move(robot, q_now, q, 1000.0), 1.5]
        q_now = q
    rec = sb.record(sim, segments)
    found = still_segments(rec.t, rec.qd)
    assert len(found) == 2
    for (a, b), q in zip(found, poses[1:]):
        assert rec.t[b - 1] - rec.t[a] > 1.0
        np.testing.assert_allclose(rec.q[a:b].mean(axis=0), q, atol=2e-3)


@pytest.mark.parametrize("name", ROBOTS)
def test_small_study_carries_the_comparison_table(name, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sb, "TRAJECTORIES", 2)        # 6 s of excitation keeps the test short
    out = tmp_path / "baseline.json"
    assert main(["study", "baseline", "--robot", name, "--cases", "2", "--poses", "4", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    robot = load_robot(name)
    assert report["robot"] == name and len(report["table"]) == len(report["cases"]) == 2
    com_tol = report["usable_definition"]["com_error_m_below"]
    assert com_tol == sb.COM_TOLERANCE_M
    poses = sb.static_poses(robot, 4)
    motion = sum(sb.move(robot, a, b, 1000.0).duration for a, b in zip(
        np.vstack([robot.spec.sim.home, poses[:-1]]), poses)) + 4 * sb.HOLD_S
    for row, case in zip(report["table"], report["cases"]):
        base, ours = case["static_poses"], case["ours"]
        truth = np.array(case["com_m"])
        # the table's figures are the cases' own, recomputed here from their estimates
        assert row["static_poses.mass_error_rel"] == pytest.approx(abs(base["mass_kg"] - case["mass_kg"]) / case["mass_kg"])
        assert row["static_poses.com_error_m"] == pytest.approx(np.linalg.norm(np.array(base["com_m"]) - truth))
        assert row["ours.mass_error_rel"] == pytest.approx(abs(ours["mass_kg"] - case["mass_kg"]) / case["mass_kg"])
        assert row["ours.com_error_m"] == pytest.approx(np.linalg.norm(np.array(ours["com_m"]) - truth))
        assert row["static_poses.seconds_of_motion"] == pytest.approx(motion, abs=1e-3)
        assert row["ours.seconds_of_motion"] == pytest.approx(2 * sb.TRAJECTORY_S)
        # the baseline is usable from the pose after which every estimate meets the definition
        flags = ["mass_kg" in p and p["mass_error_rel"] < sb.MASS_TOLERANCE and p["com_error_m"] < com_tol
                 for p in base["per_pose"]]
        k = len(flags) - next((i for i, f in enumerate(reversed(flags)) if not f), len(flags))
        assert row["static_poses.seconds_to_usable"] == (base["per_pose"][k]["seconds_of_motion"] if k < len(flags) else None)
        assert ours["bounds_guaranteed"] and ours["box_contains_truth"]
        # both estimate the payload of the same case to a few per cent (noise and the +-5 % robot)
        assert row["static_poses.mass_error_rel"] < 0.05 and row["ours.mass_error_rel"] < 0.05
    s = report["summary"]
    for key in ("mass_error_rel", "com_error_m", "seconds_of_motion"):
        for m in ("static_poses", "ours"):
            assert s[m][f"median_{key}"] == pytest.approx(np.median([r[f"{m}.{key}"] for r in report["table"]]))
    printed = capsys.readouterr().out
    assert "median" in printed and "static poses" in printed


@pytest.mark.parametrize("argv, says", [(["--poses", "1"], "--poses"), (["--payloads", "3lb"], "unknown payloads"),
                                        (["--robot", "digit_arm"], "7-joint arms"), (["--seed", "-1"], "--seed")])
def test_meaningless_arguments_are_one_line_user_errors(argv, says, capsys):
    try:
        code = main(["study", "baseline", *argv])
    except SystemExit as exc:          # argparse's own checks exit from the parser
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert says in err and len(err.strip().splitlines()) == 1


@pytest.mark.shared_data
def test_real_recordings_say_why_the_baseline_has_no_poses_and_ours_keeps_the_truth():
    if not REAL_GEN3.is_dir():
        pytest.skip(f"real Gen3 recordings absent: {REAL_GEN3.resolve()}")
    from inertial_id.studies.realdata import read_downsampled_runs
    from inertial_id.studies.static_baseline_real import STILL_SPEED_RAD_S, run_real_study
    robot = load_robot("kinova_gen3")
    runs = read_downsampled_runs(REAL_GEN3)
    report = run_real_study(robot, runs, masses=(2.72,), com_offsets=((0.04, -0.03, 0.08),), folds=[0, 2])
    assert len(report["table"]) == 2
    for r in runs:
        slowest = np.abs(r.qd).max(axis=1).min()
        assert report["runs"][r.name]["slowest_max_joint_speed_rad_s"] == pytest.approx(slowest)
        # the recordings never hold still: no run has a static pose to give the baseline
        assert report["runs"][r.name]["still_segments"] == 0 and slowest < STILL_SPEED_RAD_S
    assert "no still segment" in report["static_poses_unavailable"]
    for case in report["cases"]:
        assert case["static_poses"]["available"] is False and case["static_poses"]["mass_error_rel"] is None
        ours = case["ours"]
        assert ours["bounds_guaranteed"] and ours["box_contains_truth"]
        assert ours["seconds_of_motion"] > 10.0
    assert report["summary"]["static_poses"]["cases_usable"] == 0


def test_real_needs_a_torque_sensing_robot(capsys):
    assert main(["study", "baseline", "--robot", "xarm7", "--real"]) == 2
    assert "joint torque" in capsys.readouterr().err
