"""What makes identified link parameters plausible, beyond positive definite pseudo-inertias.

**Bounding ellipsoids** (density realisability, Wensing, Kim & Slotine 2017). A link's mass lies in
the ellipsoid ``E = {x : (x - c)^T S (x - c) <= 1}`` of its body frame if and only if (for a PSD
pseudo-inertia ``J``) ``tr(J Q) >= 0`` with ``Q = [[-S, S c], [c^T S, 1 - c^T S c]]``: ``tr(J Q)`` is
the integral of ``1 - (x - c)^T S (x - c)`` over the mass. It implies the centre of mass lies in
``E`` (the integrand is concave), and is linear in the parameters.

The ellipsoid of each link is derived from the nominal model, not drawn by hand: the smallest
ellipsoid (maximum ``log det``, an SDP) containing

- the link's kinematic points: its joint origin, the origins of its child joints and every frame
  attached to it (flanges, loop-closure points), each as a ball of radius ``MIN_RADIUS_M`` so a
  link made of two points still has thickness;
- the nominal mass distribution's equivalent uniform solid ellipsoid (same mass, COM and second
  moments: semi-axes ``sqrt(5 lambda_i)`` of the COM covariance ``Sigma_c``), sampled on its surface;

then enlarged by ``INFLATION`` about its centre, because CAD inertials are themselves approximate.

**Entropic divergence** (Lee & Wensing's geometric identification): the Bregman divergence of
``-log det`` between pseudo-inertias, ``d(J || J0) = -log det(J0^-1 J) + tr(J0^-1 J) - 4``, zero
only at ``J = J0``, invariant to the choice of body frame and of units, convex in ``J``.
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pinocchio as pin

from ..robot.params import pseudo_inertia
from .problem import ParameterLayout

MIN_RADIUS_M = 0.02
INFLATION = 1.2
_SURFACE = np.array([d for d in np.ndindex(3, 3, 3) if d != (1, 1, 1)], dtype=float) - 1.0
_SURFACE /= np.linalg.norm(_SURFACE, axis=1, keepdims=True)     # 26 directions of a cube's facets, edges, corners


@dataclass(frozen=True)
class Ellipsoid:
    """``{x : (x - center)^T S (x - center) <= 1}`` in the link's body (joint) frame, metres."""

    center: np.ndarray
    S: np.ndarray

    @property
    def semi_axes(self) -> np.ndarray:
        """Semi-axis lengths (m), longest first."""
        return 1.0 / np.sqrt(np.linalg.eigvalsh(self.S))

    @property
    def Q(self) -> np.ndarray:
        """(4, 4) matrix with ``tr(J Q) >= 0`` for a pseudo-inertia ``J`` whose mass lies in the ellipsoid."""
        Sc = self.S @ self.center
        return np.block([[-self.S, Sc[:, None]], [Sc[None, :], np.array([[1.0 - self.center @ Sc]])]])

    def level(self, x) -> float:
        """``(x - c)^T S (x - c)``: <= 1 inside."""
        d = np.asarray(x, dtype=float) - self.center
        return float(d @ self.S @ d)

    def density_margin(self, pi) -> float:
        """``tr(J Q) / m``: the mass-averaged ``1 - level``; >= 0 when the mass can lie inside."""
        return float(np.trace(pseudo_inertia(pi) @ self.Q) / pi[0])


def enclosing_ellipsoid(points) -> Ellipsoid:
    """Minimum-volume ellipsoid containing the points (``||A x + b|| <= 1``, maximise ``log det A``)."""
    points = np.asarray(points, dtype=float)
    A = cp.Variable((3, 3), PSD=True)
    b = cp.Variable(3)
    prob = cp.Problem(cp.Maximize(cp.log_det(A)), [cp.norm(A @ points.T + b[:, None], 2, axis=0) <= 1])
    prob.solve(solver=cp.CLARABEL)
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise ValueError(f"enclosing ellipsoid: solver status {prob.status}")
    A_v = 0.5 * (A.value + A.value.T)
    return Ellipsoid(-np.linalg.solve(A_v, b.value), A_v @ A_v)


def _link_points(model: pin.Model, joint: int, pi0) -> np.ndarray:
    kinematic = [np.zeros(3)]
    kinematic += [model.jointPlacements[c].translation for c in range(1, model.njoints) if model.parents[c] == joint]
    kinematic += [f.placement.translation for f in model.frames if f.parentJoint == joint]
    points = [p + MIN_RADIUS_M * d for p in kinematic for d in _SURFACE]
    J0 = pseudo_inertia(pi0)
    if J0[3, 3] > 0 and np.linalg.eigvalsh(J0)[0] > 0:
        c = J0[:3, 3] / J0[3, 3]
        cov = J0[:3, :3] / J0[3, 3] - np.outer(c, c)
        lam, V = np.linalg.eigh(cov)
        half = V * np.sqrt(5.0 * np.maximum(lam, 0.0))
        points += [c + half @ d for d in _SURFACE]
    return np.array(points)


def bounding_ellipsoids(model: pin.Model, layout: ParameterLayout) -> dict[str, Ellipsoid]:
    """One ellipsoid per body of the layout (body ``k`` is carried by joint ``k + 1``), from the
    model's kinematics and the layout's nominal inertials."""
    out = {}
    for k, (body, sl) in enumerate(layout.body_slices()):
        e = enclosing_ellipsoid(_link_points(model, k + 1, layout.nominal[sl]))
        out[body] = Ellipsoid(e.center, e.S / INFLATION**2)
    return out


def entropic_divergence(pi, pi0) -> float:
    """``d(J || J0)`` (dimensionless); ``inf`` when ``J`` is not positive definite."""
    J, J0 = pseudo_inertia(pi), pseudo_inertia(pi0)
    sign, logdet = np.linalg.slogdet(np.linalg.solve(J0, J))
    if sign <= 0:
        return float("inf")
    return float(-logdet + np.trace(np.linalg.solve(J0, J)) - 4.0)


def has_positive_definite_nominal(pi0) -> bool:
    """The divergence needs ``J0 > 0``; massless or degenerate nominal links get no prior."""
    return bool(np.linalg.eigvalsh(pseudo_inertia(pi0))[0] > 0)


def link_report(layout: ParameterLayout, theta, ellipsoids: dict[str, Ellipsoid] | None) -> dict:
    """Per body: mass and nominal mass (kg), COM (m, body frame), divergence from nominal, smallest
    pseudo-inertia eigenvalue (kg m^2), and the COM's ellipsoid level and density margin."""
    out = {}
    for body, sl in layout.body_slices():
        pi, pi0 = np.asarray(theta[sl]), layout.nominal[sl]
        m = float(pi[0])
        com = (pi[1:4] / m).tolist() if m > 0 else None
        entry = {"mass_kg": m, "nominal_mass_kg": float(pi0[0]), "com_m": com,
                 "nominal_com_m": (pi0[1:4] / pi0[0]).tolist() if pi0[0] > 0 else None,
                 "divergence": entropic_divergence(pi, pi0) if has_positive_definite_nominal(pi0) else None,
                 "min_pseudo_inertia_eigenvalue": float(np.linalg.eigvalsh(pseudo_inertia(pi))[0])}
        if ellipsoids is not None and body in ellipsoids and m > 0:
            e = ellipsoids[body]
            entry.update(com_ellipsoid_level=e.level(com), density_margin=e.density_margin(pi),
                         ellipsoid_center_m=e.center.tolist(), ellipsoid_semi_axes_m=e.semi_axes.tolist())
        out[body] = entry
    return out
