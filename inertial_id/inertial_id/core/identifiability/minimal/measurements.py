"""Simulated one-joint motions of Algorithm 2: the critically damped step (64)-(66) of one joint,
RNEA torques of the model, optional relative noise."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .constants import axis_in, frames, offset_in


def step_response(t, sigma: float = 10.0, amplitude: float = np.pi / 6, start: float = 0.7):
    """(64)-(66): critically damped step of one joint: (q, qd, qdd) at times ``t``."""
    t = np.asarray(t, dtype=float)
    e = np.exp(-sigma * t)
    return (amplitude * (1 - (1 + sigma * t) * e) + start, amplitude * sigma ** 2 * t * e,
            amplitude * (1 - sigma * t) * sigma ** 2 * e)


@dataclass(frozen=True)
class Noise:
    """Relative measurement noise (standard deviation as a fraction of each measured value)."""

    torque: float = 0.0
    rate: float = 0.0          # applied to qd and qdd

    def any(self) -> bool:
        """Whether any noise is applied."""
        return self.torque > 0 or self.rate > 0


class OneJointMotions:
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
