"""The linear identification problem ``u = G^T (Y pi + Yf phi)`` stacked over recorded samples.

Parameter vector ``theta = [pi_1 .. pi_n, phi_1 .. phi_na]``: one pinocchio-order block per moving
body (in its joint frame, labelled by the body's link name) and, with friction, ``[Fc, Fv, Ia, beta]``
per **actuated** joint. Friction of passive joints is left out: their bearings are unpowered and
light, and their terms are hard to tell apart from the rod inertias through ``G^T``.

Rows are sample-major: row ``k * na + j`` is actuated joint ``j`` at sample ``k``. Parameters held
fixed (``fixed_groups``) move to the right side: ``b = u - A_fixed theta_fixed``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..robot import closed_chain as cc
from ..data.data_io import DataError, Run
from ..identifiability.numeric import BaseParameters, base_parameters
from ..robot.params import FRICTION_NAMES, friction_names, parameter_names
from ..robot.regressor import friction_regressor, joint_torque_regressor


# Columns whose pivot (column-normalised QR) is below 1e-5 of the largest are treated as not
# identifiable: e.g. the Gen3 URDF's joint-1 axis is tilted by 7e-6 rad (rpy 3.1416, not pi), which
# makes the total mass "visible" to joint 1 at a 2e-7 level no real torque sensor resolves.
STRUCTURAL_REL_TOL = 1e-5
# The data leave a base parameter undetermined when its pivot falls below this (exactly unexcited
# columns fall to ~1e-15; merely weak excitation stays far above).
DATA_REL_TOL = 1e-7
# A base parameter is one free parameter alone when its coefficients on the dependent ones (Kd: lengths,
# squared lengths and ratios, 1e-5 and up) are all below this; the sampled regressor's QR leaves
# roundoff up to 1e-7 in Kd (the real Gen3 runs).
ALONE_TOL = 1e-6


class IdentificationError(ValueError):
    """Data or options that do not determine the parameters; the message names the problem."""


def body_names(model: pin.Model) -> tuple[str, ...]:
    """Name of the link carried by each moving joint (its first BODY frame), in joint order."""
    names = []
    for j in range(1, model.njoints):
        frame = next((f for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == j), None)
        names.append(frame.name if frame is not None else model.names[j])
    return tuple(names)


@dataclass(frozen=True)
class ParameterLayout:
    """Names, nominal values and named groups of the parameter vector ``theta``."""

    bodies: tuple[str, ...]
    friction_joints: tuple[str, ...]
    nominal: np.ndarray = field(repr=False)

    @property
    def names(self) -> list[str]:
        """Names of every entry of ``theta``: the bodies' inertial parameters, then the joints' friction."""
        out = [n for b in self.bodies for n in parameter_names(b)]
        return out + [n for j in self.friction_joints for n in friction_names(j)]

    @property
    def n_inertial(self) -> int:
        """Number of inertial parameters (10 per body)."""
        return 10 * len(self.bodies)

    @property
    def size(self) -> int:
        """Length of ``theta`` (inertial, then 4 friction terms per joint)."""
        return self.n_inertial + 4 * len(self.friction_joints)

    def groups(self) -> dict[str, np.ndarray]:
        """Groups usable with ``fixed``: ``inertial`` (all bodies), ``friction`` (all friction),
        each of ``Fc``, ``Fv``, ``Ia``, ``beta`` over the joints, each body name and each joint name
        (its friction)."""
        n_i = self.n_inertial
        nf = len(self.friction_joints)
        groups = {"inertial": np.arange(n_i), "friction": np.arange(n_i, self.size)}
        for k, comp in enumerate(FRICTION_NAMES):
            groups[comp] = n_i + 4 * np.arange(nf) + k
        for k, body in enumerate(self.bodies):
            groups[body] = 10 * k + np.arange(10)
        for k, joint in enumerate(self.friction_joints):
            groups.setdefault(joint, n_i + 4 * k + np.arange(4))
        return groups

    def indices(self, fixed_groups) -> np.ndarray:
        """Sorted indices into ``theta`` of the named groups; IdentificationError for an unknown group."""
        groups = self.groups()
        unknown = [g for g in fixed_groups if g not in groups]
        if unknown:
            raise IdentificationError(f"unknown parameter group(s) {unknown}; groups are: inertial, "
                                      f"friction, {', '.join(FRICTION_NAMES)}, a body or a joint name")
        idx = [groups[g] for g in fixed_groups]
        return np.unique(np.concatenate(idx)) if idx else np.zeros(0, dtype=int)

    def body_slices(self):
        """``(body, slice of its 10 parameters in theta)`` for every body."""
        return [(b, slice(10 * k, 10 * k + 10)) for k, b in enumerate(self.bodies)]

    def friction_block(self, theta) -> np.ndarray:
        """``(n_friction_joints, 4)`` friction parameters, zero when the layout has none."""
        return np.asarray(theta)[self.n_inertial:].reshape(-1, 4)


def make_layout(chain: cc.ClosedChain, friction: bool, rotor_inertia: dict | None = None) -> ParameterLayout:
    """Layout with nominal values: the model's inertials; friction ``[0, 0, Ia, 0]`` with the
    profile's rotor inertia (or the model's armature)."""
    model = chain.model
    inertial = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    joints = chain.actuated_joints if friction else ()
    phi = np.zeros((len(joints), 4))
    for k, j in enumerate(joints):
        phi[k, 2] = (rotor_inertia or {}).get(j, model.armature[model.joints[model.getJointId(j)].idx_v])
    return ParameterLayout(body_names(model), tuple(joints), np.concatenate([inertial, phi.ravel()]))


@dataclass
class StackedRows:
    """Stacked rows ``W theta = u`` of one or more runs (all parameters; nothing held fixed)."""

    W: np.ndarray             # (N * na, n_params)
    u: np.ndarray             # (N * na,) actuated torques, N m
    n_samples: int
    q: np.ndarray             # (N, nv) completed states, for diagnostics and simulation
    v: np.ndarray
    a: np.ndarray
    constraint_residual: dict  # max |c| (m), |J v| (m/s), |J a + Jdot v| (m/s^2) over the samples
    run_lengths: tuple = ()   # samples of each run, in stacking order

    def run_samples(self) -> list[np.ndarray]:
        """Sample indices of each run."""
        ends = np.cumsum(self.run_lengths, dtype=int)
        return [np.arange(e - n, e) for n, e in zip(self.run_lengths, ends)]


def actuated_columns(chain: cc.ClosedChain, run: Run) -> Run:
    """The run's actuated columns: runs hold either the actuated joints or all joints."""
    n = run.q.shape[1]
    if n == chain.na:
        return run
    if n == chain.model.nv:
        return run.select(chain.idx_a)
    raise DataError(f"run '{run.name}' has {n} joint columns; the model has {chain.na} actuated joints "
                    f"({', '.join(chain.actuated_joints)}) and {chain.model.nv} joints in all")


