"""Plots of a run an engineer can read: PNG figures (matplotlib, Agg backend) and an index.html.

Input is a :class:`RunData`, filled from a bag (:func:`from_bag`: the recorded estimates, or the
offline estimator's history when the bag has none; rows for residuals; joint states; planner
status) or from a JSON result of ``demo``/``estimate`` (:func:`from_json`: its final bounds and the
``history`` it carries). :func:`figures` draws what the data allow, :func:`write_report` saves them
with an index.html (summary, final interval table, the figures):

- ``bounds.png``: per parameter, the guaranteed interval, estimate and truth over time, zoomed on the
  final interval (the early, wider bands run off the axes), and the interval width on a log scale;
- ``residuals.png``: row residuals of the final estimate divided by each row's error bound;
- ``condition.png``: condition number of the information, from the time it is full rank;
- ``joints.png``: joint positions and velocities against the profile limits;
- ``torques.png``: measured joint torques against the limits (arms with joint torque sensing);
- ``margins.png``: the planner's certified margins while it executes a plan.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.robot import params
from ..core.robot.model import ProfileError, load_robot
from ..core import offline
from ..core.data import bags
from ..defaults import NO_OBSTACLES_CLEARANCE_M

# a condition number above this is an information matrix that is not yet full rank (numerically)
RANK_DEFICIENT_CONDITION = 1e12
MARGINS = {"min_joint_margin": "joint position margin (rad)", "min_velocity_margin": "velocity margin (rad/s)",
           "min_torque_margin": "torque margin (N m)", "min_obstacle_clearance": "obstacle clearance (m)"}


@dataclass
class RunData:
    """What a run report shows: the estimates over time (s), the final interval, the truth when known, the run's metadata."""
    title: str
    parameter_names: list
    robot: str = ""
    method: str = ""
    frame: str = ""                         # frame the parameters are expressed in
    t: np.ndarray | None = None             # s from the start, per estimate
    estimate: np.ndarray | None = None      # (N, n)
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    condition_number: np.ndarray | None = None
    truth: np.ndarray | None = None
    flags: dict = field(default_factory=dict)     # bounds_guaranteed, data_consistent, physically_consistent
    residual_ratio: np.ndarray | None = None      # (rows,) residual / error bound, final estimate
    joint_t: np.ndarray | None = None
    joint_names: list = field(default_factory=list)
    q: np.ndarray | None = None
    qd: np.ndarray | None = None
    tau_measured_Nm: np.ndarray | None = None     # (N, joints), arms that sense joint torque
    position_limits: tuple | None = None          # (lower (n,), upper (n,))
    velocity_limit: np.ndarray | None = None
    torque_limit_Nm: np.ndarray | None = None
    status_t: np.ndarray | None = None
    status_state: list = field(default_factory=list)
    margins: dict = field(default_factory=dict)   # label with unit -> (N,) values, every status
    planner_outcome: str = ""
    summary: dict = field(default_factory=dict)   # further facts for index.html


def _seconds_from(t, t0):
    return np.asarray(t, dtype=float) - t0


def executing_margins(state, columns: dict) -> dict:
    """Margin columns (label -> values per status) kept only while the planner executes a plan;
    non-finite values and the no-obstacle clearance are no margin at all (NaN)."""
    executing = np.array([s == "executing" for s in state], dtype=bool)
    out = {}
    for key, label in MARGINS.items():
        v = np.asarray(columns[key], dtype=float).copy()
        v[~executing | ~np.isfinite(v)] = np.nan
        if key == "min_obstacle_clearance":
            v[v >= NO_OBSTACLES_CLEARANCE_M] = np.nan
        out[label] = v
    return out


