"""Inertia constants of composite bodies (Lin 1991, Lemma 1 and Algorithm 1) and the dynamics rebuilt
from them (mass matrix (9), gravity (11)).

Frames ``E_i`` are Craig's modified DH frames (Lin's "normal driving-axis" frames), i.e. the joint
frames of :func:`inertial_id.core.robot.builtin_models.mdh_model`; a robot is given as its list of
:class:`~inertial_id.core.robot.builtin_models.Link` rows plus the pinocchio model built from them, which
supplies kinematics (frame poses).

Composite body ``i`` = links ``i..n``; about ``E_i``'s origin, in ``E_i``: mass ``m^_i``, first
moment ``c^_i = k_i + l_i(q)``, inertia ``J^_i = U_i + V_i(q)`` (Lemma 1). ``m^, k, U`` are the
*inertia constants*; ``l, V`` follow from the constants of the outer bodies (Algorithm 1).
Indices in code are 0-based (body ``i`` of the paper is ``i - 1``). Gravity is the model's.

The translational step of Algorithm 1 is evaluated from its definition (composite parallel-axis
shift minus the constant part (22)/(24)) rather than from the printed (25)/(36), whose published
form carries a sign misprint (see the spec).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ...robot.builtin_models import Link

PAR_TOL = 1e-9        # |sin angle| below which two axes count as parallel


class ConfigurationError(ValueError):
    """A configuration or motion violates a condition of Algorithm 2; the message says which."""


@dataclass
class Constants:
    """Inertia constants of every composite body (0-based), in ``E_i``."""

    m_hat: np.ndarray     # (n,)
    k: np.ndarray         # (n, 3)
    U: np.ndarray         # (n, 3, 3)

    def copy(self) -> Constants:
        """An independent copy."""
        return Constants(self.m_hat.copy(), self.k.copy(), self.U.copy())

    @staticmethod
    def zeros(n: int) -> Constants:
        """All constants zero for ``n`` bodies."""
        return Constants(np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3)))


def _S(x) -> np.ndarray:
    return pin.skew(np.asarray(x, dtype=float))


def joint_transform(link: Link, q_i: float) -> tuple[np.ndarray, np.ndarray]:
    """(R_{i-1,i}, s): orientation of ``E_i`` in ``E_{i-1}`` and the offset of its origin."""
    theta = link.theta + (q_i if link.kind == "R" else 0.0)
    d = link.d + (q_i if link.kind == "P" else 0.0)
    R = pin.utils.rotate("x", link.alpha) @ pin.utils.rotate("z", theta)
    return R, np.array([link.a, -d * np.sin(link.alpha), d * np.cos(link.alpha)])


def _link_terms(link: Link) -> tuple[float, np.ndarray, np.ndarray]:
    """(m, m c, I - m [c x]^2): the link's own mass, first moment and inertia about ``E_i``."""
    c = np.asarray(link.com, dtype=float)
    return link.mass, link.mass * c, np.diag(link.inertia) - link.mass * _S(c) @ _S(c)


def _M(U) -> np.ndarray:
    """``M(U)`` of (21): the part of ``U`` that turns with a revolute joint."""
    M = U.copy()
    M[0, 0] -= U[1, 1]
    M[1, 1] = 0.0
    M[2, 2] = 0.0
    return M


def _shift(s, h) -> np.ndarray:
    """Parallel-axis change of an inertia about a point moved by ``-s`` (first moment ``h``, no mass)."""
    return -_S(s) @ _S(h) - _S(h) @ _S(s)


def inertia_constants(links) -> Constants:
    """Lemma 1: ``m^_i, k_i, U_i`` from the link data, (14), (16), (18), (20), (22), (24)."""
    n = len(links)
    c = Constants.zeros(n)
    for i in reversed(range(n)):
        m, h, I = _link_terms(links[i])
        c.m_hat[i], c.k[i], c.U[i] = m, h, I
        if i == n - 1:
            continue
        nxt = links[i + 1]
        R, s = joint_transform(nxt, 0.0)
        mh, k1, U1 = c.m_hat[i + 1], c.k[i + 1], c.U[i + 1]
        c.m_hat[i] += mh
        if nxt.kind == "R":
            w = R[:, 2] * k1[2]
            c.k[i] += mh * s + w
            c.U[i] += (-mh * _S(s) @ _S(s) + R @ np.diag([U1[1, 1], U1[1, 1], U1[2, 2]]) @ R.T
                       + _shift(s, w))
        else:
            b = np.array([nxt.a, 0.0, 0.0])
            Rk = R @ k1
            c.k[i] += mh * b + Rk
            c.U[i] += R @ U1 @ R.T - mh * _S(b) @ _S(b) + _shift(b, Rk)
    return c


