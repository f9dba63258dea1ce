"""Conventions for inertial parameters: the one place where orders, frames and maps are defined.

Per-body parameter vector, **pinocchio order**, inertia about the body-frame origin::

    pi = [m, m*cx, m*cy, m*cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]

which is what ``pinocchio.Inertia.toDynamicParameters()`` returns. Every paper uses another order;
convert only at the boundary with the named functions below (``to_diagonal_first`` /
``from_diagonal_first`` ...).

Per-joint friction vector ``[Fc, Fv, Ia, beta]``: ``F = Fc*sign(qd) + Fv*qd + Ia*qdd + beta``.

Physical consistency: the pseudo-inertia ``J = [[tr(I)/2*1 - I, h], [h^T, m]]`` is positive
semidefinite (Wensing, Kim, Slotine 2017). The log-Cholesky map (Zhang, Zhou & Vasudevan, eq. 16) sends any
``eta`` in R^10 to a parameter vector with positive definite ``J``.

References:
- Wensing, Niemeyer, Slotine, "A Geometric Characterization of Observability in Inertial Parameter Identification" (seed 000)
- Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001)
- Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003)
- Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004)
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
FRICTION_NAMES = ("Fc", "Fv", "Ia", "beta")
LOG_CHOLESKY_NAMES = ("alpha", "d1", "d2", "d3", "s12", "s13", "s23", "s14", "s24", "s34")
_UNITS = {"m": "kg", "mcx": "kg m", "mcy": "kg m", "mcz": "kg m"}


def parameter_names(body: str) -> list[str]:
    """Column labels ``body.m``, ``body.mcx``, ... in pinocchio order."""
    return [f"{body}.{n}" for n in PARAMETER_NAMES]


def friction_names(joint: str) -> list[str]:
    """``joint.Fc``, ``joint.Fv``, ``joint.Ia``, ``joint.beta``."""
    return [f"{joint}.{n}" for n in FRICTION_NAMES]


def parameter_unit(name: str) -> str:
    """SI unit of a payload/body parameter named in pinocchio order (``payload.mcx`` -> ``kg m``)."""
    short = name.split(".")[-1]
    return _UNITS.get(short, "kg m²" if short.startswith("I") else "")


# What each entry of the robot vector theta_r (robot_parameters' layout) is, by the stated bound it
# rests on: the link inertials, then per joint [Fc, Fv, Ia, beta].
ROBOT_PARAMETER_GROUPS = {"Fc": "friction", "Fv": "friction", "Ia": "armature", "beta": "joint torque offsets"}


def robot_parameter_groups(model: pin.Model) -> np.ndarray:
    """(len theta_r,) the group of each robot parameter: ``link inertials``, or
    :data:`ROBOT_PARAMETER_GROUPS` of its friction term."""
    friction = [ROBOT_PARAMETER_GROUPS[n] for n in FRICTION_NAMES] * model.nv
    return np.array(["link inertials"] * 10 * (model.njoints - 1) + friction)


def robot_parameters(model: pin.Model) -> np.ndarray:
    """Nominal ``theta`` of a model: its body parameters and friction ``[0, 0, armature, 0]``."""
    bodies = [model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)]
    friction = np.zeros((model.nv, 4))
    friction[:, 2] = model.armature
    return np.concatenate(bodies + [friction.ravel()])


# Other orders, named by their layout. Index maps: other = pi[PERM]; pi = other[argsort(PERM)].
# Diagonal first, [m, mcx, mcy, mcz, XX, YY, ZZ, XY, YZ, XZ]: Zhang, Zhou & Vasudevan.
_DIAGONAL_FIRST = np.array([0, 1, 2, 3, 4, 6, 9, 5, 8, 7])
# Row-major upper triangle, [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]: Wensing et al.,
# Nadeau et al.
_ROW_MAJOR = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])
# Inertia first, mass last, [XX, XY, XZ, YY, YZ, ZZ, mpx, mpy, mpz, m]: Zhang, Haugk & Vasudevan.
_INERTIA_FIRST = np.array([4, 5, 7, 6, 8, 9, 1, 2, 3, 0])


def _permute(x, perm) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[..., perm]


def to_diagonal_first(pi):
    """Pinocchio order -> diagonal-first order."""
    return _permute(pi, _DIAGONAL_FIRST)


def from_diagonal_first(theta):
    """Diagonal-first order -> pinocchio order."""
    return _permute(theta, np.argsort(_DIAGONAL_FIRST))


def to_row_major(pi):
    """Pinocchio order -> row-major upper-triangle order."""
    return _permute(pi, _ROW_MAJOR)


def from_row_major(theta):
    """Row-major upper-triangle order -> pinocchio order."""
    return _permute(theta, np.argsort(_ROW_MAJOR))


def to_inertia_first(pi):
    """Pinocchio order -> inertia-first, mass-last order."""
    return _permute(pi, _INERTIA_FIRST)


def from_inertia_first(theta):
    """Inertia-first, mass-last order -> pinocchio order."""
    return _permute(theta, np.argsort(_INERTIA_FIRST))


def inertia_matrix(pi) -> np.ndarray:
    """Rotational inertia about the body-frame origin (3x3) from ``pi``."""
    _, _, _, _, ixx, ixy, iyy, ixz, iyz, izz = np.asarray(pi, dtype=float)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def params_from_inertia(m: float, h, I_O) -> np.ndarray:
    """``pi`` from mass, first moment ``h = m c`` and the inertia about the origin ``I_O``."""
    I_O = np.asarray(I_O, dtype=float)
    return np.array([m, *np.asarray(h, dtype=float),
                     I_O[0, 0], I_O[0, 1], I_O[1, 1], I_O[0, 2], I_O[1, 2], I_O[2, 2]])


def params_from_com(m: float, c, I_C) -> np.ndarray:
    """``pi`` from mass, centre of mass ``c`` and the inertia about the COM ``I_C`` (parallel axes)."""
    c = np.asarray(c, dtype=float)
    S = pin.skew(c)
    return params_from_inertia(m, m * c, np.asarray(I_C, dtype=float) - m * S @ S)


def com_from_params(pi) -> tuple[float, np.ndarray, np.ndarray]:
    """(m, c, I_C): mass, centre of mass, inertia about the COM. Requires m > 0."""
    pi = np.asarray(pi, dtype=float)
    m = pi[0]
    c = pi[1:4] / m
    S = pin.skew(c)
    return m, c, inertia_matrix(pi) + m * S @ S


def pseudo_inertia(pi) -> np.ndarray:
    """4x4 pseudo-inertia ``[[tr(I)/2*1 - I, h], [h^T, m]]``: the second moment of the mass."""
    pi = np.asarray(pi, dtype=float)
    I_O = inertia_matrix(pi)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_O) * np.eye(3) - I_O
    J[:3, 3] = J[3, :3] = pi[1:4]
    J[3, 3] = pi[0]
    return J


def params_from_pseudo_inertia(J) -> np.ndarray:
    """Parameters (pinocchio order) of the (4, 4) pseudo-inertia ``J``."""
    J = np.asarray(J, dtype=float)
    Sigma = J[:3, :3]
    return params_from_inertia(J[3, 3], J[:3, 3], np.trace(Sigma) * np.eye(3) - Sigma)


def is_physically_consistent(pi, tol: float = 1e-9) -> bool:
    """True when the pseudo-inertia is positive semidefinite up to ``tol`` relative to its scale."""
    eig = np.linalg.eigvalsh(pseudo_inertia(pi))
    return bool(eig[0] >= -tol * max(1.0, abs(eig[-1])))


def log_cholesky_to_params(eta) -> np.ndarray:
    """The log-Cholesky map (Zhang, Zhou & Vasudevan, eq. 16): ``eta = [alpha, d1, d2, d3, s12, s13, s23, s14, s24, s34]`` -> ``pi``.

    ``J = L L^T`` with ``L = e^alpha [[e^d1,0,0,0],[s12,e^d2,0,0],[s13,s23,e^d3,0],[s14,s24,s34,1]]``,
    so every ``eta`` gives a positive definite pseudo-inertia.
    """
    a, d1, d2, d3, s12, s13, s23, s14, s24, s34 = np.asarray(eta, dtype=float)
    L = np.exp(a) * np.array([[np.exp(d1), 0, 0, 0],
                              [s12, np.exp(d2), 0, 0],
                              [s13, s23, np.exp(d3), 0],
                              [s14, s24, s34, 1.0]])
    return params_from_pseudo_inertia(L @ L.T)


def params_to_log_cholesky(pi) -> np.ndarray:
    """Inverse of :func:`log_cholesky_to_params`; ``pi`` must have a positive definite pseudo-inertia."""
    try:
        L = np.linalg.cholesky(pseudo_inertia(pi))
    except np.linalg.LinAlgError as exc:
        raise ValueError("parameters are not strictly physically consistent") from exc
    a = np.log(L[3, 3])
    L = L / L[3, 3]
    return np.array([a, np.log(L[0, 0]), np.log(L[1, 1]), np.log(L[2, 2]),
                     L[1, 0], L[2, 0], L[2, 1], L[3, 0], L[3, 1], L[3, 2]])


def transform_params(pi_B, X_AB: pin.SE3) -> np.ndarray:
    """Express body parameters given in frame B in frame A, where ``X_AB`` is B's pose in A.

    Linear in ``pi_B`` (any vector, massless ones included): the pseudo-inertia transforms as
    ``J_A = T J_B T^T`` with the homogeneous matrix ``T`` of ``X_AB``.
    """
    T = X_AB.homogeneous
    return params_from_pseudo_inertia(T @ pseudo_inertia(pi_B) @ T.T)


def transform_matrix(X_AB: pin.SE3) -> np.ndarray:
    """10x10 matrix ``T`` with ``pi_A = T @ pi_B`` (the map of :func:`transform_params` is linear)."""
    return np.column_stack([transform_params(e, X_AB) for e in np.eye(10)])


def box_inertia_params(m: float, size, p_BC=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Uniform solid box of side lengths ``size`` centred at ``p_BC`` (axes aligned with the body frame)."""
    a, b, c = size
    I_C = (m / 12.0) * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return params_from_com(m, p_BC, I_C)


def cylinder_inertia_params(m: float, radius: float, length: float, p_BC=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Uniform solid cylinder, axis along body z, centred at ``p_BC``."""
    i_perp = m * (3 * radius**2 + length**2) / 12.0
    return params_from_com(m, p_BC, np.diag([i_perp, i_perp, 0.5 * m * radius**2]))