def build_rows(chain: cc.ClosedChain, layout: ParameterLayout, runs) -> StackedRows:
    """Complete the passive joints (IK, ``G``, ``Gdot``), then stack ``[G^T Y | Yf_a]`` and ``u``."""
    model, data = chain.model, chain.model.createData()
    na = chain.na
    with_friction = bool(layout.friction_joints)
    blocks, taus, states = [], [], []
    residual = np.zeros(3)
    for run in runs:
        run = actuated_columns(chain, run)
        if run.qdd is None:
            raise DataError(f"run '{run.name}' has no accelerations (apply the pipeline first)")
        try:
            q, v, a, G = cc.complete_trajectory(chain, data, run.q, run.qd, run.qdd)
        except cc.ClosureError as exc:
            raise IdentificationError(f"run '{run.name}': {exc}") from None
        n = run.n_samples
        W = np.empty((n, na, layout.size))
        for k in range(n):
            Y = joint_torque_regressor(model, data, q[k], v[k], a[k])
            W[k, :, :layout.n_inertial] = Y if chain.is_open else G[k].T @ Y
            if with_friction:
                W[k, :, layout.n_inertial:] = friction_regressor(run.qd[k], run.qdd[k])
            if not chain.is_open:
                J = cc.constraint_jacobian(chain, data, q[k])
                residual = np.maximum(residual, [
                    np.abs(cc.constraint(chain, data, q[k])).max(), np.abs(J @ v[k]).max(),
                    np.abs(J @ a[k] + cc.constraint_drift(chain, data, q[k], v[k])).max()])
        blocks.append(W.reshape(n * na, layout.size))
        taus.append(run.tau.reshape(-1))
        states.append((q, v, a))
    q_all, v_all, a_all = (np.vstack([s[i] for s in states]) for i in range(3))
    return StackedRows(np.vstack(blocks), np.concatenate(taus), sum(s[0].shape[0] for s in states),
                q_all, v_all, a_all,
                dict(zip(("position_m", "velocity_m_per_s", "acceleration_m_per_s2"), residual.tolist())),
                tuple(s[0].shape[0] for s in states))


def structural_base(chain: cc.ClosedChain, layout: ParameterLayout, free: np.ndarray, rows: StackedRows,
                    n_samples: int = 80, seed: int = 0) -> BaseParameters:
    """Base parameters of the model (not of the data): the projected regressor sampled at states
    near the recorded configurations (actuated positions perturbed by up to 0.3 rad, IK warm-started
    from the recorded solution) with random velocities and accelerations, free columns only."""
    rng = np.random.default_rng(seed)
    model, data = chain.model, chain.model.createData()
    picks = rng.choice(rows.n_samples, size=n_samples, replace=rows.n_samples < n_samples)
    stacked = []
    for k in picks:
        q_a = rows.q[k, chain.idx_a] + rng.uniform(-0.3, 0.3, chain.na)
        try:
            q = cc.solve_passive(chain, data, q_a, rows.q[k, chain.idx_u])
        except cc.ClosureError:  # perturbed out of reach: use the recorded pose itself
            q = rows.q[k]
        G = cc.projection(chain, data, q)
        v_a, a_a = rng.normal(size=chain.na), rng.normal(size=chain.na)
        v = G @ v_a
        a = G @ a_a + cc.projection_drift(chain, data, q, v)
        Y = G.T @ joint_torque_regressor(model, data, q, v, a)
        if layout.friction_joints:
            Y = np.hstack([Y, friction_regressor(v_a, a_a)])
        stacked.append(Y[:, free])
    return base_parameters(np.vstack(stacked), rel_tol=STRUCTURAL_REL_TOL)


