"""Recursive Parameter Nullspace Algorithm (the reference's Algorithms 1-3 and App. G, I).

Input: a :class:`~.kinematic_tree.KinematicTree` (kinematics only). Output: per body ``N_i``, the
spans ``V_i`` (attainable velocities, gravity as a fictitious base acceleration) and ``K_i``
(observable parameter directions), and the dimension of the undetectable transfer space ``T_i``;
``10 N - sum dim T_i`` base parameters (``+ 4`` per rotor).

Per-body parameter vectors are in pinocchio order; a body with a rotor carries 14 parameters,
``[pi_link (10); m, mcz, Ixx=Iyy, Izz of the rotor in its own frame]`` (App. I with the symmetric
rotor of Sec. 8). Rank decisions use :data:`.spatial.RANK_TOL`.

References: Wensing, Niemeyer, Slotine, "A Geometric Characterization of Observability in Inertial Parameter Identification" (seed 000).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..robot import params
from . import numeric, spatial
from .kinematic_tree import KinematicTree

# Preference order for base parameters (the RPNA paper's table rows): m, mcx, mcy, mcz, Ixx, Iyy, Izz, Iyz,
# Ixz, Ixy, then the rotor's Izz (pinocchio indices; rotor entries follow at 10..13).
PREFERENCE = (0, 1, 2, 3, 4, 6, 9, 8, 7, 5, 13, 12, 11, 10)
_I6, _I10 = np.eye(6), np.eye(10)
ROTOR_NAMES = tuple(f"rotor.{n}" for n in spatial.ROTOR_PARAMETER_NAMES)
SHORT_ROTOR_NAMES = ("m_rotor", "mcz_rotor", "Ixx_rotor", "Im")


@dataclass(frozen=True)
class BodyResult:
    """RPNA's result for one body: nullspace descriptor, velocity and observable-parameter spans, transfer to the parent."""
    name: str
    N: np.ndarray        # (rows, n_params) nullspace descriptor: T_i = Null(N) (+ transfer to parent)
    V: np.ndarray        # (6, dim V_i) orthonormal basis, link velocity, child frame
    K: np.ndarray        # (10, >= dim K_i) spanning set of the observable link-parameter directions
    B: np.ndarray        # (10, n_params) transfer into the parent's link parameters
    n_params: int        # 10, or 14 with a rotor
    rank_N: int
    dim_K: int

    @property
    def dim_V(self) -> int:
        """Dimension of the body's velocity span."""
        return self.V.shape[1]

    @property
    def dim_T(self) -> int:
        """Dimension of the body's unidentifiable parameter subspace."""
        return self.n_params - self.rank_N


@dataclass(frozen=True)
class RPNAResult:
    """RPNA's result for a whole tree: per-body results and the assumptions (gravity, static)."""
    tree: KinematicTree
    bodies: tuple[BodyResult, ...]
    gravity: bool
    static: bool

    @property
    def n_params(self) -> int:
        """Number of standard parameters of the tree (10 per body, 14 with a rotor)."""
        return sum(b.n_params for b in self.bodies)

    @property
    def num_base_parameters(self) -> int:
        """Number of identifiable parameter combinations."""
        return self.n_params - sum(b.dim_T for b in self.bodies)

    def parameter_names(self) -> list[str]:
        """Names of the standard parameters, body by body."""
        return parameter_names(self.tree)


def parameter_names(tree: KinematicTree, short: bool = False) -> list[str]:
    """Column labels in RPNA's layout: ``joint2.Izz`` or, with ``short``, paper style ``Izz2``
    (rotor parameters ``rotor.Izz`` / ``Im2``, body numbers from 1 at the root)."""
    names = []
    for b, (name, rotor) in enumerate(zip(tree.names, tree.rotors), start=1):
        link = [f"{n}{b}" for n in params.PARAMETER_NAMES] if short else params.parameter_names(name)
        names += link
        if rotor is not None:
            names += ([f"{n}{b}" for n in SHORT_ROTOR_NAMES] if short
                      else [f"{name}.{n}" for n in ROTOR_NAMES])
    return names


