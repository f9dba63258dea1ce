"""``inertial-id study identifiability``: the base parameters of a model by RPNA or sampled regressors
(the options: :mod:`.parsers.identifiability`)."""
from __future__ import annotations

import time

import numpy as np

from ..core.identifiability import kinematic_tree as kt
from ..core.identifiability import numeric, rpna
from ..core.robot.builtin_models import load_any_model
from . import UserError
from .output import write_json


def analyse(args) -> dict:
    """The report of one analysis (also used by the tests and the benchmark)."""
    if not (np.isfinite(args.gear_ratio) and args.gear_ratio > 0):
        raise UserError("--gear-ratio must be a positive number")
    if args.samples is not None and args.samples < 1:
        raise UserError("--samples must be at least 1")
    name, model = load_any_model(args.model)
    if model.nv == 0:
        raise UserError(f"'{args.model}' has no moving joints: no motion can identify anything")
    if args.static and args.no_gravity:
        raise UserError("--static with --no-gravity leaves nothing to measure")
    if args.floating_base:
        model = kt.with_floating_base(model)
    if args.no_gravity:
        model = kt.without_gravity(model)
    try:
        rotors = kt.default_rotors(model, args.gear_ratio) if args.motors else None
        tree = kt.tree_from_model(model, rotors)
    except kt.UnsupportedModelError as exc:
        raise UserError(str(exc)) from None
    gravity = not args.no_gravity
    t0 = time.perf_counter()
    if args.method == "rpna":
        result = rpna.rpna(tree, gravity=gravity, static=args.static)
        count = result.num_base_parameters
        per_body = [{"name": b.name, "dim_V": b.dim_V, "dim_K": b.dim_K, "dim_T": b.dim_T,
                     "n_parameters": b.n_params} for b in result.bodies]
        wall = time.perf_counter() - t0
        base = rpna.base_parameters(result)
        cross_check = {}
    else:
        W = numeric.model_regressor(model, rotors, n_samples=args.samples, static=args.static)
        n_per_body = [14 if r is not None else 10 for r in tree.rotors]
        base = numeric.base_parameters_from_rows(W, rpna.preference_order(n_per_body))
        count = base.rank
        wall = time.perf_counter() - t0
        cross_check = {"rank_svd_unit_columns": numeric.svd_rank(W),
                       "rank_pivoted_qr": numeric.base_parameters(W).rank, "samples": W.shape[0]}
        per_body = [{"name": n, "dim_V": None, "dim_K": None, "dim_T": None, "n_parameters": k}
                    for n, k in zip(tree.names, n_per_body)]
    short = rpna.parameter_names(tree, short=True)
    report = {
        "model": name, "method": args.method, "gravity": gravity, "static": args.static,
        "floating_base": model.joints[1].shortname() == "JointModelFreeFlyer",
        "motors": bool(args.motors), "n_parameters": base.n_params,
        "num_base_parameters": count, "per_body": per_body,
        "base_parameters": [short[i] for i in base.independent],
        "combinations": base.combinations(short),
        "parameter_names": rpna.parameter_names(tree),
        "wall_time_s": wall, **cross_check,
    }
    if report["floating_base"]:
        # the RPNA paper's Table 5 counts the bodies carried by the free base (its 10 are always identifiable)
        report["num_base_parameters_excluding_floating_base"] = count - 10
    return report


def run(args) -> int:
    report = analyse(args)
    print(f"{report['model']}: {report['num_base_parameters']} base parameters of "
          f"{report['n_parameters']} ({report['method']}, {report['wall_time_s'] * 1e3:.2f} ms)")
    for body in report["per_body"]:
        if body["dim_T"] is not None:
            print(f"  {body['name']:24s} dim V {body['dim_V']}  dim K {body['dim_K']}  dim T {body['dim_T']}")
    for c in report["combinations"]:
        print(f"  {c}")
    write_json(args.json, report)
    return 0
