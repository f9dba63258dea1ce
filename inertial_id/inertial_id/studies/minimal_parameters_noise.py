"""How measurement noise propagates through Lin's Algorithm 2 (the minimal-parameters noise study)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..core.identifiability.minimal.algorithm import algorithm2
from ..core.identifiability.minimal.constants import gravity_torque, inertia_constants, mass_matrix
from ..core.identifiability.minimal.measurements import Noise
from ..core.identifiability.minimal.minimal_set import parse_name, minimal_set, restrict, values


def noise_study(links, model: pin.Model, q_base, variants, noise: Noise, trials: int = 100,
                seed: int = 0) -> dict:
    """How measurement noise propagates through the backward recursion of Algorithm 2.

    Per composite body (in identification order, outermost first): RMS error of its constants in
    ``S`` when the outer constants are the recursion's own estimates ("propagated") and when they
    are the true ones ("local", the body's own equations only); their ratio is the amplification
    the recursion adds. Also the relative RMS error of ``H(q)`` and of the gravity torque rebuilt
    from the estimates at random configurations.
    """
    S = minimal_set(links, model)
    true = inertia_constants(links)
    truth = values(S, true, links, model)
    bodies = [int(parse_name(nm)[0]) for nm in S.names]
    prop, local = [], []
    for t in range(trials):
        prop.append(algorithm2(links, model, q_base, variants, noise, seed=seed + t).values - truth)
        local.append(algorithm2(links, model, q_base, variants, noise, seed=seed + t,
                                known_outboard=true).values - truth)
    prop, local = np.array(prop), np.array(local)
    rng = np.random.default_rng(seed)
    est = restrict(S, algorithm2(links, model, q_base, variants, noise, seed=seed + trials).constants)
    exact = restrict(S, true)
    H_err, g_err = [], []
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, len(links))
        H = mass_matrix(links, model, q, exact)
        g = gravity_torque(links, model, q, exact)
        H_err.append(np.linalg.norm(mass_matrix(links, model, q, est) - H) / np.linalg.norm(H))
        g_err.append(np.linalg.norm(gravity_torque(links, model, q, est) - g) / max(np.linalg.norm(g), 1e-12))
    per_body = []
    for body in sorted(set(bodies), reverse=True):
        cols = [i for i, b in enumerate(bodies) if b == body]
        rp = float(np.sqrt(np.mean(prop[:, cols] ** 2)))
        rl = float(np.sqrt(np.mean(local[:, cols] ** 2)))
        scale = float(np.sqrt(np.mean(truth[cols] ** 2)))
        per_body.append({"body": body, "rms_error_propagated": rp, "rms_error_local": rl,
                         "amplification": rp / rl if rl > 0 else None,
                         "relative_rms_error_propagated": rp / scale if scale > 0 else None})
    return {"torque_noise": noise.torque, "rate_noise": noise.rate, "trials": trials,
            "per_body_in_identification_order": per_body,
            "H_relative_rms_error": float(np.sqrt(np.mean(np.square(H_err)))),
            "gravity_relative_rms_error": float(np.sqrt(np.mean(np.square(g_err))))}
