"""Sound enclosures of joint torque and link placements over time sub-intervals of a Bezier plan.

For a time sub-interval [t0, t1] with centre tc and half-width h, the desired state is written exactly
as an affine form in the time symbol u in [-1, 1] (value and slope at tc, plus the range of the
higher-order rest from its Bernstein coefficients), and the tracking-error tube adds one symbol per
joint and per derivative: m = 1 + 3n noise symbols. Forward kinematics and the recursive Newton-Euler
regressor are evaluated in first-order affine arithmetic (:mod:`.affine`), which keeps the correlation
between q, qd and qdd along the sub-interval; plain intervals over the same boxes are several times
wider (the wrapping effect).

The joint torque is linear in the parameters, tau = sum_k Y_k(x) theta_k, with Y_k = (axis of the joint
in the body frame) . (body regressor row), the axes propagated down the chain. With theta = centre +
delta, |delta| <= radius: tau lies in [Y theta_c](x) +- sum_k |Y_k(x)| radius_k. Both parts are affine
forms over the same symbols: Y theta_c from the RNEA forces of the centre parameters, and the spread
from the columns whose sign is fixed over the sub-interval (|Y_k| = +-Y_k is affine) plus constant
bounds for the others; so the spread moves with the nominal torque along the sub-interval and the
tube instead of adding its own worst case. The payload is lumped into the body of the payload frame's
parent joint through the constant linear map of inertial parameters between the two frames. Joint
friction and armature error inside the estimators' robot box add |Fc| + |Fv| |qd| + |dIa| |qdd| + |beta|
at each sub-interval's largest speeds.

Measured (kinova_gen3, profile tube): with no tube and point parameters the enclosure is within a few
per cent of the sampled range; the excess comes from second-order tube terms (see certifier_study).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..robot import params
from ..robot.model import ProfileError, Robot
from ..robot.robot_box import certifier_half_widths
from . import affine
from .affine import Affine, lincomb
from .bezier import BezierPlan, restrict
from .interval import down, up

if TYPE_CHECKING:
    from .anchor import TorqueAnchor

_E = np.eye(3)


def _joint_axis(model: pin.Model, i: int) -> np.ndarray:
    """Unit rotation axis of revolute joint i in its own frame (from the joint's motion subspace)."""
    data = model.createData()
    q0 = pin.neutral(model)
    J = pin.computeJointJacobian(model, data, q0, i)          # local frame of joint i
    col = J[:, model.joints[i].idx_v]
    if np.linalg.norm(col[:3]) > 1e-12 or abs(np.linalg.norm(col[3:]) - 1.0) > 1e-9:
        raise ProfileError(f"joint '{model.names[i]}' is not revolute; the certifier handles revolute joints")
    return col[3:] / np.linalg.norm(col[3:])


@dataclass(frozen=True)
class TorqueContext:
    """Model constants for the enclosures, built once per robot and settings."""

    n: int
    parents: tuple                # parent joint index (0 = base) of joints 1..n, pinocchio numbering
    R_M: np.ndarray               # (n, 3, 3) joint placement rotations in the parent frame
    p_M: np.ndarray               # (n, 3) joint placement translations
    axis: np.ndarray              # (n, 3) unit axes in the joint frames
    theta_nominal: np.ndarray     # (n, 10) link parameters, joint frames
    theta_radius: np.ndarray      # (n, 10) half-widths of a box containing the estimators' robot box
    friction_radius: np.ndarray   # (n, 4) its half-widths of [Fc, Fv, Ia, beta] about [0, 0, armature, 0]
    payload_body: int             # 0-based body index carrying the payload
    payload_map: np.ndarray       # (10, 10) payload frame -> that body's frame
    armature: np.ndarray          # (n,)
    gravity: np.ndarray           # (3,) base frame
    tube: np.ndarray              # (3, n) tracking-error half-widths of q, qd, qdd
    capsule_body: np.ndarray      # (C,) 0-based body index of each capsule
    capsule_points: np.ndarray    # (C, 2, 3) capsule end points in the body frame
    capsule_radius: np.ndarray    # (C,)

    @staticmethod
    def build(robot: Robot, settings) -> TorqueContext:
        """The constants of ``robot`` (one single-dof joint per velocity, else ProfileError) for ``settings``."""
        model = robot.model
        n = model.nv
        if model.njoints != n + 1:
            raise ProfileError("the certifier needs one single-dof joint per velocity")
        parents = tuple(int(model.parents[i]) for i in range(1, n + 1))
        R_M = np.array([model.jointPlacements[i].rotation for i in range(1, n + 1)])
        p_M = np.array([model.jointPlacements[i].translation for i in range(1, n + 1)])
        axis = np.array([_joint_axis(model, i) for i in range(1, n + 1)])
        theta = np.array([model.inertias[i].toDynamicParameters() for i in range(1, n + 1)])
        radius, friction_radius = certifier_half_widths(robot, settings.robot_relative_error, settings.robot_floor)
        frame = model.frames[robot.payload_frame_id]
        caps_body, caps_pts, caps_rad = [], [], []
        for cap in settings.capsules:
            f = model.frames[cap.frame_id]
            caps_body.append(f.parentJoint - 1)
            caps_pts.append([f.placement.act(cap.p0), f.placement.act(cap.p1)])
            caps_rad.append(cap.radius)
        return TorqueContext(
            n=n, parents=parents, R_M=R_M, p_M=p_M, axis=axis, theta_nominal=theta, theta_radius=radius,
            friction_radius=friction_radius,
            payload_body=frame.parentJoint - 1, payload_map=params.transform_matrix(frame.placement),
            armature=np.array(model.armature, dtype=float), gravity=np.array(model.gravity.linear),
            tube=np.stack([settings.tracking_position_rad, settings.tracking_velocity_rad_s,
                           settings.tracking_acceleration_rad_s2]),
            capsule_body=np.array(caps_body, dtype=int),
            capsule_points=np.array(caps_pts, dtype=float).reshape(-1, 2, 3),
            # + 1 nm: covers the rounding of the constant transforms of the end points
            capsule_radius=np.array(caps_rad, dtype=float) + 1e-9)


# --- state forms ----------------------------------------------------------------------------------

def state_forms(ctx: TorqueContext, plan: BezierPlan, bounds: np.ndarray, orders=(0, 1, 2)) -> list[Affine]:
    """[q, qd, qdd] (or the derivative ``orders`` asked for) as affine forms (S, n) over the
    sub-intervals ``bounds`` (S, 2) in seconds, tracking tube included.

    Symbols: 0 = time u in [-1, 1] across the sub-interval, then n each for the tube of q, qd, qdd;
    q uses the first 1 + n of them, qd the first 1 + 2n (see :mod:`.affine` on symbol prefixes)."""
    n = ctx.n
    S = len(bounds)
    s0 = bounds[:, 0] / plan.duration_s
    s1 = bounds[:, 1] / plan.duration_s
    forms = []
    for k in orders:
        points = plan.derivative_points(k) if k <= plan.degree else np.zeros((1, n))
        deg = len(points) - 1
        seg = restrict(points, s0, s1)                               # (S, deg+1, n) on u' in [0, 1]
        if deg == 0:
            c0, c1 = seg[:, 0], np.zeros((S, n))
        else:
            # right half [1/2, 1] of each piece: its parameter is u = 2u' - 1 itself
            half = restrict(seg.transpose(1, 0, 2).reshape(deg + 1, -1), [0.5], [1.0])[0]
            half = half.reshape(deg + 1, S, n).transpose(1, 0, 2)
            c0 = half[:, 0]                                          # value at the centre
            c1 = deg * (half[:, 1] - half[:, 0])                     # d/du at the centre
        slope = (2.0 * np.arange(deg + 1) / max(deg, 1) - 1.0)[None, :, None]
        rest = seg - (c0[:, None, :] + c1[:, None, :] * slope)       # Bernstein coefs of the higher-order rest
        rmin, rmax = rest.min(axis=1), rest.max(axis=1)
        c = c0 + 0.5 * (rmin + rmax)
        # restriction, centre and rest are computed with rounding: a few ulp of the coefficient scale
        pad = 16.0 * (deg + 2) * affine.U * (np.abs(points).max() + np.abs(c1) + 1.0)
        r = up(0.5 * (rmax - rmin) + pad)
        a = np.zeros((1 + (k + 1) * n, S, n))
        a[0] = c1
        a[1 + k * n + np.arange(n), :, np.arange(n)] = ctx.tube[k][:, None]
        forms.append(Affine(c, a, r))
    return forms


# --- rotations --------------------------------------------------------------------------------------

def _rotate(axis: np.ndarray, sin_q: Affine, cos_q: Affine, x: Affine, transpose: bool) -> Affine:
    """R(q) x (or R(q)^T x) for the rotation by q about the unit ``axis``, on the last axis of x;
    sin_q, cos_q broadcast against x without its last axis."""
    if abs(abs(axis[2]) - 1.0) < 1e-15:                               # about +-z: two coordinates mix
        s = sin_q if (axis[2] > 0) != transpose else -sin_q
        x0, x1, x2 = x.comp(0), x.comp(1), x.comp(2)
        return affine.stack([cos_q * x0 - s * x1, s * x0 + cos_q * x1, x2], axis=-1)
    K = affine.cross_matrix(axis)                                     # Rodrigues: I + sin K + (1 - cos) K^2
    Kx = lincomb(K, x)
    KKx = lincomb(K @ K, x)
    s, v = sin_q.expand(-1), (1.0 - cos_q).expand(-1)
    return (x - s * Kx if transpose else x + s * Kx) + v * KKx


def _sin_cos(q: Affine, i: int):
    qi = q.comp(i)
    return affine.sin(qi), affine.cos(qi)


# --- kinematics -------------------------------------------------------------------------------------

def placements(ctx: TorqueContext, q: Affine):
    """World rotations (S, 3, 3) and positions (S, 3) of every joint frame, as affine forms."""
    S, m = q.c.shape[0], q.m
    # Affine forms, each filled after its parent's (parents precede children)
    R: list[Any] = [None] * (ctx.n + 1)
    p: list[Any] = [None] * (ctx.n + 1)
    R[0] = Affine.constant(np.broadcast_to(_E, (S, 3, 3)), m)
    p[0] = Affine.constant(np.zeros((S, 3)), m)
    for i in range(1, ctx.n + 1):
        lam = ctx.parents[i - 1]
        s, c = _sin_cos(q, i - 1)
        B = lincomb(ctx.R_M[i - 1].T, R[lam])                    # rows of R_lam @ R_M
        # (B R_q) row b = R_q^T b
        R[i] = _rotate(ctx.axis[i - 1], s.expand(-1), c.expand(-1), B, transpose=True)
        p[i] = p[lam] + lincomb(np.asarray(ctx.p_M[i - 1])[None, :], R[lam]).comp(0)
    return R[1:], p[1:]


# --- dynamics ---------------------------------------------------------------------------------------

def _motion_act_inv(ctx: TorqueContext, i: int, s: Affine, c: Affine, X: Affine) -> Affine:
    """Motion vectors X (S, k, 6) [linear; angular] of the parent expressed in joint frame i:
    [R^T (vl - p x w); R^T w] with R = R_M R_q(q_i), p = p_M."""
    R_M, P = ctx.R_M[i], affine.cross_matrix(ctx.p_M[i])
    M = np.zeros((6, 6))
    M[:3, :3] = R_M.T
    M[:3, 3:] = -R_M.T @ P
    M[3:, 3:] = R_M.T
    Y = lincomb(M, X)
    S, k = Y.c.shape[:2]
    Y = Y.reshape(S, k, 2, 3)
    Y = _rotate(ctx.axis[i], s, c, Y, transpose=True)
    return Y.reshape(S, k, 6)


def _regressor_of(x: np.ndarray) -> np.ndarray:
    """Body regressor (10, 6) as a linear function of x = [aw (3), w w^T (9, row-major), alpha (3)],
    alpha = al + w x vl the acceleration of the body origin. Rows: parameters in pinocchio order;
    columns: spatial force [f; n] in the body frame."""
    aw, ww, alpha = x[:3], x[3:12].reshape(3, 3), x[12:]
    A = np.zeros((10, 6))
    A[0, :3] = alpha                                                   # mass
    for j in range(3):                                                 # first moment h_j:
        e = _E[j]
        A[1 + j, :3] = np.cross(aw, e) + ww[:, j] - e * np.trace(ww)   # f = aw x h + w x (w x h)
        A[1 + j, 3:] = np.cross(e, alpha)                              # n = h x alpha
    for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        Ek = np.zeros((3, 3))
        Ek[i, j] = Ek[j, i] = 1.0                                      # n = E_k aw + w x (E_k w)
        cross_w_Ew = np.array([sum(np.cross(_E[l], Ek @ _E[p])[c] * ww[l, p] for l in range(3) for p in range(3))
                               for c in range(3)])
        A[4 + k, 3:] = Ek @ aw + cross_w_Ew
    return A


_G = np.stack([_regressor_of(e) for e in np.eye(15)], axis=-1).reshape(60, 15)   # A.ravel() = G x


def _body_regressor(v: Affine, acc: Affine, theta: np.ndarray):
    """Body regressors for velocities and spatial accelerations (S, B, 6) in the body frames (spatial
    force [f; n] = A^T theta_b, theta (B, 10) in pinocchio order).

    Returns the forces for ``theta`` (S, B, 6) and A (S, B, 10, 6), both affine forms."""
    vl, w = v.comp(slice(0, 3)), v.comp(slice(3, 6))
    al, aw = acc.comp(slice(0, 3)), acc.comp(slice(3, 6))
    S, B = v.c.shape[:2]
    alpha = al + affine.cross(w, vl)
    ww = (w.expand(-1) * w.expand(-2)).reshape(S, B, 9)
    x = affine.concatenate([aw, ww, alpha], axis=-1)                  # (S, B, 15)
    A = lincomb(_G, x)                                                 # (S, B, 60)
    F = np.einsum("bk,kcj->bcj", theta, _G.reshape(10, 6, 15))         # (B, 6, 15) per-body force maps
    force = affine.stack([lincomb(F[b], Affine(x.c[:, b], x.a[:, :, b], x.r[:, b])) for b in range(B)], axis=1)
    return force, A.reshape(S, B, 10, 6)


def _kinematics(ctx: TorqueContext, q: Affine, qd: Affine, qdd: Affine):
    """Per body i, in frame i: velocity (S, 6), spatial acceleration including gravity (S, 6), and the
    axes of joint i and its ancestors (S, k, 6). Returns (v (S, n, 6), a (S, n, 6), axes, chains)."""
    n, S = ctx.n, q.c.shape[0]
    vel = [Affine.constant(np.zeros((S, 6)), 1)] + [None] * n
    acc = [Affine.constant(np.broadcast_to(np.r_[-ctx.gravity, 0.0, 0.0, 0.0], (S, 6)), 1)] + [None] * n
    axes: list[Any] = [None] * (n + 1)              # filled in tree order, as vel and acc
    chains: list[Any] = [[]] + [None] * n
    for i in range(n):
        lam = ctx.parents[i]
        s, c = _sin_cos(q, i)
        s3, c3 = s.expand(-1).expand(-1), c.expand(-1).expand(-1)       # against (S, k, 2)
        k = ctx.axis[i]
        S_i = np.r_[0.0, 0.0, 0.0, k]
        qdi, qddi = qd.comp([i]), qdd.comp([i])                         # (S, 1)
        both = _motion_act_inv(ctx, i, s3, c3, affine.stack([vel[lam], acc[lam]], axis=1))
        v_par, a_par = both.comp_row(0), both.comp_row(1)
        vel[i + 1] = v_par + qdi * S_i
        # v x (S_i qd) = [vl x k; w x k] qd = -[k]x [vl; w] qd
        Kneg = np.zeros((6, 6))
        Kneg[:3, :3] = Kneg[3:, 3:] = -affine.cross_matrix(k)
        acc[i + 1] = a_par + qddi * S_i + qdi * lincomb(Kneg, v_par)
        own = Affine.constant(np.broadcast_to(S_i, (S, 1, 6)), 1)
        if lam == 0:
            axes[i + 1] = own
        else:
            moved = _motion_act_inv(ctx, i, s3, c3, axes[lam])
            axes[i + 1] = affine.concatenate([moved, own], axis=1)
        chains[i + 1] = chains[lam] + [i]
    return affine.stack(vel[1:], axis=1), affine.stack(acc[1:], axis=1), axes[1:], chains[1:]


def _pair(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sum_c x[..., k, c] y[..., p, c] -> (..., k, p), as batched matrix products."""
    return np.matmul(x, np.swapaxes(y, -1, -2))


def _spread(M: Affine, A: Affine, radius: np.ndarray, minus=None) -> Affine:
    """An affine form (S, k) bounding sum_p |Y_p| radius_p from above over the sub-interval, for the
    regressor columns Y = M . A (joint axes M (S, k, 6), body regressor rows A (S, p, 6)); with
    ``minus`` = (Y0, radius) (k, p) constant columns known to within radius, for Y - Y0 instead.

    Y_p = Yc_p + coef_p . e + R_p with the symbol coefficients summed exactly and |R_p| <= rem_p. Where
    Y_p keeps its sign over the sub-interval, |Y_p| = sign * Y_p stays affine, so the spread keeps its
    correlation with the nominal torque (both move with time and the tube); elsewhere |Y_p| is bounded
    by the constant |Yc_p| + sum |coef_p| + rem_p."""
    m = max(M.m, A.m)
    Yc = _pair(M.c, A.c)
    minus_r = 0.0
    if minus is not None:                   # an anchor's columns: a constant, its radius a remainder
        minus_r = up(minus[1] + 16.0 * affine.U * (_pair(np.abs(M.c), np.abs(A.c)) + np.abs(minus[0])))
        Yc = Yc - minus[0]
    coef = np.zeros((m,) + Yc.shape)                                   # symbol coefficients of M . A
    coef[:A.m] += _pair(M.c, A.a)
    coef[:M.m] += _pair(M.a, A.c)
    first = np.abs(coef).sum(0)
    absMc, absAc = np.abs(M.c), np.abs(A.c)
    # one product for: deviation x deviation, centre x private remainder (both ways), and the rounding
    # of the centre and coefficient products (16 u of the magnitudes involved)
    u16 = 16.0 * affine.U
    left = np.concatenate([M.radius(), absMc, M.r + u16 * M.sabs], axis=-1)
    right = np.concatenate([A.radius(), A.r + u16 * (absAc + A.sabs), absAc], axis=-1)
    rem = up(_pair(left, right) + (m + 8) * affine.U * (first + np.abs(Yc)) + minus_r + affine.TINY)
    mag = np.abs(Yc) + first + rem
    definite = np.abs(Yc) > first + rem
    weight = np.where(definite, np.sign(Yc), 0.0) * radius                # (S, k, p)
    c = (np.where(definite, np.abs(Yc), mag) * radius).sum(-1)
    a = (coef * weight).sum(-1)
    r0 = (np.where(definite, rem, 0.0) * radius).sum(-1)
    # rounding of these sums: a few ulp per term of their magnitudes
    r = up(r0 + (2 * radius.shape[-1] + m + 8) * affine.U * (mag * np.abs(radius)).sum(-1) + affine.TINY)
    return Affine(c, a, r)


def _spread_constant(M: Affine, A: Affine, radius: np.ndarray, minus=None) -> Affine:
    """A constant (S, k) bounding sum_p |Y_p| radius_p for Y = M . A in centre-radius form: cheaper and
    looser than :func:`_spread`, used for the robot's own parameters (small relative radii); with
    ``minus``, for Y - Y0 as in :func:`_spread`."""
    absMc, absAc = np.abs(M.c), np.abs(A.c)
    Yc = _pair(M.c, A.c)
    extra = 0.0
    if minus is not None:
        extra = up(minus[1] + 16.0 * affine.U * (_pair(absMc, absAc) + np.abs(minus[0])))
        Yc = Yc - minus[0]
    u16 = 16.0 * affine.U
    left = np.concatenate([M.radius(), absMc, M.radius() + u16 * (absMc + M.sabs)], axis=-1)
    right = np.concatenate([A.radius(), A.radius() + u16 * (absAc + A.sabs), absAc], axis=-1)
    mag = up(np.abs(Yc) + _pair(left, right) * (1.0 + 32.0 * affine.U) + extra + affine.TINY)
    c = up((mag * radius).sum(-1) * (1.0 + (radius.shape[-1] + 2) * affine.U))
    return Affine(c, np.zeros((1,) + c.shape), np.zeros(c.shape))


def _parameter_map(T: np.ndarray, A: Affine) -> Affine:
    """Rows of A (S, 10, 6) for parameters theta_B when the body's are theta = T theta_B (rows T^T A)."""
    absT = np.abs(T)
    c = np.matmul(T.T, A.c)
    a = np.matmul(T.T, A.a)
    r0 = np.matmul(absT.T, A.r)
    scale = np.matmul(absT.T, np.abs(A.c) + A.sabs + A.r) * 24.0
    return Affine(c, a, up(r0 + affine.U * scale + affine.TINY))


def torque_bounds(ctx: TorqueContext, plan: BezierPlan, bounds: np.ndarray, payload_centre: np.ndarray,
                  payload_radius: np.ndarray, anchor: TorqueAnchor | None = None):
    """Lower and upper bounds (S, n) of the joint torque over each sub-interval, every state in the
    tube, every payload in centre +- radius and robot parameters in their box.

    With ``anchor`` (a measured mean torque and its regressor, :class:`~.anchor.TorqueAnchor`), also
    as that measured torque plus the change since, (Y(x) - R) theta over the same boxes: parameters
    the box leaves open but that change the torque little since the measurement cancel, and so does
    the constant torque offset. Each way contains every torque the assumptions allow; the bounds
    returned are their intersection."""
    q, qd, qdd = state_forms(ctx, plan, np.asarray(bounds, dtype=float))
    vel, acc, axes, chains = _kinematics(ctx, q, qd, qdd)
    theta_c = ctx.theta_nominal.copy()
    theta_c[ctx.payload_body] += ctx.payload_map @ payload_centre
    # the rounding of theta_c is a parameter error like any other: widen the robot box by it
    rounding = 8.0 * affine.U * np.abs(ctx.theta_nominal)
    rounding[ctx.payload_body] += 8.0 * affine.U * (np.abs(ctx.payload_map) @ np.abs(payload_centre))
    theta_radius = up(ctx.theta_radius + rounding)
    force, A = _body_regressor(vel, acc, theta_c)                       # (S, n, 6), (S, n, 10, 6)
    pieces = (qdd, axes, chains, force, A)
    lo, hi = _rigid_body_bounds(ctx, pieces, theta_radius, payload_radius)
    friction = _friction_spread(ctx.friction_radius, qd, qdd)
    lo, hi = down(lo - friction), up(hi + friction)
    if anchor is None:
        return lo, hi
    terms = _anchor_terms(ctx, anchor, chains, theta_c, theta_radius, payload_radius)
    lo_d, hi_d = _rigid_body_bounds(ctx, pieces, theta_radius, payload_radius, terms)
    friction = _anchored_friction_spread(ctx.friction_radius, terms[3], qd, qdd)
    return (np.maximum(lo, down(down(lo_d + anchor.lower_Nm) - friction)),
            np.minimum(hi, up(up(hi_d + anchor.upper_Nm) + friction)))


def _body(force: Affine, A: Affine, b: int) -> tuple[Affine, Affine]:
    """Body ``b``'s force (S, 1, 6) and regressor rows (S, 10, 6)."""
    return (Affine(force.c[:, b], force.a[:, :, b], force.r[:, b]).expand(1),
            Affine(A.c[:, b], A.a[:, :, b], A.r[:, b]))


def _anchor_terms(ctx: TorqueContext, anchor: TorqueAnchor, chains, theta_c: np.ndarray, theta_radius: np.ndarray,
                  payload_radius: np.ndarray):
    """The anchor's regressor R (n, 14 n: link parameters, then friction [Fc, Fv, Ia, beta] per joint)
    taken apart as the enclosure needs it: ``(nominal, radius, columns, friction)``.

    ``nominal`` (n,): R theta for the centre (links and payload centre, friction [0, 0, armature, 0]),
    known to within ``radius`` (n,), which also covers R's entries that are zero in exact arithmetic
    (a body's columns on joints that do not move it, a joint's friction columns on other joints) over
    the whole parameter box. ``columns``: per body, its columns on the joints of its chain (k, 10),
    with a rounding radius; the payload's body's also mapped to the payload's parameters. ``friction``
    (n, 4): each joint's own friction columns."""
    n = ctx.n
    R = np.asarray(anchor.regressor, dtype=float)
    if R.shape != (n, 14 * n):
        raise ValueError(f"anchor regressor has shape {R.shape}, not {(n, 14 * n)}")
    links = R[:, :10 * n].reshape(n, n, 10)                             # joint, body, parameter
    friction = R[:, 10 * n:].reshape(n, n, 4)
    theta_f = np.zeros((n, 4))
    theta_f[:, 2] = ctx.armature
    nominal = R @ np.concatenate([theta_c.ravel(), theta_f.ravel()])
    reach = up(np.abs(theta_c) + theta_radius)                          # |theta| over the box, per body
    reach[ctx.payload_body] = up(reach[ctx.payload_body] + np.abs(ctx.payload_map) @ payload_radius)
    f_reach = up(np.abs(theta_f) + ctx.friction_radius)
    # the rounding of R theta_c, and of R itself (W / T rounded: R theta differs from the measured
    # W theta / T by a few ulp of |R| |theta| for any theta of the box)
    radius = (R.shape[1] + 8) * affine.U * (np.abs(R) @ np.concatenate([reach.ravel(), f_reach.ravel()]))
    columns = []
    for b in range(n):
        off = np.setdiff1d(np.arange(n), chains[b])
        radius[off] += np.abs(links[off, b]) @ reach[b]
        cols = links[chains[b], b]
        entry = [cols, up(4.0 * affine.U * np.abs(cols) + affine.TINY)]
        if b == ctx.payload_body:
            entry += [cols @ ctx.payload_map,
                      up(24.0 * affine.U * (np.abs(cols) @ np.abs(ctx.payload_map)) + affine.TINY)]
        columns.append(entry)
    own = friction[np.arange(n), np.arange(n)]                           # (n, 4)
    radius += np.abs(friction * (1.0 - np.eye(n))[:, :, None]).reshape(n, -1) @ f_reach.ravel()
    return nominal, up(radius + affine.TINY), columns, own


def _rigid_body_bounds(ctx: TorqueContext, pieces, theta_radius: np.ndarray, payload_radius: np.ndarray,
                       anchor_terms=None):
    """Bounds (S, n) of the rigid-body torque (links, payload and armature) of the states of
    ``pieces``; with ``anchor_terms`` (:func:`_anchor_terms`), of (Y(x) - R) theta instead."""
    qdd, axes, chains, force, A = pieces
    n, S = ctx.n, qdd.c.shape[0]
    m = qdd.m
    # per joint: nominal torque and spread as affine forms (S, n), accumulated body by body; the
    # rounding of the accumulation is bounded at the end from the sum of the added magnitudes
    acc_c = {key: np.zeros((S, n)) for key in ("tau", "spread")}
    acc_a = {key: np.zeros((m, S, n)) for key in ("tau", "spread")}
    acc_r = {key: np.zeros((S, n)) for key in ("tau", "spread")}
    magnitude = np.zeros((S, n))

    def accumulate(key, form: Affine, chain):
        acc_c[key][:, chain] += form.c
        acc_a[key][:form.m, :, chain] += form.a
        acc_r[key][:, chain] += form.r
        magnitude[:, chain] += np.abs(form.c) + form.sabs + form.r

    everything = list(range(n))
    accumulate("tau", qdd * ctx.armature, everything)
    if anchor_terms is not None:
        nominal, radius = anchor_terms[0], anchor_terms[1]
        accumulate("tau", Affine(np.broadcast_to(-nominal, (S, n)), np.zeros((1, S, n)),
                                 np.broadcast_to(radius, (S, n))), everything)
    for b in range(n):
        chain = chains[b]                                               # joints whose axis moves body b
        M = axes[b]                                                     # (S, len(chain), 6)
        f_b, A_b = _body(force, A, b)
        accumulate("tau", (M * f_b).sum(-1), chain)
        minus = None if anchor_terms is None else anchor_terms[2][b]
        accumulate("spread", _spread_constant(M, A_b, theta_radius[b][None, None, :],
                                              None if minus is None else minus[:2]), chain)
        if b == ctx.payload_body:
            accumulate("spread", _spread(M, _parameter_map(ctx.payload_map, A_b), payload_radius[None, None, :],
                                         None if minus is None else minus[2:]), chain)
    rounding = up(2.0 * (2 * n + 2) * affine.U * magnitude + affine.TINY)
    tau, spread = (Affine(acc_c[key], acc_a[key], up(acc_r[key] + rounding)) for key in ("tau", "spread"))
    # tau in nominal +- spread, with the spread correlated with the nominal through the symbols
    return (tau - spread).to_interval().lo, (tau + spread).to_interval().hi


def _friction_spread(radius: np.ndarray, qd: Affine, qdd: Affine) -> np.ndarray:
    """(S, n) bound of |Fc sign(qd) + Fv qd + dIa qdd + beta| over the friction box ``radius`` (n, 4)
    about [0, 0, armature, 0] (the armature itself is in the nominal torque), at the largest |qd| and
    |qdd| of each sub-interval; every operation rounded up."""
    speed = [np.maximum(np.abs(i.lo), np.abs(i.hi)) for i in (qd.to_interval(), qdd.to_interval())]
    constant = up(radius[:, 0] + radius[:, 3])
    return up(up(constant + up(radius[:, 1] * speed[0])) + up(radius[:, 2] * speed[1]))


def _anchored_friction_spread(radius: np.ndarray, own: np.ndarray, qd: Affine, qdd: Affine) -> np.ndarray:
    """(S, n) bound of |(phi(x) - r) . delta| over the friction box ``radius`` (n, 4) about [0, 0,
    armature, 0], phi(x) = [sign(qd), qd, qdd, 1] and r (n, 4) each joint's own friction columns of
    an anchor's regressor (the armature's part is in the nominal torques): |sign - r_Fc| <= 1 +
    |r_Fc|, and so on at the largest |qd| and |qdd| of each sub-interval; a constant offset (beta,
    r_beta = 1) cancels."""
    speed = [np.maximum(np.abs(i.lo), np.abs(i.hi)) for i in (qd.to_interval(), qdd.to_interval())]
    r = np.abs(own)
    constant = up(up((1.0 + r[:, 0]) * radius[:, 0]) + up(np.abs(1.0 - own[:, 3]) * radius[:, 3]))
    viscous = up(up(speed[0] + r[:, 1]) * radius[:, 1])
    rotor = up(up(speed[1] + r[:, 2]) * radius[:, 2])
    return up(up(constant + viscous) + rotor)
