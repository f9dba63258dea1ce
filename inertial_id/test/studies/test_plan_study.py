"""The planner study: one short closed-loop trial, the dense collision check it relies on, and the
CLI's handling of a bad scenario."""
import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.robot.model import load_robot
from inertial_id.studies import planner as study

pytestmark = pytest.mark.slow          # closed-loop planning trials


def test_capsule_box_clearance_matches_dense_sampling():
    rng = np.random.default_rng(3)
    lo, hi = np.array([0.2, -0.1, 0.0]), np.array([0.5, 0.1, 0.3])
    a = rng.uniform(-0.5, 1.0, (200, 3))
    b = rng.uniform(-0.5, 1.0, (200, 3))
    r = rng.uniform(0.0, 0.1, 200)
    exact = study.capsule_box_clearance(a, b, r, lo, hi)
    s = np.linspace(0.0, 1.0, 20001)
    pts = a[:, None, :] + s[None, :, None] * (b - a)[:, None, :]
    sampled = study._point_box_distance(pts, lo, hi).min(axis=1) - r
    # sampling can only overestimate the clearance; the exact value is never above it
    assert np.all(exact <= sampled + 1e-12)
    np.testing.assert_allclose(exact, sampled, atol=1e-4)
    assert np.any(exact < 0) and np.any(exact > 0)


def test_one_closed_loop_trial_is_safe_and_identifies(tmp_path):
    out = study.run_trial("kinova_gen3", "6lb", seed=1, obstacles=[], plans=2, methods=("ours",))
    run = out["methods"]["ours"]
    assert run["violations"] == {"position": 0, "velocity": 0, "torque": 0}
    assert run["collisions"] == 0
    assert run["state"] == "done", run["message"]
    assert run["plans"] == 2
    assert run["contained"] and run["bounds_guaranteed"]
    prior_width = 5.2
    assert run["width"][0] < 0.5 * prior_width           # the motion taught something about the mass
    # the final LP's box against the sound floor of its rows (1.15-1.17 at two trials of 10 plans): a box
    # well below the floor of its own rows would be wrong for some errors the stated bounds admit
    assert run["floor_kg"] > 0 and run["width_over_floor"] > 0.8, (run["floor_kg"], run["width_over_floor"])
    assert all(np.isfinite(run["plan_times_s"])) and run["plan_cond"]
    # every optimised plan's IPOPT record; the summary's fraction counts those converged within replan_s
    assert len(run["optimisations"]) == len(run["plan_times_s"]) and all(it >= 0 for _, it, _ in run["optimisations"])
    summary = study.summarize([out], methods=("ours",), replan_s=1.5)["ours"]
    converged_in_time = [c and s <= 1.5 for c, _, s in run["optimisations"]]
    assert summary["optimizer_converged_fraction"] == pytest.approx(np.mean(converged_in_time))
    assert 0.0 <= summary["plans_within_replan_fraction"] <= 1.0
    # the box the first plan started from (the hold's data) is narrower than the prior, and the box
    # never widens after it; the lower bound on ours/random follows from that alone
    assert run["width"][0] <= run["first_plan_width_kg"] < prior_width
    assert summary["final_over_first_plan_width"] == pytest.approx(run["width"][0] / run["first_plan_width_kg"])
    paired = study.summarize([{"methods": {"ours": run, "random": run}}], replan_s=1.5)
    assert paired["mass_width_ratio_at_least"] == pytest.approx(summary["final_over_first_plan_width"])
    assert paired["mass_width_ratio_at_least"] <= paired["mass_width_ratio_vs_random"] == 1.0
    assert paired["mass_width_ratio_interval"] is None         # one trial says nothing of the median's spread


def test_a_trial_on_mujoco_is_safe_and_identifies():
    """The xArm7 on MuJoCo (armature, damping, Coulomb friction the certifier does not model): the
    truth's limits hold at every step, the tube holds (no fault), the box contains the payload."""
    for _ in range(2):
        out = study.run_trial("xarm7", "6lb", seed=1, obstacles=[], plans=2, methods=("ours",), engine="mujoco")
        run = out["methods"]["ours"]
        assert run["violations"] == {"position": 0, "velocity": 0, "torque": 0}
        assert run["state"] == "done" and not run["faults"], (run["message"], run["faults"])
        # a plan's CPU time is charged to simulated time: under the suite's load (CI, once) the second
        # plan missed its slot and the trial ended safely after one. Once more, then it counts.
        if run["plans"] == 2:
            break
    assert run["plans"] == 2 and run["contained"] and run["bounds_guaranteed"], run["message"]
    assert run["floor_kg"] > 0 and run["width_over_floor"] > 0.8, (run["floor_kg"], run["width_over_floor"])
    tube = np.min(load_robot("xarm7").spec.planner.tracking_error.acceleration_rad_s2)
    assert 0.0 < run["max_tracking_error"][2] <= tube          # the largest over joints, against the tightest


def test_an_arm_estimated_from_joint_torque_is_calibrated_first_on_mujoco():
    """The Gen3 on MuJoCo: calibrated on payload-free runs of the same simulated arm (as the demo
    does), then both methods run on that calibration, safely, and their boxes hold the payload. The
    calibrated offsets leave holding still uncertified on the box from data at rest: each run starts
    on the torque measured there, as the node's planner does (without it, neither moved)."""
    report = study.run_study("kinova_gen3", trials=1, plans=2, engine="mujoco", keep_trials=True)
    assert report["calibrated"] and report["robot"] == "kinova_gen3"
    assert report["violations"] == 0 and report["collisions"] == 0
    for method, run in report["trial_results"][0]["methods"].items():
        assert run["state"] == "done" and run["plans"] == 2, (method, run["message"])
        assert run["contained"] and run["bounds_guaranteed"], (method, run["message"])
        assert run["width"][0] < 0.5 * run["first_plan_width_kg"], method      # the motion taught the mass


def test_cli_rejects_an_unknown_scenario(capsys):
    assert main(["study", "plan", "--trials", "1", "--obstacles", "no_such_scenario"]) == 2
    assert "no_such_scenario" in capsys.readouterr().err


def test_named_scenario_resolves():
    boxes = study.load_scenario("kinova_gen3_two_boxes")
    assert len(boxes) == 2 and all("center" in b and "size" in b for b in boxes)