def varying_parts(links, q, const: Constants) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1: ``l_i(q)`` and ``V_i(q)`` for every body from the constants of the outer ones.

    Only the entries of Theorem 2's set are read from ``const`` (the others may be zero)."""
    n = len(links)
    ell, V = np.zeros((n, 3)), np.zeros((n, 3, 3))
    for i in reversed(range(n - 1)):
        nxt = links[i + 1]
        R, s = joint_transform(nxt, q[i + 1])
        k1, U1 = const.k[i + 1], const.U[i + 1]
        if nxt.kind == "R":
            ell[i] = R @ (ell[i + 1] + np.array([k1[0], k1[1], 0.0]))
            V[i] = R @ (V[i + 1] + _M(U1)) @ R.T + _shift(s, ell[i])
        else:
            mh = const.m_hat[i + 1]
            b = np.array([nxt.a, 0.0, 0.0])
            ell[i] = R @ (ell[i + 1] + np.array([0.0, 0.0, mh * (nxt.d + q[i + 1])]))
            h = R @ (k1 + ell[i + 1])           # composite i+1's first moment, axes of E_i
            V[i] = (R @ V[i + 1] @ R.T - mh * (_S(s) @ _S(s) - _S(b) @ _S(b))
                    + _shift(s, h) - _shift(b, R @ k1))
    return ell, V


# --- kinematics from the pinocchio model (joint j <-> pinocchio joint j + 1) -------------------------

def frames(model: pin.Model, q) -> list[pin.SE3]:
    """World placement of every joint frame at configuration ``q``."""
    data = model.createData()
    pin.forwardKinematics(model, data, np.asarray(q, dtype=float))
    return [data.oMi[j + 1] for j in range(model.njoints - 1)]


def axis_in(poses, i: int, j: int) -> np.ndarray:
    """``u_i^(j)``: axis of joint ``i`` expressed in ``E_j``."""
    return poses[j].rotation.T @ poses[i].rotation[:, 2]


def offset_in(poses, i: int, j: int) -> np.ndarray:
    """``s`` from ``E_i``'s origin to ``E_j``'s origin, in ``E_j``."""
    return poses[j].rotation.T @ (poses[j].translation - poses[i].translation)


def parallel(u, v) -> bool:
    """Whether the axes ``u`` and ``v`` are parallel (within PAR_TOL)."""
    return bool(np.linalg.norm(np.cross(u, v)) < PAR_TOL)


# --- dynamics rebuilt from the constants: (9), (11) ------------------------------------------------

def composite(links, q, const: Constants):
    """(m^, c^, J^) of every composite body at ``q`` from the constants (Lemma 1, (12)-(13))."""
    ell, V = varying_parts(links, q, const)
    return const.m_hat, const.k + ell, const.U + V


def mass_matrix(links, model: pin.Model, q, const: Constants) -> np.ndarray:
    """``H(q)`` by Renaud's formulation (9) from composite-body quantities."""
    n = len(links)
    m_hat, c_hat, J_hat = composite(links, q, const)
    poses = frames(model, q)
    H = np.zeros((n, n))
    for i in range(n):
        for m in range(i + 1):
            u = axis_in(poses, m, i)
            a = np.cross(u, offset_in(poses, m, i))
            uperp = np.array([u[1], -u[0], 0.0])
            rot_m, rot_i = links[m].kind == "R", links[i].kind == "R"
            if rot_m and rot_i:
                h = u @ J_hat[i][:, 2] + np.array([a[1], -a[0], 0.0]) @ c_hat[i]
            elif rot_i:
                h = uperp @ c_hat[i]
            elif rot_m:
                h = m_hat[i] * a[2] - uperp @ c_hat[i]
            else:
                h = m_hat[i] * u[2]
            H[m, i] = H[i, m] = h
    return H


def gravity_torque(links, model: pin.Model, q, const: Constants) -> np.ndarray:
    """Gravity load (11): ``tau_g = K*_i [-g_y, g_x, 0] . c^_i - K_i m^_i g_z`` in ``E_i``."""
    m_hat, c_hat, _ = composite(links, q, const)
    poses = frames(model, q)
    g0 = np.array(model.gravity.linear)
    tau = np.zeros(len(links))
    for i, link in enumerate(links):
        g = poses[i].rotation.T @ g0
        tau[i] = (np.array([-g[1], g[0], 0.0]) @ c_hat[i] if link.kind == "R" else -m_hat[i] * g[2])
    return tau


def rebuild_errors(links, model: pin.Model, const: Constants, n_samples: int = 20, seed: int = 0):
    """Max |error| of ``H(q)`` and of the gravity torque rebuilt from ``const`` against pinocchio
    (CRBA, RNEA gravity) at random configurations."""
    rng = np.random.default_rng(seed)
    data = model.createData()
    H_err = g_err = 0.0
    for _ in range(n_samples):
        q = rng.uniform(-np.pi, np.pi, len(links))
        H = pin.crba(model, data, q)
        H = np.triu(H) + np.triu(H, 1).T          # crba fills the upper triangle
        H_err = max(H_err, np.abs(mass_matrix(links, model, q, const) - H).max())
        g_err = max(g_err, np.abs(gravity_torque(links, model, q, const)
                                  - pin.computeGeneralizedGravity(model, data, q)).max())
    return float(H_err), float(g_err)
