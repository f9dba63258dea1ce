"""``inertial-id estimate``: the estimator pipeline offline on one bag, or on each bag of a fleet, with
what the console must say about the box (the options: :mod:`.parsers.estimate`)."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ..core import offline
from ..core.calibration import load_calibration
from ..core.calibration.apply import robot_naming_calibration
from ..core.data import bags
from ..core.estimators.bootstrap import interval_label
from ..core.estimators.explain import prior_explanation
from ..core.fanout import map_tasks
from ..core.robot.model import load_robot
from ..defaults import BOUNDS_PERIOD_S
from . import UserError
from .output import write_json
from .progress import progress_bar


def run(args) -> int:
    fleet = fleet_bags(Path(args.bag))
    if fleet:
        return run_fleet(args, fleet)
    out, r, robot, estimator, info = estimate_bag(args)
    write_json(args.json, out)
    require_data(args.bag, r, info)
    report(args, out, r, robot, estimator, info)
    return 0


def fleet_bags(path: Path) -> list[Path]:
    """The bags of a fleet folder (subfolders with a metadata.yaml), or [] for a single bag."""
    if not path.is_dir() or (path / "metadata.yaml").exists():
        return []
    return sorted(p for p in path.iterdir() if (p / "metadata.yaml").is_file())


def run_fleet(args, fleet: list[Path]) -> int:
    """Every bag of the fleet on its own (local processes or a Dask cluster: core.fanout), one JSON per
    bag, a table; exit 1 when a bag failed."""
    if not args.out_dir:
        raise UserError(f"{args.bag} holds {len(fleet)} bags: name --out-dir for their results")
    if args.as_live:
        raise UserError("--as-live compares one bag with its live run: give a single bag")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = [(str(bag), {k: v for k, v in vars(args).items() if k not in ("handler", "argv", "bag")}) for bag in fleet]
    results = map_tasks(fleet_task, tasks, workers=args.workers, scheduler=args.scheduler)
    rows = []
    for bag, result in zip(fleet, results):
        if "error" not in result:
            write_json(str(out_dir / f"{bag.name}.json"), result)
        rows.append(fleet_row(bag.name, result))
    summary = {"bags": len(fleet), "failed": sum("error" in r for r in results), "results": rows}
    write_json(args.json, summary)
    print(f"{'bag':24s} {'samples':>8s} {'mass [kg]':>10s} {'lower':>9s} {'upper':>9s}  guaranteed  truth inside")
    for row in rows:
        if "error" in row:
            print(f"{row['bag']:24s} FAILED: {row['error']}")
        else:
            inside = {None: "-", True: "yes", False: "NO"}[row["truth_inside_bounds"]]
            print(f"{row['bag']:24s} {row['samples']:8d} {row['mass_kg']:10.4f} {row['mass_lower_kg']:9.4f} "
                  f"{row['mass_upper_kg']:9.4f}  {'yes' if row['bounds_guaranteed'] else 'NO':10s}  {inside}")
    print(f"{len(fleet) - summary['failed']} of {len(fleet)} bags estimated; results in {out_dir}", file=sys.stderr)
    return 1 if summary["failed"] else 0


def fleet_task(task) -> dict:
    """One bag of a fleet (module level: run by spawned processes or Dask workers): its result, or
    ``{"error": ...}`` for a bag that cannot be estimated."""
    bag, options = task
    try:
        out, r, _, _, info = estimate_bag(argparse.Namespace(bag=bag, **options))
        require_data(bag, r, info)
        return out
    except (UserError, FileNotFoundError, ValueError) as exc:
        return {"bag": bag, "error": str(exc)}


def fleet_row(name: str, result: dict) -> dict:
    if "error" in result:
        return {"bag": name, "error": result["error"]}
    return {"bag": name, "samples": result["samples"], "mass_kg": float(result["estimate"][0]),
            "mass_lower_kg": float(result["lower"][0]), "mass_upper_kg": float(result["upper"][0]),
            "bounds_guaranteed": result["bounds_guaranteed"], "data_consistent": result["data_consistent"],
            "truth_inside_bounds": result.get("truth_inside_bounds")}


def estimate_bag(args):
    """The estimation of one bag: (result dict, final estimate, robot, estimator, input accounting);
    UserError when the bag cannot be read."""
    robot = load_robot(args.robot)
    if args.calibration:
        load_calibration(args.calibration)        # a bad file: one line, before any work
        robot = robot_naming_calibration(robot, args.calibration)
    method = args.method or robot.spec.identification.method
    period = BOUNDS_PERIOD_S if args.bounds_period is None else args.bounds_period
    if period < 0:
        raise UserError("--bounds-period must be >= 0")
    # timed: what the estimation needs; the comparisons (truth, live run, data length) come after
    t0 = time.perf_counter()
    try:
        topics = bags.topics_in(args.bag)
        live = None
        if args.as_live:
            live = bags.read_estimates(args.bag) if bags.ESTIMATE in topics else None
            if live is None or not len(live) or args.source == "samples":
                raise UserError("--as-live needs recorded estimates and rows (a bag of demo --record)")
        with progress_bar(desc="estimating", unit="sample") as bar:
            intake, r, info = offline.estimate_from_bag(
                args.bag, robot, method, "rows" if args.as_live else args.source, args.max_bound_rows or None,
                period, bar.update, samples_used=int(live.samples_used[-1]) if args.as_live else None)
        wall = time.perf_counter() - t0
        # the rest in one pass: live estimates, truth, and the log times of the sensor stream (the
        # data length: joint states, else the rows)
        span_topic = bags.JOINT_STATES if bags.JOINT_STATES in topics else bags.ROWS
        found = bags.read_topics(args.bag, [bags.TRUTH] if args.as_live else [bags.TRUTH, bags.ESTIMATE],
                                 times_only=[span_topic])
        live = live if args.as_live else bags.estimates_of(found[bags.ESTIMATE])
        truth = bags.truth_of(found[bags.TRUTH])
        data_s = bags.time_span_s(found[span_topic])
    except (bags.BagError, ValueError) as exc:
        raise UserError(str(exc)) from None
    out = {
        "bag": args.bag, "robot": robot.name, "method": r.method, "parameter_names": r.parameter_names,
        "estimate": r.estimate, "lower": r.lower, "upper": r.upper,
        "samples": int(r.samples_used), "physically_consistent": bool(r.physically_consistent),
        "bounds_guaranteed": bool(r.bounds_guaranteed), "data_consistent": bool(r.data_consistent),
        "condition_number": float(r.condition_number), "message": r.message,
        "bounds_period_s": period, "updates": len(intake.history.t), **info,
        "data_duration_s": data_s, "wall_time_s": wall,
        "speed_vs_real_time": data_s / wall if wall > 0 and data_s else None,
        "history": {"t": intake.history.t, "lower": intake.history.lower, "upper": intake.history.upper,
                    "estimate": intake.history.estimate, "samples_used": intake.history.samples_used,
                    "condition_number": intake.history.condition_number},
    }
    if truth is not None:
        out["truth"] = truth
        out["truth_inside_bounds"] = bool(np.all((truth >= r.lower) & (truth <= r.upper)))
    if live is not None and len(live):
        out["live"] = {"lower": live.lower[-1], "upper": live.upper[-1], "estimate": live.estimate[-1],
                       "samples": int(live.samples_used[-1]), "method": live.method}
        out["max_relative_difference_to_live"] = relative_difference(
            np.concatenate([r.lower, r.upper]), np.concatenate([live.lower[-1], live.upper[-1]]))
    if getattr(args, "momentum_wrench", False):
        out["momentum_wrench"] = momentum_wrench_report(args.bag, robot, truth)
    estimator = getattr(intake.estimator, "estimator", None)
    if args.statistical:
        stat = estimator.statistical_interval() if hasattr(estimator, "statistical_interval") else None
        out["statistical"] = None if stat is None else {
            "label": interval_label(stat["level"]), "level": stat["level"],
            "lower": stat["lower"], "upper": stat["upper"], "block_windows": stat["block_windows"],
            "replicates": stat["replicates"]}
    return out, r, robot, estimator, info


def momentum_wrench_report(bag, robot, truth) -> dict:
    """The integrated F/T rows' box of ``bag`` (:func:`~..core.offline.momentum_wrench_from_bag`), as JSON."""
    if not robot.sensing.wrench:
        raise UserError(f"--momentum-wrench needs an F/T sensor; profile '{robot.name}' has none")
    try:
        box = offline.momentum_wrench_from_bag(bag, robot)
    except (bags.BagError, ValueError) as exc:
        raise UserError(str(exc)) from None
    out = {"lower": box.lower, "upper": box.upper, "mass_width_kg": float(box.upper[0] - box.lower[0]),
           "bounds_guaranteed": box.guaranteed, "data_consistent": box.data_consistent,
           "offset_lower": box.offset_lower, "offset_upper": box.offset_upper, "offset_freed": box.offset_freed,
           "rows": box.rows}
    if truth is not None:
        out["truth_inside_bounds"] = bool(np.all((truth >= box.lower) & (truth <= box.upper)))
    return out


