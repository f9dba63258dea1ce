"""Closed kinematic chains: loop-closure constraints and the fully-actuated representation.

A closed chain is modelled as an open kinematic tree (the URDF) plus loop closures. Each closure says
that a point fixed on frame A and a point fixed on frame B coincide; ``components`` selects which world
coordinates are constrained (all three for a ball joint, two for a planar loop). Stacking the
closures gives ``c(q) = 0`` (``nc`` rows), its Jacobian ``J(q) = dc/dq`` and the drift ``Jdot(q, v) v``.

Joints are split into actuated (index set ``a``, motors) and passive (``u``). With ``nu == nc`` and
``J_u`` invertible (the reference's Assumption 1), the passive coordinates follow from the actuated ones,
``q_u = Gamma(q_a)`` (Newton on ``c``), and

    v = G(q) v_a,   a = G(q) a_a + Gdot v_a,   G_a = I,   G_u = -J_u^-1 J_a,
    (Gdot v_a)_a = 0,   (Gdot v_a)_u = -J_u^-1 (Jdot v).

Projecting the open-tree dynamics with ``G^T`` removes the constraint forces (``G^T J^T = 0``), so the
actuated torques are ``u = G^T (Y pi + Yf phi)``.

Style as in pinocchio: a :class:`ClosedChain` is constant (model + closures + index sets); every
function takes scratch ``data`` from ``chain.model.createData()``. All vectors are in velocity
coordinates (the models here have ``nq == nv``: revolute/prismatic joints only).

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .profile import RobotProfile

WORLD = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
AXES = {"x": 0, "y": 1, "z": 2}


class ClosureError(ValueError):
    """The loop constraints cannot be satisfied (unreachable pose, singular J_u, bad declaration)."""


@dataclass(frozen=True)
class LoopClosure:
    """Point ``offset_a`` (metres, in frame A) coincides with point ``offset_b`` (in frame B)."""

    name: str
    frame_a: str
    offset_a: tuple[float, ...]                # three: the profile schema's Vector(3)
    frame_b: str
    offset_b: tuple[float, ...]
    components: tuple[int, ...] = (0, 1, 2)   # world axes constrained


def closures_from_profile(profile: RobotProfile) -> tuple[tuple[LoopClosure, ...], tuple[str, ...] | None]:
    """(closures, actuated joint names or None for 'all') from a robot profile.

    Profile schema::

        actuated_joints: [knee, ...]          # optional; default: every joint is actuated
        loop_closures:
          - name: knee
            frame_a: left_ach2                # body frame of a link (or any model frame)
            offset_a: [0.5, 0, 0]             # metres, in frame_a
            frame_b: left_heel_spring
            offset_b: [0.113789, -0.011056, 0]
            components: [x, y, z]             # world axes that must coincide (default all)
    """
    closures = []
    for i, entry in enumerate(profile.loop_closures):
        unknown = [c for c in entry.components if c not in AXES]
        if unknown:
            raise ClosureError(f"loop_closures[{i}].components: {unknown[0]!r} is not among x, y, z")
        closures.append(LoopClosure(
            name=entry.name, frame_a=entry.frame_a, offset_a=tuple(entry.offset_a),
            frame_b=entry.frame_b, offset_b=tuple(entry.offset_b),
            components=tuple(AXES[c] for c in entry.components)))
    actuated = profile.actuated_joints
    return tuple(closures), (tuple(actuated) if actuated is not None else None)


class ClosedChain:
    """Constant description: the tree model (with one operational frame per closure point), the
    closures and the actuated/passive velocity index sets. Open chains are the case ``nc == 0``."""

    def __init__(self, model: pin.Model, closures=(), actuated_joints=None):
        self.model = pin.Model(model)
        self.closures = tuple(closures)
        names = list(self.model.names[1:])
        actuated = names if actuated_joints is None else list(actuated_joints)
        unknown = [j for j in actuated if j not in names]
        if unknown:
            raise ClosureError(f"actuated joints {unknown} are not in the model")
        self.joint_names = tuple(names)
        self.idx_a = np.array([self.model.joints[self.model.getJointId(j)].idx_v for j in actuated], dtype=int)
        self.idx_u = np.array(sorted(set(range(self.model.nv)) - set(self.idx_a)), dtype=int)
        self.actuated_joints = tuple(actuated)
        self.passive_joints = tuple(names[i] for i in self.idx_u)
        self._points = [(self._add_point(c.frame_a, c.offset_a, f"{c.name}/a"),
                         self._add_point(c.frame_b, c.offset_b, f"{c.name}/b"), np.array(c.components))
                        for c in self.closures]
        self.nc = int(sum(len(c.components) for c in self.closures))
        if self.nc != self.idx_u.size:
            raise ClosureError(f"{self.nc} constraint equations for {self.idx_u.size} passive joints: "
                               "the fully-actuated representation needs nc == nu")

    def _add_point(self, frame: str, offset, name: str) -> int:
        model = self.model
        if model.existFrame(frame, pin.FrameType.BODY):
            fid = model.getFrameId(frame, pin.FrameType.BODY)
        elif model.existFrame(frame):
            fid = model.getFrameId(frame)
        else:
            raise ClosureError(f"loop closure frame '{frame}' is not in the model")
        parent = model.frames[fid]
        placement = parent.placement * pin.SE3(np.eye(3), np.asarray(offset, dtype=float))
        return model.addFrame(pin.Frame(name, parent.parentJoint, fid, placement, pin.FrameType.OP_FRAME))

    @property
    def q_u_start(self) -> np.ndarray:
        """Default Newton start of the passive joints: the middle of their limits (picks the assembly
        mode the limits describe)."""
        lo = self.model.lowerPositionLimit[self.idx_u]
        hi = self.model.upperPositionLimit[self.idx_u]
        return 0.5 * (lo + hi)

    @property
    def na(self) -> int:
        """Number of actuated joints."""
        return self.idx_a.size

    @property
    def is_open(self) -> bool:
        """Whether the chain has no loop-closure constraints."""
        return self.nc == 0


def constraint(chain: ClosedChain, data: pin.Data, q) -> np.ndarray:
    """``c(q)`` (m): stacked world-frame position differences ``p_A - p_B`` of the closure points."""
    if chain.is_open:
        return np.zeros(0)
    pin.forwardKinematics(chain.model, data, q)
    out = []
    for fa, fb, comps in chain._points:
        p = pin.updateFramePlacement(chain.model, data, fa).translation - \
            pin.updateFramePlacement(chain.model, data, fb).translation
        out.append(p[comps])
    return np.concatenate(out)


def constraint_jacobian(chain: ClosedChain, data: pin.Data, q) -> np.ndarray:
    """``J(q) = dc/dq`` (``nc x nv``)."""
    if chain.is_open:
        return np.zeros((0, chain.model.nv))
    pin.computeJointJacobians(chain.model, data, q)
    pin.updateFramePlacements(chain.model, data)
    rows = []
    for fa, fb, comps in chain._points:
        Ja = pin.getFrameJacobian(chain.model, data, fa, WORLD)[:3]
        Jb = pin.getFrameJacobian(chain.model, data, fb, WORLD)[:3]
        rows.append((Ja - Jb)[comps])
    return np.vstack(rows)


def constraint_drift(chain: ClosedChain, data: pin.Data, q, v) -> np.ndarray:
    """``Jdot(q, v) v`` (m/s^2): the constraint acceleration at zero joint acceleration."""
    if chain.is_open:
        return np.zeros(0)
    model = chain.model
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    out = []
    for fa, fb, comps in chain._points:
        # classical (not spatial) acceleration: the second derivative of the point's position
        acc = pin.getFrameClassicalAcceleration(model, data, fa, WORLD).linear - \
            pin.getFrameClassicalAcceleration(model, data, fb, WORLD).linear
        out.append(acc[comps])
    return np.concatenate(out)


def _passive_block(chain: ClosedChain, J: np.ndarray) -> np.ndarray:
    Ju = J[:, chain.idx_u]
    s = np.linalg.svd(Ju, compute_uv=False)
    if s[-1] <= 1e-9 * max(1.0, s[0]):
        raise ClosureError(f"the passive-joint constraint Jacobian J_u is singular "
                           f"(smallest singular value {s[-1]:.2e}): the pose is at a loop singularity")
    return Ju


def projection(chain: ClosedChain, data: pin.Data, q) -> np.ndarray:
    """``G(q)`` (``nv x na``): ``v = G v_a``; rows of actuated joints are the identity."""
    nv = chain.model.nv
    G = np.zeros((nv, chain.na))
    G[chain.idx_a, np.arange(chain.na)] = 1.0
    if not chain.is_open:
        J = constraint_jacobian(chain, data, q)
        G[chain.idx_u] = -np.linalg.solve(_passive_block(chain, J), J[:, chain.idx_a])
    return G


def projection_drift(chain: ClosedChain, data: pin.Data, q, v) -> np.ndarray:
    """``Gdot(q, v) v_a`` (``nv``), with ``v`` consistent (``J v = 0``): zero on actuated rows."""
    out = np.zeros(chain.model.nv)
    if not chain.is_open:
        J = constraint_jacobian(chain, data, q)
        out[chain.idx_u] = -np.linalg.solve(_passive_block(chain, J), constraint_drift(chain, data, q, v))
    return out


def solve_passive(chain: ClosedChain, data: pin.Data, q_a, q_u0=None, tol: float = 1e-12,
                  max_iter: int = 50) -> np.ndarray:
    """``Gamma``: the full ``q`` with ``q[idx_a] = q_a`` and passive coordinates solving ``c(q) = 0``.

    Newton iterations (capped steps, backtracking on ``|c|``) from ``q_u0`` until ``max|c| <= tol``
    (metres). Without ``q_u0`` it follows the assembly mode of :attr:`ClosedChain.q_u_start` by
    continuation: from the actuated reference pose (zero, clipped to the limits) to ``q_a`` in steps
    of at most 0.2 rad. Raises :class:`ClosureError` when it does not converge (pose out of reach),
    ``J_u`` is singular, or the solution leaves the passive joint limits (another assembly mode).
    """
    q_a = np.asarray(q_a, dtype=float)
    if q_u0 is None and not chain.is_open:
        lo = chain.model.lowerPositionLimit[chain.idx_a]
        hi = chain.model.upperPositionLimit[chain.idx_a]
        q_a_ref = np.clip(np.zeros(chain.na), lo, hi)
        n_steps = max(1, int(np.ceil(np.max(np.abs(q_a - q_a_ref)) / 0.2)))
        q_u0 = chain.q_u_start
        for s in np.arange(1, n_steps) / n_steps:
            q_u0 = _newton(chain, data, q_a_ref + s * (q_a - q_a_ref), q_u0, tol, max_iter)[chain.idx_u]
    return _within_limits(chain, _newton(chain, data, q_a, q_u0, tol, max_iter), q_a)


def _newton(chain: ClosedChain, data: pin.Data, q_a, q_u0, tol: float, max_iter: int) -> np.ndarray:
    q = np.zeros(chain.model.nq)
    q[chain.idx_a] = q_a
    if chain.is_open:
        return q
    q[chain.idx_u] = q_u0
    c = constraint(chain, data, q)
    for _ in range(max_iter):
        if np.max(np.abs(c)) <= tol:
            return q
        J = constraint_jacobian(chain, data, q)
        step = np.linalg.lstsq(J[:, chain.idx_u], c, rcond=None)[0]
        # Far from the solution a full step can overshoot into another assembly mode: cap it at
        # 0.5 rad and backtrack until |c| decreases.
        step *= min(1.0, 0.5 / max(np.max(np.abs(step)), 1e-300))
        q_u = q[chain.idx_u].copy()
        for _ in range(20):
            q[chain.idx_u] = q_u - step
            c_new = constraint(chain, data, q)
            if c_new @ c_new < c @ c:
                break
            step *= 0.5
        c = c_new
    raise ClosureError(f"loop closures cannot be satisfied at actuated position {np.round(q_a, 4).tolist()} "
                       f"(residual {np.max(np.abs(c)):.2e} m after {max_iter} Newton steps): the pose is "
                       "out of reach of the linkage")


def _within_limits(chain: ClosedChain, q: np.ndarray, q_a) -> np.ndarray:
    """``q`` with passive angles shifted by whole turns into their limits; a solution that stays
    outside belongs to another assembly mode and is rejected."""
    lo, hi = chain.model.lowerPositionLimit[chain.idx_u], chain.model.upperPositionLimit[chain.idx_u]
    q_u = q[chain.idx_u]
    q_u = np.where(q_u < lo, q_u + 2 * np.pi * np.ceil((lo - q_u) / (2 * np.pi)), q_u)
    q_u = np.where(q_u > hi, q_u - 2 * np.pi * np.ceil((q_u - hi) / (2 * np.pi)), q_u)
    outside = (q_u < lo - 1e-9) | (q_u > hi + 1e-9)
    if np.any(outside):
        names = [chain.passive_joints[i] for i in np.flatnonzero(outside)]
        raise ClosureError(f"loop closures at actuated position {np.round(q_a, 4).tolist()} are only met "
                           f"with passive joints {names} outside their limits (another assembly mode)")
    q = q.copy()
    q[chain.idx_u] = q_u
    return q


def solve_passive_unique(chain: ClosedChain, data: pin.Data, q_a, q_u0=None, n_starts: int = 8,
                         rng=None, tol: float = 1e-8) -> np.ndarray:
    """:func:`solve_passive` with a uniqueness check (Assumption 1 of the module's reference).

    Besides the solution from ``q_u0``, Newton runs from ``n_starts`` starts drawn uniformly within the
    passive joint limits (clipped to +-pi); every start that converges inside the limits must reach
    the same ``q_u`` (to ``tol`` rad, angles compared modulo whole turns). Raises
    :class:`ClosureError` naming the gap otherwise.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    q = solve_passive(chain, data, q_a, q_u0)
    lo = np.maximum(chain.model.lowerPositionLimit[chain.idx_u], -np.pi)
    hi = np.minimum(chain.model.upperPositionLimit[chain.idx_u], np.pi)
    for _ in range(n_starts):
        try:
            other = solve_passive(chain, data, q_a, rng.uniform(lo, hi))
        except ClosureError:  # no solution in the limits from this start: nothing to compare
            continue
        gap = np.max(np.abs(np.angle(np.exp(1j * (other - q)))))
        if gap > tol:
            raise ClosureError(f"passive-joint IK is not unique at actuated position "
                               f"{np.round(q_a, 4).tolist()}: two solutions differ by {gap:.3g} rad")
    return q


@dataclass(frozen=True)
class ConstrainedState:
    """A full state completed from the actuated one, with the projection at that state."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    G: np.ndarray


def complete_state(chain: ClosedChain, data: pin.Data, q_a, v_a, a_a, q_u0=None) -> ConstrainedState:
    """Passive coordinates, velocities and accelerations from the actuated ones (IK, ``G``, ``Gdot``)."""
    q = solve_passive(chain, data, q_a, q_u0)
    G = projection(chain, data, q)
    v = G @ np.asarray(v_a, dtype=float)
    a = G @ np.asarray(a_a, dtype=float) + projection_drift(chain, data, q, v)
    return ConstrainedState(q, v, a, G)


def complete_trajectory(chain: ClosedChain, data: pin.Data, q_a, v_a, a_a) -> tuple:
    """Stacked :func:`complete_state` over samples (``(N, na)`` arrays), warm-starting each IK from the
    previous sample: ``(q, v, a)`` as ``(N, nv)`` and ``G`` as ``(N, nv, na)``."""
    n = np.asarray(q_a).shape[0]
    nv = chain.model.nv
    q, v, a = np.empty((n, nv)), np.empty((n, nv)), np.empty((n, nv))
    G = np.empty((n, nv, chain.na))
    q_u = None
    for k in range(n):
        s = complete_state(chain, data, q_a[k], v_a[k], a_a[k], q_u)
        q[k], v[k], a[k], G[k] = s.q, s.v, s.a, s.G
        q_u = s.q[chain.idx_u]
    return q, v, a, G


def chain_from_profile(model: pin.Model, profile: RobotProfile) -> ClosedChain:
    """The closed chain of ``model`` with the loop closures and actuated joints the profile declares."""
    closures, actuated = closures_from_profile(profile)
    return ClosedChain(model, closures, actuated)
