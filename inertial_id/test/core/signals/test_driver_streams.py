"""Inputs as the real drivers give them: wrapped continuous joints, NaN effort, extra (gripper)
joints, wrench and joint streams on different stamps; driver-faithful bags from record-sim through
``estimate --bag``."""
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.cli.record_sim import record
from inertial_id.core.data import bags
from inertial_id.core import offline
from inertial_id.core.signals.driver_streams import (DriverEmulator, DriverModel, WrenchBuffer, max_gap_s,
                                                     pair_wrenches)
from inertial_id.core.robot.model import load_profile, load_robot
from inertial_id.core.robot.profile import ProfileError
from inertial_id.core.signals.sensor_inputs import JointStateParser, Rejected, wrap_to_pi


@pytest.fixture(scope="module")
def gen3():
    return load_robot("kinova_gen3")


@pytest.fixture(scope="module")
def xarm():
    return load_robot("xarm7")


def joint_state(t, names, q, qd, effort=()):
    sec, ns = divmod(int(round(t * 1e9)), 1_000_000_000)
    return SimpleNamespace(header=SimpleNamespace(stamp=SimpleNamespace(sec=sec, nanosec=ns), frame_id=""),
                           name=list(names), position=list(q), velocity=list(qd), effort=list(effort))


# --- unwrapping -------------------------------------------------------------------------------------

def test_wrapped_continuous_joint_is_unwrapped_continuously(gen3):
    """ros2_kortex wraps every actuator to [-pi, pi]: a wrist turning through pi comes back continuous."""
    parser = JointStateParser(gen3, need_effort=True)
    t = np.arange(400) * 1e-3
    q7 = 2.8 + 1.2 * t / t[-1]                     # 2.8 -> 4.0 rad, through pi
    names = gen3.joint_names
    out = []
    for k, tk in enumerate(t):
        q = np.zeros(7)
        q[6] = q7[k]
        out.append(parser.parse(joint_state(tk, names, wrap_to_pi(q), np.zeros(7), np.zeros(7))).q[6])
    assert np.min(wrap_to_pi(q7)) < -2.0            # the driver's reading did jump
    np.testing.assert_allclose(out, q7, atol=1e-12)
    # a restarted stream (stamps back in time, followed) starts from the published branch again
    for k in range(10):
        try:
            s = parser.parse(joint_state(0.5 + 1e-3 * k - 1.0, names, np.full(7, -3.0), np.zeros(7), np.zeros(7)))
        except Rejected as r:
            assert r.reason == "stamp_not_increasing"
    assert s.q[6] == pytest.approx(-3.0)


def test_profiles_name_the_wrapped_joints(gen3, xarm):
    assert set(DriverModel.from_robot(gen3).wrapped_joints) >= {"joint_1", "joint_3", "joint_5", "joint_7"}
    assert DriverModel.from_robot(xarm).wrapped_joints == ()


# --- fields the rows use ----------------------------------------------------------------------------

def test_nan_effort_is_fine_unless_the_rows_use_it(xarm):
    msg = joint_state(1.0, xarm.joint_names, np.zeros(7), np.zeros(7), np.full(7, np.nan))
    s = JointStateParser(xarm, need_effort=False).parse(msg)
    assert s.tau is None
    with pytest.raises(Rejected) as r:
        JointStateParser(xarm, need_effort=True).parse(msg)
    assert r.value.reason == "non_finite"
    # a NaN in the position is never fine
    bad = joint_state(1.0, xarm.joint_names, [np.nan] + [0.0] * 6, np.zeros(7))
    with pytest.raises(Rejected):
        JointStateParser(xarm, need_effort=False).parse(bad)


