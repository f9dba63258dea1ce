"""One line that says why a box did not leave the prior: which parameters the data used do not
determine, and what was excluded on the way, by reason. A box at the prior is guaranteed and useless;
the user must not have to guess why.

The prior here is the payload's prior box narrowed by physical consistency alone (the cuts the bounds
LPs carry, :func:`~.physical_cuts.pseudo_inertia_cuts`): with no rows, a rotational inertia's lower
end is already 0, and that is no sign that the data determined it."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import linprog

from .physical_cuts import pseudo_inertia_cuts

# an end within this much (relative, plus as much absolute) of the physical prior's is still at it: the
# two come from different LPs, each bound moved outward by its own rounding pad
AT_PRIOR_TOLERANCE = 1e-6


@lru_cache(maxsize=8)
def _physical_prior(prior: tuple) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = np.array(prior[:10]), np.array(prior[10:])
    G, g = pseudo_inertia_cuts()
    lo, hi = lower.copy(), upper.copy()
    for k in range(10):
        for sign, out in ((1.0, lo), (-1.0, hi)):
            c = np.zeros(10)
            c[k] = sign
            res = linprog(c, A_ub=G, b_ub=g, bounds=list(zip(lower, upper)), method="highs")
            if res.status == 0:
                out[k] = res.x[k]
    return lo, hi


def physical_prior(prior_lower, prior_upper) -> tuple[np.ndarray, np.ndarray]:
    """The payload's prior box narrowed by physical consistency alone (module docstring); any other
    parameters' prior as it is."""
    if np.size(prior_lower) != 10:
        return np.asarray(prior_lower, dtype=float), np.asarray(prior_upper, dtype=float)
    return _physical_prior(tuple(np.r_[np.asarray(prior_lower, dtype=float), np.asarray(prior_upper, dtype=float)]))


def at_prior(lower, upper, prior_lower, prior_upper) -> np.ndarray:
    """Per parameter: both ends of the interval still at the physical prior's (:func:`physical_prior`;
    the bounds LP never moves an end it cannot improve)."""
    lo, hi = physical_prior(prior_lower, prior_upper)
    pad = AT_PRIOR_TOLERANCE * (1.0 + np.abs(lo)), AT_PRIOR_TOLERANCE * (1.0 + np.abs(hi))
    return (np.asarray(lower) <= lo + pad[0]) & (np.asarray(upper) >= hi - pad[1])


def prior_explanation(names, lower, upper, prior_lower, prior_upper, samples_used: int,
                      excluded: dict | None = None) -> str | None:
    """None when every parameter left its prior interval; else the line: the parameters at the prior,
    the samples used, and the exclusions (``excluded``: reason -> count; zero counts left out)."""
    stuck = at_prior(lower, upper, prior_lower, prior_upper)
    if not stuck.any():
        return None
    which = ", ".join(n for n, s in zip(names, stuck) if s)
    cause = "no rows reached the bounds yet" if samples_used == 0 else \
        f"the {samples_used} samples used do not determine {'it' if stuck.sum() == 1 else 'them'}"
    parts = [f"box at the prior for {which}: {cause}"]
    shown = {k: v for k, v in (excluded or {}).items() if v}
    parts.append("excluded: " + (", ".join(f"{k} {v}" for k, v in sorted(shown.items())) if shown else "none"))
    return "; ".join(parts)
