"""What RViz shows of a payload estimate, as plain data (the node turns it into a MarkerArray).

All markers are in the frame the parameters are expressed in (the profile's payload frame):

- ``payload/0`` sphere at the estimated centre of mass;
- ``payload/1`` box of uniform density with the estimated mass and rotational inertia (principal
  axes), when the estimate is physically consistent;
- ``bounds/0`` box enclosing every centre of mass the guaranteed interval allows
  (``h_i / m`` over the box; needs a positive lower mass bound);
- ``text/0`` the mass with its interval, above the centre of mass.

Types and actions use the values of visualization_msgs/Marker. Every MarkerArray starts with a
DELETEALL and then adds the markers of the newest estimate under fixed (ns, id): a marker that no
longer applies (the bounds box once the mass interval reaches 0, everything for an unusable estimate)
disappears instead of staying on screen with stale content.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..robot import params

CUBE, SPHERE, TEXT_VIEW_FACING = 1, 2, 9     # visualization_msgs/Marker type values
COM_SPHERE_M = 0.03
TEXT_HEIGHT_M = 0.03


@dataclass
class MarkerSpec:
    """One RViz marker of an estimate, ROS-free: namespace, id, type, pose (m, estimate's frame), scale (m), colour."""
    ns: str
    id: int
    type: int
    position: np.ndarray            # m, in the estimate's frame
    orientation_xyzw: np.ndarray
    scale: np.ndarray               # m (text: only z, the letter height)
    rgba: tuple
    text: str = ""


def equivalent_box(pi):
    """``(c, R, sides)``: centre of mass, principal axes (columns, det +1) and side lengths of the
    uniform box with the mass and rotational inertia of ``pi`` (physically consistent).
    A box of sides ``s`` has ``I_i = m (s_j^2 + s_k^2) / 12``, so ``s_i^2 = 6 (tr I - 2 I_i) / m``."""
    m, c, I_C = params.com_from_params(pi)
    eig, R = np.linalg.eigh(I_C)
    if np.linalg.det(R) < 0:
        R[:, 0] = -R[:, 0]
    sides = np.sqrt(np.clip(6.0 / m * (eig.sum() - 2.0 * eig), 1e-8, None))
    return c, R, sides


def com_interval(lower, upper):
    """``(lo, hi)`` of the centre of mass over the parameter box, or None if the box allows m <= 0."""
    m_lo, m_hi = lower[0], upper[0]
    if not m_lo > 0:
        return None
    h = np.stack([lower[1:4], upper[1:4]])              # (2, 3)
    ratios = np.concatenate([h / m_lo, h / m_hi])        # the extremes of h/m lie at the corners
    return ratios.min(axis=0), ratios.max(axis=0)


def quaternion_xyzw(R) -> np.ndarray:
    """Rotation matrix ``R`` as a quaternion ``[x, y, z, w]``."""
    q = pin.Quaternion(np.asarray(R, dtype=float))
    return np.array([q.x, q.y, q.z, q.w])


def payload_markers(estimate, lower=None, upper=None) -> list[MarkerSpec]:
    """The markers of one estimate (pinocchio order) and its interval; none for non-finite input."""
    pi = np.asarray(estimate, dtype=float)
    identity = np.array([0.0, 0.0, 0.0, 1.0])
    out: list[MarkerSpec] = []
    if not (np.all(np.isfinite(pi)) and pi[0] > 0):
        return out
    c = pi[1:4] / pi[0]
    out.append(MarkerSpec("payload", 0, SPHERE, c, identity, np.full(3, COM_SPHERE_M), (1.0, 0.2, 0.2, 1.0)))
    if params.is_physically_consistent(pi):
        c, R, sides = equivalent_box(pi)
        out.append(MarkerSpec("payload", 1, CUBE, c, quaternion_xyzw(R), sides, (0.2, 0.6, 1.0, 0.4)))
    text = f"m = {pi[0]:.3f} kg"
    if lower is not None and upper is not None:
        lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
            text += f" in [{lo[0]:.3f}, {hi[0]:.3f}]"
            box = com_interval(lo, hi)
            if box is not None:
                out.append(MarkerSpec("bounds", 0, CUBE, 0.5 * (box[0] + box[1]), identity,
                                      np.maximum(box[1] - box[0], 1e-4), (1.0, 0.8, 0.0, 0.25)))
    out.append(MarkerSpec("text", 0, TEXT_VIEW_FACING, c + np.array([0.0, 0.0, 0.08]), identity,
                          np.array([0.0, 0.0, TEXT_HEIGHT_M]), (1.0, 1.0, 1.0, 1.0), text))
    return out