def _stacked(tree: KinematicTree, b: int):
    """(X, Phi, cross, A, B, embed) of body ``b`` stacked with its rotor (App. I).

    ``X``: (6 or 12, 6) parent link velocity -> stacked velocity at q = 0; ``cross``: the stacked
    ``(Phi_k x)`` per free mode; ``A``: the matching parameter-rate operators; ``embed``: list of
    (velocity rows, parameter map into 10) per part, to evaluate ``M``.
    """
    Xj = tree.X_parent_joint[b - 1]
    Phi = tree.Phi[b - 1]
    rotor = tree.rotors[b - 1]
    X = Xj.inverse().action
    cross = [spatial.cross_motion(p) for p in Phi.T]
    A = [spatial.rotation_operator(p) for p in Phi.T]
    B = spatial.transfer_matrix(Xj)
    if rotor is None:
        return X, Phi, cross, A, B, [(slice(0, 6), None)]
    n = rotor.gear_ratio
    phi_m = np.array([0.0, 0, 0, 0, 0, 1.0])
    C = spatial.ROTOR_EMBEDDING
    C_pinv = np.linalg.pinv(C)
    X = np.vstack([X, rotor.X_parent_rotor.inverse().action])
    Phi = np.vstack([Phi, n * phi_m[:, None]])
    cross = [scipy.linalg.block_diag(cross[0], n * spatial.cross_motion(phi_m))]
    A = [scipy.linalg.block_diag(A[0], C_pinv @ (n * spatial.rotation_operator(phi_m)) @ C)]
    B = np.hstack([B, spatial.transfer_matrix(rotor.X_parent_rotor) @ C])
    return X, Phi, cross, A, B, [(slice(0, 6), None), (slice(6, 12), C)]


def _momentum(V, Phi, parts) -> np.ndarray:
    """Stacked ``M(V, Phi)``: kinetic-energy cross terms of each part, in the stacked parameters."""
    blocks = []
    for rows, C in parts:
        M = spatial.momentum_operator(V[rows], Phi[rows])
        blocks.append(M if C is None else C.T @ M)
    return np.vstack(blocks)


def rpna(tree: KinematicTree, gravity: bool = True, static: bool = False) -> RPNAResult:
    """Run the recursion once over the tree (O(N)).

    ``static``: only gravity loads (no velocities or accelerations): ``V_i = V_i^-``.

    Once a body's span ``V_i^-`` (or ``K_i^-``) is full it stays full for all its descendants
    (``X_i`` and ``B_i`` are invertible), so they skip that Ctrb; with both full,
    ``N_i = [M(1, Phi)^T; A(phi_k)]`` (RPNA, Alg. 3). ``K_i`` is carried as a spanning set (the next body's
    Ctrb orthonormalises it); all ranks of ``N_i`` and ``K_i`` are decided together at the end.
    """
    a_g = np.concatenate([-tree.gravity, np.zeros(3)])[:, None]
    V_world = a_g if gravity and np.linalg.norm(a_g) > 0 else np.zeros((6, 0))
    V_of, K_of = {0: V_world}, {0: np.zeros((10, 0))}
    V_full, K_full = {0: False}, {0: False}
    bodies = []
    for b in range(1, tree.n_bodies + 1):
        p = tree.parents[b - 1]
        X, Phi, cross, A, B, parts = _stacked(tree, b)
        link_only = len(parts) == 1
        if link_only and V_full[p] and K_full[p]:
            N = np.vstack([spatial.momentum_operator(_I6, Phi).T] + A)
            V_of[b], K_of[b], V_full[b], K_full[b] = _I6, _I10, True, True
        else:
            V_minus = _I6 if link_only and V_full[p] else spatial.ctrb(cross, X @ V_of[p])
            V_bar = V_minus if static else spatial.extend_basis(V_minus, Phi)
            K_minus = _I10 if link_only and K_full[p] else spatial.ctrb([a.T for a in A], B.T @ K_of[p])
            M = _momentum(V_bar, Phi, parts)
            N = np.vstack([M.T] + [K_minus.T @ a for a in A])
            K_bar = np.hstack([K_minus, M])
            # the link's own spans (App. I (98)-(99)); without a rotor the stacked ones are the link's
            V_of[b] = spatial.orth(V_bar[:6]) if len(parts) > 1 else V_bar
            K_of[b] = K_bar[:10]
            V_full[b] = link_only and V_minus.shape[1] == 6
            K_full[b] = link_only and K_minus.shape[1] == 10
        bodies.append((tree.names[b - 1], N, V_of[b], K_of[b], B))
    rank_N = _ranks([body[1] for body in bodies], axis=0)
    dim_K = _ranks([body[3] for body in bodies], axis=1)
    return RPNAResult(tree, tuple(BodyResult(*body, n_params=body[4].shape[1], rank_N=int(rn),
                                             dim_K=int(dk))
                                  for body, rn, dk in zip(bodies, rank_N, dim_K)), gravity, static)


