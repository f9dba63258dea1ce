"""Certifier of Bezier plans, independent of the optimizer that proposes them.

A :class:`Certificate` with ``certified=True`` is a proof (up to the stated assumptions) that, over
continuous time t in [0, T], for every payload in the given box, every robot link parameter in its box
and every actual state inside the tracking-error tube around the plan:

- joint positions, velocities and accelerations stay inside the profile limits,
- the inverse-dynamics torque stays at least ``torque_margin_Nm`` inside the torque limits,
- no link or payload capsule touches an obstacle box.

Assumptions: the rigid-body model (kinematics, armature) of the profile, tracking error within
``planner.tracking_error`` (the node monitors it), parameters inside the boxes. Given a
:class:`~.anchor.TorqueAnchor` (what the arm was measured to apply over a window of this run), the
torque is bounded both ways, over the boxes and as the measured torque plus its change since, and the
certificate takes the tighter; that adds the estimator's assumption on the measured torques. Enclosures: Bezier
convex hulls on K time sub-intervals, then first-order affine arithmetic with rigorous remainders and
rounding bounds (module :mod:`.enclosure`); sub-intervals that fail are bisected a bounded number of
times before the plan is rejected (only when few fail: many failing pieces mean the box or the plan is
the cause, and halving them all would only multiply the work). The enclosures include t = T, where
every plan of :meth:`.BezierPlan.from_state` is at rest, so holding still afterwards is covered too.

Figures (``certifier_study.measure``) are in the issue-9 report; a certify() call on the Gen3 at 64
sub-intervals costs some tens of milliseconds of one core.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...defaults import NO_OBSTACLES_CLEARANCE_M
from ..robot.model import ProfileError, Robot
from . import collision, enclosure
from .anchor import TorqueAnchor
from .bezier import BezierPlan, segment_points
from .interval import up

LIMIT_TIGHTENING = 1.0e-6           # relative: constraints sitting exactly on a limit are not certified


@dataclass(frozen=True)
class CertifierSettings:
    """What a certificate assumes: time resolution, torque margin, tracking tube, robot box, occupancy."""

    time_intervals: int                 # K equal sub-intervals of [0, T]
    torque_margin_Nm: np.ndarray        # (n,)
    tracking_position_rad: np.ndarray   # (n,) tube half-widths
    tracking_velocity_rad_s: np.ndarray
    tracking_acceleration_rad_s2: np.ndarray
    robot_relative_error: float
    robot_floor: np.ndarray             # (10,) absolute floor per parameter, pinocchio order
    capsules: tuple                     # collision.Capsule
    obstacles: tuple                    # collision.Box
    max_bisections: int = 3             # halvings of a failing sub-interval before rejecting
    # model constants of the enclosures per robot, built on first use (not copied by dataclasses.replace)
    cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def context(self, robot: Robot) -> enclosure.TorqueContext:
        """The torque-enclosure constants of ``robot`` for these settings, built once and cached."""
        entry = self.cache.get(robot.name)
        if entry is None or entry[0] is not robot:
            entry = self.cache[robot.name] = (robot, enclosure.TorqueContext.build(robot, self))
        return entry[1]

    @staticmethod
    def from_profile(robot: Robot) -> CertifierSettings:
        """The certifier's settings of ``robot``'s profile (types and per-joint lengths checked by the
        schema, :class:`inertial_id.core.robot.profile.Planner`; capsule frames against the model here)."""
        profile = robot.spec
        planner = profile.planner
        if planner is None:
            raise ProfileError(f"profile '{robot.name}' needs a 'planner:' mapping")
        tube = planner.tracking_error
        floor = planner.robot_absolute_floor
        robot_floor = np.array([floor.mass_kg] + [floor.first_moment_kg_m] * 3 + [floor.inertia_kg_m2] * 6)
        capsules = collision.capsules_from_profile(robot, planner.capsules)
        obstacles = collision.boxes_from_profile(profile.obstacles)
        position, velocity, acceleration = (np.asarray(v, dtype=float) for v in (tube.position_rad, tube.velocity_rad_s,
                                                                                    tube.acceleration_rad_s2))
        return CertifierSettings(planner.time_intervals, np.asarray(planner.torque_margin_Nm, dtype=float),
                                 position, velocity, acceleration,
                                 profile.identification.robot_relative_error, robot_floor, capsules, obstacles)


@dataclass(frozen=True)
class Certificate:
    """The certifier's verdict on a plan: certified or not, the smallest margin of each constraint (rad, rad/s, rad/s^2, N m, m), and why not."""
    certified: bool
    min_joint_margin_rad: float         # >= 0 when certified; finite always
    min_velocity_margin_rad_s: float
    min_acceleration_margin_rad_s2: float
    min_torque_margin_Nm: float         # beyond torque_margin_Nm: >= 0 when certified
    min_obstacle_clearance_m: float     # NO_OBSTACLES_CLEARANCE_M when no obstacles are declared
    reason: str                         # empty when certified; else constraint, joint, time interval


