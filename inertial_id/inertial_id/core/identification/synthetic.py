"""Synthetic runs with known parameters, for recovery studies and benchmarks.

Torques come from pinocchio's RNEA on a model carrying the true inertials (not from the regressor
the identification uses), projected with ``G^T`` and with friction of the actuated joints added.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robot import closed_chain as cc
from ..data.data_io import Run
from ..robot.regressor import friction_torque
from .problem import ParameterLayout
from .validation import model_with_parameters


def fourier_joint_motion(t, center, amplitude, rng, harmonics: int = 4, base_hz: float = 0.2):
    """``(q, qd, qdd)`` of ``q_j(t) = center_j + amplitude_j * s_j(t)``, ``s_j`` a random sum of
    ``harmonics`` sines of the base frequency normalised to ``max|s_j| <= 1`` (analytic derivatives)."""
    t = np.asarray(t, dtype=float)[:, None]
    center = np.asarray(center, dtype=float)
    amplitude = np.asarray(amplitude, dtype=float)
    n = center.size
    w = 2 * np.pi * base_hz * np.arange(1, harmonics + 1)
    a = rng.normal(size=(harmonics, n)) / np.arange(1, harmonics + 1)[:, None]
    phase = rng.uniform(0, 2 * np.pi, size=(harmonics, n))
    scale = amplitude / np.sum(np.abs(a), axis=0)
    s = np.zeros((t.shape[0], n))
    ds = np.zeros_like(s)
    dds = np.zeros_like(s)
    for k in range(harmonics):
        x = w[k] * t + phase[k]
        s += a[k] * np.sin(x)
        ds += a[k] * w[k] * np.cos(x)
        dds -= a[k] * w[k] ** 2 * np.sin(x)
    return center + scale * s, scale * ds, scale * dds


def synthesize(chain: cc.ClosedChain, layout: ParameterLayout, theta_true, t, q_a, qd_a, qdd_a,
               noise_rel: float = 0.0, rng=None, name: str = "synthetic") -> Run:
    """A run of the actuated joints with torques ``G^T (RNEA + 0) + friction``; ``noise_rel`` adds
    Gaussian noise of that fraction of each joint's torque RMS."""
    model = model_with_parameters(chain, layout, theta_true)
    data = model.createData()
    q, v, a, G = cc.complete_trajectory(chain, chain.model.createData(), q_a, qd_a, qdd_a)
    phi = np.zeros((chain.na, 4))
    for k, j in enumerate(layout.friction_joints):
        phi[chain.actuated_joints.index(j)] = layout.friction_block(theta_true)[k]
    tau = np.array([G[k].T @ pin.rnea(model, data, q[k], v[k], a[k])
                    + friction_torque(phi.ravel(), qd_a[k], qdd_a[k]) for k in range(len(t))])
    if noise_rel > 0:
        rng = np.random.default_rng(0) if rng is None else rng
        tau = tau + noise_rel * np.sqrt(np.mean(tau**2, axis=0)) * rng.normal(size=tau.shape)
    return Run(name, np.asarray(t, dtype=float), np.asarray(q_a), np.asarray(qd_a), tau, np.asarray(qdd_a))