def from_bag(path, robot, method: str | None = None, progress=None) -> RunData:
    """Everything a bag offers for the report (the profile gives limits and the estimator)."""
    topics = bags.topics_in(path)
    method = method or robot.spec.identification.method
    live = bags.read_estimates(path) if bags.ESTIMATE in topics else None
    check_profile_fits_bag(path, robot, topics, live)
    intake, result, info = offline.estimate_from_bag(path, robot, method, progress=progress, keep_rows=True)
    run = RunData(title=f"{Path(path).name}: {robot.name}, {method}", parameter_names=list(result.parameter_names),
                  robot=robot.name, method=method, frame=robot.payload_frame)
    t0 = None
    js_topic = robot.sensing.joint_states_topic
    if js_topic in topics:
        js = bags.read_joint_states(path, robot.joint_names, js_topic)
        t0 = js.t[0]
        run.joint_t, run.joint_names, run.q, run.qd = js.t - t0, list(js.names), js.q, js.qd
        run.position_limits = (robot.position_lower, robot.position_upper)
        run.velocity_limit = robot.velocity_limit
        if robot.sensing.joint_torque and js.tau is not None:
            run.tau_measured_Nm, run.torque_limit_Nm = js.tau, robot.torque_limit
    if live is not None and len(live):
        # the live run's own stream (stamped with the estimator's clock)
        t0 = live.t[0] if t0 is None else t0
        run.t, run.estimate, run.lower, run.upper = _seconds_from(live.t, t0), live.estimate, live.lower, live.upper
        run.condition_number = np.where(live.condition_number > 0, live.condition_number, np.nan)
        run.frame = live.frame_id or run.frame
        run.flags = {"bounds_guaranteed": bool(live.bounds_guaranteed[-1]),
                     "data_consistent": bool(live.data_consistent[-1]),
                     "physically_consistent": bool(live.physically_consistent[-1])}
        run.summary["estimates"] = f"{len(live)} recorded InertialEstimate messages ({live.method})"
    else:
        h = intake.history
        t0 = h.t[0] if t0 is None else t0
        run.t = _seconds_from(h.t, t0)
        run.estimate, run.lower, run.upper = np.array(h.estimate), np.array(h.lower), np.array(h.upper)
        run.condition_number = np.array(h.condition_number, dtype=float)
        run.flags = {"bounds_guaranteed": bool(result.bounds_guaranteed),
                     "data_consistent": bool(result.data_consistent),
                     "physically_consistent": bool(result.physically_consistent)}
        run.summary["estimates"] = f"{len(h.t)} bounds updates of the offline estimator ({info['source']})"
    run.truth = bags.read_truth(path) if bags.TRUTH in topics else None
    run.residual_ratio = residual_ratios(intake.estimator, result.estimate, info["rows"])
    if bags.STATUS in topics:
        st = bags.read_status(path)
        if st is not None and len(st.t):
            run.status_t = _seconds_from(st.t, t0 if t0 is not None else st.t[0])
            run.status_state = list(st.state)
            run.margins = executing_margins(st.state, {k: getattr(st, k) for k in MARGINS})
            run.planner_outcome = st.state[-1] + (f": {st.message[-1]}" if st.message[-1] else "")
    run.summary.update({"rows source": info["source"], "samples": int(result.samples_used)})
    return run


def check_profile_fits_bag(path, robot, topics, live) -> None:
    """ValueError when the bag's estimates or truth are in another frame than the profile's payload
    frame: a bag read with another robot's profile gives residuals and limits of the wrong robot."""
    truth = bags.read_topics(path, [bags.TRUTH])[bags.TRUTH] if bags.TRUTH in topics else None
    frames = {live.frame_id if live is not None else "", truth[0][1].header.frame_id if truth else ""} - {""}
    if frames and frames != {robot.payload_frame}:
        raise ValueError(f"'{path}' holds estimates in frame {', '.join(sorted(frames))}, but the profile "
                         f"{robot.name} has payload frame {robot.payload_frame}: pass the bag's robot with --robot")


def residual_ratios(estimator, x, rows) -> np.ndarray | None:
    """``(A x - b) / e`` of every row for the final payload estimate ``x``; the robot columns of
    momentum rows at the robot's nominal parameters. |ratio| <= 1 where the data fit the bounds."""
    if not rows or not np.all(np.isfinite(x)):
        return None
    nominal = getattr(getattr(estimator, "estimator", None), "robot_nominal", None)
    out = []
    for m in rows:
        pred = m.A[:, :10] @ x
        if m.A.shape[1] > 10 and nominal is not None:
            pred = pred + m.A[:, 10:] @ nominal
        out.append((pred - m.b) / np.maximum(m.noise_bound, 1e-12))
    return np.concatenate(out)


