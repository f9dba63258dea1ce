"""Lin's Algorithm 2: the minimal inertia constants identified by a backward recursion over the
composite bodies, one joint moving at a time; measurement equations (51)/(56), (52)/(57)/(61), (58).

References: Lin, "An Identification Method for Estimating the Inertia Parameters of a Manipulator" (seed 002).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .constants import ConfigurationError, Constants, axis_in, frames, varying_parts
from .measurements import Noise, OneJointMotions
from .minimal_set import MinimalSet, minimal_set, restrict, values

def rotational_row(w, dw, a_minus_g) -> np.ndarray:
    """(51) with the fifth entry's sign corrected: ``tau_j = row . [J11-J22, J33, J12, J13, J23,
    c_x, c_y]`` for a rigidly moving composite body ``j`` (all vectors in ``E_j``)."""
    return np.array([-w[0] * w[1], dw[2], w[0] ** 2 - w[1] ** 2, dw[0] - w[1] * w[2],
                     dw[1] + w[0] * w[2], a_minus_g[1], -a_minus_g[0]])


def translational_row(w, dw, a_minus_g) -> np.ndarray:
    """(52) with the second entry corrected: ``tau_k = row . [c_x, c_y, c_z, m^]``."""
    return np.array([-dw[1] + w[0] * w[2], dw[0] + w[1] * w[2], -(w[0] ** 2 + w[1] ** 2),
                     a_minus_g[2]])


@dataclass
class Identification:
    """Outcome of Algorithm 2: the minimal set, the estimated constants and, per body, the rank of its regressor and the unknowns solved for."""
    S: MinimalSet
    constants: Constants            # estimates (entries outside S are zero)
    values: np.ndarray              # in S order
    regressor_ranks: dict           # paper body number -> rank of its stacked regressor
    unknowns: dict                  # paper body number -> number of unknowns solved for


def _solve(A, b, body: int, what: str, ranks: dict, unknowns: dict):
    A = np.asarray(A)
    rank = int(np.linalg.matrix_rank(A, tol=1e-9 * max(1.0, np.abs(A).max())))
    ranks[body], unknowns[body] = rank, A.shape[1]
    if rank < A.shape[1]:
        raise ConfigurationError(f"composite body {body}: the configurations do not excite {what} "
                                 f"(regressor rank {rank} < {A.shape[1]} unknowns)")
    return np.linalg.lstsq(A, np.asarray(b), rcond=None)[0]


def _check_axis(u, body: int, perpendicular: bool, translational: bool, q) -> None:
    where = f"composite body {body} at q = {np.round(q, 4).tolist()}"
    if translational:
        if np.sum(np.abs(u) > 1e-6) < 2:
            raise ConfigurationError(f"{where}: step 2.2 needs two nonzero components of u_r, got "
                                     f"{np.round(u, 4).tolist()}")
    elif perpendicular:
        if min(abs(u[0]), abs(u[1])) < 1e-6:
            raise ConfigurationError(f"{where}: u_r has a zero x or y component "
                                     f"{np.round(u, 4).tolist()}")
    elif min(np.abs(u)) < 1e-6 or abs(u[0] - u[1]) < 1e-6:
        raise ConfigurationError(f"{where}: step 2.1 needs all components of u_r nonzero and the "
                                 f"first two different, got {np.round(u, 4).tolist()}")


def _own_joint_u33(meas: OneJointMotions, links, q, body: int, est: Constants, time: float) -> float:
    """(58) from one sample of joint ``body`` moving alone: ``(U_j)_33`` given ``k_j``'s x, y."""
    j = body - 1
    ell, V = varying_parts(links, q, est)
    (qt, _, qdd, tau), = meas.move(q, j, times=(time,))
    if abs(qdd) < 1e-9:
        raise ConfigurationError(f"composite body {body}: the sample at t = {time} s has qdd = 0, "
                                 "so (58) cannot give (U)33 from one sample")
    g = frames(meas.model, qt)[j].rotation.T @ meas.g0
    known = qdd * V[j, 2, 2] + np.array([-g[1], g[0]]) @ (ell[j, :2] + est.k[j, :2])
    return (tau[j] - known) / qdd


