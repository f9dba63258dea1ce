"""``inertial-id study pmd``: the point-mass-discretization simulation study (Table III of the
reference) on the eight test objects.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from . import UserError
from .common import add_json_option, float_list, write_json
from ..defaults import PMD_NOISE_LEVELS


def register(sub) -> None:
    p = sub.add_parser("pmd", help="fast object identification at low SNR: OLS, RTLS, GEO, PMD in simulation")
    p.add_argument("--speeds", type=float_list, default=[1.0, 1.5, 2.0],
                   help="average angular speeds of the wrist, rad/s (comma separated)")
    p.add_argument("--noise", choices=sorted(PMD_NOISE_LEVELS), default="moderate", help="noise level of Table II")
    p.add_argument("--samples", type=int, default=150, help="samples used, at 100 Hz")
    p.add_argument("--trials", type=int, default=3, help="noise draws per object and speed")
    p.add_argument("--density", type=float, default=0.04, help="PMD points per cm^3")
    p.add_argument("--noise-weighted", action="store_true",
                   help="balance torque against force rows by their noise (the paper weighs rows as measured)")
    p.add_argument("--geo-gamma", type=float, default=None,
                   help="weight of GEO's entropic divergence (default: the force noise variance, 1e-2 N^2)")
    p.add_argument("--workers", type=int, default=1, help="objects run in parallel processes")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the objects on a Dask cluster (dask.distributed scheduler address); "
                        "default: local processes (--workers)")
    p.add_argument("--seed", type=int, default=0, help="non-negative; each noise draw's generator derives "
                                                        "from it and the draw's object, speed and trial")
    add_json_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.pmd.shapes import ShapeError
    from ..core.pmd.baselines import GEO_GAMMA
    from ..studies.pmd import COMPARED_METHODS, run_study
    if not args.speeds or not all(0 < s <= 4.0 for s in args.speeds):
        raise UserError("--speeds must be positive average angular speeds up to 4 rad/s")
    if not 10 <= args.samples <= 5000 or args.trials < 1 or args.workers < 1:
        raise UserError("--samples must be in 10..5000, --trials and --workers at least 1")
    if args.seed < 0:
        raise UserError("--seed must be non-negative")
    if not (args.density > 0 and args.density < float("inf")):
        raise UserError("--density must be a positive number of points per cm^3")
    if args.geo_gamma is not None and not 0 < args.geo_gamma < float("inf"):
        raise UserError("--geo-gamma must be positive")
    try:
        report = run_study(args.speeds, args.noise, args.samples, args.trials, args.density, seed=args.seed,
                           noise_weighted=args.noise_weighted, geo_gamma=args.geo_gamma or GEO_GAMMA,
                           workers=args.workers, scheduler=args.scheduler)
    except ShapeError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        if not args.scheduler:
            raise
        raise UserError(f"cannot reach the Dask scheduler at {args.scheduler}: {exc}") from None
    print(f"{'speed':>6} {'method':6} {'mass %':>9} {'COM %':>9} {'inertia %':>10} {'consistent':>10} {'p50 s':>8}")
    for speed, entry in report["speeds"].items():
        for m in COMPARED_METHODS:
            r = entry["methods"][m]
            print(f"{speed:>6} {m:6} {r['mass_err_pct']:9.3g} {r['com_err_pct']:9.3g} {r['inertia_err_pct']:10.3g} "
                  f"{r['consistent_rate']:10.2f} {r['solve_time_p50_s']:8.3f}")
    s = report["stop_and_go"]
    print(f"stop-and-go PMD: mass {s['mass_err_pct']:.3g} %  COM {s['com_err_pct']:.3g} %  inertia {s['inertia_err_pct']:.3g} %")
    write_json(args.json, report)
    return 0