def from_json(path) -> RunData:
    """A ``demo`` or ``estimate`` JSON result: final bounds, and the history when it has one."""
    d = json.loads(Path(path).read_text())
    names = d.get("parameter_names") if isinstance(d, dict) else None
    if not names or "lower" not in d:
        raise ValueError(f"'{path}' is not a demo or estimate result (no parameter_names/lower)")
    try:
        return _run_from_result(path, d, names)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"'{path}' is not a demo or estimate result ({type(exc).__name__}: {exc})") from None


def _payload_frame_of(profile) -> str:
    """The payload frame of a robot profile name ('' when it is not one): an ``estimate`` result
    is in its profile's payload frame but does not name it."""
    try:
        return load_robot(str(profile)).payload_frame if profile else ""
    except (ProfileError, OSError, ValueError):
        return ""


def _run_from_result(path, d: dict, names) -> RunData:
    run = RunData(title=f"{Path(path).name}: {d.get('robot', '')}, {d.get('method', '')}", parameter_names=names,
                  robot=str(d.get("robot", "")), method=str(d.get("method", "")),
                  frame=str(d.get("frame") or _payload_frame_of(d.get("robot"))))
    h = d.get("history") or {}
    status = h.get("status") or {}
    if status.get("t"):
        # statuses published before the simulator's first /clock carry stamp 0: not on the run's time axis
        keep = [k for k, t in enumerate(status["t"]) if t > 0]
        status = {k: [v[i] for i in keep] for k, v in status.items()}
    if h.get("t"):
        t0 = min(h["t"][0], status["t"][0]) if status.get("t") else h["t"][0]
        run.t = np.asarray(h["t"], dtype=float) - t0
        run.estimate, run.lower, run.upper = (np.asarray(h[k], dtype=float) for k in ("estimate", "lower", "upper"))
        run.condition_number = np.asarray(h["condition_number"], dtype=float)
        if status.get("t"):
            run.status_t = np.asarray(status["t"], dtype=float) - t0
            run.status_state = list(status["state"])
            run.margins = executing_margins(status["state"], status)
    else:
        run.t = np.zeros(1)
    # the result's final numbers are the last row (a history may stop short of the final estimate)
    final = [np.asarray([d[k]], dtype=float) for k in ("estimate", "lower", "upper")]
    if run.estimate is None or not np.array_equal(run.estimate[-1], final[0][0]):
        run.t = np.append(run.t, run.t[-1]) if run.estimate is not None else run.t
        run.estimate, run.lower, run.upper = (f if old is None else np.vstack([old, f]) for old, f in
                                              zip((run.estimate, run.lower, run.upper), final))
        if run.condition_number is not None:
            run.condition_number = np.append(run.condition_number, run.condition_number[-1])
    if d.get("truth") is not None:
        run.truth = np.asarray(d["truth"], dtype=float)
    run.flags = {k: bool(d[k]) for k in ("bounds_guaranteed", "data_consistent", "physically_consistent") if k in d}
    if "planner_message" in d:
        run.planner_outcome = (("excitation complete" if d.get("excitation_complete") else "excitation cut short")
                               + f": {d['planner_message']}")
    run.summary = {k: d[k] for k in ("payload", "samples", "updates", "motion_s", "mass_error_pct", "com_error_mm",
                                     "source", "bag", "message") if d.get(k) not in (None, "")}
    return run


# ---------------------------------------------------------------------------------------- figures

def _figure(rows: int, cols: int, title: str, size=(12, 8)):
    # a Figure of its own, not pyplot's: no GUI backend to choose, nothing kept after it is saved
    from matplotlib.figure import Figure      # optional: matplotlib (~0.3 s), for the figures only
    fig = Figure(figsize=size)
    axes = fig.subplots(rows, cols, squeeze=False)
    fig.suptitle(title, fontsize=11)
    return fig, axes