def algorithm2(links, model: pin.Model, q_base, variants, noise: Noise | None = None, seed: int = 0,
               sigma: float = 10.0, times=(0.2, 0.3, 0.4), own_joint_time: float = 0.2,
               known_outboard: Constants | None = None) -> Identification:
    """Lin's Algorithm 2 (steps 2 and 3; m^ of a translational joint is found with its k in
    step 2.2, as in the paper's example). Joint ``r`` follows the step response (64)-(66) from each
    configuration; torques come from RNEA (optionally with ``noise``).

    ``known_outboard``: use these (true) constants for the outer bodies instead of the estimates, to
    separate an equation's own error from the error the backward recursion carries inwards.
    """
    n = len(links)
    S = minimal_set(links, model)
    r, s = S.r, S.s
    meas = OneJointMotions(model, noise or Noise(), np.random.default_rng(seed), sigma, times)
    est = Constants.zeros(n)
    ranks: dict[int, int] = {}
    unknowns: dict[int, int] = {}
    for j in reversed(range(s, n)):                          # step 2
        body = j + 1
        outer = restrict(S, known_outboard) if known_outboard is not None else est
        configs = [np.asarray(q_base, dtype=float)] + list(variants.get(body, []))
        trans = links[j].kind == "P"
        perpendicular = not trans and all(
            abs(axis_in(frames(model, q), r, j)[2]) < 1e-9 for q in configs)
        A, b = [], []
        for q in configs:
            _check_axis(axis_in(frames(model, q), r, j), body, perpendicular, trans, q)
            ell, V = varying_parts(links, q, outer)
            for qt, qd, qdd, tau in meas.move(q, r):
                w, dw, amg = meas.body_kinematics(qt, r, j, qd, qdd)
                if trans:
                    row = translational_row(w, dw, amg)
                    A.append(row)
                    b.append(tau[j] - row[:3] @ ell[j])
                else:
                    row = rotational_row(w, dw, amg)
                    Vj = V[j]
                    varying = np.array([Vj[0, 0] - Vj[1, 1], Vj[2, 2], Vj[0, 1], Vj[0, 2], Vj[1, 2],
                                        ell[j, 0], ell[j, 1]])
                    A.append(np.delete(row, 1) if perpendicular else row)
                    b.append(tau[j] - row @ varying)
        x = _solve(A, b, body, "its constants", ranks, unknowns)
        if trans:
            est.k[j], est.m_hat[j] = x[:3], x[3]
            continue
        if perpendicular:
            x = np.insert(x, 1, 0.0)
        est.U[j, 0, 0], est.U[j, 2, 2] = x[0], x[1]
        est.U[j, 0, 1] = est.U[j, 1, 0] = x[2]
        est.U[j, 0, 2] = est.U[j, 2, 0] = x[3]
        est.U[j, 1, 2] = est.U[j, 2, 1] = x[4]
        est.k[j, :2] = x[5:7]
        if perpendicular:   # (U_j)33 is invisible to joint r: rotate joint j alone, (58)
            k_known = outer.copy()
            k_known.k[j, :2] = est.k[j, :2]
            est.U[j, 2, 2] = _own_joint_u33(meas, links, configs[0], body, k_known, own_joint_time)
    for j in reversed(range(r, s)):                          # step 3
        body = j + 1
        if links[j].kind != "R":
            raise ConfigurationError(f"composite body {body}: translational joints between r and s "
                                     "(step 3.2) are not covered")
        outer = restrict(S, known_outboard) if known_outboard is not None else est
        with_k = f"k{body}_x" in S.names
        if j == r and not with_k:
            est.U[j, 2, 2] = _own_joint_u33(meas, links, q_base, body, outer, own_joint_time)
            ranks[body], unknowns[body] = 1, 1
            continue
        A, b = [], []
        ell, V = varying_parts(links, q_base, outer)
        for qt, qd, qdd, tau in meas.move(q_base, r):
            if j == r:     # (58) with gravity not along the axis
                g = frames(model, qt)[j].rotation.T @ meas.g0
                row = np.array([qdd, -g[1], g[0]])
            else:          # (56) for a joint parallel to r: only U33, kx, ky are seen
                w, dw, amg = meas.body_kinematics(qt, r, j, qd, qdd)
                row = rotational_row(w, dw, amg)[[1, 5, 6]]
            A.append(row if with_k else row[:1])
            b.append(tau[j] - row @ np.array([V[j, 2, 2], ell[j, 0], ell[j, 1]]))
        x = _solve(A, b, body, "(U)33 and k", ranks, unknowns)
        est.U[j, 2, 2] = x[0]
        if with_k:
            est.k[j, :2] = x[1:3]
    return Identification(S, est, values(S, est, links, model), ranks, unknowns)
