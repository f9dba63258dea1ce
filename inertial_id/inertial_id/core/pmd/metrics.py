"""Error metrics of point-mass discretization's reference (eqs. 10-12), in percent, scale-free in the object's mass and size.

``a`` are the side lengths of the object's bounding box. Mass: ``|dm / m|``; COM: ``|dc_i / a_i|``
per axis, averaged; inertia: each of the six entries on and above the diagonal of the inertia about
the COM, ``|dJ_ij| / B_ij`` with ``B = (m/12) diag(a_y^2 + a_z^2, a_x^2 + a_z^2, a_x^2 + a_y^2)`` the
inertia of the uniform bounding box and ``B_ij = sqrt(B_ii B_jj)`` off the diagonal (the printed
eq. 12 is unreadable there), averaged. Estimates with ``m <= 0`` have no COM: errors are infinite.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

import numpy as np

from ..robot import params

_UPPER = np.triu_indices(3)


def errors_pct(pi_est, pi_true, box_size_m) -> dict:
    """``{'mass', 'com', 'inertia'}`` errors (percent) of an estimate against the truth, same frame."""
    m, c, I_C = params.com_from_params(pi_true)
    a = np.asarray(box_size_m, dtype=float)
    e_mass = abs(pi_est[0] - m) / m * 100.0
    if not pi_est[0] > 0:
        return {"mass": e_mass, "com": np.inf, "inertia": np.inf}
    _, c_est, I_C_est = params.com_from_params(pi_est)
    B = np.diag((m / 12.0) * (np.sum(a**2) - a**2))
    scale = np.sqrt(np.outer(np.diag(B), np.diag(B)))
    return {"mass": e_mass,
            "com": float(np.mean(np.abs(c_est - c) / a) * 100.0),
            "inertia": float(np.mean((np.abs(I_C_est - I_C) / scale)[_UPPER]) * 100.0)}
