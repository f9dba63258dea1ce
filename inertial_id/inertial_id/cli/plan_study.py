"""``inertial-id study plan``: closed-loop simulation of the certified excitation planner."""
from __future__ import annotations

from . import UserError
from ..defaults import SIM_ENGINES
from .common import add_json_option, write_json


def register(sub) -> None:
    p = sub.add_parser("plan",
                       help="certified excitation planner in closed loop: safety checks, excitation vs random plans")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    p.add_argument("--trials", type=int, default=10, help="Monte Carlo trials (cycling through the 4..8 lb dumbbells)")
    p.add_argument("--obstacles", metavar="SCENARIO", default=None,
                   help="obstacle scenario: a name in config/scenarios/ or a YAML file with an 'obstacles:' list "
                        "(added to the profile's)")
    p.add_argument("--plans", type=int, default=None,
                   help="most exciting plans per trial (default: the profile's planner.max_plans, as the node "
                        "runs; fewer when the bounds stop shrinking; the published safe-excitation experiments: 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="trials run in parallel processes")
    p.add_argument("--engine", choices=SIM_ENGINES, default=SIM_ENGINES[0],
                   help="physics of the simulated arm: pinocchio (the robot perturbed inside the certifier's "
                        "boxes) or mujoco (joint armature, damping and Coulomb friction; arms with a wrist F/T sensor)")
    add_json_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..studies.planner import METHODS, run_study
    if args.trials < 1 or args.workers < 1 or (args.plans is not None and args.plans < 1):
        raise UserError("--trials, --plans and --workers must be at least 1")
    if args.obstacles is not None:
        from ..core.robot.model import ProfileError
        from ..studies.planner import scenario_path
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
