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

**Mass interval**, the rule stated per link: a link whose nominal mass ``m0`` is positive weighs
between ``m0 / F`` and ``F m0`` (``F``: ``DEFAULT_MASS_FACTOR`` = 2, or ``identify --mass-factor``;
the CAD masses of a robot the package does not know may be off, but not by a factor of two); a link
the model declares massless weighs between 0 and its bounding ellipsoid filled with steel
(``MAX_DENSITY_KG_M3``). The interval and ``tr(J Q) >= 0`` are linear in the parameters: SDP
constraints. Together they bound the inertia too: ``J`` is the mass's second moment, and all of
that mass lies in the ellipsoid.

**Entropic divergence** (Lee & Wensing's geometric identification): the Bregman divergence of
``-log det`` between pseudo-inertias, ``d(J || J0) = -log det(J0^-1 J) + tr(J0^-1 J) - 4``, zero
only at ``J = J0``, invariant to the choice of body frame and of units, convex in ``J``. It is
defined for positive definite ``J`` only.

**What the data determine**: a parameter is identified when the data fix it alone (it is a base
parameter no dependent coordinate enters, :meth:`Problem.identified_alone`); otherwise its value is
the prior's choice among the values that fit the data equally well, or, without a prior, one such
value of no meaning. :func:`link_report` says which, per link, and whether an estimate lies on a bound.
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pinocchio as pin

from ...defaults import DEFAULT_MASS_FACTOR
from ..robot.params import pseudo_inertia
from .problem import ParameterLayout, Problem

MIN_RADIUS_M = 0.02
INFLATION = 1.2
MAX_DENSITY_KG_M3 = 7850.0      # steel: no link is denser throughout
AT_BOUND_REL = 1e-3             # on a bound: within this of the mass interval's width, or density margin below it
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

    @property
    def volume_m3(self) -> float:
        """Volume of the ellipsoid (m^3)."""
        return float(4.0 / 3.0 * np.pi * np.prod(self.semi_axes))

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
    A_opt, b_opt = A.value, b.value
    assert A_opt is not None and b_opt is not None      # an optimal solve sets them
    A_v = 0.5 * (A_opt + A_opt.T)
    return Ellipsoid(-np.linalg.solve(A_v, b_opt), A_v @ A_v)


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


@dataclass(frozen=True)
class LinkBounds:
    """A link's plausibility bounds: mass interval (kg) and bounding ellipsoid of its mass."""

    mass_kg: tuple[float, float]
    ellipsoid: Ellipsoid


def mass_interval_kg(nominal_mass_kg: float, ellipsoid: Ellipsoid, factor: float = DEFAULT_MASS_FACTOR) -> tuple[float, float]:
    """``[m0 / factor, factor m0]``; for a massless nominal link ``[0, steel filling the ellipsoid]``."""
    if nominal_mass_kg > 0:
        return nominal_mass_kg / factor, nominal_mass_kg * factor
    return 0.0, MAX_DENSITY_KG_M3 * ellipsoid.volume_m3


def link_bounds(model: pin.Model, layout: ParameterLayout, mass_factor: float = DEFAULT_MASS_FACTOR) -> dict[str, LinkBounds]:
    """Per body of the layout: its mass interval and bounding ellipsoid (module doc)."""
    ellipsoids = bounding_ellipsoids(model, layout)
    return {body: LinkBounds(mass_interval_kg(layout.nominal[sl][0], ellipsoids[body], mass_factor), ellipsoids[body])
            for body, sl in layout.body_slices()}


def entropic_divergence(pi, pi0) -> float | None:
    """``d(J || J0)`` (dimensionless); ``None`` when ``J`` is not positive definite, where it is not
    defined (the formula alone gives finite, even negative, numbers when two eigenvalues are negative)."""
    J, J0 = pseudo_inertia(pi), pseudo_inertia(pi0)
    if np.linalg.eigvalsh(J)[0] <= 0:
        return None
    ratio = np.linalg.solve(J0, J)
    return float(-np.linalg.slogdet(ratio)[1] + np.trace(ratio) - 4.0)


def has_positive_definite_nominal(pi0) -> bool:
    """The divergence needs ``J0 > 0``; massless or degenerate nominal links get no prior."""
    return bool(np.linalg.eigvalsh(pseudo_inertia(pi0))[0] > 0)


def _at_bound(value: float, lower: float, upper: float) -> str | None:
    """``'lower'`` or ``'upper'`` when ``value`` lies on that end of ``[lower, upper]``, within
    ``AT_BOUND_REL`` of the interval's width."""
    tol = AT_BOUND_REL * (upper - lower)
    if value <= lower + tol:
        return "lower"
    return "upper" if value >= upper - tol else None


def mass_source(identified: bool, fixed: bool, prior: bool) -> str:
    """What sets an estimated mass: ``fixed`` (held), ``data``, ``prior`` (its choice among the values
    the data leave equally good) or ``none`` (no prior: one of those values, of no meaning)."""
    if fixed:
        return "fixed"
    if identified:
        return "data"
    return "prior" if prior else "none"


def _bound_report(pi, bounds: LinkBounds) -> dict:
    m = float(pi[0])
    entry = {"mass_bounds_kg": list(bounds.mass_kg), "mass_at_bound": _at_bound(m, *bounds.mass_kg),
             "ellipsoid_center_m": bounds.ellipsoid.center.tolist(),
             "ellipsoid_semi_axes_m": bounds.ellipsoid.semi_axes.tolist()}
    if m > 0:
        margin = bounds.ellipsoid.density_margin(pi)
        entry.update(com_ellipsoid_level=bounds.ellipsoid.level(pi[1:4] / m), density_margin=margin,
                     at_ellipsoid=bool(margin <= AT_BOUND_REL))
    return entry


def link_report(problem: Problem, theta, bounds: dict[str, LinkBounds] | None, prior: bool) -> dict:
    """Per body: mass and nominal mass (kg), what sets the mass (:func:`mass_source`), the names of
    the link's parameters the data determine alone, COM (m, body frame), divergence from nominal
    (``None`` unless positive definite), smallest pseudo-inertia eigenvalue (kg m^2), and with
    ``bounds`` the mass interval, the bound the mass is on (``None`` inside), the COM's ellipsoid
    level, the density margin and whether the mass distribution touches the ellipsoid."""
    layout = problem.layout
    identified = problem.identified_alone()
    held = np.zeros(layout.size, dtype=bool)
    held[problem.fixed] = True
    names = layout.names
    out = {}
    for body, sl in layout.body_slices():
        pi, pi0 = np.asarray(theta[sl]), layout.nominal[sl]
        m = float(pi[0])
        entry = {"mass_kg": m, "nominal_mass_kg": float(pi0[0]),
                 "mass_source": mass_source(bool(identified[sl][0]), bool(held[sl][0]), prior),
                 "identified_parameters": [names[i] for i in np.flatnonzero(identified[sl]) + sl.start],
                 "com_m": (pi[1:4] / m).tolist() if m > 0 else None,
                 "nominal_com_m": (pi0[1:4] / pi0[0]).tolist() if pi0[0] > 0 else None,
                 "divergence": entropic_divergence(pi, pi0) if has_positive_definite_nominal(pi0) else None,
                 "min_pseudo_inertia_eigenvalue": float(np.linalg.eigvalsh(pseudo_inertia(pi))[0])}
        if bounds and body in bounds:
            entry.update(_bound_report(pi, bounds[body]))
        out[body] = entry
    return out
