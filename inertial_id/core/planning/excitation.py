"""How much a plan teaches about the payload: information of the payload parameters, accumulated
over plans.

``W_e(q, qd, qdd)`` is the payload block of the joint-torque regressor (pinocchio's
``computeJointTorqueRegressor``: the columns of the payload's body, mapped to the payload frame), so
``tau_payload = W_e theta_e``. Rows are divided by the joint's torque limit: the torque noise is
relative, so a newton metre on a wrist joint says more than one on the shoulder.

Objective (minimised): ``-log det(S (F_prev + F_plan) S + eps I)`` where ``F = sum_k W_e(t_k)^T
W_e(t_k) dt`` over samples of the plan and ``S = diag(half-widths of the current payload box)``:
information about a parameter that is already pinned down is worth less. The seed's own measure,
``cond(W_e)`` of the stacked rows at N_s samples (unscaled, no weights), is reported beside it.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .. import params

# keeps log det finite while a fresh information matrix is still rank deficient; in scaled units
# (rows / torque limit, columns * box half-width), far below any useful information
EPS_INFORMATION = 1e-9


class PayloadExcitation:
    """Payload regressor rows along a plan, with scratch data of its own (not thread-shared)."""

    def __init__(self, robot):
        self.model = robot.model
        self.data = robot.model.createData()
        frame = robot.model.frames[robot.payload_frame_id]
        j = frame.parentJoint
        self.cols = slice(10 * (j - 1), 10 * j)
        self.T_JP = params.transform_matrix(frame.placement)          # pi_joint = T_JP pi_payload
        self.row_weight = 1.0 / np.asarray(robot.torque_limit, dtype=float)

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
        W = self.rows(*plan.evaluate(t)).reshape(samples, -1, 10) * self.row_weight[None, :, None]
        W = W.reshape(-1, 10)
        return W.T @ W * dt

    def condition_number(self, plan, samples: int) -> float:
        """Seed 003's cost: cond of the stacked ``W_e`` at ``samples`` uniform samples of [0, T]."""
        t = np.linspace(0.0, plan.duration_s, samples)
        return float(np.linalg.cond(self.rows(*plan.evaluate(t))))


def scaled_cost(F_total, half_width) -> float:
    """``-log det(S F S + eps I)``, ``S = diag(half_width)``."""
    s = np.asarray(half_width, dtype=float)
    M = F_total * np.outer(s, s) + EPS_INFORMATION * np.eye(len(s))
    sign, logdet = np.linalg.slogdet(M)
    return float(-logdet) if sign > 0 else float("inf")