def test_gripper_joint_with_nan_effort_is_ignored_live_and_offline(gen3, tmp_path):
    """The same driver messages (gripper joint first, NaN effort) through the live parser and the
    offline reader give the same samples; the offline path used to discard them whole."""
    names = ["robotiq_85_left_knuckle_joint"] + list(gen3.joint_names)
    rng = np.random.default_rng(0)
    store = bags.typestore()
    bag = tmp_path / "gripper"
    msgs = []
    for k in range(50):
        q = np.concatenate([[0.0], rng.uniform(-1, 1, 7)])
        qd = np.concatenate([[0.0], rng.uniform(-1, 1, 7)])
        tau = np.concatenate([[np.nan], rng.uniform(-5, 5, 7)])
        msgs.append((1.0 + 1e-3 * k, q, qd, tau))
    with bags.BagWriter(bag, "mcap", {bags.JOINT_STATES: bags.TOPICS[bags.JOINT_STATES]}) as w:
        for t, q, qd, tau in msgs:
            w.write(bags.JOINT_STATES, int(t * 1e9), bags.joint_state(store, t, names, q, qd, tau))
    live = JointStateParser(gen3, need_effort=True)
    expected = [live.parse(joint_state(t, names, q, qd, tau)) for t, q, qd, tau in msgs]
    js = bags.read_joint_states(bag, parser=JointStateParser(gen3, need_effort=True))
    assert js.dropped == {} and len(js) == 50 and js.names == list(gen3.joint_names)
    np.testing.assert_array_equal(js.q, [s.q for s in expected])
    np.testing.assert_array_equal(js.tau, [s.tau for s in expected])
    np.testing.assert_array_equal(js.t, [s.t for s in expected])


# --- wrench pairing ---------------------------------------------------------------------------------

def smooth_wrench(t):
    """A wrench as a rotating payload gives it: a few N, changing at about 1 Hz."""
    t = np.asarray(t)[:, None]
    return np.hstack([20 * np.sin(2 * np.pi * 0.9 * t + k) for k in range(3)] +
                     [0.5 * np.cos(2 * np.pi * 1.3 * t + k) for k in range(3)])


def test_interpolated_wrench_within_noise_plus_interpolation_bound():
    """50 Hz joint stamps 7 ms off a 100 Hz wrench stream with bounded noise: every stamp pairs,
    and the interpolated wrench is within the noise bound plus the stated interpolation bound."""
    rng = np.random.default_rng(1)
    noise = np.array([0.3] * 3 + [0.015] * 3)
    t_w = 10.0 + np.arange(500) / 100.0
    w = smooth_wrench(t_w) + rng.uniform(-1, 1, (t_w.size, 6)) * noise
    t_j = 10.017 + np.arange(240) / 50.0
    p = pair_wrenches(t_j, t_w, w, max_gap_s(100.0), noise)
    assert all(r is None for r in p.reason) and p.interpolated == t_j.size
    err = np.abs(p.wrench - smooth_wrench(t_j))
    assert np.all(err <= noise + p.extra_bound)
    # noise-free samples of the same signal: the interpolation term alone covers the truncation
    clean = pair_wrenches(t_j, t_w, smooth_wrench(t_w), max_gap_s(100.0), noise)
    assert np.all(np.abs(clean.wrench - smooth_wrench(t_j)) <= clean.extra_bound)
    # at most what the noise can hide in a second difference, 4x the sensor's bound at mid-span
    assert np.all(p.extra_bound <= 4.0 * noise)
    # coincident stamps take the wrench as it is, with no extra bound
    q = pair_wrenches(t_w[5:20], t_w, w, max_gap_s(100.0))
    np.testing.assert_array_equal(q.wrench, w[5:20])
    assert not q.extra_bound.any()


def test_unpairable_samples_are_counted_by_reason():
    t_w = np.arange(100) / 100.0
    w = smooth_wrench(t_w)
    lost = np.delete(np.arange(100), [50])            # one wrench lost: the stamps around it cannot pair
    t_j = 0.007 + np.arange(0, 100) / 100.0
    p = pair_wrenches(t_j, t_w[lost], w[lost], max_gap_s(100.0))
    reasons = {r: p.reason.count(r) for r in set(p.reason)}
    # the first stamp has no wrench before its pair, the last none after it; around the lost one,
    # the two pairs across the gap and the next (whose curvature would reach across it)
    assert reasons == {None: 95, "wrench_gap": 3, "no_matching_wrench": 2}
    assert p.reason[0] == p.reason[99] == "no_matching_wrench"
    assert p.reason[49] == p.reason[50] == p.reason[51] == "wrench_gap"


def test_live_buffer_pairs_as_offline():
    rng = np.random.default_rng(2)
    t_w = 5.0 + np.arange(300) / 100.0 + rng.uniform(-5e-4, 5e-4, 300)
    w = smooth_wrench(t_w)
    t_j = 5.0 + 0.004 + np.arange(140) / 50.0
    off = pair_wrenches(t_j, t_w, w, max_gap_s(100.0), 0.1)
    buf = WrenchBuffer(max_gap_s(100.0), 0.1)
    live = []
    k = 0
    for t in t_j:
        while k < t_w.size and not buf.ready(t):
            buf.add(t_w[k], w[k])
            k += 1
        live.append(buf.pair(t))
    assert [r for _, _, r in live] == off.reason
    np.testing.assert_array_equal([x for x, _, _ in live], off.wrench)
    np.testing.assert_array_equal([e for _, e, _ in live], off.extra_bound)


