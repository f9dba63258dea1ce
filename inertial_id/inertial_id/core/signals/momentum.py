"""Momentum form of the dynamics: rows without accelerations.

Full parameter vector ``theta = [pi_1, ..., pi_n, phi_1, ..., phi_n]``: each body's 10 parameters
(pinocchio order, joint frame, as in :func:`~.regressor.joint_torque_regressor`) followed by the
friction ``phi_k = [Fc, Fv, Ia, beta]`` of every joint (:data:`~.params.FRICTION_NAMES`).

Regressors at one state, no acceleration needed:

- ``W_m(q, qd) theta = M(q) qd + Ia o qd``: generalized momentum, rotors included;
- ``W_c(q, qd) theta = C(q, qd)^T qd - g(q) - F(qd)`` with ``F = Fc sign(qd) + Fv qd + beta``;

so that, with ``Mdot = C + C^T``, ``d/dt (W_m theta) = tau + W_c theta``.

``W_c`` is exact, no differentiation: ``C^T qd - g = dL/dq`` and, with body velocities ``V_i`` and
body-frame Jacobians ``J_i``, ``d(kinetic energy)/dq_k = sum_i (iX_0 dJ_world[:, k])^T (I_i V_i)``,
where ``I_i V_i``, the body's momentum, is linear in ``pi_i`` (see :class:`MomentumRegressor`).

Windows of ``h`` samples (forward Euler, the reference's eq. 10 with the errata fixed), samples
``j = i .. i+h-1``, state ``i+h`` closing the window::

    (W_m(t_{i+h}) - W_m(t_i) - sum_j W_c(t_j) dt_j) theta = sum_j tau(t_j) dt_j

Split into payload columns ``Y`` and the rest ``Y_r``: ``Y theta_e = U - Y_r theta_r`` with
``U = sum_j tau_j dt_j``. Moving the known part to the right gives the seed's ``U`` (its printed
``+ sum W_c,r dt`` is the sign erratum). Torque is sampled and held over each step, as the
simulator applies it; the forward-Euler error of the rest is O(h dt^2) (see ``test_momentum``).

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pinocchio as pin

from ..robot import params
from .effort_alignment import EffortAlignment
from ..robot.model import Robot


def robot_parameter_names(model: pin.Model) -> list[str]:
    """Names of the robot's nuisance columns: every joint's 10 link parameters, then its friction terms."""
    names = [f"{model.names[j]}.{n}" for j in range(1, model.njoints) for n in params.PARAMETER_NAMES]
    return names + [f"{model.names[j]}.{n}" for j in range(1, model.njoints) for n in params.FRICTION_NAMES]


class MomentumRegressor:
    """``W_m`` and ``W_c`` of a model (constant) with its own scratch data.

    Evaluated for many states at once (:meth:`states`): pinocchio gives, per state, each body's
    Jacobian and Jacobian time variation in the body frame and the gravity regressor; the products
    with the body momenta are then batched in numpy. With ``J_i``, ``dJ_i`` the body-frame
    Jacobians of body ``i`` (``iX_0`` times the world-frame ones) and ``Reg(u)`` the regressor of
    ``I_i u`` (linear in ``u``), joint ``k``'s row of body ``i``'s columns is
    ``J_i[:, k]^T Reg(v_i)`` in ``W_m`` and ``dJ_i[:, k]^T Reg(v_i)`` in ``d(kinetic energy)/dq``.
    """

    def __init__(self, model: pin.Model):
        if model.nq != model.nv or any(model.joints[j].nv != 1 for j in range(1, model.njoints)):
            raise ValueError("momentum regressors need one-DoF joints")
        self.model = model
        self.data = model.createData()
        n = model.nv
        self.n_bodies = model.njoints - 1
        self.n_body_cols = 10 * self.n_bodies
        self.n_cols = self.n_body_cols + 4 * n
        self._zero = np.zeros(n)
        # Reg(u) = sum_k u_k unit[k]: the body regressor is linear in the acceleration when the
        # velocity is zero, so one (6, 6 * 10) matrix turns a batch of motions into their regressors
        self._unit = np.stack([pin.bodyRegressor(pin.Motion.Zero(), pin.Motion(e)) for e in np.eye(6)])
        self._unit = self._unit.reshape(6, 60)

    def pinocchio_pass(self, Q, QD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(gravity (N, nv, 10 nb), J, dJ (N, nb, 6, nv))`` of ``N`` states: pinocchio's gravity
        regressor and, per body, its Jacobian and the Jacobian's time variation in the body frame.
        Pinocchio's functions take one state at a time, so this is one Python call per state and
        per body: the part of the rows' cost that is pinocchio's (``bench estimate`` times it)."""
        model, data = self.model, self.data
        N, nb, n = Q.shape[0], self.n_bodies, model.nv
        J, dJ = np.empty((N, nb, 6, n)), np.empty((N, nb, 6, n))
        gravity = np.empty((N, n, self.n_body_cols))
        local, bodies = pin.ReferenceFrame.LOCAL, range(1, model.njoints)
        for k in range(N):
            # the regressor call leaves data's kinematics at rest: the Jacobians come after it
            gravity[k] = pin.computeJointTorqueRegressor(model, data, Q[k], self._zero, self._zero)
            pin.computeJointJacobiansTimeVariation(model, data, Q[k], QD[k])
            J[k] = [pin.getJointJacobian(model, data, i, local) for i in bodies]
            dJ[k] = [pin.getJointJacobianTimeVariation(model, data, i, local) for i in bodies]
        return gravity, J, dJ

    def states(self, Q, QD) -> BodyStates:
        """Kinematic terms of ``N`` states ``Q, QD`` (``(N, nv)``), for the regressors below."""
        Q, QD = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(QD, dtype=float))
        N, nb = Q.shape[0], self.n_bodies
        gravity, J, dJ = self.pinocchio_pass(Q, QD)
        v = np.einsum("nbrk,nk->nbr", J, QD)
        # pinocchio's body-frame time variation is d/dt of the body-frame Jacobian; iX_0 dJ_world
        # adds v_i x J_i (motion cross product, linear part first: [w x lin + u x ang; w x ang]),
        # written out per component (np.cross on these shapes took a third of this function)
        u0, u1, u2, w0, w1, w2 = (v[:, :, r, None] for r in range(6))
        l0, l1, l2, a0, a1, a2 = (J[:, :, r] for r in range(6))
        dJ[:, :, 0] += (w1 * l2 - w2 * l1) + (u1 * a2 - u2 * a1)
        dJ[:, :, 1] += (w2 * l0 - w0 * l2) + (u2 * a0 - u0 * a2)
        dJ[:, :, 2] += (w0 * l1 - w1 * l0) + (u0 * a1 - u1 * a0)
        dJ[:, :, 3] += w1 * a2 - w2 * a1
        dJ[:, :, 4] += w2 * a0 - w0 * a2
        dJ[:, :, 5] += w0 * a1 - w1 * a0
        momentum = (v.reshape(-1, 6) @ self._unit).reshape(N, nb, 6, 10)
        return BodyStates(QD, J, dJ, momentum, gravity)

    def momentum_of(self, s: BodyStates) -> np.ndarray:
        """``W_m`` of every state, ``(N, nv, n_cols)``: ``M(q) qd`` with the rotors."""
        N, n = s.qd.shape
        W = np.zeros((N, n, self.n_cols))
        W[:, :, :self.n_body_cols] = np.einsum("nbrk,nbri->nkbi", s.J, s.momentum).reshape(N, n, self.n_body_cols)
        idx = np.arange(n)
        W[:, idx, self.n_body_cols + 4 * idx + 2] = s.qd
        return W

    def coriolis_gravity_sum(self, s: BodyStates, weights) -> np.ndarray:
        """``sum_k weights[k] W_c(state k)``, ``(nv, n_cols)``: ``C^T qd - g - F`` (exact, see the
        module docstring), summed without forming every state's matrix."""
        n, nb = self.model.nv, self.n_bodies
        w = np.asarray(weights, dtype=float)
        N = w.size
        W = np.zeros((n, self.n_cols))
        # per body: (nv, N*6) @ (N*6, 10)
        dJw = (s.dJ * w[:, None, None, None]).transpose(1, 3, 0, 2).reshape(nb, n, N * 6)
        KE = dJw @ s.momentum.transpose(1, 0, 2, 3).reshape(nb, N * 6, 10)
        W[:, :self.n_body_cols] = KE.transpose(1, 0, 2).reshape(n, -1) - np.tensordot(w, s.gravity, axes=1)
        idx = np.arange(n)
        base = self.n_body_cols + 4 * idx
        W[idx, base] = -(w @ np.sign(s.qd))
        W[idx, base + 1] = -(w @ s.qd)
        W[idx, base + 3] = -w.sum()
        return W

    def momentum(self, q, qd) -> np.ndarray:
        """``W_m(q, qd)`` of one state, ``(nv, n_cols)``."""
        return self.momentum_of(self.states(q, qd))[0]

    def coriolis_gravity(self, q, qd) -> np.ndarray:
        """``W_c(q, qd)`` of one state, ``(nv, n_cols)``."""
        return self.coriolis_gravity_sum(self.states(q, qd), [1.0])


