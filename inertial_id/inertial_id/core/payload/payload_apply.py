"""The identified payload in the forms its users take it: mass, centre of mass and inertia about the
centre of mass (geometry_msgs/Inertia, URDF ``<inertial>``, a driver's set-load call), with the
intervals the guaranteed box implies, and the rules for when ``~/apply`` may hand it to a robot.

Input is the per-body parameter vector of :mod:`inertial_id.core.robot.params` (pinocchio order, inertia
about the payload-frame origin, SI units) and its box ``[lower, upper]``.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..estimators.payload import Support

# xArm C++ SDK (xArm-Developer/xArm-CPLUS-SDK, include/xarm/wrapper/xarm_api.h, set_tcp_load):
# "weight: load weight (unit: kg); center_of_gravity: [x(mm), y(mm), z(mm)]"; xarm_ros2's
# set_tcp_load service passes both through unchanged (xarm_api/src/xarm_driver_service.cpp).
XARM_COM_MM_PER_M = 1000.0


@dataclass(frozen=True)
class PayloadInertia:
    """Mass (kg), centre of mass (m) and inertia about the centre of mass (kg m^2, axes of the
    payload frame), all in ``frame``."""
    mass_kg: float
    com_m: np.ndarray
    inertia_com_kg_m2: np.ndarray
    frame: str = ""

    @classmethod
    def from_params(cls, pi, frame: str = "") -> PayloadInertia:
        """From ``pi`` (pinocchio order, inertia about the frame origin). Requires a positive mass."""
        pi = np.asarray(pi, dtype=float)
        if not (pi.shape == (10,) and np.all(np.isfinite(pi)) and pi[0] > 0.0):
            raise ValueError(f"no centre of mass without a finite positive mass (m = {pi[0] if pi.size else 'none'})")
        inertia = pin.Inertia.FromDynamicParameters(pi)
        return cls(float(inertia.mass), np.array(inertia.lever), np.array(inertia.inertia), frame)

    def params(self) -> np.ndarray:
        """Back to ``pi`` (pinocchio order, inertia about the frame origin)."""
        return pin.Inertia(self.mass_kg, self.com_m, self.inertia_com_kg_m2).toDynamicParameters()


def com_interval(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Every centre of mass ``c = h / m`` the box allows (interval division, exact per axis); the
    whole line when the box allows a mass of zero or less."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not lower[0] > 0.0:
        return np.full(3, -np.inf), np.full(3, np.inf)
    quotients = np.array([[h / m for m in (lower[0], upper[0])] for h in (lower[1:4], upper[1:4])]).reshape(4, 3)
    return quotients.min(axis=0), quotients.max(axis=0)


def payload_levers_m(model: pin.Model, payload_frame_id: int) -> np.ndarray:
    """Per joint, an upper bound (m) of the payload frame origin's distance from the joint's axis over
    every configuration: the sum of the joint placements' lengths from that joint out to the frame;
    NaN for a joint that does not carry the payload."""
    frame = model.frames[payload_frame_id]
    levers = np.full(model.nv, np.nan)
    reach, joint = float(np.linalg.norm(frame.placement.translation)), frame.parentJoint
    while joint > 0:
        levers[model.joints[joint].idx_v] = reach
        reach += float(np.linalg.norm(model.jointPlacements[joint].translation))
        joint = model.parents[joint]
    return levers


@dataclass(frozen=True)
class AxisLevers:
    """Per joint ``j`` that carries the payload and turns about an axis: ``r_P[j]``, the payload
    frame's origin seen from a point ``c_j`` on the axis, in the payload frame, at the neutral
    configuration; at any other configuration it lies within ``drift_m[j]`` of that (the joints
    between turn ``c_j`` about their own axes, each moving it by at most twice its distance from
    their axis at the neutral configuration, :func:`axis_levers`); ``axis_P[j]``, the joint's axis in
    the payload frame where no joint between turns it (the last joint), else zeros. ``c_j`` is the
    point of the axis nearest, in least squares, to the axes of the joints between, so that for a
    wrist whose axes meet in a point the payload's lever is a constant of the payload frame
    (``drift_m`` 0). A joint that does not carry the payload or is not revolute has ``drift_m`` inf.
    ``reach_m[j, k]`` bounds the distance of ``c_k`` from the axis of joint ``j`` over every
    configuration, for ``k`` at or past ``j`` (0 on the diagonal), inf elsewhere: the payload's torque
    on ``j`` can be taken through ``c_k``, a point the whole wrist turns about on an arm like the Gen3
    (:meth:`ApplyLimits.axis_torque_error_Nm`)."""
    r_P: np.ndarray
    drift_m: np.ndarray
    axis_P: np.ndarray
    reach_m: np.ndarray


def axis_levers(model: pin.Model, payload_frame_id: int) -> AxisLevers:
    """:class:`AxisLevers` of the payload frame on ``model``, from its neutral configuration."""
    data = model.createData()
    q = pin.neutral(model)
    pin.computeJointJacobians(model, data, q)    # with the joints' placements, data.oMi
    pin.updateFramePlacements(model, data)
    J = pin.getFrameJacobian(model, data, payload_frame_id, pin.LOCAL_WORLD_ALIGNED)
    X_WP = data.oMf[payload_frame_id]
    r_P, axis_P = np.zeros((model.nv, 3)), np.zeros((model.nv, 3))
    drift = np.full(model.nv, np.inf)
    movers = np.flatnonzero(np.any(J != 0.0, axis=0))     # the velocities that move the payload
    axes = {}
    for v in movers:
        a_W, v_W = J[3:, v], J[:3, v]
        # revolute: the payload origin turns about a_W through a point o_W, v_W = a_W x (p - o_W)
        if np.linalg.norm(a_W) < 1e-9 or abs(np.dot(a_W, v_W)) > 1e-9 * np.linalg.norm(a_W) * (1.0 + np.linalg.norm(v_W)):
            continue
        a_W = a_W / np.linalg.norm(a_W)
        axes[v] = (a_W, X_WP.translation + np.cross(a_W, v_W))
    points = {}                                  # velocity -> c_j in the world, at the neutral configuration
    for v, (a_W, o_W) in axes.items():
        if any(k > v and k not in axes for k in movers):
            continue                 # a joint between that does not turn (or not alone) moves c_j anywhere
        between = [axes[k] for k in axes if k > v]
        if between:
            # the point o + s a nearest the axes between: min sum |P_k (o + s a - o_k)|^2
            P = [np.eye(3) - np.outer(a_k, a_k) for a_k, _ in between]
            A = np.concatenate([P_k @ a_W for P_k in P])
            b = np.concatenate([P_k @ (o_k - o_W) for P_k, (_, o_k) in zip(P, between)])
            s = float(A @ b / (A @ A)) if A @ A > 1e-12 else 0.0
            c_W = o_W + s * a_W
            drift[v] = 2.0 * sum(float(np.linalg.norm(P_k @ (c_W - o_k))) for P_k, (_, o_k) in zip(P, between))
        else:
            c_W = o_W + np.dot(X_WP.translation - o_W, a_W) * a_W
            drift[v] = 0.0
            axis_P[v] = X_WP.rotation.T @ a_W
        r_P[v] = X_WP.rotation.T @ (X_WP.translation - c_W)
        points[v] = c_W
    joint_of = {model.joints[i].idx_v: i for i in range(1, model.njoints) if model.joints[i].nv == 1}
    reach = np.full((model.nv, model.nv), np.inf)
    for k, c_W in points.items():
        # c_k is fixed in joint k's frame; each joint's origin lies on its axis, so c_k is no farther
        # from an axis before it than the placements' lengths out to joint k and c_k's own offset
        joint, length = joint_of[k], float(np.linalg.norm(data.oMi[joint_of[k]].actInv(c_W)))
        reach[k, k] = 0.0
        while model.parents[joint] > 0:
            length += float(np.linalg.norm(model.jointPlacements[joint].translation))
            joint = model.parents[joint]
            if model.joints[joint].idx_v in points:
                reach[model.joints[joint].idx_v, k] = length
    return AxisLevers(r_P, drift, axis_P, reach)


def _off_axis(vectors, axis_P) -> np.ndarray:
    """``vectors`` (..., nv, 3) without their part along each joint's fixed axis (zeros: none)."""
    return vectors - np.sum(vectors * axis_P, axis=-1, keepdims=True) * axis_P


