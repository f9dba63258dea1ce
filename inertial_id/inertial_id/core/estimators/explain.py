"""One line that says why a box did not leave the prior: which parameters the data used do not
determine, and what was excluded on the way, by reason. A box at the prior is guaranteed and useless;
the user must not have to guess why."""
from __future__ import annotations

import numpy as np


def at_prior(lower, upper, prior_lower, prior_upper) -> np.ndarray:
    """Per parameter: both ends of the interval still at the prior's (the bounds LP never moves an end
    it cannot improve, so equality is exact)."""
    return (np.asarray(lower) <= np.asarray(prior_lower)) & (np.asarray(upper) >= np.asarray(prior_upper))


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