def require_data(bag, r, info: dict) -> None:
    """UserError when nothing usable reached the estimator (its box is then the prior)."""
    if r.samples_used == 0:
        raise UserError(f"no usable data in {bag}: {no_data_reason(info)}; the bounds are the prior, "
                        "not an estimate")


def report(args, out: dict, r, robot, estimator, info: dict) -> None:
    """The console output of one bag."""
    data_s, wall = out["data_duration_s"], out["wall_time_s"]
    print(f"{r.method} on {args.bag} ({info['source']}): {r.samples_used} samples, "
          f"{data_s:.1f} s of data in {wall:.2f} s ({out['speed_vs_real_time'] or 0:.1f}x real time)",
          file=sys.stderr)
    if info.get("source") == "samples":
        print(f"input: {input_accounting(info)}", file=sys.stderr)
    for name, x, lo, hi in zip(r.parameter_names, r.estimate, r.lower, r.upper):
        print(f"{name:>16s} {x:11.5f} in [{lo:11.5f}, {hi:11.5f}]")
    mw = out.get("momentum_wrench")
    if mw:
        print(f"integrated F/T rows: mass in [{mw['lower'][0]:.5f}, {mw['upper'][0]:.5f}] "
              f"({'guaranteed' if mw['bounds_guaranteed'] else 'NOT guaranteed'}, {mw['rows']} rows)")
    if out.get("statistical"):
        print(f"{out['statistical']['label']}:")
        for name, lo, hi in zip(r.parameter_names, out["statistical"]["lower"], out["statistical"]["upper"]):
            print(f"{name:>16s} {'':11s}    [{lo:11.5f}, {hi:11.5f}]")
    elif args.statistical:
        print("statistical interval: not available (method without momentum windows, or too little data)",
              file=sys.stderr)
    for line in guarantee_notes(r, robot, estimator, info):
        print(line, file=sys.stderr)
    if "max_relative_difference_to_live" in out:
        print(f"largest relative difference of the bounds to the live run's last estimate: "
              f"{out['max_relative_difference_to_live']:.3g}")


