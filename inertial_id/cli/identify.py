"""``inertial-id identify``: whole-robot identification (link inertials, rotor inertia, friction) from
recorded run folders, open or closed chains, optionally physically consistent (SDP)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from . import UserError
from .common import write_json


def register(sub) -> None:
    from ..core.identification.solvers import DEFAULT_LMI_MARGIN, METHODS
    p = sub.add_parser("identify", help="identify the full dynamic model from recorded runs",
                       description=__doc__)
    p.add_argument("--model", required=True, help="robot profile name, profile YAML or URDF path")
    p.add_argument("--data", nargs="+", required=True, metavar="RUN",
                   help="run folders (t.csv, q.csv, qd.csv, tau.csv, optional qdd.csv)")
    p.add_argument("--validate", nargs="+", default=[], metavar="RUN", help="held-out run folders")
    p.add_argument("--friction", action="store_true",
                   help="identify [Fc, Fv, Ia, beta] per actuated joint too")
    p.add_argument("--fixed", nargs="+", default=[], metavar="GROUP",
                   help="hold these parameter groups at their nominal values: inertial, friction, "
                        "Fc, Fv, Ia, beta, a body (link) name or a joint name")
    p.add_argument("--method", choices=METHODS, default="lmi",
                   help="ls, wls (per-joint weights), irls (Huber reweighting) or lmi (SDP, "
                        "physically consistent; default)")
    p.add_argument("--lmi-margin", type=float, default=DEFAULT_LMI_MARGIN,
                   help="pseudo-inertia >= margin * I (kg m^2)")
    p.add_argument("--cutoff-hz", type=float, default=None,
                   help="zero-phase Butterworth low-pass on qd, qdd, tau (default: none)")
    p.add_argument("--filter-order", type=int, default=4)
    p.add_argument("--downsample", type=int, default=1, help="keep every N-th sample after filtering")
    p.add_argument("--differentiate", action="store_true",
                   help="recompute qdd from qd by central differences even if qdd.csv exists")
    p.add_argument("--simulate", action="store_true",
                   help="also report the forward-simulation L2 metric (0.5 s segments) on held-out runs")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON ('-' for stdout)")
    p.set_defaults(func=run)


def load_chain(model_arg: str):
    """(chain, rotor inertia dict) from a profile name/YAML or a URDF path (open chain, all actuated)."""
    from ..core import closed_chain as cc
    from ..core import model as robot_model
    if model_arg.endswith(".urdf"):
        if not Path(model_arg).exists():
            raise UserError(f"model file '{model_arg}' not found")
        return cc.ClosedChain(robot_model.build_model_from_urdf(Path(model_arg))), {}
    profile = robot_model.load_profile(model_arg)
    robot = robot_model.load_robot(profile)
    return cc.chain_from_profile(robot.model, profile), profile.get("rotor_inertia") or {}


def run(args) -> int:
    from ..core import closed_chain as cc
    from ..core.data_io import DataError, Pipeline, read_run
    from ..core.identification import problem as P
    from ..core.identification import solvers, validation

    t0 = time.perf_counter()
    try:
        chain, rotor = load_chain(args.model)
        pipeline = Pipeline(args.cutoff_hz, args.filter_order, args.downsample, args.differentiate)
        train = [pipeline.apply(read_run(d)) for d in args.data]
        held_out = [pipeline.apply(read_run(d)) for d in args.validate]
        layout = P.make_layout(chain, args.friction, rotor)
        problem = P.build_problem(chain, layout, train, args.fixed)
        estimate = solvers.solve(problem, args.method, args.lmi_margin)
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
    }
    if args.simulate and held_out:
        for key, values in (("simulation_l2", theta), ("nominal_simulation_l2", nominal_zero_friction)):
            sims = [validation.simulate_segments(chain, layout, values, r) for r in held_out]
            report[key] = per_joint(np.sqrt(sum(s["l2"] ** 2 for s in sims)))
        report["simulation_segments"] = sum(s["segments"] for s in sims)
    report["wall_time_s"] = time.perf_counter() - t0
    write_json(args.json, report)

    print(f"identified {len(problem.free)} parameters ({problem.base.rank} base) from "
          f"{problem.rows.n_samples} samples with {estimate.method} in {report['wall_time_s']:.2f} s")
    for j in joints:
        line = f"  {j:24s} train RMS {report['train_rms'][j]:9.4f} N m"
        if val_rows:
            line += (f"   held-out {report['validation_rms'][j]:9.4f}"
                     f"   nominal {report['nominal_validation_rms'][j]:9.4f}")
        print(line)
    print(f"  min pseudo-inertia eigenvalue {min(report['lmi_min_eigenvalues'].values()):.3g} kg m^2")
    return 0
