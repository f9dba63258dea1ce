"""Linear operators of RPNA (the reference's Sec. 5 and App. I) in the project's conventions.

Spatial vectors are pinocchio's ``[v; w]`` (linear first); body parameters are in pinocchio order
``pi = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the body origin, so the spatial
inertia is ``I(pi) = [[m 1, -S(h)], [S(h), I_O]]`` with ``h = m c``. The paper writes ``[w; v]`` and
another parameter order; every statement below is coordinate-free, so only the layout differs.

Rank tolerance (one for the whole analysis): a singular value counts when it exceeds
``RANK_TOL * max(1, s_max)``. Bases are orthonormal and the operators have entries of the size of
the robot's lengths (metres), so genuine singular values are >= 1e-6 on every model we know of,
while roundoff stays near 1e-15.

References: Wensing, Niemeyer, Slotine, "A Geometric Characterization of Observability in Inertial Parameter Identification" (seed 000).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robot import params

RANK_TOL = 1e-9


def _inertia_basis() -> np.ndarray:
    basis = np.zeros((10, 6, 6))
    for k, e in enumerate(np.eye(10)):
        S = pin.skew(e[1:4])
        basis[k, :3, :3] = e[0] * np.eye(3)
        basis[k, :3, 3:] = -S
        basis[k, 3:, :3] = S
        basis[k, 3:, 3:] = params.inertia_matrix(e)
    return basis


# I(pi) = sum_k pi_k INERTIA_BASIS[k]
INERTIA_BASIS = _inertia_basis()
# vee: parameters from a matrix of the form I(pi); exact on that subspace (least squares off it)
_VEE = np.linalg.pinv(INERTIA_BASIS.reshape(10, 36).T)

# Axisymmetric rotor about its frame's z axis (RPNA paper, Sec. 8): 4 parameters [m, mcz, Ixx=Iyy, Izz].
ROTOR_PARAMETER_NAMES = ("m", "mcz", "Ixx=Iyy", "Izz")
ROTOR_EMBEDDING = np.zeros((10, 4))
ROTOR_EMBEDDING[[0, 3, 4, 6, 9], [0, 1, 2, 2, 3]] = 1.0


def spatial_inertia(pi) -> np.ndarray:
    """(6, 6) spatial inertia of the parameter vector ``pi`` (linear in it)."""
    return np.tensordot(np.asarray(pi, dtype=float), INERTIA_BASIS, axes=1)


def vee(I6) -> np.ndarray:
    """Parameter vector of a 6x6 matrix of the form ``I(pi)`` (inverse of :func:`spatial_inertia`)."""
    return _VEE @ np.asarray(I6).reshape(36)


def cross_motion(phi) -> np.ndarray:
    """``(phi x)``: 6x6 spatial cross product of a motion vector ``[v; w]``."""
    return pin.Motion(np.asarray(phi, dtype=float)).action


def transfer_matrix(X_parent_child: pin.SE3) -> np.ndarray:
    """``B(X) = d/dpi [X^T I(pi) X]^v`` (10x10), ``X`` the motion transform parent -> child: a child's
    parameters expressed in its parent's frame, ``pi_p = B pi_c``. Equals
    :func:`inertial_id.core.robot.params.transform_matrix` (tested); evaluated in one contraction because
    RPNA calls it once per body."""
    X = X_parent_child.inverse().action
    return _VEE @ (X.T @ INERTIA_BASIS @ X).reshape(10, 36).T


def rotation_operator(phi) -> np.ndarray:
    """``A(phi)`` (10x10): ``d/dpi [(phi x)^T I(pi) + I(pi)(phi x)]^v``."""
    C = cross_motion(phi)
    D = C.T @ INERTIA_BASIS + INERTIA_BASIS @ C
    return _VEE @ D.reshape(10, 36).T


def momentum_operator(V, Phi) -> np.ndarray:
    """``M(V, Phi)`` (10 x cols(V)*cols(Phi)): columns ``d/dpi (v^T I(pi) phi)``."""
    return (V.T @ INERTIA_BASIS @ Phi).reshape(10, -1)


def orth(A, tol: float = RANK_TOL) -> np.ndarray:
    """Orthonormal basis of the column space of ``A`` (rank by :data:`RANK_TOL`)."""
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return np.zeros((A.shape[0], 0))
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    return U[:, s > tol * max(1.0, s[0])]


def rank(A, tol: float = RANK_TOL) -> int:
    """Numerical rank of ``A``: singular values above ``tol`` times the largest (at least 1)."""
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


def null_space(A, tol: float = RANK_TOL) -> np.ndarray:
    """Orthonormal basis of ``Null(A)``, with the rank decided as in :func:`rank`."""
    A = np.asarray(A, dtype=float)
    _, s, Vt = np.linalg.svd(A, full_matrices=True)
    return Vt[rank(A, tol) if s.size else 0:].T


def extend_basis(Q, cols) -> np.ndarray:
    """Orthonormal ``Q`` extended by the parts of ``cols`` outside its span (Gram-Schmidt)."""
    for c in np.asarray(cols, dtype=float).T:
        r = c - Q @ (Q.T @ c)
        norm = np.sqrt(r @ r)
        if norm > RANK_TOL * max(1.0, np.sqrt(c @ c)):
            Q = np.column_stack([Q, r / norm])
    return Q


def batched_rank(stack, tol: float = RANK_TOL) -> np.ndarray:
    """:func:`rank` of each matrix of a ``(count, rows, cols)`` stack, in one call."""
    s = np.linalg.svd(np.asarray(stack, dtype=float), compute_uv=False)
    return np.sum(s > tol * np.maximum(1.0, s[:, :1]), axis=1)


KRYLOV_STEPS = 4   # powers per rank decision: enough for revolute and prismatic generators at once


def ctrb(F_list, G) -> np.ndarray:
    """Orthonormal basis of the smallest subspace that contains ``range(G)`` and is invariant under
    every ``F`` in ``F_list`` (the controllable subspace of ``Ctrb(F, G)``).

    Each round appends Krylov powers (``KRYLOV_STEPS`` for one generator, one for several) to the
    current basis and takes one rank decision; it stops when the span is invariant. A revolute
    axis (minimal polynomial of degree 3 on motions, 5 on parameters) needs a single round.
    """
    G = np.asarray(G, dtype=float)
    n = G.shape[0]
    norms = np.sqrt(np.sum(G * G, axis=0))
    keep = norms > RANK_TOL * max(1.0, norms.max(initial=0.0))
    Q = G[:, keep] / norms[keep]       # unit columns; roundoff columns dropped, not blown up
    if Q.shape[1] >= n:
        return orth(Q)
    steps = KRYLOV_STEPS if len(F_list) == 1 else 1
    while Q.shape[1]:
        blocks, B = [Q], Q
        for _ in range(steps):
            B = np.hstack([F @ B for F in F_list]) if len(F_list) > 1 else F_list[0] @ B
            blocks.append(B)
        Q = orth(np.hstack(blocks))
        if Q.shape[1] == n or all(_invariant(F, Q) for F in F_list):
            break
    return Q


def _invariant(F, Q) -> bool:
    """``range(F Q)`` within ``range(Q)`` (``Q`` orthonormal)."""
    FQ = F @ Q
    return np.abs(FQ - Q @ (Q.T @ FQ)).max() <= RANK_TOL * max(1.0, np.abs(F).max())
