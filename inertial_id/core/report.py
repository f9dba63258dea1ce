"""Plots of a run people can look at: PNG figures (matplotlib, Agg backend) and an index.html.

Input is a :class:`RunData`, filled from a bag (:func:`from_bag`: the recorded estimates, or the
offline estimator's history when the bag has none; rows for residuals; joint states; planner
status) or from a JSON result of ``demo``/``estimate`` (:func:`from_json`: what it holds). Each
figure is written only when its data exist:

- ``bounds.png``: guaranteed interval and estimate of every parameter over time (+ truth);
- ``residuals.png``: row residuals of the final estimate divided by their error bounds;
- ``condition.png``: condition number of the information over time;
- ``joints.png``: joint positions and velocities against the profile limits;
- ``margins.png``: the planner's certified margins over time.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class RunData:
    title: str
    parameter_names: list
    t: np.ndarray | None = None             # s from the start, per estimate
    estimate: np.ndarray | None = None      # (N, n)
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    condition_number: np.ndarray | None = None
    truth: np.ndarray | None = None
    residual_ratio: np.ndarray | None = None      # (rows,) residual / error bound, final estimate
    joint_t: np.ndarray | None = None
    joint_names: list = field(default_factory=list)
    q: np.ndarray | None = None
    qd: np.ndarray | None = None
    position_limits: tuple | None = None          # (lower (n,), upper (n,))
    velocity_limit: np.ndarray | None = None
    status_t: np.ndarray | None = None
    margins: dict = field(default_factory=dict)   # name -> (N,) values
    summary: dict = field(default_factory=dict)


def _seconds_from(t, t0):
    return np.asarray(t, dtype=float) - t0


def from_bag(path, robot, method: str | None = None, progress=None) -> RunData:
    """Everything a bag offers for the report (the profile gives limits and the estimator)."""
    from . import bags, offline
    topics = bags.topics_in(path)
    method = method or robot.profile["identification"]["method"]
    live = bags.read_estimates(path) if bags.ESTIMATE in topics else None
    intake, result, info = offline.estimate_from_bag(path, robot, method, progress=progress, keep_rows=True)
    run = RunData(title=f"{Path(path).name}: {robot.name}, {method}", parameter_names=list(result.parameter_names))
    t0 = None
    js_topic = robot.sensing["joint_states_topic"]
    if js_topic in topics:
        js = bags.read_joint_states(path, robot.joint_names, js_topic)
        t0 = js.t[0]
        run.joint_t, run.joint_names, run.q, run.qd = js.t - t0, list(js.names), js.q, js.qd
        run.position_limits = (robot.position_lower, robot.position_upper)
        run.velocity_limit = robot.velocity_limit
    if live is not None and len(live):
        # the live run's own stream (stamped with the estimator's clock)
        t0 = live.t[0] if t0 is None else t0
        run.t, run.estimate, run.lower, run.upper = _seconds_from(live.t, t0), live.estimate, live.lower, live.upper
        run.condition_number = np.where(live.condition_number > 0, live.condition_number, np.nan)
        run.summary["estimates"] = f"{len(live)} recorded InertialEstimate messages ({live.method})"
    else:
        h = intake.history
        t0 = h.t[0] if t0 is None else t0
        run.t = _seconds_from(h.t, t0)
        run.estimate, run.lower, run.upper = np.array(h.estimate), np.array(h.lower), np.array(h.upper)
        run.condition_number = np.array(h.condition_number, dtype=float)
        run.summary["estimates"] = f"{len(h.t)} bounds updates of the offline estimator ({info['source']})"
    run.truth = bags.read_truth(path) if bags.TRUTH in topics else None
    run.residual_ratio = residual_ratios(intake.estimator, result.estimate, info["rows"])
    if bags.STATUS in topics:
        st = bags.read_status(path)
        if st is not None and len(st.t):
            run.status_t = _seconds_from(st.t, t0 if t0 is not None else st.t[0])
            run.margins = {"joint position margin (rad)": st.min_joint_margin,
                           "velocity margin (rad/s)": st.min_velocity_margin,
                           "torque margin (N m)": st.min_torque_margin,
                           "obstacle clearance (m)": st.min_obstacle_clearance}
    run.summary.update({"rows source": info["source"], "samples": int(result.samples_used),
                        "bounds guaranteed": bool(result.bounds_guaranteed),
                        "data consistent": bool(result.data_consistent)})
    return run


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
    import json
    d = json.loads(Path(path).read_text())
    names = d.get("parameter_names") if isinstance(d, dict) else None
    if not names or "lower" not in d:
        raise ValueError(f"'{path}' is not a demo or estimate result (no parameter_names/lower)")
    try:
        return _run_from_result(path, d, names)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"'{path}' is not a demo or estimate result ({type(exc).__name__}: {exc})") from None


def _run_from_result(path, d: dict, names) -> RunData:
    run = RunData(title=f"{Path(path).name}: {d.get('robot', '')}, {d.get('method', '')}", parameter_names=names)
    h = d.get("history")
    if h and h.get("t"):
        run.t = np.asarray(h["t"], dtype=float) - h["t"][0]
        run.estimate, run.lower, run.upper = (np.asarray(h[k], dtype=float) for k in ("estimate", "lower", "upper"))
        run.condition_number = np.asarray(h["condition_number"], dtype=float)
    else:
        run.t = np.zeros(1)
        run.estimate, run.lower, run.upper = (np.asarray([d[k]], dtype=float) for k in ("estimate", "lower", "upper"))
    if d.get("truth") is not None:
        run.truth = np.asarray(d["truth"], dtype=float)
    run.summary = {k: d[k] for k in ("samples", "bounds_guaranteed", "data_consistent", "physically_consistent",
                                     "mass_error_pct", "com_error_mm") if k in d}
    return run


def _figure(rows: int, cols: int, title: str, size=(12, 8)):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False)
    fig.suptitle(title)
    return fig, axes


def _save(fig, out: Path, name: str) -> Path:
    import matplotlib.pyplot as plt
    fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def plot_bounds(run: RunData, out: Path) -> Path:
    n = len(run.parameter_names)
    fig, axes = _figure((n + 1) // 2, 2, f"Guaranteed bounds over time: {run.title}", (12, 2.0 * ((n + 1) // 2)))
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        ax.fill_between(run.t, run.lower[:, k], run.upper[:, k], step="post", alpha=0.3, label="bounds")
        ax.plot(run.t, run.estimate[:, k], drawstyle="steps-post", label="estimate")
        if run.truth is not None:
            ax.axhline(run.truth[k], color="k", linestyle="--", label="truth")
        ax.set_title(run.parameter_names[k], fontsize=9)
        ax.set_xlabel("t (s)", fontsize=8)
    axes.flat[0].legend(fontsize=7)
    return _save(fig, out, "bounds.png")


def plot_residuals(run: RunData, out: Path) -> Path:
    r = run.residual_ratio
    fig, axes = _figure(1, 2, f"Residuals of the final estimate / error bound: {run.title}", (12, 4))
    axes[0, 0].plot(r, ".", markersize=2)
    axes[0, 0].axhline(1.0, color="r")
    axes[0, 0].axhline(-1.0, color="r")
    axes[0, 0].set_xlabel("row")
    axes[0, 0].set_ylabel("(A x - b) / e")
    axes[0, 1].hist(r, bins=60)
    axes[0, 1].set_xlabel("(A x - b) / e")
    inside = float(np.mean(np.abs(r) <= 1.0))
    axes[0, 1].set_title(f"{100 * inside:.1f} % of {r.size} rows within their bound", fontsize=9)
    return _save(fig, out, "residuals.png")


def plot_condition(run: RunData, out: Path) -> Path:
    fig, axes = _figure(1, 1, f"Condition number: {run.title}", (10, 4))
    ax = axes[0, 0]
    ax.semilogy(run.t, run.condition_number, marker=".")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("condition number")
    return _save(fig, out, "condition.png")


def plot_joints(run: RunData, out: Path) -> Path:
    n = len(run.joint_names)
    fig, axes = _figure(n, 2, f"Joint trajectories vs limits: {run.title}", (12, 1.8 * n))
    lo, hi = run.position_limits
    for j in range(n):
        ax = axes[j, 0]
        ax.plot(run.joint_t, run.q[:, j])
        ax.axhline(lo[j], color="r", linestyle=":")
        ax.axhline(hi[j], color="r", linestyle=":")
        ax.set_ylabel(f"{run.joint_names[j]} (rad)", fontsize=8)
        ax = axes[j, 1]
        ax.plot(run.joint_t, run.qd[:, j])
        ax.axhline(run.velocity_limit[j], color="r", linestyle=":")
        ax.axhline(-run.velocity_limit[j], color="r", linestyle=":")
        ax.set_ylabel("rad/s", fontsize=8)
    axes[-1, 0].set_xlabel("t (s)")
    axes[-1, 1].set_xlabel("t (s)")
    return _save(fig, out, "joints.png")


def plot_margins(run: RunData, out: Path) -> Path:
    shown = {k: v for k, v in run.margins.items() if np.any(np.isfinite(v))}
    fig, axes = _figure(len(shown), 1, f"Planner margins: {run.title}", (10, 2.2 * len(shown)))
    for ax, (name, values) in zip(axes[:, 0], shown.items()):
        ax.plot(run.status_t, values, drawstyle="steps-post")
        ax.axhline(0.0, color="r", linestyle=":")
        ax.set_ylabel(name, fontsize=8)
    axes[-1, 0].set_xlabel("t (s)")
    return _save(fig, out, "margins.png")


def write_report(run: RunData, out) -> list[Path]:
    """Write the figures the data allow and index.html into ``out``; the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures = []
    if run.t is not None and len(run.t):
        figures.append(plot_bounds(run, out))
    if run.residual_ratio is not None and run.residual_ratio.size:
        figures.append(plot_residuals(run, out))
    if run.condition_number is not None and np.any(np.isfinite(run.condition_number)):
        figures.append(plot_condition(run, out))
    if run.q is not None and len(run.q):
        figures.append(plot_joints(run, out))
    if run.margins and any(np.any(np.isfinite(v)) for v in run.margins.values()):
        figures.append(plot_margins(run, out))
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in run.summary.items())
    final = ""
    if run.lower is not None:
        cells = "".join(
            f"<tr><td>{html.escape(n)}</td>"
            + (f"<td>{run.truth[k]:.6g}</td>" if run.truth is not None else "")
            + f"<td>{run.estimate[-1, k]:.6g}</td><td>{run.lower[-1, k]:.6g}</td><td>{run.upper[-1, k]:.6g}</td></tr>"
            for k, n in enumerate(run.parameter_names))
        head = "<th>parameter</th>" + ("<th>truth</th>" if run.truth is not None else "") + \
               "<th>estimate</th><th>lower</th><th>upper</th>"
        final = f"<h2>Final estimate</h2><table border=1><tr>{head}</tr>{cells}</table>"
    images = "".join(f'<h2>{html.escape(p.stem)}</h2><img src="{p.name}" alt="{html.escape(p.stem)}">'
                     for p in figures)
    index = out / "index.html"
    index.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(run.title)}</title>"
                     f"</head><body><h1>{html.escape(run.title)}</h1><table>{rows}</table>{final}{images}"
                     "</body></html>\n")
    return figures + [index]