def gravity_shares(model: pin.Model) -> np.ndarray:
    """Per joint, the largest ``|axis x g| / |g|`` over every configuration: the sine of the angle
    between gravity and the axis of a joint on the base, whose axis never moves (0 for the vertical
    first joint of an upright arm: gravity puts no torque on it), and 1 elsewhere."""
    data = model.createData()
    J = pin.computeJointJacobians(model, data, pin.neutral(model))
    g = model.gravity.linear / np.linalg.norm(model.gravity.linear)
    shares = np.ones(model.nv)
    for joint in range(1, model.njoints):
        if model.parents[joint] == 0:
            v = model.joints[joint].idx_v
            shares[v] = float(np.linalg.norm(np.cross(J[3:, v], g)))
    return shares


# Directions of the support LPs (:class:`~inertial_id.core.estimators.payload.Support`): the circle across a fixed axis is covered by a
# polygon of CIRCLE_DIRECTIONS vertices, the sphere by an icosahedron whose faces are split
# SPHERE_SPLITS times (162 vertices), both scaled out so that their hull holds the circle or sphere
# (0.9 % and 1.8 % out): a convex function is no larger on them than at some vertex.
CIRCLE_DIRECTIONS = 24
SPHERE_SPLITS = 2
# m: joints whose lever drifts by at most this are given support LPs (the Gen3's wrist: 0.7 mm); on
# the others the drift term alone outweighs what the polytope saves over the box
EXACT_LEVER_DRIFT_M = 0.01


