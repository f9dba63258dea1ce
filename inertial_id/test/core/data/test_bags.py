"""rosbag2 files through rosbags: both storage formats, standard and custom message types, QoS
metadata as ros2 bag record writes it; record-sim bags and the offline estimator on them."""
import json

import numpy as np
import pytest
import yaml

from inertial_id.cli import main
from inertial_id.cli.record_sim import record
from inertial_id.core.data import bags
from inertial_id.core import offline
from inertial_id.core.robot import params
from inertial_id.core.robot.model import load_robot, payload_params

STORAGES = ("mcap", "sqlite3")


@pytest.fixture(scope="module")
def gen3():
    return load_robot("kinova_gen3")


def scaled_difference(a, b) -> float:
    """Largest difference of two bound vectors [lower, upper], relative to each parameter's
    magnitude scale max(|lower|, |upper|)."""
    a, b = np.asarray(a).reshape(2, -1), np.asarray(b).reshape(2, -1)
    scale = np.maximum(np.abs(a).max(axis=0), np.abs(b).max(axis=0))
    return float(np.max(np.abs(a - b) / np.maximum(scale, 1e-12)))


def metadata(bag) -> dict:
    return yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]


@pytest.mark.parametrize("storage", STORAGES)
def test_standard_and_custom_messages_round_trip(storage, tmp_path):
    store = bags.typestore()
    rng = np.random.default_rng(0)
    names = ["j1", "j2", "j3"]
    q, qd, tau = rng.normal(size=(3, 50, 3))
    w = rng.normal(size=(50, 6))
    A = rng.normal(size=(4, 10))
    est = bags.message(store, "inertial_id_msgs/msg/InertialEstimate",
        header=bags.header(store, 5.25, "flange"), body="payload", method="guaranteed",
        parameter_names=params.parameter_names("payload"), estimate=np.arange(10.0), lower=np.arange(10.0) - 1,
        upper=np.arange(10.0) + 1, covariance=np.zeros(0), physically_consistent=True, bounds_guaranteed=True,
        data_consistent=False, samples_used=123, condition_number=45.0)
    rows = bags.message(store, "inertial_id_msgs/msg/RegressorSample",
        header=bags.header(store, 5.5, "flange"), kind="wrench", body="payload",
        parameter_names=params.parameter_names("payload"), rows=4, samples=1, regressor=A.ravel(),
        measurement=np.ones(4), noise_bound=np.full(4, 0.1), noise_sigma=np.full(4, 0.05), kinematics=np.zeros(8))
    status = bags.message(store, "inertial_id_msgs/msg/ExcitationStatus",
        header=bags.header(store, 6.0), state="executing", trajectory_id=2, solve_time=0.1, excitation_cost=9.0,
        min_joint_margin=0.2, min_velocity_margin=0.3, min_torque_margin=float("nan"),
        min_obstacle_clearance=float("inf"), message="ok")
    bag = tmp_path / storage
    with bags.BagWriter(bag, storage, bags.TOPICS) as writer:
        for k in range(50):
            t = 5.0 + 0.002 * k
            # joint order of the driver differs from the reader's: read_joint_states reorders
            writer.write(bags.JOINT_STATES, int(t * 1e9), bags.joint_state(store, t, names[::-1], q[k, ::-1],
                                                                               qd[k, ::-1], tau[k, ::-1]))
            writer.write(bags.WRENCH, int(t * 1e9), bags.wrench_stamped(store, t, "ft", w[k]))
        writer.write(bags.ESTIMATE, int(5.25e9), est)
        writer.write(bags.ROWS, int(5.5e9), rows)
        writer.write(bags.STATUS, int(6e9), status)

    meta = metadata(bag)
    assert meta["storage_identifier"] == storage and meta["version"] == bags.BAG_VERSION
    topics = {t["topic_metadata"]["name"]: t for t in meta["topics_with_message_count"]}
    assert topics[bags.JOINT_STATES]["message_count"] == 50
    qos_js = topics[bags.JOINT_STATES]["topic_metadata"]["offered_qos_profiles"][0]
    assert (qos_js["reliability"], qos_js["durability"], qos_js["history"], qos_js["depth"]) == \
        ("best_effort", "volatile", "keep_last", 200)
    qos_truth = topics[bags.TRUTH]["topic_metadata"]["offered_qos_profiles"][0]
    assert (qos_truth["reliability"], qos_truth["durability"]) == ("reliable", "transient_local")
    assert topics[bags.ROWS]["topic_metadata"]["type"] == "inertial_id_msgs/msg/RegressorSample"
    assert topics[bags.ROWS]["topic_metadata"]["type_description_hash"].startswith("RIHS01_")

    js = bags.read_joint_states(bag, names)
    np.testing.assert_array_equal(js.q, q)
    np.testing.assert_array_equal(js.qd, qd)
    np.testing.assert_array_equal(js.tau, tau)
    np.testing.assert_allclose(js.t, 5.0 + 0.002 * np.arange(50), atol=1e-9)
    t_w, frames, w_read = bags.read_wrenches(bag)
    np.testing.assert_array_equal(w_read, w)
    assert set(frames) == {"ft"}
    e = bags.read_estimates(bag)
    assert len(e) == 1 and e.method == "guaranteed" and e.frame_id == "flange"
    np.testing.assert_array_equal(e.upper[0], np.arange(10.0) + 1)
    assert e.samples_used[0] == 123 and not e.data_consistent[0] and e.bounds_guaranteed[0]
    (r,) = list(bags.read_rows(bag))
    np.testing.assert_array_equal(r.A, A)
    assert r.kind == "wrench" and r.t == pytest.approx(5.5)
    s = bags.read_status(bag)
    assert s.state == ["executing"] and np.isnan(s.min_torque_margin[0]) and np.isinf(s.min_obstacle_clearance[0])

    # one pass over several topics gives what the per-topic readers give
    found = bags.read_topics(bag, [bags.JOINT_STATES, bags.WRENCH, bags.ESTIMATE, bags.ROWS, bags.TRUTH],
                             times_only=[bags.STATUS])
    one = bags.joint_states_of(found[bags.JOINT_STATES], names)
    for f in ("t", "log_time_ns", "q", "qd", "tau"):
        np.testing.assert_array_equal(getattr(one, f), getattr(js, f))
    t_w1, frames1, w1 = bags.wrenches_of(found[bags.WRENCH])
    np.testing.assert_array_equal(t_w1, t_w)
    np.testing.assert_array_equal(w1, w_read)
    assert frames1 == frames
    e1 = bags.estimates_of(found[bags.ESTIMATE])
    for f in ("t", "log_time_ns", "estimate", "lower", "upper", "samples_used", "data_consistent"):
        np.testing.assert_array_equal(getattr(e1, f), getattr(e, f))
    (r1,) = list(bags.rows_of(found[bags.ROWS]))
    np.testing.assert_array_equal(r1.A, r.A)
    assert (r1.t, r1.kind, r1.parameter_names) == (r.t, r.kind, r.parameter_names)
    assert found[bags.TRUTH] == [] and bags.truth_of(found[bags.TRUTH]) is None
    assert found[bags.STATUS] == [int(6e9)]
    assert bags.time_span_s(found[bags.STATUS]) == 0.0
    assert bags.time_span_s([t for t, _ in found[bags.JOINT_STATES]]) == pytest.approx(0.098)