@dataclass
class Problem:
    """``A x = b`` over the free parameters ``x = theta[free]``, with base parameters and names."""

    layout: ParameterLayout
    joint_names: tuple[str, ...]      # actuated joints, the row order within a sample
    free: np.ndarray
    fixed: np.ndarray
    theta_fixed: np.ndarray
    A: np.ndarray
    b: np.ndarray
    base: BaseParameters              # structural base parameters of the free columns
    rows: StackedRows

    @property
    def na(self) -> int:
        """Number of actuated joints."""
        return len(self.joint_names)

    @property
    def free_names(self) -> list[str]:
        """Names of the free parameters ``x``."""
        names = self.layout.names
        return [names[i] for i in self.free]

    def full(self, x) -> np.ndarray:
        """``theta`` from the free part ``x`` and the fixed values."""
        theta = np.empty(self.layout.size)
        theta[self.free] = x
        theta[self.fixed] = self.theta_fixed
        return theta

    def base_names(self) -> list[str]:
        """Names of the base parameters (combinations of the free ones)."""
        return self.base.combinations(self.free_names)

    def identified_alone(self, tol: float = ALONE_TOL) -> np.ndarray:
        """Per entry of ``theta``: whether the data fix it by itself, i.e. it is a base parameter
        (independent column) that no dependent column enters (its row of ``Kd`` is zero). Dependent
        columns and fixed parameters are not identified."""
        out = np.zeros(self.layout.size, dtype=bool)
        base = self.base
        alone = np.all(np.abs(base.Kd) <= tol, axis=1) if base.Kd.size else np.ones(base.rank, dtype=bool)
        out[self.free[base.independent[alone]]] = True
        return out

    def subset(self, samples) -> Problem:
        """The same problem (same base parameters) on some of its samples, e.g. a fold."""
        samples = np.asarray(samples, dtype=int)
        r = (samples[:, None] * self.na + np.arange(self.na)).ravel()
        rows = self.rows
        sub = StackedRows(rows.W[r], rows.u[r], samples.size, rows.q[samples], rows.v[samples], rows.a[samples],
                   rows.constraint_residual, (samples.size,))
        return Problem(self.layout, self.joint_names, self.free, self.fixed, self.theta_fixed, self.A[r], self.b[r],
                       self.base, sub)


def check_excitation(problem: Problem, rel_tol: float = DATA_REL_TOL) -> None:
    """Raise naming the base parameters that the data leave undetermined (rank of ``A Pb``)."""
    A_b = problem.base.reduce(problem.A)
    data_base = base_parameters(A_b, rel_tol=rel_tol)
    if data_base.rank < A_b.shape[1]:
        names = problem.base_names()
        missing = [names[i] for i in sorted(data_base.dependent)]
        raise IdentificationError(
            f"the data do not excite {len(missing)} of {A_b.shape[1]} base parameters, which stay "
            f"unidentified: {'; '.join(missing[:8])}{' ...' if len(missing) > 8 else ''} "
            "(record more varied motion or hold these parameters fixed)")


def build_problem(chain: cc.ClosedChain, layout: ParameterLayout, runs, fixed_groups=(),
                  theta_fixed=None) -> Problem:
    """Stack the runs, move fixed groups (at ``theta_fixed``, default nominal) to the right side,
    compute the structural base parameters of the free part and check the data excite them all."""
    return problem_from_rows(chain, layout, build_rows(chain, layout, runs), fixed_groups, theta_fixed)


def problem_from_rows(chain: cc.ClosedChain, layout: ParameterLayout, rows: StackedRows, fixed_groups=(),
                      theta_fixed=None, check: bool = True) -> Problem:
    """:func:`build_problem` on rows already built (e.g. the same data with other groups held)."""
    fixed = layout.indices(fixed_groups)
    free = np.setdiff1d(np.arange(layout.size), fixed)
    theta = layout.nominal if theta_fixed is None else np.asarray(theta_fixed, dtype=float)
    b = rows.u - rows.W[:, fixed] @ theta[fixed]
    problem = Problem(layout, chain.actuated_joints, free, fixed, theta[fixed].copy(), rows.W[:, free], b,
                      structural_base(chain, layout, free, rows), rows)
    if check:
        check_excitation(problem)
    return problem
