"""One LP over the integrated wrench rows with the F/T offset identified along
(core.estimators.wrench_momentum_box): the truth inside with the offset anywhere in its box; an offset
beyond its box either empties the feasible set or frees its axis, never a box labelled guaranteed
without the truth; the window length's effect on the width."""
import numpy as np
import pytest

from inertial_id.core.estimators.offset_freeing import FREED_FACTOR
from inertial_id.core.estimators.wrench_momentum_box import momentum_wrench_box
from inertial_id.core.robot import model as robot_model
from inertial_id.core.signals.sensors import NoiseModel

from test_wrench_momentum import random_payload, trajectory, true_wrenches


@pytest.fixture(scope="module")
def run():
    """An xArm7 run (8 s at 400 Hz, wide slow sines that turn the sensor, the profile's noise at its
    bound, uniform) without offset: at the profile's 100 Hz the bound of an acceleration step
    (wrench_momentum.step_terms) leaves the offset's box binding."""
    robot = robot_model.load_robot("xarm7")
    rng = np.random.default_rng(11)
    t = np.arange(0.0, 8.0 + 1e-9, 0.0025)
    q, qd, qdd = trajectory(robot, rng, t, amplitude=(0.6, 1.0), frequency=(0.5, 1.2))
    pi = random_payload(rng)
    nz = NoiseModel.from_profile(robot.spec)
    w = true_wrenches(robot, pi, q, qd, qdd) + rng.uniform(-1, 1, (t.size, 6)) * nz.bound_sigmas * nz.wrench_sigma()
    return robot, t, q, qd, w, pi


def box_with_offset(run, offset, **kwargs):
    robot, t, q, qd, w, pi = run
    return momentum_wrench_box(robot, t, q, qd, w + np.asarray(offset), **kwargs), pi


def inside(box, pi) -> bool:
    return bool(np.all((pi >= box.lower) & (pi <= box.upper)))


def test_offset_inside_its_box_gives_a_guaranteed_box_with_the_truth_inside(run):
    robot = run[0]
    stated = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
    offset = 0.5 * stated * np.array([1, -1, 1, -1, 1, -1])
    box, pi = box_with_offset(run, offset)
    assert box.data_consistent and box.guaranteed and inside(box, pi)
    lo, hi = robot.payload_prior()
    assert box.upper[0] - box.lower[0] < 0.2 * (hi[0] - lo[0])
    # the offset's range holds the truth, freed or not
    assert np.all((offset >= box.offset_lower) & (offset <= box.offset_upper))


def test_force_offset_beyond_its_box_is_never_silent(run):
    stated = NoiseModel.from_profile(run[0].spec).wrench_offset_bound()
    box, pi = box_with_offset(run, np.r_[2.0 * stated[0], 0.0, 0.0, 0.0, 0.0, 0.0])
    assert not box.guaranteed or inside(box, pi)
    assert not box.data_consistent or box.offset_freed[0]


@pytest.mark.parametrize("axis", [3, 4, 5])
def test_moment_offset_beyond_its_box_frees_the_axis_and_never_misses_the_truth(run, axis):
    stated = NoiseModel.from_profile(run[0].spec).wrench_offset_bound()
    offset = np.zeros(6)
    offset[axis] = 3.0 * stated[axis]
    box, pi = box_with_offset(run, offset)
    assert not box.guaranteed or inside(box, pi)
    assert not box.data_consistent or box.offset_freed[axis]
    if box.offset_freed[axis]:      # freed: solved within the widened box
        assert box.offset_upper[axis] <= FREED_FACTOR * stated[axis]


def test_longer_windows_give_no_narrower_box_without_a_velocity_error(run):
    one, pi = box_with_offset(run, np.zeros(6), window=1)
    ten, _ = box_with_offset(run, np.zeros(6), window=10)
    assert inside(one, pi) and inside(ten, pi)
    assert one.upper[0] - one.lower[0] <= ten.upper[0] - ten.lower[0]


def test_estimate_bag_reports_the_integrated_rows_box_and_interpolated_pairs_hold_the_truth(tmp_path):
    """``estimate --bag --momentum-wrench`` on an xarm_ros2-like recording (wrench and
    /xarm/joint_states on one stamp); the same bag's 50 Hz /joint_states, every wrench interpolated
    at its stamp with the interpolation bound added: the truth inside both boxes."""
    import json

    from inertial_id.cli import main
    from inertial_id.cli.record_sim import record
    from inertial_id.core import offline
    from inertial_id.core.data import bags
    from inertial_id.core.robot.model import load_profile
    bag = tmp_path / "xarm"
    record(robot_model.load_robot("xarm7"), "dumbbell_5lb", 6.0, bag, "mcap", seed=4, start_time_s=100.0)
    out = tmp_path / "estimate.json"
    assert main(["estimate", "--bag", str(bag), "--robot", "xarm7", "--momentum-wrench", "--json", str(out)]) == 0
    mw = json.loads(out.read_text())["momentum_wrench"]
    assert mw["truth_inside_bounds"] and mw["bounds_guaranteed"] and mw["rows"] > 0
    assert mw["mass_width_kg"] < 5.2
    prof = load_profile("xarm7")
    prof["sensing"].update(joint_states_topic="/joint_states", joint_states_hz=50.0)
    box = offline.momentum_wrench_from_bag(bag, robot_model.load_robot(prof))
    truth = bags.read_truth(bag)
    assert box.data_consistent and np.all((truth >= box.lower) & (truth <= box.upper))


def test_the_acceleration_steps_share_falls_with_the_sample_interval(run):
    """The same motion at a quarter of the rate: the steps' bound (wrench_momentum.step_terms) grows
    with the square of the interval, the sensor's with the interval, and the box widens (the figures
    of docs/concepts/guaranteed: 0.28 kg at 400 Hz, 0.92 kg at 100 Hz)."""
    robot, t, q, qd, w, pi = run
    fast = momentum_wrench_box(robot, t, q, qd, w)
    slow = momentum_wrench_box(robot, t[::4], q[::4], qd[::4], w[::4])
    assert inside(fast, pi) and inside(slow, pi)
    assert 2.0 * (fast.upper[0] - fast.lower[0]) < slow.upper[0] - slow.lower[0]
