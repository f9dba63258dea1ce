"""``inertial-id study plan``: the closed-loop planner study of :mod:`inertial_id.studies.planner`,
checked options in, a table out (the options: :mod:`.parsers.plan_study`)."""
from __future__ import annotations

from ..core.robot.model import ProfileError
from ..studies.planner import METHODS, run_study, scenario_path
from . import UserError
from .output import write_json


def run(args) -> int:
    if args.trials < 1 or args.workers < 1 or (args.plans is not None and args.plans < 1):
        raise UserError("--trials, --plans and --workers must be at least 1")
    if args.obstacles is not None:
        try:
            scenario_path(args.obstacles)
        except ProfileError as exc:
            raise UserError(str(exc)) from None
    try:
        report = run_study(args.robot, args.trials, args.seed, args.obstacles, args.plans, args.workers,
                           engine=args.engine)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    print(f"trials {report['trials']}  violations {report['violations']}  collisions {report['collisions']}  "
          f"cond ratio ours/random {report.get('cond_ratio_vs_random', float('nan')):.3f}  "
          f"mass interval no wider than random in {100 * report.get('mass_width_no_wider_than_random', 0):.0f} % of trials")
    if report.get("optimizer_converged_fraction") is not None:
        print(f"IPOPT converged within replan_s in {100 * report['optimizer_converged_fraction']:.0f} % of optimised "
              f"plans ({report['optimizer_iterations_p50']:.0f} iterations p50); plans ready within replan_s: "
              f"{100 * report['plans_within_replan_fraction']:.0f} %")
    print(f"{'method':8} {'fallback':>9} {'plan p50':>9} {'p95':>7} {'mass w':>8} {'cond Y':>9} {'plan cond':>10} "
          f"{'min tau m':>10} {'contain':>8}")
    for m in METHODS:
        r = report[m]
        condY = r["median_cond_Y"] if r["median_cond_Y"] is not None else float("nan")
        print(f"{m:8} {r['fallback_rate']:9.3f} {r['plan_time_p50_s']:9.3f} {r['plan_time_p95_s']:7.3f} "
              f"{r['final_mass_width_kg']:8.4f} {condY:9.1f} {r['median_plan_cond']:10.1f} "
              f"{r['min_torque_margin_Nm']:10.3f} {r['containment_rate']:8.3f}")
    if report.get("floor_ratio_vs_random") is not None:
        interval = report["mass_width_ratio_interval"]
        print(f"final mass width ours/random {report['mass_width_ratio_vs_random']:.3f} (median over trials"
              + (f"; {100 * interval[2]:.1f} % confidence interval of the median over many trials "
                 f"{interval[0]:.3f}-{interval[1]:.3f}" if interval else "") + "); sound "
              f"floor of the rows ours/random {report['floor_ratio_vs_random']:.3f}; width over floor: "
              + ", ".join(f"{m} {report[m]['median_width_over_floor']:.2f}" for m in METHODS))
    if report.get("mass_width_ratio_at_least") is not None:
        print("final mass width over the width the first plan started from: "
              + ", ".join(f"{m} {report[m]['final_over_first_plan_width']:.3f}" for m in METHODS)
              + f"; so ours/random is at least {report['mass_width_ratio_at_least']:.3f} (random cannot widen its box)")
    for m in METHODS:
        r = report[m]
        e = r["max_tracking_error"]
        print(f"{m}: largest tracking error {e[0]:.4f} rad, {e[1]:.4f} rad/s, {e[2]:.3f} rad/s^2 (mean over the "
              f"monitor's window); trials that braked on a fault: {r['runs_with_faults']}"
              + "".join(f"\n  {why}" for why in r["faults"]))
    if "random_uncertified_hit_rate" in report:
        print(f"random uncertified plans hitting an obstacle: {100 * report['random_uncertified_hit_rate']:.0f} %")
    write_json(args.json, report)
    return 0
