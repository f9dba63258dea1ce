"""``report``: figures written from a bag and from a JSON result, each checked for content."""
import json

import matplotlib
import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.cli.record_sim import record
from inertial_id.core import bags, params, report
from inertial_id.core.model import load_robot, payload_params


def image(path):
    import matplotlib.image
    return matplotlib.image.imread(str(path))[:, :, :3]


def ink_fraction(img) -> float:
    """Share of pixels that are not white."""
    return float(np.mean(np.any(img < 0.95, axis=2)))


def red_pixels(img) -> int:
    return int(np.sum((img[:, :, 0] > 0.8) & (img[:, :, 1] < 0.2) & (img[:, :, 2] < 0.2)))


@pytest.fixture(scope="module")
def demo_like_bag(tmp_path_factory):
    """A record-sim bag plus what the live nodes add: planner status messages."""
    robot = load_robot("kinova_gen3")
    root = tmp_path_factory.mktemp("report")
    sim = root / "sim"
    record(robot, "dumbbell_5lb", 3.0, sim, "mcap", seed=4, start_time_s=500.0)
    # the same recording with an ExcitationStatus stream, as the planner publishes it
    bag = root / "demo"
    store = bags.typestore()
    topics = bags.suite_topics(robot)
    with bags.BagWriter(bag, "mcap", {k: topics[k] for k in (bags.JOINT_STATES, bags.TRUTH, bags.STATUS)}) as w:
        for topic, t_ns, msg in bags.messages(sim, [bags.JOINT_STATES, bags.TRUTH]):
            w.write(topic, t_ns, msg)
        for k in range(30):
            t = 500.0 + 0.1 * k
            w.write(bags.STATUS, int(t * 1e9), bags.message(store, "inertial_id/msg/ExcitationStatus", 
                header=bags.header(store, t), state="executing", trajectory_id=1, solve_time=0.01,
                excitation_cost=float("nan"), min_joint_margin=0.5 - 0.01 * k, min_velocity_margin=0.2,
                min_torque_margin=float("nan"), min_obstacle_clearance=float("inf"), message=""))
    return bag


def test_report_of_a_bag(demo_like_bag, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(demo_like_bag), "--out", str(out), "--robot", "kinova_gen3"]) == 0
    names = {"bounds.png", "residuals.png", "condition.png", "joints.png", "margins.png", "index.html"}
    assert {p.name for p in out.iterdir()} == names
    for png in names - {"index.html"}:
        img = image(out / png)
        assert img.shape[0] > 200 and img.shape[1] > 500, png
        assert 0.02 < ink_fraction(img) < 0.9, png          # drawn on, not a blank or solid canvas
    # limits, bound lines and the zero-margin line are drawn in red
    for png in ("residuals.png", "joints.png", "margins.png"):
        assert red_pixels(image(out / png)) > 100, png
    index = (out / "index.html").read_text()
    truth = payload_params("dumbbell_5lb")
    assert "demo: kinova_gen3, guaranteed" in index
    for name, value in zip(params.parameter_names("payload"), truth):
        assert name in index and f"{value:.6g}" in index
    for png in names - {"index.html"}:
        assert f'src="{png}"' in index


def test_report_data_from_bag(demo_like_bag):
    run = report.from_bag(demo_like_bag, load_robot("kinova_gen3"))
    # offline history (no recorded estimates): the bounds only shrink, and hold the truth
    assert np.all(np.diff(run.upper - run.lower, axis=0) <= 1e-12)
    truth = payload_params("dumbbell_5lb")
    assert np.all((run.lower[-1] <= truth) & (truth <= run.upper[-1]))
    # simulated data within the profile's noise bounds: every row's residual at the truth-containing
    # estimate is a fraction of its bound
    assert run.residual_ratio.size >= 29 * 7 and np.mean(np.abs(run.residual_ratio) <= 1.0) > 0.95
    assert np.isnan(run.margins["torque margin (N m)"]).all()


def test_report_of_an_estimate_json(demo_like_bag, tmp_path):
    result = tmp_path / "est.json"
    assert main(["estimate", "--bag", str(demo_like_bag), "--robot", "kinova_gen3", "--bounds-period", "0.5",
                 "--json", str(result)]) == 0
    out = tmp_path / "report"
    assert main(["report", str(result), "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {"bounds.png", "condition.png", "index.html"}
    assert ink_fraction(image(out / "bounds.png")) > 0.02
    assert json.loads(result.read_text())["updates"] >= 5


def test_report_of_nothing_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert main(["report", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")]) == 2
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.count("error") == 2
