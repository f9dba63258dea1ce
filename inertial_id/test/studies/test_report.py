"""``report``: figures written from a bag and from a JSON result, each checked for content."""
import json
import re

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.cli.record_sim import record
from inertial_id.core.data import bags
from inertial_id.core.robot import params
from inertial_id.studies import report
from inertial_id.core.robot.model import load_robot, payload_params

pytestmark = pytest.mark.slow          # figures of whole runs


def image(path):
    import matplotlib.image
    return matplotlib.image.imread(str(path))[:, :, :3]


def ink_fraction(img) -> float:
    """Share of pixels that are not white."""
    return float(np.mean(np.any(img < 0.95, axis=2)))


def red_pixels(img) -> int:
    return int(np.sum((img[:, :, 0] > 0.8) & (img[:, :, 1] < 0.2) & (img[:, :, 2] < 0.2)))


UNIT = re.compile(r"\(.+\)$")


def check_figure(name, fig):
    """Every panel draws finite data and has a y label with a unit; every bottom panel an x label."""
    panels = [ax for ax in fig.axes if ax.axison]
    assert panels, name
    for ax in panels:
        where = f"{name}: {ax.get_ylabel()!r}"
        assert UNIT.search(ax.get_ylabel()), where
        if ax.get_subplotspec().is_last_row():
            assert ax.get_xlabel(), where
        drawn = [ln for ln in ax.get_lines() if np.sum(np.isfinite(np.asarray(ln.get_ydata(), dtype=float))) >= 2]
        bars = [b for b in ax.patches if b.get_height() > 0]
        assert drawn or bars, where
        # the data lie on the axes (not zoomed out of view)
        lo, hi = ax.get_ylim()
        for ln in drawn:
            y = np.asarray(ln.get_ydata(), dtype=float)
            assert np.any((y >= min(lo, hi)) & (y <= max(lo, hi))), where


def check_figures(run, expected):
    figs = report.figures(run)
    assert set(figs) == set(expected)
    for name, fig in figs.items():
        check_figure(name, fig)
    return figs


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
            w.write(bags.STATUS, int(t * 1e9), bags.message(store, "inertial_id_msgs/msg/ExcitationStatus",
                header=bags.header(store, t), state="executing", trajectory_id=1, solve_time=0.01,
                excitation_cost=float("nan"), min_joint_margin=0.5 - 0.01 * k, min_velocity_margin=0.2,
                min_torque_margin=float("nan"), min_obstacle_clearance=float("inf"), message=""))
    return bag


def test_report_of_a_bag(demo_like_bag, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(demo_like_bag), "--out", str(out), "--robot", "kinova_gen3"]) == 0
    names = {"bounds.png", "residuals.png", "condition.png", "joints.png", "torques.png", "margins.png",
             "index.html"}
    assert {p.name for p in out.iterdir()} == names
    for png in names - {"index.html"}:
        img = image(out / png)
        assert img.shape[0] > 200 and img.shape[1] > 500, png
        assert 0.02 < ink_fraction(img) < 0.9, png          # drawn on, not a blank or solid canvas
    # limits, bound lines and the zero-margin line are drawn in red
    for png in ("residuals.png", "joints.png", "torques.png", "margins.png"):
        assert red_pixels(image(out / png)) > 100, png
    index = (out / "index.html").read_text()
    truth = payload_params("dumbbell_5lb")
    assert "demo: kinova_gen3, guaranteed" in index
    for name, value in zip(params.parameter_names("payload"), truth):
        assert name in index and f"{value:.5g}" in index
    for png in names - {"index.html"}:
        assert f'src="{png}"' in index
    # summary: robot, frame, planner outcome; interval table with units and inside/outside
    for text in ("<th>robot</th><td>kinova_gen3</td>", "<th>payload frame</th><td>end_effector_link</td>",
                 "<th>planner outcome</th><td>executing", "<td>kg m²</td>", "<style>"):
        assert text in index, text
    assert index.count("<td class='ok'>inside</td>") == 10


def test_every_figure_of_a_bag_has_content_and_labels(demo_like_bag):
    run = report.from_bag(demo_like_bag, load_robot("kinova_gen3"))
    check_figures(run, {"bounds.png", "residuals.png", "condition.png", "joints.png", "torques.png", "margins.png"})
    # the planner executes throughout this bag: its margins are plotted, the absent obstacles and
    # torque margin (NaN/inf) are not
    assert set(k for k, v in run.margins.items() if np.isfinite(v).any()) == {
        "joint position margin (rad)", "velocity margin (rad/s)"}


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
    check_figures(report.from_json(result), {"bounds.png", "condition.png"})
    assert "<th>payload frame</th><td>end_effector_link</td>" in (out / "index.html").read_text()
    assert json.loads(result.read_text())["updates"] >= 5