def circle_cover(axis, count: int = CIRCLE_DIRECTIONS) -> np.ndarray:
    """(count, 3) vertices of a regular polygon across the unit ``axis`` whose hull holds the unit
    circle across it."""
    axis = np.asarray(axis, dtype=float)
    u = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    angles = 2.0 * np.pi * np.arange(count) / count
    return (np.outer(np.cos(angles), u) + np.outer(np.sin(angles), v)) / np.cos(np.pi / count)


def sphere_cover(splits: int = SPHERE_SPLITS) -> np.ndarray:
    """Vertices of an icosahedron with each face split in four ``splits`` times, on a sphere whose
    radius puts every face's plane at distance 1 or more: their hull holds the unit sphere."""
    t = (1.0 + 5.0 ** 0.5) / 2.0
    points = [np.array(p, dtype=float) for p in ((-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
                                                 (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1))]
    points = [p / np.linalg.norm(p) for p in points]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
             (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
             (8, 6, 7), (9, 8, 1)]
    for _ in range(splits):
        middle: dict[tuple[int, int], int] = {}          # edge -> its midpoint's index
        split = []
        for a, b, c in faces:
            mids = []
            for i, j in ((a, b), (b, c), (c, a)):
                edge = (min(i, j), max(i, j))
                if edge not in middle:
                    p = points[i] + points[j]
                    points.append(p / np.linalg.norm(p))
                    middle[edge] = len(points) - 1
                mids.append(middle[edge])
            ab, bc, ca = mids
            split += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = split
    P = np.array(points)
    normals = np.cross(P[[f[1] for f in faces]] - P[[f[0] for f in faces]], P[[f[2] for f in faces]] - P[[f[0] for f in faces]])
    distance = np.abs(np.sum(normals * P[[f[0] for f in faces]], axis=1)) / np.linalg.norm(normals, axis=1)
    return P / distance.min()


@dataclass(frozen=True)
class ApplyLimits:
    """The profile's ``apply:`` section: interface, where it goes, and the need the gate follows from:
    the static torque error per joint the robot's controller tolerates (N m), with each joint's lever
    to the payload (the smaller of :func:`payload_levers_m` and the one of :func:`axis_levers`), the
    payload frame's origin seen from each joint's axis (:class:`AxisLevers`), the share of gravity
    its axis can feel (:func:`gravity_shares`) and the magnitude of gravity."""
    interface: str
    service: str | None       # the driver's set-load service (None: no driver interface)
    topic: str
    tolerated_torque_Nm: np.ndarray | None
    levers_m: np.ndarray
    axes: AxisLevers
    gravity_shares: np.ndarray
    gravity_m_s2: float
    timeout_s: float

    @classmethod
    def from_robot(cls, robot) -> ApplyLimits:
        """The limits of ``robot``'s profile ``apply:`` section, on its model."""
        a = robot.spec.apply
        need = None if a.tolerated_torque_Nm is None else np.asarray(a.tolerated_torque_Nm, dtype=float)
        axes = axis_levers(robot.model, robot.payload_frame_id)
        levers = np.fmin(payload_levers_m(robot.model, robot.payload_frame_id),
                         np.linalg.norm(_off_axis(axes.r_P, axes.axis_P), axis=-1) + axes.drift_m)
        return cls(a.interface, a.driver_service(), a.topic, need, levers, axes,
                   gravity_shares(robot.model), float(np.linalg.norm(robot.model.gravity.linear)), a.timeout_s)

    def static_torque_error_Nm(self, mass_error_kg: float, first_moment_error_kg_m: float) -> np.ndarray:
        """Per joint, the largest change of the payload's gravity torque when its mass changes by
        ``mass_error_kg`` and its first moment ``m c`` by a vector of length ``first_moment_error_kg_m``,
        in any configuration: ``share g (|dm| lever + |d(m c)|)`` (the torque is ``axis . (p x m g + R (m c) x g)``
        ``= (axis x g) . (m p + R (m c))``, linear in both; ``|p|`` is at most the lever)."""
        error = self.gravity_shares * self.gravity_m_s2 * (abs(mass_error_kg) * self.levers_m
                                                           + abs(first_moment_error_kg_m))
        return np.nan_to_num(error, nan=0.0)

    def box_torque_error_Nm(self, estimate, lower, upper, support: Support | None = None) -> np.ndarray:
        """Per joint, the largest static torque error of handing over ``estimate`` when the truth is
        any payload of the box ``[lower, upper]`` (which holds the estimate): the smallest of
        :meth:`interval_torque_error_Nm`, :meth:`axis_torque_error_Nm` and, given the estimator's
        ``support``, :meth:`polytope_torque_error_Nm`, all bounds."""
        with np.errstate(invalid="ignore"):
            error = np.fmin(self.interval_torque_error_Nm(estimate, lower, upper),
                            self.axis_torque_error_Nm(estimate, lower, upper))
            if support is not None:
                error = np.fmin(error, self.polytope_torque_error_Nm(estimate, lower, upper, support))
            return error

    def interval_torque_error_Nm(self, estimate, lower, upper) -> np.ndarray:
        """:meth:`static_torque_error_Nm` with each parameter erring by its farther distance to the
        box's faces, about half the box's width for an estimate near its centre."""
        estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
        reach = np.maximum(estimate - lower, upper - estimate)
        return self.static_torque_error_Nm(reach[0], float(np.linalg.norm(reach[1:4])))

    def axis_torque_error_Nm(self, estimate, lower, upper) -> np.ndarray:
        """The torque error with the lever a vector of the payload frame (:class:`AxisLevers`):
        ``(axis x g) . R (dm r + d(m c))`` with ``r`` within ``drift`` of ``r_P``, at most ``share g
        (|dm r_P + d(m c)| + drift |dm|)``, only the part across a fixed axis counting. That is convex
        in the errors ``estimate - truth``, so over the box it is largest at one of the 16 corners of
        the mass and first-moment errors. The lever of a joint ``j`` may also be taken through the
        point ``c_k`` of a joint past it: ``dm p + R d(m c) = dm (c_k - axis point) + R (dm r + d(m c))``
        with ``r`` the lever seen from ``c_k``, at most ``|dm| (reach[j, k] + drift_k) + |dm r_P,k +
        d(m c)|``; the smallest of these counts. inf for a joint without an axis lever, 0 for one that
        does not carry the payload."""
        estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
        corners = np.array(list(itertools.product(*zip(estimate[:4] - upper[:4], estimate[:4] - lower[:4]))))
        vectors = corners[:, None, :1] * self.axes.r_P + corners[:, None, 1:4]          # (16, nv, 3)
        drift = self.axes.drift_m
        worst = np.linalg.norm(_off_axis(vectors, self.axes.axis_P), axis=-1).max(axis=0) \
            + np.where(np.isfinite(drift), drift, 0.0) * np.abs(corners[:, 0]).max()
        # through c_k, convex in the errors too: the largest at a corner, per (j, k)
        through = (self._through(np.abs(corners[:, 0, None, None]))
                   + np.linalg.norm(vectors, axis=-1)[:, None, :]).max(axis=0)
        error = np.where(np.isfinite(drift), self.gravity_shares * self.gravity_m_s2 * worst, np.inf)
        error = np.fmin(error, self.gravity_shares * self.gravity_m_s2 * through.min(axis=1))
        return np.where(np.isfinite(self.levers_m) & (self.gravity_shares > 0.0), error, 0.0)

    def _through(self, mass_error_kg) -> np.ndarray:
        """``|dm| (reach[j, k] + drift_k)`` (..., nv, nv): the part of the torque error through ``c_k``
        that the mass error makes, inf where ``c_k`` does not bound joint ``j``'s lever."""
        reach = self.axes.reach_m + np.where(np.isfinite(self.axes.drift_m), self.axes.drift_m, np.inf)
        return np.where(np.isfinite(reach), mass_error_kg * np.where(np.isfinite(reach), reach, 0.0), np.inf)

    def gate_joints(self) -> np.ndarray:
        """Per joint, the joint whose support LPs bound its error (-1: none): each joint whose lever
        drifts by at most EXACT_LEVER_DRIFT_M, the first of those with the same fixed axis (or none)
        and a lever vector within EXACT_LEVER_DRIFT_M of its own (the Gen3's joints 5 and 6: 0.4 mm
        apart), the difference added to its drift."""
        axes = self.axes
        chosen = np.flatnonzero((axes.drift_m <= EXACT_LEVER_DRIFT_M) & np.isfinite(self.levers_m)
                                & (self.gravity_shares > 0.0))
        by = np.full(self.levers_m.size, -1)
        for j in chosen:
            same = [k for k in chosen[chosen < j] if by[k] == k and np.array_equal(axes.axis_P[k], axes.axis_P[j])
                    and np.linalg.norm(axes.r_P[k] - axes.r_P[j]) <= EXACT_LEVER_DRIFT_M]
            by[j] = same[0] if same else j
        return by

    def gate_directions(self) -> tuple[np.ndarray, np.ndarray]:
        """``(D, joints)``: the payload directions ``d = -(w . r_P, w, 0...)`` (k, 10) whose support
        :meth:`polytope_torque_error_Nm` takes (the estimation session's ``support_directions``),
        ``w`` over :func:`sphere_cover` (across a fixed axis: :func:`circle_cover`), for each joint
        that bounds its own error (:meth:`gate_joints`)."""
        axes, by = self.axes, self.gate_joints()
        blocks, joints = [np.zeros((0, 10))], [np.zeros(0, dtype=int)]
        for j in np.flatnonzero(by == np.arange(by.size)):
            W = circle_cover(axes.axis_P[j]) if np.any(axes.axis_P[j]) else sphere_cover()
            blocks.append(-np.hstack([(W @ axes.r_P[j])[:, None], W, np.zeros((len(W), 6))]))
            joints.append(np.full(len(W), j))
        return np.vstack(blocks), np.concatenate(joints)

    def polytope_torque_error_Nm(self, estimate, lower, upper, support: Support) -> np.ndarray:
        """:meth:`axis_torque_error_Nm` over the payloads the estimator's final LP admits instead of
        its box: ``max |dm r_P + d(m c)|`` is the largest ``w . (dm r_P + d(m c)) = d . (pi -
        estimate)`` over the unit ``w`` (across a fixed axis), a convex function of ``w``, so at most
        its largest value at the vertices of a cover (:meth:`gate_directions`), each the support's
        bound of ``d . pi`` less ``d . estimate``. A joint bounded by another's LPs (:meth:`gate_joints`)
        adds the difference of their lever vectors to its drift; the drift takes the box's mass
        error. A joint before one whose LPs cover the whole sphere takes its lever through that
        joint's point (:meth:`axis_torque_error_Nm`), with the LPs' bound of ``|dm r_P,k + d(m c)|``.
        inf on the joints neither way bounds."""
        estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
        values = support.values - support.directions @ estimate
        worst = np.full(self.levers_m.size, -np.inf)
        np.maximum.at(worst, support.labels, values)
        by = self.gate_joints()
        has, lp = by >= 0, np.maximum(by, 0)
        shift = np.where(has, np.linalg.norm(self.axes.r_P - self.axes.r_P[lp], axis=1), 0.0)
        worst = np.where(has, worst[lp], -np.inf)
        mass_error = max(estimate[0] - lower[0], upper[0] - estimate[0])
        error = np.where(np.isfinite(worst), worst + (self.axes.drift_m + shift) * mass_error, np.inf)
        sphere = has & ~np.any(self.axes.axis_P[lp] != 0.0, axis=1)
        through = self._through(mass_error) + shift * mass_error + np.where(sphere, worst, np.inf)
        error = np.fmin(error, through.min(axis=1))
        return np.where(np.isfinite(error), self.gravity_shares * self.gravity_m_s2 * error, np.inf)

    def tolerated(self, torque_error_Nm) -> bool:
        """Whether a per-joint torque error is within the stated need."""
        return self.tolerated_torque_Nm is not None and bool(np.all(torque_error_Nm <= self.tolerated_torque_Nm))

    def max_mass_width_kg(self) -> float:
        """The widest mass interval the need accepts (with the first moment known exactly and the
        estimate at the interval's centre)."""
        with np.errstate(divide="ignore"):
            return float(2.0 * np.nanmin(self.tolerated_torque_Nm / (self.gravity_shares * self.gravity_m_s2 * self.levers_m)))


def refusal(estimate, lower, upper, bounds_guaranteed: bool, data_consistent: bool, limits: ApplyLimits,
            support: Support | None = None, offset_checked: bool = True) -> str | None:
    """Why this estimate must not be applied, or None when it may. Only a guaranteed box from
    consistent data, that rests on no stated F/T offset box unchecked (``offset_checked``:
    :class:`~..estimators.payload.PayloadEstimate`), with the estimate inside it, whose static torque
    error the controller tolerates on every joint (:meth:`ApplyLimits.box_torque_error_Nm`, with the
    estimator's ``support`` when it has one), goes to a robot."""
    if limits.interface == "none":
        return "the profile's apply.interface is 'none': no interface to apply the payload through"
    if limits.tolerated_torque_Nm is None:
        return "the profile states no apply.tolerated_torque_Nm: no need to check the box against"
    if estimate is None:
        return "no estimate yet"
    estimate, lower, upper = (np.asarray(x, dtype=float) for x in (estimate, lower, upper))
    if not (np.all(np.isfinite(estimate)) and np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return "the estimate or its bounds are not finite"
    if not data_consistent:
        return "the data contradict the assumed noise bounds (data_consistent false)"
    if not bounds_guaranteed:
        return "the bounds are not guaranteed"
    if not offset_checked:
        return ("the box rests on the F/T offset's stated box, not yet checked: the final update (at the "
                "motion's end, or when the rows pause) checks it")
    if not np.all((lower <= estimate) & (estimate <= upper)):
        return "the estimate lies outside its guaranteed box"
    if not estimate[0] > 0.0:
        return "the estimate's mass is not positive: it has no centre of mass"
    error = limits.box_torque_error_Nm(estimate, lower, upper, support)
    if not limits.tolerated(error):
        j = int(np.argmax(error / limits.tolerated_torque_Nm))
        return (f"with the truth anywhere in the box (mass [{lower[0]:.4g}, {upper[0]:.4g}] kg)"
                f"{' and in the final LP' if support is not None else ''}, the estimate's "
                f"static torque error reaches {error[j]:.3g} N m on joint {j + 1}, more than apply.tolerated_torque_Nm = "
                f"{limits.tolerated_torque_Nm[j]:g} there")
    return None


def apply_verdict(limits: ApplyLimits, estimate, lower, upper, bounds_guaranteed: bool, data_consistent: bool,
                  support: Support | None = None, offset_checked: bool = True) -> dict:
    """What ``~/apply`` would answer on this result, for reports: accepted or why not, the static
    torque error per joint (of the box, and of the final LP given its ``support``) and the need it is
    held against."""
    why = refusal(estimate, lower, upper, bounds_guaranteed, data_consistent, limits, support, offset_checked)
    need = limits.tolerated_torque_Nm
    return {"accepted": why is None, "refusal": why,
            "torque_error_Nm": limits.box_torque_error_Nm(estimate, lower, upper, support).tolist()
            if estimate is not None else None,
            "final_lp_support": support is not None,
            "tolerated_torque_Nm": None if need is None else need.tolist()}


def xarm_tcp_load(payload: PayloadInertia) -> tuple[float, list[float]]:
    """(weight kg, centre of gravity [x, y, z] mm) for xarm_msgs/srv/SetTcpLoad. The COM is taken in
    the payload frame, which the xArm profiles set to the flange (link_eef), the frame of the SDK's
    TCP load."""
    return payload.mass_kg, (XARM_COM_MM_PER_M * payload.com_m).tolist()


def _fill_xarm(request, payload: PayloadInertia) -> str:
    request.weight, request.center_of_gravity = xarm_tcp_load(payload)
    return (f"weight {request.weight:.4g} kg, center_of_gravity "
            f"{[round(x, 2) for x in request.center_of_gravity]} mm")


def _fill_ur(request, payload: PayloadInertia) -> str:
    # ur_msgs 2.0.0 (ros-industrial/ur_msgs): float32 mass (kg), geometry_msgs/Vector3
    # center_of_gravity (m, tool flange frame); this version takes no inertia
    request.mass = payload.mass_kg
    cog = request.center_of_gravity
    cog.x, cog.y, cog.z = (float(x) for x in payload.com_m)
    return f"mass {payload.mass_kg:.4g} kg, center_of_gravity {[round(float(x), 5) for x in payload.com_m]} m"


def _fill_franka(request, payload: PayloadInertia) -> str:
    # franka_msgs 0.1.13 SetLoad: float64 mass (kg), float64[3] center_of_mass (m, flange frame),
    # float64[9] load_inertia (kg m^2, about the centre of mass, column-major)
    request.mass = payload.mass_kg
    request.center_of_mass = [float(x) for x in payload.com_m]
    request.load_inertia = [float(x) for x in payload.inertia_com_kg_m2.ravel(order="F")]
    return (f"mass {payload.mass_kg:.4g} kg, center_of_mass {[round(float(x), 5) for x in payload.com_m]} m, "
            f"load_inertia about the COM")


@dataclass(frozen=True)
class DriverLoadService:
    """A driver's set-load service: its type (package, name), how a payload fills its request
    (returns what was sent, for the reply), and what its reply says (``verdict(reply) -> (success,
    message)``). Where the driver serves it: the profile's ``apply.service``
    (:meth:`~inertial_id.core.robot.profile.Apply.driver_service`)."""
    package: str
    type_name: str
    fill: Callable[[Any, PayloadInertia], str]
    verdict: Callable[[Any], tuple[bool, str]]


# The set-load services of the drivers ~/apply calls (profile apply.interface).
DRIVER_SERVICES = {
    "xarm_set_tcp_load": DriverLoadService("xarm_msgs", "SetTcpLoad", _fill_xarm,
                                           lambda r: (r.ret == 0, f"driver ret {r.ret} {r.message}".strip())),
    "ur_set_payload": DriverLoadService("ur_msgs", "SetPayload", _fill_ur,
                                        lambda r: (bool(r.success), f"success {bool(r.success)}")),
    "franka_set_load": DriverLoadService("franka_msgs", "SetLoad", _fill_franka,
                                         lambda r: (bool(r.success), f"success {bool(r.success)} {r.error}".strip())),
}