def _finite(a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    return np.where(np.isfinite(a), a, np.nan)


def _zoom_on_final(ax, values) -> None:
    """y limits around the final interval, estimate and truth, with room above and below."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if not v.size:
        return
    lo, hi = v.min(), v.max()
    span = max(hi - lo, 1e-12 * max(abs(lo), abs(hi)), 1e-15)
    ax.set_ylim(lo - 0.6 * span, hi + 0.6 * span)


def plot_bounds(run: RunData):
    """Per parameter: interval, estimate and truth over time (zoomed on the final interval) and the
    interval width on a log scale."""
    n = len(run.parameter_names)
    fig, axes = _figure(n, 2, f"Guaranteed bounds over time: {run.title}", (12, 1.75 * n + 0.8))
    marker = "o" if len(run.t) < 2 else None
    # each value holds until the next update; the last one until the end of the run
    t = np.append(run.t, max([run.t[-1], *(x[-1] for x in (run.joint_t, run.status_t) if x is not None and len(x))]))
    lower, upper, est = (np.vstack([a, a[-1:]]) for a in map(_finite, (run.lower, run.upper, run.estimate)))
    for k, name in enumerate(run.parameter_names):
        unit = params.parameter_unit(name)
        short = name.split(".")[-1]
        ax = axes[k, 0]
        ax.fill_between(t, lower[:, k], upper[:, k], step="post", alpha=0.25, color="tab:blue", linewidth=0)
        ax.plot(t, lower[:, k], drawstyle="steps-post", color="tab:blue", linewidth=1.2, marker=marker,
                label="guaranteed interval")
        ax.plot(t, upper[:, k], drawstyle="steps-post", color="tab:blue", linewidth=1.2, marker=marker)
        final = [lower[-1, k], upper[-1, k], est[-1, k]]
        if run.truth is not None:
            ax.axhline(run.truth[k], color="k", linestyle="--", linewidth=0.9, label="truth")
            final.append(run.truth[k])
        ax.plot(t, est[:, k], drawstyle="steps-post", color="tab:orange", linewidth=1.4, marker=marker,
                label="estimate")
        _zoom_on_final(ax, final)
        ax.set_ylabel(f"{short} ({unit})", fontsize=8)
        ax.tick_params(labelsize=7)
        width = upper[:, k] - lower[:, k]
        ax = axes[k, 1]
        ax.semilogy(t, np.where(width > 0, width, np.nan), drawstyle="steps-post", color="tab:green",
                    marker=marker)
        ax.set_ylabel(f"width of {short} ({unit})", fontsize=8)
        ax.tick_params(which="both", labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("t (s)", fontsize=8)
    axes[0, 0].set_title("interval, estimate, truth (zoomed on the final interval)", fontsize=9)
    axes[0, 1].set_title("interval width (log scale)", fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper right", ncol=3, fontsize=8, frameon=False)
    return fig


def _percent(k: int, n: int) -> str:
    """k/n in percent without rounding a partial count to 0 % or 100 %."""
    p = 100.0 * k / n
    if 0 < k < n:
        p = min(max(p, 0.01), 99.99)
    return f"{p:.2f} %"


def plot_residuals(run: RunData):
    """Residual of every row at the final estimate, divided by the row's guaranteed error bound."""
    r = _finite(run.residual_ratio)
    a = np.abs(r[np.isfinite(r)])
    inside = int(np.sum(a <= 1.0))
    fig, axes = _figure(1, 2, f"Residuals of the final estimate / each row's error bound (red: the bound): {run.title}",
                        (12, 4.2))
    ax = axes[0, 0]
    ax.plot(np.arange(r.size), r, ".", markersize=2, color="tab:blue")
    ax.axhline(1.0, color="r", linewidth=1.0)
    ax.axhline(-1.0, color="r", linewidth=1.0)
    if a.size and a.max() > 5.0:
        ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("row (recorded order)")
    ax.set_ylabel("residual / error bound (1)")
    ax.set_title(f"{inside} of {a.size} rows within their bound ({_percent(inside, a.size)}); "
                 f"largest |residual| = {a.max() if a.size else float('nan'):.3g} x bound", fontsize=9)
    ax = axes[0, 1]
    ax.hist(np.log10(np.maximum(a, 1e-6)), bins=60, color="tab:blue")
    ax.axvline(0.0, color="r", linewidth=1.0)
    ax.set_xlabel("log10(|residual| / error bound)")
    ax.set_ylabel("rows (count)")
    ax.set_title(f"{a.size - inside} rows right of the red line (outside their bound)", fontsize=9)
    return fig


def full_rank_condition(condition_number) -> np.ndarray:
    """The condition number where the information is full rank, NaN elsewhere."""
    c = _finite(condition_number)
    return np.where((c > 0) & (c < RANK_DEFICIENT_CONDITION), c, np.nan)


def plot_condition(run: RunData):
    """Condition number of the information over time; the time before it is full rank is shaded."""
    fig, axes = _figure(1, 1, f"Condition number of the information: {run.title}", (10, 4))
    ax = axes[0, 0]
    c = full_rank_condition(run.condition_number)
    first = int(np.argmax(np.isfinite(c)))
    if first > 0:
        ax.axvspan(run.t[0], run.t[first], color="0.85", label="not yet full rank")
    ax.semilogy(run.t, c, marker=".", markersize=3, label="condition number")
    ax.set_xlim(run.t[0], run.t[-1] if run.t[-1] > run.t[0] else run.t[0] + 1.0)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("condition number (1)")
    ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False)   # above the data
    return fig


