"""Minimal inertia parameters identified one joint at a time (seed 002, Lin 1991).

Frames ``E_i`` are Craig's modified DH frames (seed 002's "normal driving-axis" frames), i.e. the
joint frames of :func:`inertial_id.core.builtin_models.mdh_model`; a robot is given as its list of
:class:`~inertial_id.core.builtin_models.Link` rows plus the pinocchio model built from them, which
supplies kinematics (frame poses) and the simulated measurements (RNEA torques).

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

from ..builtin_models import Link

PAR_TOL = 1e-9        # |sin angle| below which two axes count as parallel


class ConfigurationError(ValueError):
    """A configuration or motion violates a condition of Algorithm 2; the message says which."""


@dataclass
class Constants:
    """Inertia constants of every composite body (0-based), in ``E_i``."""

    m_hat: np.ndarray     # (n,)
    k: np.ndarray         # (n, 3)
    U: np.ndarray         # (n, 3, 3)

    def copy(self) -> "Constants":
        return Constants(self.m_hat.copy(), self.k.copy(), self.U.copy())

    @staticmethod
    def zeros(n: int) -> "Constants":
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
    data = model.createData()
    pin.forwardKinematics(model, data, np.asarray(q, dtype=float))
    return [data.oMi[j + 1] for j in range(model.njoints - 1)]


def axis_in(poses, i: int, j: int) -> np.ndarray:
    """``u_i^(j)``: axis of joint ``i`` expressed in ``E_j``."""
    return poses[j].rotation.T @ poses[i].rotation[:, 2]


def offset_in(poses, i: int, j: int) -> np.ndarray:
    """``s`` from ``E_i``'s origin to ``E_j``'s origin, in ``E_j``."""
    return poses[j].rotation.T @ (poses[j].translation - poses[i].translation)


def _parallel(u, v) -> bool:
    return np.linalg.norm(np.cross(u, v)) < PAR_TOL


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


# --- Theorem 2 ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MinimalSet:
    r: int                     # first rotational joint (0-based)
    s: int                     # nearest rotational joint not parallel to r (0-based)
    names: tuple[str, ...]     # Theorem 2 order, 1-based body numbers as in the paper

    def __len__(self) -> int:
        return len(self.names)


ROT_NAMES = ("U11-U22", "U33", "U12", "U13", "U23", "kx", "ky")


def minimal_set(links, model: pin.Model, seed: int = 0) -> MinimalSet:
    """Theorem 2's set S with its switches ``delta_j`` (item 1) and ``sigma_i`` (item 5).

    Parallelism is decided on two random configurations (a relation that holds on both holds
    everywhere for the joint pairs the theorem compares)."""
    n = len(links)
    rng = np.random.default_rng(seed)
    poses_set = [frames(model, rng.uniform(-np.pi, np.pi, n)) for _ in range(2)]
    rot = [i for i, link in enumerate(links) if link.kind == "R"]
    if not rot:
        raise ConfigurationError("Theorem 2 needs at least one rotational joint")
    r = rot[0]
    not_par = [j for j in rot if j > r and any(not _parallel(p[r].rotation[:, 2], p[j].rotation[:, 2])
                                               for p in poses_set)]
    if not not_par:
        raise ConfigurationError("all rotational joints are parallel: Theorem 2 needs a joint s")
    s = not_par[0]
    g = np.array(model.gravity.linear)
    p0 = poses_set[0]

    def delta(j):
        par_g = all(_parallel(p0[k].rotation[:, 2], g) for k in range(r, s) if links[k].kind == "R"
                    ) and all(_parallel(p0[k].rotation[:, 2], g) for k in range(j + 1, s))
        offsets = all(np.linalg.norm(np.cross(p[r].rotation[:, 2], p[j].translation - p[m].translation))
                      < PAR_TOL for p in poses_set for m in range(r, j) if links[m].kind == "R")
        return 0 if par_g and offsets else 1

    names = []
    for j in range(r, s):                                   # item 1
        if links[j].kind == "R":
            names.append(f"U{j + 1}_33")
            if delta(j):
                names += [f"k{j + 1}_x", f"k{j + 1}_y"]
    for j in range(s, n):                                   # item 2
        if links[j].kind == "R":
            names += [f"{nm[0]}{j + 1}_{nm[1:]}" if nm[0] == "k" else _u_name(nm, j + 1) for nm in ROT_NAMES]
    names += [f"m{i + 1}" for i in range(n) if links[i].kind == "P"]          # item 3
    for i in range(s + 1, n):                               # item 4
        if links[i].kind == "P":
            names += [f"k{i + 1}_x", f"k{i + 1}_y", f"k{i + 1}_z"]
    for i in range(r + 1, s):                               # item 5
        if links[i].kind == "P" and not _parallel(p0[i].rotation[:, 2], p0[r].rotation[:, 2]):
            names += [f"c{i + 1}_a", f"c{i + 1}_b"]
    return MinimalSet(r, s, tuple(names))


def _u_name(nm: str, b: int) -> str:
    return f"U{b}_11-U{b}_22" if nm == "U11-U22" else f"U{b}_{nm[1:]}"


def values(S: MinimalSet, const: Constants, links=None, model=None) -> np.ndarray:
    """The constants of ``S`` in its order (item 5 combinations need ``links`` and ``model``)."""
    out = []
    for name in S.names:
        body, field = _parse(name)
        i = body - 1
        U, k = const.U[i], const.k[i]
        table = {"U11-U22": U[0, 0] - U[1, 1], "U33": U[2, 2], "U12": U[0, 1], "U13": U[0, 2],
                 "U23": U[1, 2], "kx": k[0], "ky": k[1], "kz": k[2], "m": const.m_hat[i]}
        if field in table:
            out.append(table[field])
        else:
            u = axis_in(frames(model, np.zeros(len(links))), S.r, i)
            out.append(-u[1] * k[0] + u[0] * k[1] if field == "ca"
                       else -u[2] * (u[0] * k[0] + u[1] * k[1]) + (1 - u[2] ** 2) * k[2])
    return np.array(out)


def _parse(name: str) -> tuple[int, str]:
    """``'U4_11-U4_22'`` -> (4, 'U11-U22'); ``'k3_z'`` -> (3, 'kz'); ``'m3'`` -> (3, 'm')."""
    head, _, tail = name.partition("_")
    body = int(head[1:])
    if head[0] == "m":
        return body, "m"
    if head[0] == "k":
        return body, "k" + tail
    if head[0] == "c":
        return body, "c" + tail
    return body, "U11-U22" if "-" in tail else "U" + tail


def restrict(S: MinimalSet, const: Constants) -> Constants:
    """Constants with every entry outside ``S`` set to zero (``U22`` folded into ``U11``)."""
    out = Constants.zeros(len(const.m_hat))
    for name in S.names:
        body, field = _parse(name)
        i = body - 1
        if field == "m":
            out.m_hat[i] = const.m_hat[i]
        elif field in ("kx", "ky", "kz"):
            out.k[i, "xyz".index(field[1])] = const.k[i, "xyz".index(field[1])]
        elif field == "U11-U22":
            out.U[i, 0, 0] = const.U[i, 0, 0] - const.U[i, 1, 1]
        elif field.startswith("U"):
            a, b = int(field[1]) - 1, int(field[2]) - 1
            out.U[i, a, b] = out.U[i, b, a] = const.U[i, a, b]
    return out


# --- measurement equations (51)/(56), (52)/(57)/(61), (58) ------------------------------------------

def rotational_row(w, dw, a_minus_g) -> np.ndarray:
    """(51) with the fifth entry's sign corrected: ``tau_j = row . [J11-J22, J33, J12, J13, J23,
    c_x, c_y]`` for a rigidly moving composite body ``j`` (all vectors in ``E_j``)."""
    return np.array([-w[0] * w[1], dw[2], w[0] ** 2 - w[1] ** 2, dw[0] - w[1] * w[2],
                     dw[1] + w[0] * w[2], a_minus_g[1], -a_minus_g[0]])


def translational_row(w, dw, a_minus_g) -> np.ndarray:
    """(52) with the second entry corrected: ``tau_k = row . [c_x, c_y, c_z, m^]``."""
    return np.array([-dw[1] + w[0] * w[2], dw[0] + w[1] * w[2], -(w[0] ** 2 + w[1] ** 2),
                     a_minus_g[2]])


def step_response(t, sigma: float = 10.0, amplitude: float = np.pi / 6, start: float = 0.7):
    """(64)-(66): critically damped step of one joint: (q, qd, qdd) at times ``t``."""
    t = np.asarray(t, dtype=float)
    e = np.exp(-sigma * t)
    return (amplitude * (1 - (1 + sigma * t) * e) + start, amplitude * sigma ** 2 * t * e,
            amplitude * (1 - sigma * t) * sigma ** 2 * e)


# --- Algorithm 2: backward recursion, one joint moving at a time -----------------------------------

@dataclass(frozen=True)
class Noise:
    """Relative measurement noise (standard deviation as a fraction of each measured value)."""

    torque: float = 0.0
    rate: float = 0.0          # applied to qd and qdd

    def any(self) -> bool:
        return self.torque > 0 or self.rate > 0


@dataclass
class Identification:
    S: MinimalSet
    constants: Constants            # estimates (entries outside S are zero)
    values: np.ndarray              # in S order
    regressor_ranks: dict           # paper body number -> rank of its stacked regressor
    unknowns: dict                  # paper body number -> number of unknowns solved for


# Seed 002 Table I as printed, rows = configurations, u_1^(j) for j = 2..6 (None: not used); the
# printed -0.8264 in row 3, u_1^(6) is a misprint for -0.8624 (corrected here).
STANFORD_TABLE1 = (
    {2: (0.7648, -0.6442, 0.0), 3: (0.7648, 0.0, 0.6442), 4: (0.5850, -0.4927, 0.6442),
     5: (-0.1159, 0.8624, 0.4927), 6: (0.2288, 0.4515, -0.8624)},
    {2: (0.7648, 0.6442, 0.0), 3: (0.7648, 0.0, -0.6442), 4: (0.5850, 0.4927, 0.6442),
     5: (-0.8696, 0.0324, 0.4927), 6: (-0.4060, 0.3022, -0.8624)},
    {2: (0.8253, 0.5646, 0.0), 3: None, 4: (0.6313, 0.4319, 0.6442),
     5: (-0.8620, 0.1190, 0.4927), 6: (-0.3738, 0.3412, -0.8624)},
)


def stanford_configurations(q_base=(0.7, 0.7, 0.0, 0.7, 0.7, 0.7)):
    """Seed 002's exciting configurations: the base (62) and, per composite body, the variants of
    Table I rows 2 and 3 (the body's own joint at -0.7 and -0.6; body 3: q2 = -0.7)."""
    q_base = np.asarray(q_base, dtype=float)
    variants = {}
    for body, changes in {2: ((1, -0.7), (1, -0.6)), 3: ((1, -0.7),), 4: ((3, -0.7), (3, -0.6)),
                          5: ((4, -0.7), (4, -0.6)), 6: ((5, -0.7), (5, -0.6))}.items():
        variants[body] = []
        for joint, value in changes:
            q = q_base.copy()
            q[joint] = value
            variants[body].append(q)
    return q_base, variants


def table1(model: pin.Model, S: MinimalSet, q_base, variants) -> list[dict]:
    """``u_r^(j)`` for every body ``j > r`` in each configuration (rows: base, variants)."""
    rows = []
    for row in range(1 + max(len(v) for v in variants.values())):
        entry = {}
        for body, qs in sorted(variants.items()):
            configs = [q_base] + list(qs)
            entry[body] = (axis_in(frames(model, configs[row]), S.r, body - 1)
                           if row < len(configs) else None)
        rows.append(entry)
    return rows


class _Measurer:
    """Simulated one-joint motions: RNEA torques of the model, with optional relative noise."""

    def __init__(self, model, noise: Noise, rng, sigma: float, times):
        self.model, self.data = model, model.createData()
        self.noise, self.rng, self.sigma, self.times = noise, rng, sigma, tuple(times)
        self.g0 = np.array(model.gravity.linear)

    def _perturb(self, x, rel):
        return x * (1 + rel * self.rng.normal(size=np.shape(x))) if rel > 0 else x

    def move(self, q, joint: int, times=None):
        """Yield (q(t), measured qd, measured qdd, measured tau) while ``joint`` alone moves."""
        for t in self.times if times is None else times:
            qj, qd, qdd = step_response(t, self.sigma, start=q[joint])
            qt = np.array(q, dtype=float)
            qt[joint] = qj
            v, a = np.zeros(len(q)), np.zeros(len(q))
            v[joint], a[joint] = qd, qdd
            tau = pin.rnea(self.model, self.data, qt, v, a)
            yield (qt, self._perturb(qd, self.noise.rate), self._perturb(qdd, self.noise.rate),
                   self._perturb(tau, self.noise.torque))

    def body_kinematics(self, qt, mover: int, body: int, qd, qdd):
        """(w, dw, a - g) of the rigid composite body ``body`` in its frame, only ``mover`` moving."""
        poses = frames(self.model, qt)
        u = axis_in(poses, mover, body)
        s = offset_in(poses, mover, body)
        a = np.cross(u, s) * qdd + np.cross(u, np.cross(u, s)) * qd ** 2
        return u * qd, u * qdd, a - poses[body].rotation.T @ self.g0


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


def _own_joint_u33(meas: _Measurer, links, q, body: int, est: Constants, time: float) -> float:
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


def algorithm2(links, model: pin.Model, q_base, variants, noise: Noise = Noise(), seed: int = 0,
               sigma: float = 10.0, times=(0.2, 0.3, 0.4), own_joint_time: float = 0.2,
               known_outboard: Constants | None = None) -> Identification:
    """Seed 002 Algorithm 2 (steps 2 and 3; m^ of a translational joint is found with its k in
    step 2.2, as in the paper's example). Joint ``r`` follows the step response (64)-(66) from each
    configuration; torques come from RNEA (optionally with ``noise``).

    ``known_outboard``: use these (true) constants for the outer bodies instead of the estimates, to
    separate an equation's own error from the error the backward recursion carries inwards.
    """
    n = len(links)
    S = minimal_set(links, model)
    r, s = S.r, S.s
    meas = _Measurer(model, noise, np.random.default_rng(seed), sigma, times)
    est = Constants.zeros(n)
    ranks, unknowns = {}, {}
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


def noise_study(links, model: pin.Model, q_base, variants, noise: Noise, trials: int = 100,
                seed: int = 0) -> dict:
    """How measurement noise propagates through the backward recursion of Algorithm 2.

    Per composite body (in identification order, outermost first): RMS error of its constants in
    ``S`` when the outer constants are the recursion's own estimates ("propagated") and when they
    are the true ones ("local", the body's own equations only); their ratio is the amplification
    the recursion adds. Also the relative RMS error of ``H(q)`` and of the gravity torque rebuilt
    from the estimates at random configurations.
    """
    S = minimal_set(links, model)
    true = inertia_constants(links)
    truth = values(S, true, links, model)
    bodies = [int(_parse(nm)[0]) for nm in S.names]
    prop, local = [], []
    for t in range(trials):
        prop.append(algorithm2(links, model, q_base, variants, noise, seed=seed + t).values - truth)
        local.append(algorithm2(links, model, q_base, variants, noise, seed=seed + t,
                                known_outboard=true).values - truth)
    prop, local = np.array(prop), np.array(local)
    rng = np.random.default_rng(seed)
    est = restrict(S, algorithm2(links, model, q_base, variants, noise, seed=seed + trials).constants)
    exact = restrict(S, true)
    H_err, g_err = [], []
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, len(links))
        H = mass_matrix(links, model, q, exact)
        g = gravity_torque(links, model, q, exact)
        H_err.append(np.linalg.norm(mass_matrix(links, model, q, est) - H) / np.linalg.norm(H))
        g_err.append(np.linalg.norm(gravity_torque(links, model, q, est) - g) / max(np.linalg.norm(g), 1e-12))
    per_body = []
    for body in sorted(set(bodies), reverse=True):
        cols = [i for i, b in enumerate(bodies) if b == body]
        rp = float(np.sqrt(np.mean(prop[:, cols] ** 2)))
        rl = float(np.sqrt(np.mean(local[:, cols] ** 2)))
        scale = float(np.sqrt(np.mean(truth[cols] ** 2)))
        per_body.append({"body": body, "rms_error_propagated": rp, "rms_error_local": rl,
                         "amplification": rp / rl if rl > 0 else None,
                         "relative_rms_error_propagated": rp / scale if scale > 0 else None})
    return {"torque_noise": noise.torque, "rate_noise": noise.rate, "trials": trials,
            "per_body_in_identification_order": per_body,
            "H_relative_rms_error": float(np.sqrt(np.mean(np.square(H_err)))),
            "gravity_relative_rms_error": float(np.sqrt(np.mean(np.square(g_err))))}