def input_accounting(info: dict) -> str:
    """What became of the recorded sensor samples: joint states and wrenches kept and dropped (by
    reason), samples paired with a wrench (interpolated) or not (by reason)."""
    def reasons(d: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"
    parts = [f"{info.get('joint_states', 0)} joint states (dropped: {reasons(info.get('joint_states_dropped') or {})})"]
    if "wrenches" in info:
        parts.append(f"{info['wrenches']} wrenches (dropped: {reasons(info.get('wrenches_dropped') or {})})")
    counts = dict(info.get("sample_counts") or {})
    if "paired" in counts:
        paired, interpolated = counts.pop("paired"), counts.pop("interpolated", 0)
        parts.append(f"{paired} paired with a wrench ({interpolated} interpolated)")
    accepted, missed = counts.pop("accepted", 0), counts.pop("missed_samples", 0)
    parts.append(f"{accepted} into the row builder (not used: {reasons(counts)})")
    if missed:
        parts.append(f"{missed} samples missing from the stream by their stamps at the driver's rate")
    return "; ".join(parts)


def no_data_reason(info: dict) -> str:
    """Why nothing reached the estimator, from what the pipeline counted."""
    parts = []
    if "joint_states" in info:
        parts.append(input_accounting(info))
    parts.append(f"{info.get('messages_accepted', 0)} rows messages accepted")
    dropped = info.get("messages_dropped") or {}
    if dropped:
        parts.append("dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))
    return "; ".join(parts)


def guarantee_notes(r, robot, estimator, info) -> list[str]:
    """What the console must say about the box: when it is not guaranteed and why, what it rests on,
    and why any parameter's interval is still the prior's."""
    notes = []
    if not r.data_consistent:
        notes.append(f"BOUNDS NOT GUARANTEED: the data contradict the stated error bounds ({r.message or 'no detail'}); "
                     "the box is the last one before the contradiction")
    elif not r.bounds_guaranteed:
        notes.append(f"BOUNDS NOT GUARANTEED: method '{r.method}' on these rows assumes the nominal robot model exact"
                     + (f" ({r.message})" if r.message else ""))
    excluded = {k: v for k, v in (info.get("sample_counts") or {}).items()
                if k not in ("paired", "interpolated", "accepted")}
    excluded.update(info.get("messages_dropped") or {})
    why = prior_explanation(r.parameter_names, r.lower[:10], r.upper[:10], *robot.payload_prior(), r.samples_used,
                            excluded)
    if why:
        notes.append(why)
    calibration = getattr(estimator, "calibration", None)
    if calibration is not None:
        v = calibration.provenance.get("validation")
        state = "not validated on held-out runs" if v is None else \
            ("validated on " + ", ".join(v["runs"]) if v["passed"] else "FAILED validation on " + ", ".join(v["runs"]))
        notes.append(f"robot calibration {calibration.path} ({state}; largest factor {calibration.safety_factor:g}); "
                     "run torque offsets estimated as unknowns")
    elif robot.sensing.joint_torque and hasattr(estimator, "robot_nominal"):
        notes.append("no robot calibration: the robot box is the profile's (friction within its floors); on a real "
                     "arm run 'inertial-id calibrate' and name the file (identification.calibration or --calibration)")
    return notes


def relative_difference(a, b) -> float:
    """max |a - b| / max(|a|, |b|, 1e-12), elementwise."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-12)))