def limit_margins(robot: Robot, settings: CertifierSettings, plan: BezierPlan, intervals: int):
    """Certified margins (n,) to the position, velocity and acceleration limits, over the whole plan
    and the tracking tube, each with the index of the worst sub-interval per joint.

    The curve on each of ``intervals`` sub-intervals lies in the hull of its control points; the tube is
    added; the limit is tightened by LIMIT_TIGHTENING relative. Linear in the control points.
    """
    out = []
    for k, (lower, upper, tube) in enumerate((
            (robot.position_lower, robot.position_upper, settings.tracking_position_rad),
            (-robot.velocity_limit, robot.velocity_limit, settings.tracking_velocity_rad_s),
            (-robot.acceleration_limit, robot.acceleration_limit, settings.tracking_acceleration_rad_s2))):
        seg = segment_points(plan.derivative_points(k), intervals)          # (K, m, n)
        hi = seg.max(axis=1) + tube
        lo = seg.min(axis=1) - tube
        tighten_hi = upper - LIMIT_TIGHTENING * np.maximum(np.abs(upper), 1.0)
        tighten_lo = lower + LIMIT_TIGHTENING * np.maximum(np.abs(lower), 1.0)
        margin = np.minimum(tighten_hi - hi, lo - tighten_lo)               # (K, n)
        out.append((margin.min(axis=0), margin.argmin(axis=0)))
    return out


def _interval_text(k: int, intervals: int, duration_s: float) -> str:
    h = duration_s / intervals
    return f"t in [{k * h:.3f}, {(k + 1) * h:.3f}] s"


def certify(robot: Robot, settings: CertifierSettings, plan: BezierPlan, payload_lower, payload_upper,
            context: enclosure.TorqueContext | None = None,
            torque_anchor: TorqueAnchor | None = None) -> Certificate:
    """Certify ``plan`` for every payload in [payload_lower, payload_upper] (pinocchio order, payload
    frame). ``context``: model constants for these settings (default: built once and cached in
    ``settings``). ``torque_anchor``: a measured torque of this run (module docstring)."""
    n = robot.nv
    K = settings.time_intervals
    lo = np.asarray(payload_lower, dtype=float)
    hi = np.asarray(payload_upper, dtype=float)
    if plan.n_joints != n:
        raise ValueError(f"plan has {plan.n_joints} joints, robot {n}")
    if lo.shape != (10,) or hi.shape != (10,) or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("payload box must be two finite 10-vectors")
    if np.any(lo > hi):
        raise ValueError("payload box has lower > upper")
    reasons = []
    names = ("position", "velocity", "acceleration")
    units = ("rad", "rad/s", "rad/s^2")
    mins = []
    for name, unit, (margin, where) in zip(names, units, limit_margins(robot, settings, plan, K)):
        j = int(np.argmin(margin))
        mins.append(float(margin[j]))
        if margin[j] < 0.0:
            reasons.append(f"{name} limit of joint {robot.joint_names[j]} exceeded by {-margin[j]:.4g} {unit} "
                           f"at {_interval_text(int(where[j]), K, plan.duration_s)}")
    ctx = context if context is not None else settings.context(robot)
    torque_margin, torque_reason = _torque_margin(robot, settings, ctx, plan, lo, hi, torque_anchor)
    if torque_reason:
        reasons.append(torque_reason)
    clearance, collision_reason = _clearance(robot, settings, ctx, plan)
    if collision_reason:
        reasons.append(collision_reason)
    return Certificate(not reasons, mins[0], mins[1], mins[2], torque_margin, clearance, "; ".join(reasons))


