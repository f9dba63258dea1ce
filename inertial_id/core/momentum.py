"""Momentum form of the dynamics (seed 003): rows without accelerations.

Full parameter vector ``theta = [pi_1, ..., pi_n, phi_1, ..., phi_n]``: each body's 10 parameters
(pinocchio order, joint frame, as in :func:`~.regressor.joint_torque_regressor`) followed by the
friction ``phi_k = [Fc, Fv, Ia, beta]`` of every joint (:data:`~.params.FRICTION_NAMES`).

Regressors at one state, no acceleration needed:

- ``W_m(q, qd) theta = M(q) qd + Ia o qd``: generalized momentum, rotors included;
- ``W_c(q, qd) theta = C(q, qd)^T qd - g(q) - F(qd)`` with ``F = Fc sign(qd) + Fv qd + beta``;

so that, with ``Mdot = C + C^T``, ``d/dt (W_m theta) = tau + W_c theta``.

``W_c`` is exact, no differentiation: ``C^T qd - g = dL/dq`` and, with world-frame joint axes
``S_k`` and body twists ``V_i``, ``d(kinetic energy)/dq_k = sum_{i beyond k} (V_k x S_k)^T (I_i V_i)``,
where ``V_k x S_k`` is column k of pinocchio's ``dJ`` (``computeJointJacobiansTimeVariation``) and
``I_i V_i`` the body's spatial momentum, linear in ``pi_i``.

Windows of ``h`` samples (forward Euler, seed 003 eq. 10 with the errata fixed), samples
``j = i .. i+h-1``, state ``i+h`` closing the window::

    (W_m(t_{i+h}) - W_m(t_i) - sum_j W_c(t_j) dt_j) theta = sum_j tau(t_j) dt_j

Split into payload columns ``Y`` and the rest ``Y_r``: ``Y theta_e = U - Y_r theta_r`` with
``U = sum_j tau_j dt_j``. Moving the known part to the right gives the seed's ``U`` (its printed
``+ sum W_c,r dt`` is the sign erratum). Torque is sampled and held over each step, as the
simulator applies it; the forward-Euler error of the rest is O(h dt^2) (see ``test_momentum``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from . import params
from .model import Robot


def robot_parameter_names(model: pin.Model) -> list[str]:
    names = [f"{model.names[j]}.{n}" for j in range(1, model.njoints) for n in params.PARAMETER_NAMES]
    return names + [f"{model.names[j]}.{n}" for j in range(1, model.njoints) for n in params.FRICTION_NAMES]


def robot_parameters(model: pin.Model) -> np.ndarray:
    """Nominal ``theta`` of a model: its body parameters and friction ``[0, 0, armature, 0]``."""
    bodies = [model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)]
    friction = np.zeros((model.nv, 4))
    friction[:, 2] = model.armature
    return np.concatenate(bodies + [friction.ravel()])


class MomentumRegressor:
    """``W_m`` and ``W_c`` of a model (constant) with its own scratch data."""

    def __init__(self, model: pin.Model):
        if model.nq != model.nv or any(model.joints[j].nv != 1 for j in range(1, model.njoints)):
            raise ValueError("momentum regressors need one-DoF joints")
        self.model = model
        self.data = model.createData()
        self.model_no_gravity = pin.Model(model)
        self.model_no_gravity.gravity = pin.Motion.Zero()
        self.data_no_gravity = self.model_no_gravity.createData()
        n = model.nv
        self.n_body_cols = 10 * (model.njoints - 1)
        self.n_cols = self.n_body_cols + 4 * n
        # support[i, k]: joint k moves body i
        self.support = np.zeros((model.njoints - 1, n), dtype=bool)
        for i in range(1, model.njoints):
            for j in model.supports[i].tolist()[1:]:
                self.support[i - 1, model.joints[j].idx_v] = True
        self._zero = np.zeros(n)
        self._momentum_regressors = np.zeros((model.njoints - 1, 6, 10))
        self._support_mask = self.support[:, :, None].astype(float)

    def momentum(self, q, qd) -> np.ndarray:
        """``W_m(q, qd)``, ``(nv, n_cols)``: ``M(q) qd = RNEA(q, 0, qd)`` without gravity."""
        W = np.zeros((self.model.nv, self.n_cols))
        W[:, :self.n_body_cols] = pin.computeJointTorqueRegressor(
            self.model_no_gravity, self.data_no_gravity, q, self._zero, qd)
        idx = np.arange(self.model.nv)
        W[idx, self.n_body_cols + 4 * idx + 2] = qd
        return W

    def coriolis_gravity(self, q, qd) -> np.ndarray:
        """``W_c(q, qd)``, ``(nv, n_cols)``: ``C^T qd - g - F``, exact (see the module docstring)."""
        model, data = self.model, self.data
        n = model.nv
        qd = np.asarray(qd, dtype=float)
        W = np.zeros((n, self.n_cols))
        # gravity first: the regressor call overwrites the kinematics in data
        W[:, :self.n_body_cols] = -pin.computeJointTorqueRegressor(model, data, q, self._zero, self._zero)
        pin.computeJointJacobiansTimeVariation(model, data, q, qd)
        zero = pin.Motion.Zero()
        H = self._momentum_regressors
        for i in range(1, model.njoints):
            # body momentum in the world frame, as a regressor of pi_i (joint frame)
            H[i - 1] = data.oMi[i].toDualActionMatrix() @ pin.bodyRegressor(zero, data.v[i])
        # data.dJ: (6, nv), world frame, columns V_k x S_k
        KE = (data.dJ.T @ H) * self._support_mask              # (bodies, nv, 10)
        W[:, :self.n_body_cols] += KE.transpose(1, 0, 2).reshape(n, -1)
        idx = np.arange(n)
        base = self.n_body_cols + 4 * idx
        W[idx, base] = -np.sign(qd)
        W[idx, base + 1] = -qd
        W[idx, base + 3] = -1.0
        return W


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
    def empty(cls, n_r: int) -> "WindowRows":
        return cls(np.zeros((0, 10)), np.zeros((0, n_r)), np.zeros(0), np.zeros(0))

    def extend(self, other: "WindowRows") -> None:
        self.Y = np.vstack([self.Y, other.Y])
        self.Y_r = np.vstack([self.Y_r, other.Y_r])
        self.U = np.concatenate([self.U, other.U])
        self.noise_bound = np.concatenate([self.noise_bound, other.noise_bound])
        self.samples += other.samples

    @property
    def rows(self) -> int:
        return self.U.size


def torque_error_bound(tau_measured, relative: float, absolute_Nm: float) -> np.ndarray:
    """Bound on ``|tau_measured - tau_true|`` when ``|error| <= relative |tau_true| + absolute``,
    from the measured value: ``|tau_true| <= (|tau_measured| + absolute) / (1 - relative)``."""
    return relative * (np.abs(tau_measured) + absolute_Nm) / (1.0 - relative) + absolute_Nm


class MomentumWindows:
    """Turns a stream of samples ``(t, q, qd, tau)`` into window rows as they arrive.

    Each sample costs one ``W_m`` and one ``W_c`` evaluation (the window sums are kept running), so
    rows are ready as soon as a window closes. ``model_error_Nm`` bounds, as an equivalent torque
    on every sample, what the forward-Euler sum and the encoder quantization add to a row.
    """

    def __init__(self, robot: Robot, window: int, torque_relative: float, torque_absolute_Nm: float,
                 model_error_Nm: float):
        if window < 1:
            raise ValueError("window must hold at least one sample")
        self.regressor = MomentumRegressor(robot.model)
        self.window = window
        self.torque_relative, self.torque_absolute_Nm = torque_relative, torque_absolute_Nm
        self.model_error_Nm = model_error_Nm
        frame = robot.model.frames[robot.payload_frame_id]
        j = frame.parentJoint
        self.payload_cols = slice(10 * (j - 1), 10 * j)
        self.T_JP = params.transform_matrix(frame.placement)      # pi_joint = T_JP pi_payload
        self._start = None        # (t, W_m) at the window's first sample
        self._prev = None         # (t, W_c, tau, bound) of the last sample, not yet integrated
        self._count = 0
        self._sum_Wc = None
        self._sum_tau = None
        self._sum_bound = None
        self._rows: list[tuple] = []

    def _reset_sums(self):
        n, c = self.regressor.model.nv, self.regressor.n_cols
        self._sum_Wc, self._sum_tau, self._sum_bound = np.zeros((n, c)), np.zeros(n), np.zeros(n)
        self._count = 0

    def add_sample(self, t: float, q, qd, tau) -> None:
        tau = np.asarray(tau, dtype=float)
        Wm = self.regressor.momentum(q, qd)
        if self._prev is not None:
            t_prev, Wc, tau_prev, bound_prev = self._prev
            dt = t - t_prev
            if not dt > 0:
                raise ValueError(f"samples must arrive in increasing time (dt = {dt})")
            self._sum_Wc += Wc * dt
            self._sum_tau += tau_prev * dt
            self._sum_bound += bound_prev * dt
            self._count += 1
            if self._count == self.window:
                dW = Wm - self._start[1] - self._sum_Wc
                self._rows.append((dW, self._sum_tau.copy(), self._sum_bound.copy(), self._count))
                self._start = None
        if self._start is None:
            self._start = (t, Wm)
            self._reset_sums()
        bound = torque_error_bound(tau, self.torque_relative, self.torque_absolute_Nm) + self.model_error_Nm
        self._prev = (t, self.regressor.coriolis_gravity(q, qd), tau, bound)

    def take_rows(self) -> WindowRows:
        """Rows of the windows closed since the last call."""
        n_r = self.regressor.n_cols
        out = WindowRows.empty(n_r)
        if not self._rows:
            return out
        W = np.vstack([r[0] for r in self._rows])
        out.Y = W[:, self.payload_cols] @ self.T_JP
        out.Y_r = W
        out.U = np.concatenate([r[1] for r in self._rows])
        out.noise_bound = np.concatenate([r[2] for r in self._rows])
        out.samples = sum(r[3] for r in self._rows)
        self._rows.clear()
        return out