# --- profiles and the emulation ---------------------------------------------------------------------

def test_profile_sensing_must_name_a_driver_stream():
    prof = load_profile("xarm7")
    prof["sensing"]["joint_torque"] = True
    prof["sensing"]["joint_states_topic"] = "/joint_states"
    prof["sensing"]["joint_states_hz"] = 50.0
    with pytest.raises(ProfileError, match="effort"):
        DriverModel.from_robot(load_robot(prof))
    prof = load_profile("xarm7")
    prof["sensing"]["joint_states_hz"] = 500.0
    with pytest.raises(ProfileError, match="joint_states_hz"):
        DriverModel.from_robot(load_robot(prof))


def test_xarm_emulation_streams(xarm):
    """Over 1 s of steps: broadcaster 50 Hz without effort 7 ms off, driver 100 Hz, wrench on its stamps."""
    emu = DriverEmulator(xarm, 1000.0)
    out = {}
    for k in range(1000):
        m = SimpleNamespace(t=k * 1e-3, q=np.zeros(7), qd=np.zeros(7), tau=np.ones(7), wrench=np.zeros(6))
        for o in emu.outputs(m):
            out.setdefault(o.topic, []).append(o)
    jsb, drv, ft = out["/joint_states"], out["/xarm/joint_states"], out["/xarm/uf_ftsensor_ext_states"]
    assert (len(jsb), len(drv), len(ft)) == (50, 100, 100)
    assert all(np.isnan(o.effort).all() for o in jsb) and all(np.isfinite(o.effort).all() for o in drv)
    assert [o.t for o in drv] == [o.t for o in ft]
    assert jsb[0].t == pytest.approx(0.007) and ft[0].frame_id == "uf_ft_sensor_ext_data"


# --- driver-faithful bags through estimate --bag ------------------------------------------------------