def plot_joints(run: RunData):
    """Joint positions and velocities against the profile limits."""
    n = len(run.joint_names)
    fig, axes = _figure(n, 2, f"Joint trajectories vs limits (red): {run.title}", (12, 1.6 * n + 0.8))
    lo, hi = run.position_limits
    for j, name in enumerate(run.joint_names):
        ax = axes[j, 0]
        ax.plot(run.joint_t, run.q[:, j])
        ax.axhline(lo[j], color="r", linestyle=":")
        ax.axhline(hi[j], color="r", linestyle=":")
        ax.set_ylabel(f"{name} (rad)", fontsize=8)
        ax = axes[j, 1]
        ax.plot(run.joint_t, run.qd[:, j])
        ax.axhline(run.velocity_limit[j], color="r", linestyle=":")
        ax.axhline(-run.velocity_limit[j], color="r", linestyle=":")
        ax.set_ylabel(f"{name} (rad/s)", fontsize=8)
    axes[0, 0].set_title("position", fontsize=9)
    axes[0, 1].set_title("velocity", fontsize=9)
    axes[-1, 0].set_xlabel("t (s)")
    axes[-1, 1].set_xlabel("t (s)")
    return fig


def plot_torques(run: RunData):
    """Measured joint torques against the profile's torque limits."""
    n = len(run.joint_names)
    fig, axes = _figure(n, 1, f"Measured joint torque vs limit (red): {run.title}", (10, 1.5 * n + 0.8))
    for j, name in enumerate(run.joint_names):
        ax = axes[j, 0]
        ax.plot(run.joint_t, run.tau_measured_Nm[:, j], linewidth=0.8)
        ax.axhline(run.torque_limit_Nm[j], color="r", linestyle=":")
        ax.axhline(-run.torque_limit_Nm[j], color="r", linestyle=":")
        ax.set_ylabel(f"{name} (N m)", fontsize=8)
        share = np.max(np.abs(run.tau_measured_Nm[:, j])) / run.torque_limit_Nm[j]
        ax.set_title(f"peak {100 * share:.0f} % of the limit", fontsize=8, loc="right")
    axes[-1, 0].set_xlabel("t (s)")
    return fig


