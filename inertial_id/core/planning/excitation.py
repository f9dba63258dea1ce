"""How much a plan teaches about the payload: information of the payload parameters, accumulated
over plans.

``W_e(q, qd, qdd)`` is the payload block of the joint-torque regressor (pinocchio's
``computeJointTorqueRegressor``: the columns of the payload's body, mapped to the payload frame), so
``tau_payload = W_e theta_e``. Each row is divided by the bound the guaranteed estimator puts on
that joint's torque error there (profile ``noise:``, ``relative |tau| + absolute`` plus the model
error, with the torque of the nominal robot carrying the prior-centre payload): the LP bounds are
set by how far a payload change moves a row compared with that row's bound, so a newton metre on a
lightly loaded joint says more than one on a joint that already carries the robot's own weight.

Objective (minimised): ``-log det(S F S + eps I) + MASS_WEIGHT * log [(S F S + eps I)^-1]_mm`` with
``F = F_prev + sum_k W_e(t_k)^T W_e(t_k) dt`` over samples of the plan and ``S = diag(half-widths of
the current payload box)``: information about a parameter that is already pinned down is worth
less, and the second term is the (scaled) variance of the mass. Why the mass term: the guaranteed
mass interval comes from gravity torques on the wrist-side joints at a few poses (LP duals of the
plan study), and when the estimator's LP was re-solved offline for 100 candidate poses added to the
home pose, the mass width did not follow the log det (Spearman -0.05 and +0.16) but did follow the
mass variance (+0.31 and +0.44, 4 lb and 8 lb). The seed's own measure, ``cond(W_e)`` of the
stacked rows at N_s samples (unscaled, no weights), is reported beside it.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .. import params
from ..momentum import torque_error_bound
from ..sensors import NoiseModel

# keeps log det finite while a fresh information matrix is still rank deficient; in scaled units
# (rows / their error bound, columns * box half-width), far below any useful information
EPS_INFORMATION = 1e-9
# weight of the log mass variance beside the log det (see the module docstring); plan study, seed
# 100, 20 trials: 10 and 30 both give mass no wider than random in 60 % and cond ratio 0.63
MASS_WEIGHT = 10.0


class PayloadExcitation:
    """Payload regressor rows along a plan, with scratch data of its own (not thread-shared)."""

    def __init__(self, robot):
        self.model = robot.model
        self.data = robot.model.createData()
        frame = robot.model.frames[robot.payload_frame_id]
        j = frame.parentJoint
        self.cols = slice(10 * (j - 1), 10 * j)
        self.T_JP = params.transform_matrix(frame.placement)          # pi_joint = T_JP pi_payload
        noise = NoiseModel.from_profile(robot.profile)
        self.torque_relative, self.torque_absolute_Nm = noise.torque_relative, noise.torque_absolute_Nm
        self.model_error_Nm = float(robot.profile.get("noise", {}).get("model_error_Nm", 0.0))
        lower, upper = robot.payload_prior()
        self.payload_guess = 0.5 * (np.asarray(lower, float) + np.asarray(upper, float))
        # a joint without a stated error still has one: never divide by zero
        self.floor_Nm = 1e-3 * float(np.min(robot.torque_limit))

    def row_weights(self, tau_robot, W) -> np.ndarray:
        """(N, nv) 1 / the error bound of each joint torque row, from the nominal robot's torque
        ``tau_robot`` (N, nv) plus the prior-centre payload's (rows ``W`` (N, nv, 10))."""
        tau = tau_robot + W @ self.payload_guess
        bound = torque_error_bound(tau, self.torque_relative, self.torque_absolute_Nm) + self.model_error_Nm
        return 1.0 / np.maximum(bound, self.floor_Nm)

    def robot_torque(self, q, qd, qdd) -> np.ndarray:
        """(N, nv) inverse dynamics of the nominal robot without payload."""
        return np.array([pin.rnea(self.model, self.data, q[k], qd[k], qdd[k]) for k in range(len(q))])

    def weighted_information(self, W, w, dt) -> np.ndarray:
        """``sum (w W)^T (w W) dt`` of rows ``W`` (N, nv, 10) with weights ``w`` (N, nv)."""
        Ww = (W * w[:, :, None]).reshape(-1, 10)
        return Ww.T @ Ww * dt

    def rows(self, q, qd, qdd) -> np.ndarray:
        """Stacked ``W_e`` (len(q) * nv, 10), unweighted, payload frame."""
        out = np.empty((len(q), self.model.nv, 10))
        model, data, cols = self.model, self.data, self.cols
        for k in range(len(q)):
            out[k] = pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])[:, cols]
        return out.reshape(-1, 10) @ self.T_JP

    def information(self, plan, samples: int, until_s: float | None = None) -> np.ndarray:
        """``sum W^T W dt`` (weighted rows) over ``samples`` midpoints of [0, until_s] (default: T)."""
        T = plan.duration_s if until_s is None else min(until_s, plan.duration_s)
        dt = T / samples
        t = (np.arange(samples) + 0.5) * dt
        q, qd, qdd = plan.evaluate(t)
        W = self.rows(q, qd, qdd).reshape(samples, -1, 10)
        return self.weighted_information(W, self.row_weights(self.robot_torque(q, qd, qdd), W), dt)

    def condition_number(self, plan, samples: int) -> float:
        """Seed 003's cost: cond of the stacked ``W_e`` at ``samples`` uniform samples of [0, T]."""
        t = np.linspace(0.0, plan.duration_s, samples)
        return float(np.linalg.cond(self.rows(*plan.evaluate(t))))


def scaled_cost(F_total, half_width, mass_weight: float = MASS_WEIGHT) -> float:
    """``-log det(S F S + eps I) + mass_weight * log [(S F S + eps I)^-1]_mm``, ``S = diag(half_width)``."""
    s = np.asarray(half_width, dtype=float)
    M = F_total * np.outer(s, s) + EPS_INFORMATION * np.eye(len(s))
    sign, logdet = np.linalg.slogdet(M)
    if sign <= 0:
        return float("inf")
    if not mass_weight:
        return float(-logdet)
    e0 = np.zeros(len(s))
    e0[0] = 1.0
    mass_variance = float(np.linalg.solve(M, e0)[0])
    return float(-logdet + mass_weight * np.log(mass_variance)) if mass_variance > 0 else float("inf")
