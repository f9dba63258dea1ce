"""Lin's minimal set of inertia parameters (Theorem 2): which constants are identifiable, their
names and values."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .constants import PAR_TOL, ConfigurationError, Constants, parallel, axis_in, frames

@dataclass(frozen=True)
class MinimalSet:
    """The minimal inertia constants of Theorem 2 for a chain, with the joints ``r`` and ``s`` that determine them."""
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
    not_par = [j for j in rot if j > r and any(not parallel(p[r].rotation[:, 2], p[j].rotation[:, 2])
                                               for p in poses_set)]
    if not not_par:
        raise ConfigurationError("all rotational joints are parallel: Theorem 2 needs a joint s")
    s = not_par[0]
    g = np.array(model.gravity.linear)
    p0 = poses_set[0]

    def delta(j):
        par_g = all(parallel(p0[k].rotation[:, 2], g) for k in range(r, s) if links[k].kind == "R"
                    ) and all(parallel(p0[k].rotation[:, 2], g) for k in range(j + 1, s))
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
        if links[i].kind == "P" and not parallel(p0[i].rotation[:, 2], p0[r].rotation[:, 2]):
            names += [f"c{i + 1}_a", f"c{i + 1}_b"]
    return MinimalSet(r, s, tuple(names))


def _u_name(nm: str, b: int) -> str:
    return f"U{b}_11-U{b}_22" if nm == "U11-U22" else f"U{b}_{nm[1:]}"


def values(S: MinimalSet, const: Constants, links=None, model=None) -> np.ndarray:
    """The constants of ``S`` in its order (item 5 combinations need ``links`` and ``model``)."""
    out = []
    for name in S.names:
        body, field = parse_name(name)
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


def parse_name(name: str) -> tuple[int, str]:
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
        body, field = parse_name(name)
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