@dataclass
class BodyStates:
    """Per-state terms of :class:`MomentumRegressor` for ``N`` states (``nb`` bodies)."""

    qd: np.ndarray          # (N, nv)
    J: np.ndarray           # (N, nb, 6, nv) body-frame Jacobians
    dJ: np.ndarray          # (N, nb, 6, nv) their time variation (iX_0 times the world-frame one)
    momentum: np.ndarray    # (N, nb, 6, 10) Reg(v_i): body momentum as a regressor of pi_i
    gravity: np.ndarray     # (N, nv, 10 nb) gravity torque regressor g(q)

    def take(self, index) -> BodyStates:
        """The states at ``index`` (an index or a slice into the samples)."""
        return BodyStates(*(getattr(self, f.name)[index] for f in fields(self)))

    @staticmethod
    def concat(*parts: BodyStates) -> BodyStates:
        """The samples of ``parts``, one after another."""
        return BodyStates(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(parts[0])))


@dataclass
class WindowRows:
    """Stacked window rows: ``Y theta_e + Y_r theta_r = U`` up to ``noise_bound`` per row.

    ``noise_bound``: the guaranteed bound on ``|U - U_true|`` from the torque error bound and the
    model-error bound (integration, quantization), in N m s."""

    Y: np.ndarray          # (rows, 10) payload columns, payload frame
    Y_r: np.ndarray        # (rows, n_r) robot columns (see MomentumRegressor)
    U: np.ndarray          # (rows,) integrated measured torque, N m s
    noise_bound: np.ndarray
    samples: int = 0

    @classmethod
    def empty(cls, n_r: int) -> WindowRows:
        """No rows, with ``n_r`` robot columns."""
        return cls(np.zeros((0, 10)), np.zeros((0, n_r)), np.zeros(0), np.zeros(0))

    def extend(self, other: WindowRows) -> None:
        """Append the rows of ``other`` (in place)."""
        self.Y = np.vstack([self.Y, other.Y])
        self.Y_r = np.vstack([self.Y_r, other.Y_r])
        self.U = np.concatenate([self.U, other.U])
        self.noise_bound = np.concatenate([self.noise_bound, other.noise_bound])
        self.samples += other.samples

    @property
    def rows(self) -> int:
        """Number of rows."""
        return self.U.size


