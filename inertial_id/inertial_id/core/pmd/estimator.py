"""Payload estimator for method ``pmd`` of the estimator node (ROS-free).

Takes raw sensor-frame kinematics, not regressor rows: the gravity-only model of PMD needs gravity
in the sensor frame apart from the motion acceleration, which a wrench row mixes into ``a - g``.

Profile YAML (``config/robots/<robot>.yaml``)::

    payload:
      shape:                     # schema: inertial_id.core.pmd.shapes
        type: box
        size: [0.16, 0.12, 0.04]
        pose: {xyz: [0, 0, 0.02], rpy: [0, 0, 0]}   # shape frame in the payload (flange) frame
        density_per_cm3: 0.04
      pmd: {c1: 300.0, lambda: 0.1}                  # optional; c1 5e3..25e3 on a real xArm7

The estimate is always physically consistent: it is a sum of non-negative point masses.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robot import params
from ..robot.profile import Payload
from .samples import WristSamples
from .shapes import DEFAULT_DENSITY_PER_CM3, sample_points, shape_from_dict
from .solver import C1_SIMULATION, LAMBDA, NormalEquations, PmdProblem


class PmdEstimator:
    """Accumulates samples (constant memory: two n x n normal equations) and solves on demand.

    ``X_SP`` is the payload frame's pose in the F/T sensor frame (identity when the sensor measures
    in the flange frame, as on the xArm7 profile).
    """

    def __init__(self, shape: dict, X_SP: pin.SE3 | None = None, c1: float = C1_SIMULATION,
                 lam: float = LAMBDA, base_dir=None):
        X_SP = pin.SE3.Identity() if X_SP is None else X_SP
        shape_kind, X_PO = shape_from_dict(shape, base_dir)
        p_P = sample_points(shape_kind, float(shape.get("density_per_cm3", DEFAULT_DENSITY_PER_CM3)), X_PO)
        self.X_PS = X_SP.inverse()
        self.problem = PmdProblem(p_P @ X_SP.rotation.T + X_SP.translation, lam, c1)
        n = len(p_P)
        self.static, self.full = NormalEquations(n), NormalEquations(n)
        self.samples_used = 0

    @classmethod
    def from_payload_profile(cls, payload: Payload, X_SP: pin.SE3 | None = None, base_dir=None):
        """From a profile's ``payload:`` section (needs ``shape``; ``pmd`` options optional)."""
        if payload.shape is None:
            raise ValueError("method 'pmd' needs 'payload: shape:' in the robot profile")
        c1, lam = (None, None) if payload.pmd is None else (payload.pmd.c1, payload.pmd.lambda_)
        # the shape as written: the keys it leaves out take the shapes module's defaults
        return cls(payload.shape.model_dump(exclude_none=True), X_SP, float(C1_SIMULATION if c1 is None else c1),
                   float(LAMBDA if lam is None else lam), base_dir)

    def update(self, a_S, w_S, alpha_S, g_S, wrench_S, sigma_wrench=None) -> None:
        """Add one sample (vectors) or a batch (rows), all in the sensor frame S: classical linear
        acceleration without gravity, angular velocity and acceleration, gravity, measured
        ``[f; n]``. ``sigma_wrench`` (6,) balances torque against force rows; omit it to weigh rows
        as measured (the paper's setting)."""
        samples = WristSamples(*(np.atleast_2d(np.asarray(x, dtype=float)) for x in (a_S, w_S, alpha_S, g_S, wrench_S)))
        row_sigma = None if sigma_wrench is None else np.asarray(sigma_wrench, dtype=float) / sigma_wrench[0]
        self.problem.accumulate(samples, self.static, self.full, row_sigma)
        self.samples_used += len(samples)

    def result(self) -> dict:
        """``estimate`` (pinocchio order, payload frame), ``physically_consistent``, ``samples_used``."""
        if self.samples_used == 0:
            raise ValueError("no samples yet")
        pi_S = self.problem.Phi @ self.problem.solve(self.static, self.full)
        pi_P = params.transform_params(pi_S, self.X_PS)
        return {"estimate": pi_P, "physically_consistent": params.is_physically_consistent(pi_P),
                "samples_used": self.samples_used, "parameter_names": list(params.PARAMETER_NAMES)}
