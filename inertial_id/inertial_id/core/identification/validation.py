"""Validation of identified models on held-out runs: per-joint RMS torque error, and open-loop
forward simulation with the recorded torques (the reference's eq. 33).

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robot import closed_chain as cc
from ..data.data_io import Run, segment_bounds
from ..robot.regressor import friction_torque
from .problem import ParameterLayout, StackedRows, actuated_columns


def torque_rms(rows: StackedRows, theta, na: int) -> np.ndarray:
    """Per actuated joint RMS of ``u - W theta`` (N m)."""
    r = (rows.u - rows.W @ np.asarray(theta, dtype=float)).reshape(-1, na)
    return np.sqrt(np.mean(r**2, axis=0))


def model_with_parameters(chain: cc.ClosedChain, layout: ParameterLayout, theta) -> pin.Model:
    """A copy of the chain's model with the identified body inertials (armature left at zero)."""
    model = pin.Model(chain.model)
    for k in range(len(layout.bodies)):
        model.inertias[k + 1] = pin.Inertia.FromDynamicParameters(np.asarray(theta[10 * k:10 * k + 10]))
    model.armature[:] = 0.0
    return model


class ForwardDynamics:
    """Actuated accelerations of the identified model: ``qdd_a = f(q_a, qd_a, u)``.

    Open chains: ABA with the rotor inertias as armature and friction on the torque side. Closed
    chains: the projected equations ``(G^T M G + diag(Ia)) qdd_a = u - F - G^T (nle + M Gdot qd_a)``.
    """

    def __init__(self, chain: cc.ClosedChain, layout: ParameterLayout, theta):
        self.chain = chain
        self.model = model_with_parameters(chain, layout, theta)
        self.data = self.model.createData()
        self.chain_data = chain.model.createData()
        phi = np.zeros((chain.na, 4))
        for k, j in enumerate(layout.friction_joints):
            phi[chain.actuated_joints.index(j)] = layout.friction_block(theta)[k]
        self.phi = phi
        if chain.is_open:
            self.model.armature[chain.idx_a] = phi[:, 2]

    def __call__(self, q, v_a, u) -> tuple[np.ndarray, np.ndarray]:
        """``(qdd_a, q)``: ``q`` is the full configuration (passive joints already solved)."""
        chain, model, data = self.chain, self.model, self.data
        f = friction_torque(self.phi.ravel(), v_a, np.zeros_like(v_a))   # Ia enters the mass matrix
        if chain.is_open:
            return pin.aba(model, data, q, v_a, u - f), q
        G = cc.projection(chain, self.chain_data, q)
        v = G @ v_a
        drift = cc.projection_drift(chain, self.chain_data, q, v)
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(model, data, q, v) + M @ drift
        M_a = G.T @ M @ G + np.diag(self.phi[:, 2])
        return np.linalg.solve(M_a, u - f - G.T @ h), q


def simulate_segments(chain: cc.ClosedChain, layout: ParameterLayout, theta, run: Run,
                      segment_s: float = 0.5, substeps: int = 10) -> dict:
    """Open-loop simulation from the start of each ``segment_s`` segment (and after each gap in the
    recording) with the recorded torques held between samples (zero-order hold); semi-implicit Euler
    with ``substeps`` per sample, initial state from the recording.

    Returns ``l2`` per actuated joint (rad), ``sqrt(sum_i (q_sim(t_i) - q_meas(t_i))^2)`` over all
    samples of all segments (eq. 33 of the module's reference; errors wrapped to [-pi, pi], a diverged simulation
    counts pi for the rest of its segment), and the number of segments.
    """
    run = actuated_columns(chain, run)
    fd = ForwardDynamics(chain, layout, theta)
    t = run.t
    # a segment also restarts after a gap in the recording: holding a torque across missing
    # samples would measure the gap, not the model
    gap = np.zeros(t.size, dtype=bool)
    gap[[s for s, _ in segment_bounds(t)]] = True
    window = np.floor((t - t[0]) / segment_s)
    starts: list[int] = []
    for k in range(t.size):
        if gap[k] or window[k] != window[starts[-1]] or t[k] - t[starts[-1]] >= segment_s:
            starts.append(k)
    first = np.array(starts)
    sq = np.zeros(chain.na)
    n_segments = 0
    for s, e in zip(first, np.append(first[1:], t.size)):
        if e - s < 2:
            continue
        n_segments += 1
        q_a, v_a = run.q[s].copy(), run.qd[s].copy()
        q = cc.solve_passive(chain, chain.model.createData(), q_a)
        for k in range(s, e - 1):
            h = (t[k + 1] - t[k]) / substeps
            try:
                for _ in range(substeps):
                    acc, q = fd(q, v_a, run.tau[k])
                    v_a = v_a + h * acc
                    q_a = q_a + h * v_a
                    q = cc.solve_passive(chain, fd.chain_data, q_a, q[chain.idx_u])
            except (cc.ClosureError, np.linalg.LinAlgError):
                q_a = np.full(chain.na, np.nan)
            if not np.all(np.isfinite(q_a)):
                # diverged (or left the linkage's reach): count the worst error, pi, for the rest
                sq += np.pi**2 * (e - 1 - k)
                break
            # recorded angles of continuous joints wrap at +-pi: compare on the circle
            sq += np.angle(np.exp(1j * (q_a - run.q[k + 1]))) ** 2
    return {"l2": np.sqrt(sq), "segments": n_segments}
