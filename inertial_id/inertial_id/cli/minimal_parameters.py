"""``inertial-id study minimal-parameters``: Lin's Algorithm 2 on the Stanford arm, its Table I and
the optional noise study (the options: :mod:`.parsers.minimal_parameters`)."""
from __future__ import annotations

import numpy as np

from ..core.identifiability import minimal
from ..core.robot import builtin_models as bm
from ..studies.minimal_parameters_noise import noise_study
from . import UserError
from .output import write_json


def report(args) -> dict:
    links, model = bm.STANFORD_LINKS, bm.stanford()
    q_base, variants = minimal.stanford_configurations(*([args.q_base] if args.q_base else []))
    if q_base.size != len(links):
        raise UserError(f"--q-base needs {len(links)} values, got {q_base.size}")
    noise = minimal.Noise(args.noise, args.rate_noise)
    try:
        ident = minimal.algorithm2(links, model, q_base, variants, noise, seed=args.seed,
                               own_joint_time=args.own_joint_time)
    except minimal.ConfigurationError as exc:
        raise UserError(str(exc)) from None
    S = ident.S
    truth = minimal.values(S, minimal.inertia_constants(links), links, model)
    rows = minimal.table1(model, S, q_base, variants)
    table = [{f"u{S.r + 1}^({b})": (None if u is None else u) for b, u in row.items()} for row in rows]
    out = {
        "model": args.model, "r": S.r + 1, "s": S.s + 1,
        "parameters": list(S.names), "true_values": truth, "identified_values": ident.values,
        "max_abs_error": float(np.abs(ident.values - truth).max()),
        "table1": table,
        "regressor_ranks": {str(b): k for b, k in sorted(ident.regressor_ranks.items())},
        "unknowns": {str(b): k for b, k in sorted(ident.unknowns.items())},
    }
    if args.q_base is None:
        errs = [abs(np.asarray(p_row[b]) - row[b]).max() for p_row, row in zip(minimal.STANFORD_TABLE1, rows)
                for b in p_row if p_row[b] is not None]
        out["table1_max_abs_error_vs_paper"] = float(max(errs))
    H_err, g_err = minimal.rebuild_errors(links, model, minimal.restrict(S, ident.constants), seed=args.seed)
    out["rebuilt_H_max_abs_error"] = float(H_err)
    out["rebuilt_gravity_max_abs_error"] = float(g_err)
    if noise.any():
        out["noise_study"] = noise_study(links, model, q_base, variants, noise, args.trials, args.seed)
    return out


def run(args) -> int:
    out = report(args)
    print(f"{out['model']}: {len(out['parameters'])} minimal inertia constants (r = {out['r']}, "
          f"s = {out['s']}); max |identified - true| = {out['max_abs_error']:.3g}")
    for name, t, v in zip(out["parameters"], out["true_values"], out["identified_values"]):
        print(f"  {name:14s} true {t:12.6f}  identified {v:12.6f}")
    print(f"  regressor ranks per composite body: {out['regressor_ranks']}")
    if "table1_max_abs_error_vs_paper" in out:
        print(f"  Table I max |error| vs paper: {out['table1_max_abs_error_vs_paper']:.2g}")
    print(f"  H(q), gravity rebuilt from the constants vs RNEA: {out['rebuilt_H_max_abs_error']:.2g}, "
          f"{out['rebuilt_gravity_max_abs_error']:.2g}")
    if "noise_study" in out:
        ns = out["noise_study"]
        for b in ns["per_body_in_identification_order"]:
            print(f"  body {b['body']}: rms error {b['rms_error_propagated']:.3g} "
                  f"(own equations {b['rms_error_local']:.3g})")
    write_json(args.json, out)
    return 0