def _ranks(mats, axis: int) -> list[int]:
    """Ranks of matrices that agree in shape except along ``axis``, in one batched decision
    (zero padding along ``axis`` leaves every rank unchanged)."""
    out = [0] * len(mats)
    for other in {m.shape[1 - axis] for m in mats}:
        idx = [i for i, m in enumerate(mats) if m.shape[1 - axis] == other and m.size]
        if not idx:
            continue
        size = max(mats[i].shape[axis] for i in idx)
        stack = np.zeros((len(idx), size, other) if axis == 0 else (len(idx), other, size))
        for row, i in enumerate(idx):
            stack[(row, slice(0, mats[i].shape[0]), slice(0, mats[i].shape[1]))] = mats[i]
        for i, r in zip(idx, spatial.batched_rank(stack)):
            out[i] = int(r)
    return out


def _offsets(result: RPNAResult) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([b.n_params for b in result.bodies])])


def system_bases(result: RPNAResult) -> tuple[np.ndarray, np.ndarray]:
    """(R, N_sys) of App. G: ``range(R)`` is the unidentifiable subspace, ``Null(N_sys)`` the same.

    ``R`` has block columns ``R_i`` = basis of ``Null(N_i)`` with ``-B_i R_i`` in the parent's rows
    (dropped when the parent is the fixed world). ``N_sys`` has ``N_ii = N_i`` and, for every
    descendant ``j`` of ``i``, ``N_ij = N_{i,p(j)} B_j`` (the paper prints ``j < i``: a typo).
    """
    tree, bodies = result.tree, result.bodies
    off = _offsets(result)
    n = off[-1]
    R_cols, N_rows = [], []
    for b, body in enumerate(bodies, start=1):
        Ri = spatial.null_space(body.N)
        col = np.zeros((n, Ri.shape[1]))
        col[off[b - 1]:off[b]] = Ri
        p = tree.parents[b - 1]
        if p:
            col[off[p - 1]:off[p - 1] + 10] = -body.B @ Ri
        R_cols.append(col)
    for i, body in enumerate(bodies, start=1):
        Ni = spatial.orth(body.N.T).T   # independent rows only
        row = np.zeros((Ni.shape[0], n))
        row[:, off[i - 1]:off[i]] = Ni
        for j in range(i + 1, tree.n_bodies + 1):
            p = tree.parents[j - 1]
            if p >= i:
                row[:, off[j - 1]:off[j]] = row[:, off[p - 1]:off[p - 1] + 10] @ bodies[j - 1].B
        N_rows.append(row)
    return np.hstack(R_cols), np.vstack(N_rows)


def preference_order(n_params_per_body) -> np.ndarray:
    """Columns in the order base parameters are preferred: bodies from the root outwards, within a
    body :data:`PREFERENCE` (so the parent keeps the regrouped child terms, e.g. ``Izz1 + l^2 m2``).
    ``n_params_per_body``: 10, or 14 for a body with a rotor."""
    off = np.concatenate([[0], np.cumsum(n_params_per_body)])
    return np.concatenate([off[b] + np.array([k for k in PREFERENCE if k < n])
                           for b, n in enumerate(n_params_per_body)])


def base_parameters(result: RPNAResult) -> numeric.BaseParameters:
    """Base parameters chosen in :func:`preference_order` from the identifiable rows ``N_sys``."""
    _, N_sys = system_bases(result)
    return numeric.base_parameters_from_rows(N_sys, preference_order([b.n_params for b in result.bodies]))