def plot_margins(run: RunData):
    """The planner's certified margins while it executes (idle, planning and done draw nothing)."""
    shown = {k: v for k, v in run.margins.items() if np.any(np.isfinite(v))}
    fig, axes = _figure(len(shown), 1, f"Planner margins while executing (grey): {run.title}",
                        (10, 2.0 * len(shown) + 0.8))
    executing = np.array([s == "executing" for s in run.status_state], dtype=bool)
    for ax, (name, values) in zip(axes[:, 0], shown.items()):
        for a, b in _spans(run.status_t, executing):
            ax.axvspan(a, b, color="0.9")
        ax.plot(run.status_t, values, drawstyle="steps-post", marker=".", markersize=3)
        ax.axhline(0.0, color="r", linestyle=":")
        ax.set_ylabel(name, fontsize=8)
    axes[-1, 0].set_xlabel("t (s)")
    return fig


def _spans(t, mask):
    """(start, end) times of the runs of ``mask`` (each run ends at the next sample)."""
    out, start = [], None
    for k, on in enumerate(mask):
        if on and start is None:
            start = t[k]
        if not on and start is not None:
            out.append((start, t[k]))
            start = None
    if start is not None:
        out.append((start, t[-1]))
    return out


def figures(run: RunData) -> dict:
    """``{file name: matplotlib Figure}`` of every plot the data allow."""
    out = {}
    if run.t is not None and run.lower is not None and len(run.t):
        out["bounds.png"] = plot_bounds(run)
    if run.residual_ratio is not None and np.any(np.isfinite(run.residual_ratio)):
        out["residuals.png"] = plot_residuals(run)
    if run.condition_number is not None and np.any(np.isfinite(full_rank_condition(run.condition_number))):
        out["condition.png"] = plot_condition(run)
    if run.q is not None and len(run.q):
        out["joints.png"] = plot_joints(run)
    if run.tau_measured_Nm is not None and run.torque_limit_Nm is not None and len(run.tau_measured_Nm):
        out["torques.png"] = plot_torques(run)
    if run.margins and any(np.any(np.isfinite(v)) for v in run.margins.values()):
        out["margins.png"] = plot_margins(run)
    return out


