"""RPNA run time on a 7-DoF arm against the sampled-regressor method, and its growth with N."""
from __future__ import annotations

import numpy as np

from ..core.robot.builtin_models import load_any_model, random_model
from ..core.identifiability import kinematic_tree as kt
from ..core.identifiability import numeric, rpna
from .timing import time_calls


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="xarm7", help="7-DoF model: profile, built-in or URDF")
    parser.add_argument("--sizes", default="8,16,32,64,128", help="chain lengths N for the scaling run")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per repeat (5 repeats)")


def _ms(fn, calls: int) -> tuple[float, float]:
    t = time_calls(fn, calls)
    return 1e3 * t["per_call_s_median"], 1e3 * t["per_call_s_best"]


def run(args) -> dict:
    name, model = load_any_model(args.robot)
    tree = kt.tree_from_model(model)
    rpna_ms, rpna_best = _ms(lambda: rpna.rpna(tree).num_base_parameters, args.calls)
    W = numeric.model_regressor(model)
    numeric_ms, numeric_best = _ms(lambda: numeric.base_parameters(numeric.model_regressor(model)).rank,
                                   max(1, args.calls // 4))
    scaling = []
    for n in (int(x) for x in args.sizes.split(",")):
        chain = kt.tree_from_model(random_model(np.random.default_rng(n), n, tree=False))
        ms, best = _ms(lambda chain=chain: rpna.rpna(chain).num_base_parameters, max(1, args.calls // 4))
        scaling.append({"N": n, "rpna_ms": ms, "rpna_ms_best": best, "rpna_ms_per_body": ms / n})
    per_body = [s["rpna_ms_per_body"] for s in scaling]
    return {
        "robot": name, "dof": model.nv,
        "rpna_ms": rpna_ms, "rpna_ms_best": rpna_best,
        "numeric_ms": numeric_ms, "numeric_ms_best": numeric_best,
        "numeric_samples": W.shape[0] // model.nv, "numeric_regressor_shape": list(W.shape),
        "speedup_rpna_over_numeric": numeric_ms / rpna_ms,
        "num_base_parameters_rpna": rpna.rpna(tree).num_base_parameters,
        "num_base_parameters_numeric": numeric.base_parameters(W).rank,
        "target_rpna_ms": 20.0, "target_speedup": 10.0,
        "scaling": scaling,
        # linear growth: the time per body stays flat as N grows 16-fold
        "per_body_time_ratio_largest_to_smallest_N": per_body[-1] / per_body[0],
    }