def torque_error_bound(tau_measured, relative: float, absolute_Nm: float) -> np.ndarray:
    """Bound on ``|tau_measured - tau_true|`` when ``|error| <= relative |tau_true| + absolute``,
    from the measured value: ``|tau_true| <= (|tau_measured| + absolute) / (1 - relative)``. An
    array, or a CasADi expression (the planner's cost graph)."""
    return relative * (abs(tau_measured) + absolute_Nm) / (1.0 - relative) + absolute_Nm


class MomentumWindows:
    """Turns a stream of samples ``(t, q, qd, tau)`` into window rows as they arrive.

    Samples come one at a time or in batches (the cost per sample is lower in batches: the
    regressors are evaluated for the whole batch); the rows do not depend on how the stream was cut
    into batches, to the last bit: a window's steps are held until it closes and summed in one
    pass (summed piece by piece, a window spanning a batch boundary rounded differently, and the
    guaranteed box of a replay differed from offline by up to 1e-4 relative). ``model_error_Nm`` bounds, as an equivalent torque on every
    sample, what the forward-Euler sum and the encoder quantization add to a row.

    With a robot calibration (:mod:`..calibration`): ``window_bound_Nm_s`` (nv,) replaces the
    sensor-model bound of every row by the calibrated per-joint bound of a window of
    ``window_duration_s`` (scaled up for a longer window). That bound was measured on runs whose
    torque stayed within ``torque_range_Nm`` (nv,): a heavier payload's rows went beyond it by up
    to 27 % on MuJoCo (study sim, a 2.9 kg payload on the Gen3), so each sample's torque beyond
    that range adds the profile's relative error on the excess, ``relative max(0, |tau| - range)``,
    integrated over the window. ``exclude`` (a
    :class:`~..calibration.plateaus.PlateauDetector`) drops the windows touching a sample the
    calibrated model cannot explain; ``excluded_windows`` counts them, and ``peak_tau_Nm`` (nv,)
    is the largest |effort| the rows' windows integrated (what a calibration measured up to). ``torque_sign`` (nv,):
    the logged effort is this sign times the rigid-body torque. ``effort_delay_s`` (nv,): the logged
    effort lags the states by this much (:class:`~.effort_alignment.EffortAlignment`; the rows of a
    sample come once its delayed effort has arrived).
    """

    def __init__(self, robot: Robot, window: int, torque_relative: float, torque_absolute_Nm: float,
                 model_error_Nm: float, window_bound_Nm_s=None, window_duration_s: float | None = None,
                 exclude=None, torque_sign=None, effort_delay_s=None, torque_range_Nm=None):
        if window < 1:
            raise ValueError("window must hold at least one sample")
        self.window_bound_Nm_s = None if window_bound_Nm_s is None else np.asarray(window_bound_Nm_s, dtype=float)
        self.torque_range_Nm = None if self.window_bound_Nm_s is None else \
            np.zeros_like(self.window_bound_Nm_s) if torque_range_Nm is None else np.asarray(torque_range_Nm, dtype=float)
        self.window_duration_s = window_duration_s
        self.exclude = exclude
        self.torque_sign = None if torque_sign is None else np.asarray(torque_sign, dtype=float)
        self.alignment = None if effort_delay_s is None else EffortAlignment(effort_delay_s)
        self._last_flag_t = -np.inf
        self._flagged = False       # the open window touched an excluded sample
        self._start_t = None
        self.excluded_windows = 0
        self.peak_tau_Nm = np.zeros(robot.nv)   # largest |effort| a row's window integrated, per joint
        self.regressor = MomentumRegressor(robot.model)
        self.window = window
        self.torque_relative, self.torque_absolute_Nm = torque_relative, torque_absolute_Nm
        self.model_error_Nm = model_error_Nm
        frame = robot.model.frames[robot.payload_frame_id]
        j = frame.parentJoint
        self.payload_cols = slice(10 * (j - 1), 10 * j)
        self.T_JP = params.transform_matrix(frame.placement)      # pi_joint = T_JP pi_payload
        self._start_Wm = None     # W_m at the window's first sample
        self._last: tuple | None = None         # (t, states, tau, bound) of the last sample, not yet integrated
        self._reset_sums()
        self._rows: list[tuple] = []

    def _reset_sums(self):
        self._open: list[tuple] = []       # (states, tau, bound, dt) of the open window's steps
        self._count = 0

    def add_sample(self, t: float, q, qd, tau) -> None:
        """One sample: time (s), ``q`` (rad), ``qd`` (rad/s), ``tau`` (N m)."""
        self.add_samples([t], [q], [qd], [tau])

    def add_samples(self, t, q, qd, tau) -> None:
        """Samples ``t`` (N,) in increasing time, ``q, qd, tau`` (N, nv)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, qd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, tau))
        if self.alignment is not None and t.size:
            t, q, qd, tau = self.alignment.push(t, q, qd, tau)
        if t.size == 0:
            return
        if self.torque_sign is not None:
            tau = tau * self.torque_sign
        times = t if self._last is None else np.concatenate([[self._last[0]], t])
        dt = np.diff(times)
        if not np.all(dt > 0):
            raise ValueError(f"samples must arrive in increasing time (dt = {dt[~(dt > 0)][0]})")
        states = self.regressor.states(q, qd)
        # per sample: the sensor model's bound, or with a calibration what goes beyond its range
        bound = torque_error_bound(tau, self.torque_relative, self.torque_absolute_Nm) + self.model_error_Nm \
            if self.torque_range_Nm is None else self.torque_relative * np.maximum(np.abs(tau) - self.torque_range_Nm, 0.0)
        flags = np.zeros(t.size, dtype=bool)
        if self.exclude is not None:
            flags, self._last_flag_t = self.exclude.flags(t, qd, self._last_flag_t)
        if self._last is None:
            self._start_Wm = self.regressor.momentum_of(states.take([0]))[0]
            self._start_t = t[0]
            self._flagged = bool(flags[0])
        else:
            _, last_states, last_tau, last_bound = self._last
            states = BodyStates.concat(last_states, states)
            tau, bound = np.vstack([last_tau, tau]), np.vstack([last_bound, bound])
            flags = np.concatenate([[False], flags])     # the carried sample was counted when it came
        # step k integrates sample k over [times[k], times[k + 1]]; a window closes at the sample
        # ending its window-th step, which also starts the next window
        steps = dt.size
        k = np.arange(steps)
        closes = k[(self._count + k + 1) % self.window == 0]
        first = 0
        for c, Wm_end in zip(closes, self.regressor.momentum_of(states.take(closes + 1))):
            self._hold(states, tau, bound, dt, slice(first, c + 1))
            if self._flagged or flags[first:c + 2].any():
                self.excluded_windows += 1
            else:
                sum_Wc, sum_tau, sum_bound, peak = self._sums()
                self.peak_tau_Nm = np.maximum(self.peak_tau_Nm, peak)
                self._rows.append((times[c + 1], Wm_end - self._start_Wm - sum_Wc, sum_tau,
                                   self._window_bound(times[c + 1] - self._start_t, sum_bound)))
            self._start_Wm, self._start_t, self._flagged = Wm_end, times[c + 1], bool(flags[c + 1])
            self._reset_sums()
            first = c + 1
        self._flagged = self._flagged or bool(flags[first:].any())
        self._hold(states, tau, bound, dt, slice(first, steps))
        self._count = (self._count + steps - first) if closes.size == 0 else steps - first
        self._last = (times[-1], states.take([-1]), tau[-1:], bound[-1:])

    def _window_bound(self, duration_s: float, sum_bound) -> np.ndarray:
        if self.window_bound_Nm_s is None:
            return sum_bound
        scale = 1.0 if not self.window_duration_s else max(1.0, duration_s / self.window_duration_s)
        return self.window_bound_Nm_s * scale + sum_bound

    def _hold(self, states, tau, bound, dt, steps: slice) -> None:
        if steps.stop > steps.start:
            self._open.append((states.take(steps), tau[steps], bound[steps], dt[steps]))

    def _sums(self) -> tuple:
        """Forward-Euler sums over the open window's steps: ``sum W_c dt``, ``sum tau dt``,
        ``sum bound dt``; and the steps' largest ``|tau|`` per joint."""
        parts = self._open
        states = parts[0][0] if len(parts) == 1 else BodyStates.concat(*(p[0] for p in parts))
        tau, bound, dt = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))
        return self.regressor.coriolis_gravity_sum(states, dt), dt @ tau, dt @ bound, np.abs(tau).max(axis=0)

    def take_windows(self) -> list[tuple[float, WindowRows]]:
        """``(closing time, rows)`` of each window closed since the last call."""
        out = [(t, self._stack([(dW, U, e)])) for t, dW, U, e in self._rows]
        self._rows.clear()
        return out

    def take_rows(self) -> WindowRows:
        """Rows of the windows closed since the last call, stacked."""
        out = self._stack([r[1:] for r in self._rows])
        self._rows.clear()
        return out

    def _stack(self, windows) -> WindowRows:
        out = WindowRows.empty(self.regressor.n_cols)
        if not windows:
            return out
        W = np.vstack([w[0] for w in windows])
        out.Y = W[:, self.payload_cols] @ self.T_JP
        out.Y_r = W
        out.U = np.concatenate([w[1] for w in windows])
        out.noise_bound = np.concatenate([w[2] for w in windows])
        out.samples = self.window * len(windows)
        return out