def test_report_of_a_bag_with_another_robots_profile_is_refused(demo_like_bag, tmp_path, capsys):
    assert main(["report", str(demo_like_bag), "--out", str(tmp_path / "o"), "--robot", "xarm7"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "end_effector_link" in err and "--robot" in err


def test_report_of_nothing_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert main(["report", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")]) == 2
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.count("error") == 2


@pytest.mark.ros
def test_report_of_a_demo_json_has_the_run_history(demo_like_bag, tmp_path):
    """The demo's result carries what its monitor received: the report then has bounds over time,
    condition number and the planner's margins while executing."""
    import rclpy
    from builtin_interfaces.msg import Time

    from inertial_id.cli.output import write_json
    from inertial_id_msgs.msg import ExcitationStatus, InertialEstimate
    from inertial_id.nodes.monitor import MonitorNode
    run = report.from_bag(demo_like_bag, load_robot("kinova_gen3"))       # a real estimator history
    stamp = lambda t: Time(sec=int(t), nanosec=int(round((t % 1) * 1e9)))  # noqa: E731
    rclpy.init()
    try:
        monitor = MonitorNode()
        # idle before the simulator's first /clock (stamp 0), then planning, executing, done
        for k, (t, state) in enumerate([(0.0, "idle"), (500.0, "planning"), *((500.2 + 0.1 * i, "executing")
                                        for i in range(25)), (503.0, "done")]):
            msg = ExcitationStatus(state=state, min_joint_margin=0.0 if state != "executing" else 0.4 - 0.01 * k,
                                   min_velocity_margin=0.3, min_torque_margin=2.0 + 0.1 * k,
                                   min_obstacle_clearance=1000.0, message="done after 2.5 s" if state == "done" else "")
            msg.header.stamp = stamp(t)
            monitor._on_status(msg)
        for t, x, lo, hi, c in zip(run.t, run.estimate, run.lower, run.upper, run.condition_number):
            msg = InertialEstimate(parameter_names=run.parameter_names, estimate=list(x), lower=list(lo),
                                   upper=list(hi), condition_number=float(c), samples_used=100)
            msg.header.stamp = stamp(500.0 + t)
            monitor._on_estimate(msg)
        history = monitor.history()
        monitor.destroy_node()
    finally:
        rclpy.try_shutdown()
    result = tmp_path / "demo.json"
    write_json(str(result), {"robot": "kinova_gen3", "payload": "dumbbell_5lb", "method": "guaranteed",
                             "parameter_names": run.parameter_names, "frame": "end_effector_link",
                             "truth": run.truth, "estimate": run.estimate[-1], "lower": run.lower[-1],
                             "upper": run.upper[-1], "bounds_guaranteed": True, "data_consistent": True,
                             "excitation_complete": True, "planner_message": "done after 2.5 s", "history": history})
    data = report.from_json(result)
    assert len(data.t) == len(run.t) and data.t[0] >= 0
    check_figures(data, {"bounds.png", "condition.png", "margins.png"})
    # idle, planning and done draw no margin; the no-obstacle clearance of 1000 m is no margin at all
    joint = data.margins["joint position margin (rad)"]
    executing = np.array([s == "executing" for s in data.status_state])
    assert np.isfinite(joint[executing]).all() and np.isnan(joint[~executing]).all()
    assert np.isnan(data.margins["obstacle clearance (m)"]).all()
    out = tmp_path / "report"
    assert main(["report", str(result), "--out", str(out)]) == 0
    index = (out / "index.html").read_text()
    for text in ("excitation complete: done after 2.5 s", "<th>payload frame</th><td>end_effector_link</td>",
                 "The truth lies inside"):
        assert text in index, text
    for png in ("bounds.png", "condition.png", "margins.png"):
        assert 0.02 < ink_fraction(image(out / png)) < 0.9, png


def test_residual_title_counts_what_is_plotted():
    r = np.concatenate([np.linspace(-0.9, 0.9, 9997), [23.0, -23.0, 1.5]])
    run = report.RunData("r", params.parameter_names("payload"), residual_ratio=r)
    figs = check_figures(run, {"residuals.png"})
    title = figs["residuals.png"].axes[0].get_title()
    assert "9997 of 10000 rows" in title and "99.97 %" in title and "23 x bound" in title
    assert "100" not in title.split("(")[1]


def test_condition_plot_starts_where_the_information_is_full_rank():
    t = np.arange(6.0)
    run = report.RunData("c", params.parameter_names("payload"), t=t,
                         condition_number=np.array([np.nan, 1e18, 5e3, 80.0, 40.0, 30.0]))
    fig = check_figures(run, {"condition.png"})["condition.png"]
    line = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "condition number"][0]
    y = np.asarray(line.get_ydata(), dtype=float)
    assert np.isnan(y[:2]).all() and np.nanmax(y) == 5e3
    assert fig.axes[0].get_ylim()[1] < 1e5


def test_a_converged_band_stays_visible():
    """A final interval a millionth of the prior's width still spans the panel it is drawn in."""
    names = params.parameter_names("payload")
    t = np.linspace(0.0, 10.0, 11)
    width = np.logspace(0, -6, 11)[:, None] * np.ones(10)
    truth = payload_params("dumbbell_5lb")
    run = report.RunData("b", names, t=t, estimate=np.tile(truth, (11, 1)), lower=truth - width / 2,
                         upper=truth + width / 2, truth=truth)
    fig = check_figures(run, {"bounds.png"})["bounds.png"]
    for k in range(10):
        lo, hi = fig.axes[2 * k].get_ylim()
        assert (hi - lo) < 5 * width[-1, k], names[k]
        assert "(kg" in fig.axes[2 * k].get_ylabel()


def test_index_says_when_the_truth_is_outside():
    names = params.parameter_names("payload")
    truth = payload_params("dumbbell_5lb")
    lower, upper = truth - 0.01, truth + 0.01
    lower[3] = truth[3] + 0.001                    # mcz excludes the truth
    run = report.RunData("x", names, robot="xarm7", frame="link_eef", t=np.zeros(1), estimate=truth[None],
                         lower=lower[None], upper=upper[None], truth=truth, flags={"bounds_guaranteed": True})
    page = report.index_html(run, [])
    assert "OUTSIDE the final interval for 1 of 10" in page and "badge bad" in page
    assert page.count("<td class='bad'>OUTSIDE</td>") == 1 and page.count("<td class='ok'>inside</td>") == 9
    assert "Final interval (frame link_eef)" in page
