"""``inertial-id identify``: whole-robot identification from run folders, checked options in, the fit
and the link table out (the options: :mod:`.parsers.identify`)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..core.data.data_io import DataError, Pipeline, read_run, segment_bounds
from ..core.identification import plausible, selection, solvers, validation
from ..core.identification import problem as P
from ..core.robot import closed_chain as cc
from ..core.robot import model as robot_model
from ..defaults import DEFAULT_MASS_FACTOR
from . import UserError
from .output import write_json


def load_chain(model_arg: str):
    """(chain, rotor inertia dict) from a profile name/YAML or a URDF path (open chain, all actuated)."""
    if model_arg.endswith(".urdf"):
        if not Path(model_arg).exists():
            raise UserError(f"model file '{model_arg}' not found")
        return cc.ClosedChain(robot_model.build_model_from_urdf(Path(model_arg))), {}
    robot = robot_model.load_robot(model_arg)
    return cc.chain_from_profile(robot.model, robot.spec), robot.spec.rotor_inertia


def check_arguments(args) -> None:
    """Options that would make the run meaningless, refused before any work."""
    if args.downsample < 1:
        raise UserError("--downsample must be at least 1 (keep every N-th sample)")
    if args.filter_order < 1:
        raise UserError("--filter-order must be at least 1")
    if args.cutoff_hz is not None and not (np.isfinite(args.cutoff_hz) and args.cutoff_hz > 0):
        raise UserError("--cutoff-hz must be a positive frequency")
    if not (np.isfinite(args.lmi_margin) and args.lmi_margin >= 0):
        raise UserError("--lmi-margin must be a finite value >= 0")


def prior_options(args) -> tuple[bool, float | None, float | None]:
    """(regularise, fixed weight or None for auto, mass factor or None without bounds) from the
    options; the prior and the bounds belong to the lmi method and are refused with others rather
    than ignored."""
    lmi = args.method == "lmi"
    explicit = (args.regularization == "entropic" or args.bounds or args.weight != "auto"
                or args.mass_factor is not None)
    if not lmi and explicit:
        raise UserError(f"--regularization, --weight, --bounds and --mass-factor need --method lmi, not {args.method}")
    regularise = lmi and args.regularization != "none"
    weight = None
    if args.weight != "auto":
        try:
            weight = float(args.weight)
        except ValueError:
            raise UserError(f"--weight must be a number >= 0 or 'auto', not '{args.weight}'") from None
        if not (np.isfinite(weight) and weight >= 0):
            raise UserError(f"--weight must be a finite number >= 0 or 'auto', not '{args.weight}'")
        if not regularise:
            raise UserError("--weight needs the entropic regularization")
    if args.friction_support and not (lmi and args.friction):
        raise UserError("--friction-support needs --friction and --method lmi")
    return regularise, weight, mass_factor_option(args) if lmi and args.bounds is not False else None


def mass_factor_option(args) -> float:
    """The mass bounds' factor: ``--mass-factor`` (finite, > 1) or the default."""
    if args.mass_factor is None:
        return DEFAULT_MASS_FACTOR
    if not (np.isfinite(args.mass_factor) and args.mass_factor > 1):
        raise UserError(f"--mass-factor must be a finite number > 1, not {args.mass_factor:g}")
    return args.mass_factor


