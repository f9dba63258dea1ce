"""The Stanford arm experiment of Lin 1991: exciting configurations and Table I.

References: Lin, "An Identification Method for Estimating the Inertia Parameters of a Manipulator" (seed 002).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .constants import axis_in, frames
from .minimal_set import MinimalSet

# Lin's Table I as printed, rows = configurations, u_1^(j) for j = 2..6 (None: not used); the
# printed -0.8264 in row 3, u_1^(6) is a misprint for -0.8624 (corrected here).
STANFORD_TABLE1 = (
    {2: (0.7648, -0.6442, 0.0), 3: (0.7648, 0.0, 0.6442), 4: (0.5850, -0.4927, 0.6442),
     5: (-0.1159, 0.8624, 0.4927), 6: (0.2288, 0.4515, -0.8624)},
    {2: (0.7648, 0.6442, 0.0), 3: (0.7648, 0.0, -0.6442), 4: (0.5850, 0.4927, 0.6442),
     5: (-0.8696, 0.0324, 0.4927), 6: (-0.4060, 0.3022, -0.8624)},
    {2: (0.8253, 0.5646, 0.0), 3: None, 4: (0.6313, 0.4319, 0.6442),
     5: (-0.8620, 0.1190, 0.4927), 6: (-0.3738, 0.3412, -0.8624)},
)


def stanford_configurations(q_base=(0.7, 0.7, 0.0, 0.7, 0.7, 0.7)):
    """Lin's exciting configurations: the base (62) and, per composite body, the variants of
    Table I rows 2 and 3 (the body's own joint at -0.7 and -0.6; body 3: q2 = -0.7)."""
    q_base = np.asarray(q_base, dtype=float)
    variants: dict[int, list[np.ndarray]] = {}
    for body, changes in {2: ((1, -0.7), (1, -0.6)), 3: ((1, -0.7),), 4: ((3, -0.7), (3, -0.6)),
                          5: ((4, -0.7), (4, -0.6)), 6: ((5, -0.7), (5, -0.6))}.items():
        variants[body] = []
        for joint, value in changes:
            q = q_base.copy()
            q[joint] = value
            variants[body].append(q)
    return q_base, variants


def table1(model: pin.Model, S: MinimalSet, q_base, variants) -> list[dict]:
    """``u_r^(j)`` for every body ``j > r`` in each configuration (rows: base, variants)."""
    rows = []
    for row in range(1 + max(len(v) for v in variants.values())):
        entry = {}
        for body, qs in sorted(variants.items()):
            configs = [q_base] + list(qs)
            entry[body] = (axis_in(frames(model, configs[row]), S.r, body - 1)
                           if row < len(configs) else None)
        rows.append(entry)
    return rows