def _bisect_search(evaluate, plan: BezierPlan, intervals: int, max_bisections: int):
    """Worst margin over [0, T] of ``evaluate(segment_plans) -> (margin per segment, detail)``: start with
    K equal sub-intervals; halve the failing ones, up to ``max_bisections`` times. Returns
    (worst certified margin, index information of the worst segment (t0, t1, detail))."""
    T = plan.duration_s
    edges = np.linspace(0.0, T, intervals + 1)          # exact end points: the pieces cover [0, T]
    bounds = np.stack([edges[:-1], edges[1:]], axis=1)
    worst_ok = np.inf
    worst_ok_where = None
    for depth in range(max_bisections + 1):
        margins, details = evaluate(bounds)
        failing = margins < 0.0
        ok = ~failing
        if np.any(ok):
            i = int(np.argmin(np.where(ok, margins, np.inf)))
            if margins[i] < worst_ok:
                worst_ok, worst_ok_where = float(margins[i]), (bounds[i, 0], bounds[i, 1], details[i])
        # bisection only helps where a few sub-intervals fail by a little; when many fail, the cause is
        # the parameter box or the plan itself, and halving everything would just multiply the work
        if not np.any(failing) or depth == max_bisections or failing.sum() > max(8, intervals // 8):
            break
        b = bounds[failing]
        mid = 0.5 * (b[:, 0] + b[:, 1])
        bounds = np.concatenate([np.stack([b[:, 0], mid], axis=1), np.stack([mid, b[:, 1]], axis=1)])
    if np.any(margins < 0.0):
        i = int(np.argmin(margins))
        return float(margins[i]), (bounds[i, 0], bounds[i, 1], details[i])
    return worst_ok, worst_ok_where


def _torque_margin(robot, settings, ctx, plan, lo, hi, anchor):
    theta_pl_c = 0.5 * (lo + hi)
    theta_pl_r = up(np.maximum(up(hi - theta_pl_c), up(theta_pl_c - lo)))   # centre +- radius covers the box
    limit = robot.torque_limit - settings.torque_margin_Nm

    def evaluate(bounds):
        tau_lo, tau_hi = enclosure.torque_bounds(ctx, plan, bounds, theta_pl_c, theta_pl_r, anchor)
        margin = np.minimum(limit - tau_hi, tau_lo + limit)             # (S, n)
        return margin.min(axis=1), margin.argmin(axis=1)

    worst, (t0, t1, j) = _bisect_search(evaluate, plan, settings.time_intervals, settings.max_bisections)
    if worst < 0.0:
        return worst, (f"torque of joint {robot.joint_names[int(j)]} may exceed its limit minus margin by "
                       f"{-worst:.3g} N m at t in [{t0:.3f}, {t1:.3f}] s")
    return worst, ""


def _clearance(robot, settings, ctx, plan):
    if not settings.obstacles:
        return NO_OBSTACLES_CLEARANCE_M, ""

    def evaluate(bounds):
        return collision.clearance_bounds(ctx, settings, plan, bounds)

    worst, (t0, t1, detail) = _bisect_search(evaluate, plan, settings.time_intervals, settings.max_bisections)
    if worst < 0.0:
        c, b = detail
        return worst, (f"capsule on {settings.capsules[c].frame} may touch obstacle "
                       f"'{settings.obstacles[b].name}' at t in [{t0:.3f}, {t1:.3f}] s")
    return worst, ""