CAPTIONS = {
    "bounds.png": "Left: guaranteed interval (blue band), estimate (orange) and truth (dashed) of each parameter; "
                  "the axes are zoomed on the final interval, so the wide early bands run off them. Right: the "
                  "interval's width on a log scale.",
    "residuals.png": "Each row's residual at the final estimate divided by its guaranteed error bound: rows "
                     "consistent with the bounds lie between the red lines.",
    "condition.png": "Condition number of the information matrix once it is full rank (grey: not yet).",
    "joints.png": "Joint positions and velocities; red dotted lines are the profile's limits.",
    "torques.png": "Measured joint torques; red dotted lines are the profile's torque limits.",
    "margins.png": "The planner's certified minimum margins of the plan it executes (grey: executing); "
                   "a margin is what is left before a limit or an obstacle, negative would be a violation.",
}

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; border-bottom: 2px solid #345; padding-bottom: .3em; }
h2 { font-size: 1.2em; margin-top: 2em; color: #345; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .92em; }
th, td { padding: .3em .8em; border-bottom: 1px solid #ddd; text-align: left; }
th { background: #eef2f6; }
td.num { text-align: right; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; }
tr:nth-child(even) td { background: #fafbfc; }
.ok { color: #176c2e; font-weight: 600; } .bad { color: #b3261e; font-weight: 600; }
.badge { display: inline-block; padding: .3em .8em; border-radius: .3em; margin: .2em 0 1em; font-weight: 600; }
.badge.ok { background: #e3f4e6; } .badge.bad { background: #fbe4e2; } .badge.info { background: #eef2f6; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: .9em; color: #555; margin-top: .3em; }
"""


def _num(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.5g}"


def _yes_no(flag) -> str:
    return '<span class="ok">yes</span>' if flag else '<span class="bad">no</span>'


def truth_inside(run: RunData) -> np.ndarray | None:
    """Per parameter, whether the truth lies in the final interval (None without a truth)."""
    if run.truth is None or run.lower is None:
        return None
    return (run.lower[-1] <= run.truth) & (run.truth <= run.upper[-1])


def outcome(run: RunData) -> tuple[str, str]:
    """(css class, sentence) of the run's result for the top of index.html."""
    inside = truth_inside(run)
    guaranteed = run.flags.get("bounds_guaranteed")
    consistent = run.flags.get("data_consistent")
    if consistent is False:
        return "bad", "The data contradict the stated sensor error bounds: the bounds are not guaranteed."
    if inside is not None and not inside.all():
        return "bad", (f"The truth is OUTSIDE the final interval for {int((~inside).sum())} of {inside.size} "
                       "parameters.")
    what = "guaranteed" if guaranteed else "not guaranteed"
    if inside is not None:
        return ("ok" if guaranteed else "info"), f"The truth lies inside the final {what} interval of every parameter."
    return ("ok" if guaranteed else "info"), f"Final intervals are {what} (no truth is known for this run)."


SUMMARY_LABELS = {"motion_s": "motion (s)", "mass_error_pct": "mass error (%)", "com_error_mm": "COM error (mm)",
                  "updates": "bounds updates", "source": "rows source", "bag": "recording"}


def summary_html(run: RunData) -> str:
    """The run's facts as a two-column table (values already HTML)."""
    e = html.escape
    rows = [("robot", e(run.robot)), ("method", e(run.method)), ("payload frame", e(run.frame))]
    rows += [(k.replace("_", " "), _yes_no(v)) for k, v in run.flags.items()]
    inside = truth_inside(run)
    if inside is not None:
        rows.append(("truth inside the final interval",
                     f"{_yes_no(inside.all())} ({int(inside.sum())} of {inside.size})"))
    rows.append(("planner outcome", e(run.planner_outcome)))
    rows += [(SUMMARY_LABELS.get(k, k), e(f"{v:.4g}" if isinstance(v, float) else str(v)))
             for k, v in run.summary.items()]
    body = "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows if v)
    return f"<table class='summary'>{body}</table>"


def interval_table_html(run: RunData) -> str:
    """Final estimate and interval of every parameter, with units, width and inside/outside."""
    inside = truth_inside(run)
    head = ("<th>parameter</th><th>unit</th>" + ("<th>truth</th>" if run.truth is not None else "")
            + "<th>estimate</th><th>lower</th><th>upper</th><th>width</th>"
            + ("<th>truth in interval</th>" if inside is not None else ""))
    rows = []
    for k, name in enumerate(run.parameter_names):
        lo, hi, x = run.lower[-1, k], run.upper[-1, k], run.estimate[-1, k]
        cells = f"<td>{html.escape(name)}</td><td>{html.escape(params.parameter_unit(name))}</td>"
        if run.truth is not None:
            cells += f"<td class='num'>{_num(run.truth[k])}</td>"
        cells += "".join(f"<td class='num'>{_num(v)}</td>" for v in (x, lo, hi, hi - lo))
        if inside is not None:
            cells += "<td class='ok'>inside</td>" if inside[k] else "<td class='bad'>OUTSIDE</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f"<table class='intervals'><tr>{head}</tr>{''.join(rows)}</table>"


def index_html(run: RunData, figure_names) -> str:
    """The report's index.html: the outcome, the final interval table and the figures."""
    cls, sentence = outcome(run)
    final = ""
    if run.lower is not None:
        final = (f"<h2>Final interval (frame {html.escape(run.frame or '?')})</h2>" + interval_table_html(run))
    images = "".join(f'<figure><h2>{html.escape(Path(p).stem)}</h2><img src="{html.escape(p)}" '
                     f'alt="{html.escape(Path(p).stem)}"><figcaption>{html.escape(CAPTIONS.get(p, ""))}</figcaption>'
                     "</figure>" for p in figure_names)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(run.title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(run.title)}</h1>"
            f"<div class='badge {cls}'>{html.escape(sentence)}</div>{summary_html(run)}{final}{images}"
            "</body></html>\n")


def write_report(run: RunData, out) -> list[Path]:
    """Write the figures the data allow and index.html into ``out``; the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in figures(run).items():
        fig.tight_layout(rect=(0, 0, 1, 0.985))
        fig.savefig(out / name, dpi=80)
        written.append(out / name)
    index = out / "index.html"
    index.write_text(index_html(run, [p.name for p in written]))
    return written + [index]
