"""Linear cuts of physical consistency, which every rigid body's parameters satisfy.

A body's pseudo-inertia ``J(pi)`` (:func:`~..robot.params.pseudo_inertia`) is positive semidefinite
(Wensing, Kim, Slotine, "Linear matrix inequalities for physically consistent inertial parameter
identification", 2017). Each ``v^T J(pi) v >= 0`` is linear in ``pi``: a tangent plane of that cone,
so a set of them is an outer approximation an LP can take, never a restriction a real body breaks.
"""
from __future__ import annotations

import numpy as np

from ..robot import params

__all__ = ["CUT_DISTANCES_M", "pseudo_inertia_cuts", "pseudo_inertia_diagonal_cuts"]


def pseudo_inertia_diagonal_cuts():
    """``(G, g)``, ``G pi <= g``: the 3x3 block of the pseudo-inertia has a non-negative diagonal,
    ``(I_jj + I_kk - I_ii) / 2 >= 0`` (pinocchio order)."""
    G = np.zeros((3, 10))
    xx, yy, zz = 4, 6, 9
    for row, (i, j, k) in enumerate(((xx, yy, zz), (yy, xx, zz), (zz, xx, yy))):
        G[row, [i, j, k]] = [1.0, -1.0, -1.0]
    return G, np.zeros(3)


# Directions (the 26 of a cube's faces, edges and corners) and distances (m, doubling from 5 cm to
# 1.6 m: the prior boxes' reach) of the points whose second moment each pseudo-inertia cut keeps >= 0.
CUT_DISTANCES_M = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def pseudo_inertia_cuts():
    """``(G, g)``, ``G pi <= g``: linear cuts of the positive semidefinite pseudo-inertia, which every
    body satisfies: ``v^T J(pi) v >= 0`` (linear in ``pi``) for ``v = [a d, 1]`` (the body's second
    moment about the point ``-a d``: ties the mass and first moment to the rotational inertia, e.g. a
    light payload cannot have its COM far out with small inertia) and ``v = [d, 0]``, plus the
    diagonal cuts. An outer approximation of the SDP constraint, so only ever a valid restriction."""
    dirs = [u for u in (np.array(d, dtype=float) - 1 for d in np.ndindex(3, 3, 3)) if np.any(u)]
    dirs = [d / np.linalg.norm(d) for d in dirs]
    vs = [np.append(a * d, 1.0) for d in dirs for a in CUT_DISTANCES_M]
    vs += [np.append(d, 0.0) for d in dirs if d[np.flatnonzero(d)[0]] > 0]     # +d and -d give the same cut
    basis = [params.pseudo_inertia(e) for e in np.eye(10)]
    G0, g0 = pseudo_inertia_diagonal_cuts()
    G = np.array([[-(v @ Jk @ v) for Jk in basis] for v in vs])
    return np.vstack([G0, G]), np.concatenate([g0, np.zeros(len(vs))])
