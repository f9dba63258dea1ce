"""``inertial-id study realdata``: the leave-one-run-out study of :mod:`inertial_id.studies.realdata`
and its summary against the issue's targets (the options: :mod:`.parsers.realdata_study`)."""
from __future__ import annotations

from ..core.robot.model import load_robot
from ..studies.realdata import COM_OFFSETS_M, study
from . import UserError
from .calibrate import leave_one_out_runs
from .output import write_json
from .progress import progress_bar


def run(args) -> int:
    robot = load_robot(args.robot)
    if not 1 <= args.com_offsets <= len(COM_OFFSETS_M) or args.replicates < 20 or not args.masses \
            or any(not 0 < m < 100 for m in args.masses):
        raise UserError("--com-offsets must be 1-3, --replicates >= 20, --masses positive")
    runs = leave_one_out_runs(args.data, robot.nv)
    folds = args.folds if args.folds is not None else list(range(len(runs)))
    if any(not 0 <= k < len(runs) for k in folds):
        raise UserError(f"--folds must name runs 1..{len(runs)}")
    total = len(folds) * (1 + len(args.masses) * args.com_offsets)
    with progress_bar(total=total, desc="cases", unit="case") as bar:
        report = study(robot, runs, args.masses, COM_OFFSETS_M[:args.com_offsets], folds, args.safety_factor,
                       args.replicates, bar.update)
    s = report["summary"]
    print(f"{s['cases']} cases ({s['payload_cases']} with payload) over held-out runs "
          f"{', '.join(runs[k].name for k in folds)} in {report['wall_time_s']:.0f} s")
    lines = [("containment rate (every parameter)", s["containment_rate"], "1.0"),
             ("silent wrong answers", s["silent_wrong_answers"], "0"),
             ("data-consistent rate", s["data_consistent_rate"], ">= 0.9"),
             ("median guaranteed mass width, kg", s["median_mass_width_kg"], "<= 2.0"),
             ("median sound floor of the mass width, kg", s["median_sound_mass_width_floor_kg"], "-"),
             ("median width over floor", s["median_width_over_floor"], "<= 1.5"),
             ("median point mass error", s["median_mass_error_rel"], "<= 0.05"),
             ("median point COM error, m", s["median_com_error_m"], "<= 0.05"),
             ("statistical coverage (m, mc; nominal 95%)", s["statistical_coverage"], ">= 0.95"),
             ("median statistical mass width, kg", s["median_statistical_mass_width_kg"], "-")]
    for name, value, target in lines:
        print(f"  {name:50s} {value if value is not None else float('nan'):10.4g}   target {target}")
    print(f"  payload cases whose mass box kept a limit of the prior: {s['cases_at_prior']}; of them, where the "
          f"rows allowed a sound box to leave it: {s['cases_at_prior_determined']} (the others: a payload at that "
          "limit explains every error-free row within its stated bound, so the samples cannot determine the "
          "mass there)")
    print_statistical(s)
    print(f"  no-payload cases containing 0 kg: {sum(s['no_payload_contains_zero_mass'])} of "
          f"{len(s['no_payload_contains_zero_mass'])}")
    write_json(args.json, report)
    return 0


def print_statistical(s: dict) -> None:
    """How the statistical interval may be called after this validation, and its coverage per held-out run and parameter."""
    if s["statistical_label"] is None:
        print("  statistical interval: none (too little data in every case)")
        return
    print(f"  statistical interval, as validated here: {s['statistical_label']}")
    print("  its coverage (m, mc) per held-out run: "
          + ", ".join(f"{run} {cov:.2f}" for run, cov in s["statistical_coverage_per_run"].items()))
    print("  per parameter: " + " ".join(f"{c:.2f}" for c in s["statistical_coverage_per_parameter"]))