def estimate_json(bag, robot, tmp_path, name):
    out = tmp_path / f"{name}.json"
    assert main(["estimate", "--bag", str(bag), "--robot", robot, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_gen3_driver_bag_wrapped_with_gripper_through_estimate(tmp_path):
    """ros2_kortex as it publishes: 1 kHz, positions wrapped (the wrist here turns through pi), a
    gripper joint with NaN effort. ``estimate --bag``: every sample used, bounds contain the truth."""
    prof = load_profile("kinova_gen3")
    prof["sim"]["home"][6] = -2.9                 # joint 7 swings down through -pi and back
    robot = load_robot(prof)
    bag = tmp_path / "gen3"
    record(robot, "dumbbell_5lb", 6.0, bag, "mcap", seed=5, start_time_s=100.0)
    raw = bags.read_topics(bag, [bags.JOINT_STATES])[bags.JOINT_STATES]
    assert len(raw) == 6000
    msg = raw[0][1]
    assert msg.name[0] == "robotiq_85_left_knuckle_joint" and np.isnan(msg.effort[0])
    q7 = np.array([m.position[7] for _, m in raw])
    assert np.abs(q7).max() <= np.pi and np.abs(np.diff(q7)).max() > 6.0      # wrapped, and it did wrap
    js = bags.read_joint_states(bag, parser=JointStateParser(robot, need_effort=True))
    assert js.dropped == {} and js.q[:, 6].min() < -np.pi - 0.2 and np.abs(np.diff(js.q[:, 6])).max() < 0.01
    _, result, info = offline.estimate_from_bag(bag, robot, "guaranteed", "samples")
    truth = bags.read_truth(bag)
    assert info["joint_states"] == 6000 and info["joint_states_dropped"] == {}
    assert result.data_consistent and np.all((truth >= result.lower) & (truth <= result.upper))
    assert result.upper[0] - result.lower[0] < 1.0


def test_xarm_driver_bag_through_estimate(tmp_path):
    """xarm_ros2 as it publishes: /joint_states 50 Hz effort NaN (7 ms off), /xarm/joint_states and
    the ext wrench 100 Hz on one stamp. ``estimate --bag`` with the profile (rows from
    /xarm/joint_states: exact pairs) and with the broadcaster's stream instead (NaN effort, pairs
    interpolated): both contain the truth."""
    bag = tmp_path / "xarm"
    r = record(load_robot("xarm7"), "dumbbell_5lb", 8.0, bag, "mcap", seed=6, start_time_s=200.0)
    assert r["messages"]["/joint_states"] == 400 and r["messages"]["/xarm/joint_states"] == 800
    assert r["messages"]["/xarm/uf_ftsensor_ext_states"] == 800
    jsb = bags.read_topics(bag, ["/joint_states"])["/joint_states"]
    assert all(np.isnan(m.effort).all() for _, m in jsb)
    driver = estimate_json(bag, "xarm7", tmp_path, "driver")
    assert driver["truth_inside_bounds"] and driver["data_consistent"]
    assert driver["sample_counts"]["paired"] == 800 and driver["sample_counts"]["interpolated"] == 0

    prof = load_profile("xarm7")
    prof["sensing"].update(joint_states_topic="/joint_states", joint_states_hz=50.0)
    robot = load_robot(prof)
    _, result, info = offline.estimate_from_bag(bag, robot, "guaranteed", "samples")
    counts = info["sample_counts"]
    assert info["joint_states"] == 400 and info["joint_states_dropped"] == {}
    assert counts["interpolated"] == counts["paired"] >= 399
    truth = bags.read_truth(bag)
    assert result.data_consistent and np.all((truth >= result.lower) & (truth <= result.upper))


# --- the same bags replayed into the launch files (use_sim_time): live == offline --------------------

def wrapped_gen3_profile(path):
    """The Gen3 profile with joint 7 swinging through -pi, as a YAML file the launch can name."""
    import yaml
    prof = load_profile("kinova_gen3")
    prof["model"]["urdf"] = str(Path(prof.pop("_path")).parent.parent / prof["model"]["urdf"])
    prof["sim"]["home"][6] = -2.9
    path.write_text(yaml.safe_dump(prof))
    return str(path)


def xarm_broadcaster_profile(path):
    """The xArm7 profile with the rows built from the joint_state_broadcaster's /joint_states (50 Hz,
    effort NaN, stamps 7 ms off the wrench's): every pair interpolated."""
    import yaml
    prof = load_profile("xarm7")
    prof.pop("_path")
    prof["sensing"].update(joint_states_topic="/joint_states", joint_states_hz=50.0)
    path.write_text(yaml.safe_dump(prof))
    return str(path)


@pytest.mark.ros
@pytest.mark.parametrize("robot_name, seconds, rate", [("xarm7", 6.0, 0.5), ("xarm7_broadcaster", 6.0, 0.5),
                                                       ("gen3_wrapped", 3.0, 0.125)])
def test_driver_bag_replayed_into_the_launch_file_equals_offline(robot_name, seconds, rate, ros_env, tmp_path):
    """A driver-faithful bag played with /clock into ``<robot>.launch.py use_sim_time:=true`` (the
    recorded driver topics as the real driver publishes them, best effort): the live estimate
    equals ``estimate --bag``'s, and no input was lost or refused."""
    from ros_helpers import largest_relative_difference, live_estimate_of_bag

    profile = {"xarm7": lambda: "xarm7",
               "xarm7_broadcaster": lambda: xarm_broadcaster_profile(tmp_path / "xarm7_broadcaster.yaml"),
               "gen3_wrapped": lambda: wrapped_gen3_profile(tmp_path / "gen3_wrapped.yaml")}[robot_name]()
    launch_file = "kinova_gen3.launch.py" if robot_name.startswith("gen3") else "xarm7.launch.py"
    robot = load_robot(profile)
    bag = tmp_path / "bag"
    record(robot, "dumbbell_5lb", seconds, bag, "mcap", seed=8, start_time_s=1000.0)
    _, offline_result, info = offline.estimate_from_bag(bag, robot, "guaranteed", "samples")
    truth = bags.read_truth(bag)
    assert np.all((truth >= offline_result.lower) & (truth <= offline_result.upper))
    est, counts = live_estimate_of_bag(launch_file, profile, robot, bag, offline_result, info, rate, ros_env)
    assert counts[robot.sensing.joint_states_topic] == int(round(seconds * robot.sensing.joint_states_hz))
    lo, hi = np.asarray(est.lower), np.asarray(est.upper)
    diff = largest_relative_difference(est, offline_result)
    print(f"{robot_name}: live vs offline largest relative bound difference {diff:.3g}, "
          f"mass [{lo[0]:.4f}, {hi[0]:.4f}] kg, truth {truth[0]:.4f}")
    assert diff < 1e-6, diff
    assert est.bounds_guaranteed and est.data_consistent and np.all((truth >= lo) & (truth <= hi))
