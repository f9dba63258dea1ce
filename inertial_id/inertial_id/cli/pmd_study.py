"""``inertial-id study pmd``: the study of :mod:`inertial_id.studies.pmd`, checked options in, a table
out (the options: :mod:`.parsers.pmd_study`)."""
from __future__ import annotations

from ..core.pmd.baselines import GEO_GAMMA
from ..core.pmd.shapes import ShapeError
from ..studies.pmd import COMPARED_METHODS, run_study
from . import UserError
from .output import write_json


def run(args) -> int:
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