def run(args) -> int:
    check_arguments(args)
    regularise, weight, mass_factor = prior_options(args)
    t0 = time.perf_counter()
    try:
        chain, rotor = load_chain(args.model)
        pipeline = Pipeline(args.cutoff_hz, args.filter_order, args.downsample, args.differentiate)
        train_raw = [read_run(d) for d in args.data]
        held_out_raw = [read_run(d) for d in args.validate]
        train = [pipeline.apply(r) for r in train_raw]
        held_out = [pipeline.apply(r) for r in held_out_raw]
        layout = P.make_layout(chain, args.friction, rotor)
        problem = P.build_problem(chain, layout, train, args.fixed)
        bounds = plausible.link_bounds(chain.model, layout, mass_factor) if mass_factor else {}
        weight_selection = None
        if regularise and weight is None:
            weight_selection = selection.select_weight(problem, bounds, lmi_margin=args.lmi_margin)
            weight = weight_selection["weight"]
        plaus = solvers.Plausibility(weight or 0.0, bounds) if args.method == "lmi" else None
        estimate = solvers.solve(problem, args.method, args.lmi_margin, plaus)
        support = (selection.friction_support(chain, problem, args.fixed, weight or 0.0, bounds, args.lmi_margin)
                   if args.friction_support else None)
        val_rows = P.build_rows(chain, layout, held_out) if held_out else None
    except (DataError, P.IdentificationError, cc.ClosureError) as exc:
        raise UserError(str(exc)) from None

    theta = estimate.theta
    joints = list(chain.actuated_joints)
    per_joint = lambda values: dict(zip(joints, np.asarray(values).tolist()))  # noqa: E731
    nominal_zero_friction = layout.nominal.copy()
    nominal_zero_friction[layout.n_inertial:] = 0.0
    report = {
        "model": args.model,
        "method": estimate.method,
        "parameter_names": layout.names,
        "parameters": theta,
        "fixed_parameters": [layout.names[i] for i in problem.fixed],
        "base_parameters": [{"name": n, "value": float(v)}
                            for n, v in zip(problem.base_names(), estimate.base_values)],
        "train_samples": problem.rows.n_samples,
        "train_rms": per_joint(validation.torque_rms(problem.rows, theta, chain.na)),
        "validation_rms": per_joint(validation.torque_rms(val_rows, theta, chain.na)) if val_rows else {},
        "nominal_validation_rms": (per_joint(validation.torque_rms(val_rows, nominal_zero_friction, chain.na))
                                   if val_rows else {}),
        "lmi_min_eigenvalues": solvers.lmi_min_eigenvalues(layout, theta),
        "constraint_residual": problem.rows.constraint_residual,
        "joint_weights": per_joint(estimate.joint_weights),
        "solver": estimate.info,
        "regularization": {"kind": "entropic" if regularise else "none", "weight": weight,
                           "weight_selection": weight_selection},
        "identified_parameters": [layout.names[i] for i in np.flatnonzero(problem.identified_alone())],
        "mass_factor": mass_factor,
        "links": plausible.link_report(problem, theta, bounds or None, prior=bool(weight)),
        "recording_gaps": [{"run": d, "segments": len(segment_bounds(r.t)), "samples": r.n_samples,
                            "samples_used": p.n_samples}
                           for d, r, p in zip([*args.data, *args.validate], [*train_raw, *held_out_raw],
                                              [*train, *held_out])],
    }
    if support is not None:
        report["friction_support"] = support
    if args.simulate and held_out:
        for key, values in (("simulation_l2", theta), ("nominal_simulation_l2", nominal_zero_friction)):
            sims = [validation.simulate_segments(chain, layout, values, r) for r in held_out]
            report[key] = per_joint(np.sqrt(sum(s["l2"] ** 2 for s in sims)))
        report["simulation_segments"] = sum(s["segments"] for s in sims)
    report["wall_time_s"] = time.perf_counter() - t0
    write_json(args.json, report)

    print_fit(report, problem, joints, bool(val_rows))
    if estimate.method == "lmi":
        print(f"  min pseudo-inertia eigenvalue {min(report['lmi_min_eigenvalues'].values()):.3g} kg m^2")
    if regularise:
        how = "chosen on held-out parts of the --data runs" if weight_selection else "given"
        print(f"  entropic regularization weight {weight:g} ({how})")
    print_links(report["links"], estimate.method == "lmi")
    if support is not None:
        print("  friction terms supported by held-out error: "
              + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in support["supported"].items()))
    return 0


def print_fit(report: dict, problem, joints: list, held_out: bool) -> None:
    """What was fitted and determined, and the torque RMS per joint."""
    print(f"fitted {len(problem.free)} parameters with {report['method']} in {report['wall_time_s']:.2f} s "
          f"on {problem.rows.n_samples} samples: the data determine {problem.base.rank} combinations "
          f"(base parameters), {len(report['identified_parameters'])} of them single parameters")
    for j in joints:
        line = f"  {j:24s} train RMS {report['train_rms'][j]:9.4f} N m"
        if held_out:
            line += (f"   held-out {report['validation_rms'][j]:9.4f}"
                     f"   nominal {report['nominal_validation_rms'][j]:9.4f}")
        print(line)


MASS_SHOWN = ("data", "prior", "fixed")     # mass sources whose value means something


def print_links(links: dict, consistent: bool) -> None:
    """Per link: the mass only where data, prior or --fixed set it, what set it, the link's parameters
    the data determine alone; with the consistent (lmi) estimate also its bounds, the bound it is on
    and its divergence from nominal."""
    header = f"  {'link':24s} {'mass kg':>14s}  {'set by':6s}  {'alone':>5s}"
    if consistent:
        header += f"  {'mass bounds kg':>16s}  {'on bound':15s}  divergence"
    print(header)
    for body, link in links.items():
        source = link["mass_source"]
        mass = f"{link['mass_kg']:14.3f}" if source in MASS_SHOWN else f"{'not identified':>14s}"
        line = f"  {body:24s} {mass}  {source:6s}  {len(link['identified_parameters']):2d}/10"
        if consistent:
            shown = source in MASS_SHOWN and link["divergence"] is not None
            divergence = f"{link['divergence']:.3g}" if shown else "-"
            line += f"  {_bounds_text(link):>16s}  {_on_bound(link):15s}  {divergence}"
        print(line)
    print("  set by: data = the data alone; prior = the prior's choice among masses that fit the data equally "
          "well; none = no meaning (not identified); alone: the link's parameters the data determine by themselves")


def _bounds_text(link: dict) -> str:
    if "mass_bounds_kg" not in link:
        return "-"
    lower_kg, upper_kg = link["mass_bounds_kg"]
    return f"[{lower_kg:.3f}, {upper_kg:.3f}]"


def _on_bound(link: dict) -> str:
    """``lower`` / ``upper`` (mass interval), ``ellipsoid``, both joined by ``+``, or ``-``."""
    on = [link.get("mass_at_bound")] + (["ellipsoid"] if link.get("at_ellipsoid") else [])
    return "+".join(b for b in on if b) or "-"