def test_bag_without_message_definitions_is_read_with_the_kilted_types(tmp_path):
    """Bags written by rosbag2 or rosbags store their message definitions; one that does not (here
    removed from the sqlite3 file) is read with the kilted typestore, built only for it."""
    import sqlite3
    store = bags.typestore()
    bag = tmp_path / "nodefs"
    with bags.BagWriter(bag, "sqlite3", {bags.JOINT_STATES: bags.TOPICS[bags.JOINT_STATES]}) as writer:
        for k in range(3):
            writer.write(bags.JOINT_STATES, 1000 + k, bags.joint_state(store, 1.0 + k, ["a", "b"], [k, 1.0],
                                                                          [2.0, k], [3.0, 4.0]))
    (db,) = bag.glob("*.db3")
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from message_definitions").fetchone()[0] == 1
        con.execute("delete from message_definitions")
    js = bags.read_joint_states(bag, ["b", "a"])
    np.testing.assert_array_equal(js.q, [[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(js.t, [1.0, 2.0, 3.0])


def test_an_estimate_of_the_layout_before_offset_checked_fails_to_read_rather_than_misreads(tmp_path):
    """``InertialEstimate.offset_checked`` is the message's last field: a recording of the layout
    before it that carries no definitions (rosbag2 on Humble stores none) fails to read, one line,
    where a field in the middle would have shifted the flags after it without a word."""
    import sqlite3
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg
    name = "inertial_id_msgs/msg/InertialEstimate"
    msg_dir = bags.msg_dirs()[0]
    before = "\n".join(line for line in (msg_dir / "InertialEstimate.msg").read_text().splitlines()
                       if not line.startswith("bool offset_checked"))
    old = get_typestore(Stores.ROS2_KILTED)
    old.register(get_types_from_msg(before, name))
    fields = dict(parameter_names=params.parameter_names("payload"), estimate=np.ones(10), lower=np.zeros(10),
                  upper=np.full(10, 2.0), bounds_guaranteed=True, data_consistent=True, samples_used=7)
    raw = bytes(old.serialize_cdr(bags.message(old, name, header=bags.header(old, 1.0, "flange"), **fields), name))
    bag = tmp_path / "before"
    store = bags.typestore()
    with bags.BagWriter(bag, "sqlite3", {bags.ESTIMATE: bags.TOPICS[bags.ESTIMATE]}) as writer:
        writer.write(bags.ESTIMATE, 1000, bags.message(store, name, header=bags.header(store, 1.0, "flange"),
                                                       offset_checked=True, **fields))
    assert bags.read_estimates(bag).samples_used.tolist() == [7]
    (db,) = bag.glob("*.db3")
    with sqlite3.connect(db) as con:
        con.execute("delete from message_definitions")
        con.execute("update messages set data = ?", (raw,))
    with pytest.raises(bags.BagError, match="damaged"):
        bags.read_estimates(bag)


@pytest.mark.ros
def test_suite_qos_matches_the_nodes_publishers():
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    from inertial_id.nodes import common, controller_client, estimator
    for ours, theirs in ((bags.SENSOR_QOS, common.SENSOR_QOS), (bags.RELIABLE_QOS, common.RELIABLE_QOS),
                         (bags.LATCHED_QOS, common.LATCHED_QOS), (bags.ESTIMATE_QOS, estimator.ESTIMATE_QOS),
                         (bags.DEFAULT_QOS, controller_client.COMMAND_QOS)):
        assert ours.depth == theirs.depth
        assert (ours.reliability.name == "RELIABLE") == (theirs.reliability == ReliabilityPolicy.RELIABLE)
        assert (ours.durability.name == "TRANSIENT_LOCAL") == (theirs.durability == DurabilityPolicy.TRANSIENT_LOCAL)


def test_not_a_bag_is_one_line_error(tmp_path, capsys):
    assert main(["estimate", "--bag", str(tmp_path), "--robot", "kinova_gen3"]) == 2
    assert "not a rosbag2 folder" in capsys.readouterr().err


@pytest.fixture(scope="module")
def gen3_bag(tmp_path_factory, gen3):
    bag = tmp_path_factory.mktemp("rec") / "gen3"
    record(gen3, "dumbbell_5lb", 3.0, bag, "sqlite3", seed=1, start_time_s=2000.0)
    return bag


def test_record_sim_writes_the_profile_topics(gen3_bag, gen3):
    meta = metadata(gen3_bag)
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in meta["topics_with_message_count"]}
    assert counts[gen3.sensing.joint_states_topic] == 3000          # 3 s at the profile's 1 kHz
    assert counts[bags.TRUTH] == 1 and counts[gen3.spec.controller.topic] == 1
    js = bags.read_joint_states(gen3_bag, gen3.joint_names)
    assert np.allclose(np.diff(js.t), 1e-3) and js.tau is not None
    np.testing.assert_allclose(bags.read_truth(gen3_bag), payload_params("dumbbell_5lb"))
    ((_, names, t, q),) = bags.read_trajectories(gen3_bag, gen3.spec.controller.topic)
    assert names == list(gen3.joint_names) and t[-1] == pytest.approx(3.0, abs=0.02)
    # the arm followed the recorded command
    assert np.max(np.abs(np.interp(js.t - 2000.0, t, q[:, 3]) - js.q[:, 3])) < 0.02


def test_offline_estimate_from_recorded_samples_contains_the_truth(gen3_bag, gen3):
    _, r, info = offline.estimate_from_bag(gen3_bag, gen3, "guaranteed", "samples", bounds_period_s=1.0)
    truth = payload_params("dumbbell_5lb")
    assert info["source"] == "samples" and info["messages_accepted"] == 29   # (3000 - 1) // 100 windows
    assert r.bounds_guaranteed and r.data_consistent
    assert np.all((truth >= r.lower) & (truth <= r.upper))
    lo, hi = gen3.payload_prior()
    assert hi[0] - lo[0] > 5 * (r.upper[0] - r.lower[0])              # the data did shrink the mass interval


def test_bounds_do_not_depend_on_the_update_schedule(gen3_bag, gen3):
    """The live node updates on a wall-clock timer; with rows kept across updates, the final box is
    the projection of all rows whatever the schedule, which lets offline equal live."""
    finals = []
    for period in (0.0, 0.3, 1.0):
        _, r, _ = offline.estimate_from_bag(gen3_bag, gen3, "guaranteed", "samples", bounds_period_s=period)
        finals.append(np.concatenate([r.lower, r.upper]))
    assert scaled_difference(finals[0], finals[1]) < 1e-6
    assert scaled_difference(finals[0], finals[2]) < 1e-6


def rows_message(store, rows, frame):
    return bags.message(store, "inertial_id_msgs/msg/RegressorSample",
        header=bags.header(store, rows.t, frame), kind=rows.kind, body="payload",
        parameter_names=rows.parameter_names, rows=rows.b.size, samples=rows.samples, regressor=rows.A.ravel(),
        measurement=rows.b, noise_bound=rows.noise_bound, noise_sigma=rows.noise_sigma,
        kinematics=rows.kinematics if rows.kinematics is not None else np.zeros(0),
        acceleration_bound=rows.acceleration_bound.ravel() if rows.acceleration_bound is not None else np.zeros(0))


@pytest.mark.parametrize("robot_name, method", [("kinova_gen3", "guaranteed"), ("xarm7", "guaranteed")])
def test_recorded_rows_and_recorded_samples_give_the_same_estimate(robot_name, method, tmp_path):
    """A bag holding the rows (as the live builder publishes them) and the same bag's samples
    through the offline builder: the same estimator input, bit for bit, so the same bounds."""
    robot = load_robot(robot_name)
    bag = tmp_path / "sim"
    record(robot, "dumbbell_5lb", 2.0, bag, "mcap", seed=2, start_time_s=3000.0)
    _, from_samples, _ = offline.estimate_from_bag(bag, robot, method, "samples", bounds_period_s=0.5)
    js = bags.read_joint_states(bag, robot.joint_names, robot.sensing.joint_states_topic)
    wrenches = None
    if robot.sensing.wrench:
        t_w, _, w = bags.read_wrenches(bag, robot.sensing.wrench_topic)
        wrenches = (t_w, w)
    store = bags.typestore()
    with_rows = tmp_path / "rows"
    with bags.BagWriter(with_rows, "sqlite3", {bags.ROWS: bags.TOPICS[bags.ROWS]}) as writer:
        counts: dict = {}
        for m in offline.rows_from_stream(robot, ("momentum", "joint_torque", "wrench"), js.t, js.q, js.qd,
                                          js.tau, wrenches, counts=counts):
            writer.write(bags.ROWS, int(m.t * 1e9), rows_message(store, m, robot.payload_frame))
    _, from_rows, info = offline.estimate_from_bag(with_rows, robot, method, "auto", bounds_period_s=0.5)
    assert info["source"] == "rows"
    np.testing.assert_array_equal(from_rows.lower, from_samples.lower)
    np.testing.assert_array_equal(from_rows.upper, from_samples.upper)
    # every sample but the last batch not yet full (20 samples, or a 100-sample momentum window) and
    # the wrench samples whose window may hold a velocity reversal
    assert from_rows.samples_used == from_samples.samples_used >= \
        len(js) - counts.get("velocity_reversal", 0) - max(21, 0.05 * len(js))


def test_estimate_command_json(gen3_bag, tmp_path):
    out = tmp_path / "est.json"
    assert main(["estimate", "--bag", str(gen3_bag), "--robot", "kinova_gen3", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["source"] == "samples" and r["truth_inside_bounds"] and r["bounds_guaranteed"]
    assert r["data_duration_s"] == pytest.approx(2.999, abs=1e-6)
    assert len(r["history"]["t"]) == r["updates"] >= 2
