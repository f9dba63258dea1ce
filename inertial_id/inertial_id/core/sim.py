"""Simulated arm: pinocchio forward dynamics (ABA) at a fixed step, computed-torque tracking of a
commanded trajectory, a hidden payload, and sensor errors drawn by :class:`~.sensors.SensorNoise`
(independent of the bounds the profile states; see :mod:`.sensors`).

It exists so that the demo and the tests run without hardware. The controller only knows the
nominal robot (no payload), like a real arm carrying an unknown object: computed torque
``tau = RNEA_nominal(q, v, qdd_d + kp e + kd de + ki int e)``, whose integral term takes up the
payload's weight. The arm starts at rest, already holding the payload (integrator at its steady
state). Integration is semi-implicit Euler: ``v += dt * a(q, v, tau)``, ``q += dt * v``, torque
held over each step.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from .robot.model import Robot, model_with_payload
from .robot.regressor import PayloadRegressor
from .signals.sensors import NoiseModel, SensorNoise
from .trajectory import SampledTrajectory, interpolate

# commanded speed over which the drive's Coulomb compensation turns over (tanh), rad/s
FRICTION_BAND_RAD_S = 0.01


@dataclass
class Measurement:
    """One sample of the simulated sensors."""
    t: float                      # s, simulation time
    q: np.ndarray                 # rad, quantized by the encoders
    qd: np.ndarray                # rad/s
    tau: np.ndarray               # N m, joint torque sensors
    wrench: np.ndarray | None     # [f; n] on the payload in the F/T frame (N, N m); None without sensor


class TrackingController:
    """The simulated arm's joint controller (see the module docstring): computed torque on ``model``,
    which does not know the payload, plus PID, clipped to ``torque_limit`` (N m); it tracks a commanded
    trajectory or holds a position. Starts holding ``q0`` (rad) at rest, its integrator at the steady
    state that holds the plant's gravity torque there, ``g_plant`` (N m)."""

    def __init__(self, model: pin.Model, torque_limit, dt: float, kp: float, kd: float, ki: float, q0, g_plant):
        self.model, self.data = model, model.createData()
        self.torque_limit = np.asarray(torque_limit, dtype=float)
        self.dt, self.kp, self.kd, self.ki = dt, kp, kd, ki
        q0 = np.asarray(q0, dtype=float)
        zero = np.zeros(model.nv)
        M = pin.crba(model, self.data, q0)
        g_error = np.asarray(g_plant, dtype=float) - pin.rnea(model, self.data, q0, zero, zero)
        self.e_int = np.linalg.solve(np.triu(M) + np.triu(M, 1).T, g_error) / ki
        self._traj: SampledTrajectory | None = None
        self._traj_start = 0.0
        self._hold = q0.copy()
        self._grid_t0, self._grid = 0.0, None
        self.coulomb_Nm = self.viscous_Nms_rad = np.zeros(model.nv)

    def compensate_friction(self, coulomb_Nm, viscous_Nms_rad) -> None:
        """Add the drive's friction model on the commanded velocity ``qd_d`` to every torque,
        ``coulomb tanh(qd_d / FRICTION_BAND_RAD_S) + viscous qd_d`` (N m; ``(nv,)`` each), as an arm's
        joint servo does with the friction it was calibrated with: the integral term alone lags a
        Coulomb reversal (on MuJoCo, 1 N m of it takes the xArm7's wrist out of its certified
        acceleration tube: ``test_mujoco_sim``)."""
        self.coulomb_Nm = np.broadcast_to(np.asarray(coulomb_Nm, dtype=float), (self.model.nv,)).copy()
        self.viscous_Nms_rad = np.broadcast_to(np.asarray(viscous_Nms_rad, dtype=float), (self.model.nv,)).copy()

    def command(self, traj: SampledTrajectory, t: float, start_time: float | None = None) -> tuple[float, float]:
        """Track ``traj`` from ``start_time`` (default: ``t``, now); afterwards hold its last point.
        Returns the step it makes in the reference now (max over joints: rad, rad/s): zero when the
        command continues what was commanded, as one that arrives before it takes effect does."""
        q_old, qd_old, _ = self.desired(t)
        self._traj = traj
        self._traj_start = t if start_time is None else start_time
        # the desired states at the coming steps, interpolated in one call (per-step interpolation
        # costs more than the dynamics)
        k = np.arange(int(np.ceil((self._traj_start + traj.duration - t) / self.dt)) + 2)
        self._grid_t0 = t
        self._grid = interpolate(traj, t + k * self.dt - self._traj_start)
        q_new, qd_new, _ = self.desired(t)
        return float(np.max(np.abs(q_new - q_old))), float(np.max(np.abs(qd_new - qd_old)))

    def hold(self, q) -> None:
        """Hold ``q`` (rad) from now on."""
        self._traj = None
        self._hold = np.asarray(q, dtype=float).copy()

    def desired(self, t: float):
        """Desired ``(q, qd, qdd)`` at time ``t`` (s): the commanded trajectory, or the held position."""
        if self._traj is None:
            z = np.zeros(self.model.nv)
            return self._hold, z, z
        k = int(round((t - self._grid_t0) / self.dt))
        if self._grid is not None and 0 <= k < self._grid[0].shape[0] \
                and abs(self._grid_t0 + k * self.dt - t) < 1e-6 * self.dt:
            return self._grid[0][k], self._grid[1][k], self._grid[2][k]
        q, qd, qdd = interpolate(self._traj, t - self._traj_start)
        return q[0], qd[0], qdd[0]

    def torque(self, t: float, q, v) -> np.ndarray:
        """The motor torque (N m) at time ``t`` and state ``(q, v)``; advances the integrator one step."""
        q_d, qd_d, qdd_d = self.desired(t)
        e = q_d - q
        self.e_int = self.e_int + self.dt * e
        a_ref = qdd_d + self.kp * e + self.kd * (qd_d - v) + self.ki * self.e_int
        tau = pin.rnea(self.model, self.data, q, v, a_ref) + \
            self.coulomb_Nm * np.tanh(qd_d / FRICTION_BAND_RAD_S) + self.viscous_Nms_rad * qd_d
        return np.clip(tau, -self.torque_limit, self.torque_limit)


class ControlledArm:
    """What a simulated arm takes as commands, given its :class:`TrackingController` ``controller``,
    its time ``t`` (s) and position ``q`` (rad)."""

    controller: TrackingController
    t: float
    q: np.ndarray

    def command(self, traj: SampledTrajectory, start_time: float | None = None) -> tuple[float, float]:
        """Track ``traj`` from ``start_time`` (default: now): :meth:`TrackingController.command`."""
        return self.controller.command(traj, self.t, start_time)

    def hold(self, q=None) -> None:
        """Hold ``q`` (rad; default: the current position) from now on."""
        self.controller.hold(self.q if q is None else q)

    def desired(self, t: float):
        """Desired ``(q, qd, qdd)`` at simulation time ``t`` (s)."""
        return self.controller.desired(t)


class Simulator(ControlledArm):
    """The robot with the payload under a PID+feedforward joint controller, stepped at ``step_hz``, with noisy sensors."""
    def __init__(self, robot: Robot, pi_payload, step_hz: float = 1000.0, kp: float = 400.0,
                 kd: float = 40.0, ki: float = 2000.0, noise: SensorNoise | NoiseModel | None = None, seed: int = 0, q0=None,
                 true_model: pin.Model | None = None, friction=None):
        if step_hz < 1000.0:
            raise ValueError("the simulator steps at 1 kHz or faster")
        self.robot = robot
        self.dt = 1.0 / step_hz
        # a stated NoiseModel stands for the default sensors of those bounds (SensorNoise.from_bounds)
        self.noise = SensorNoise.from_bounds(noise) if isinstance(noise, NoiseModel) else (noise or SensorNoise())
        self.rng = np.random.default_rng(seed)
        self.pi_payload = np.asarray(pi_payload, float)
        # the plant: the nominal robot unless ``true_model`` (same kinematics, other inertias,
        # armature) is given; the controller keeps using the nominal model
        plant = robot if true_model is None else replace(robot, model=true_model)
        self.model_true = model_with_payload(plant, self.pi_payload)
        self.data_true = self.model_true.createData()
        # joint friction of the plant, per joint [Fc, Fv, Ia, beta] (Ia: in the model's armature): the
        # motor torque (what the torque sensors report) minus Fc sign(v) + Fv v + beta moves the links
        self.friction = np.zeros((robot.nv, 4)) if friction is None else np.asarray(friction, float).reshape(robot.nv, 4)
        self._ft = PayloadRegressor(robot) if robot.ft_frame_id is not None else None
        self.t = 0.0
        self.q = np.asarray(q0 if q0 is not None else robot.spec.sim.home, float).copy()
        self.v = np.zeros(robot.nv)
        zero = np.zeros(robot.nv)
        self.tau = pin.rnea(self.model_true, self.data_true, self.q, zero, zero)
        self.controller = TrackingController(robot.model, robot.torque_limit, self.dt, kp, kd, ki, self.q, self.tau)
        self.a = np.zeros(robot.nv)
        self._last = (self.t, self.q.copy(), self.v.copy(), self.tau.copy(), self.a.copy())

    @classmethod
    def from_profile(cls, robot: Robot, pi_payload, seed: int = 0, noise: bool = True) -> Simulator:
        """Step rate, gains and sensor noise from the profile's ``sim:`` and ``noise:`` sections."""
        sim = robot.spec.sim
        return cls(robot, pi_payload, float(sim.step_hz), sim.kp, sim.kd, sim.ki,
                   SensorNoise.from_profile(robot.spec) if noise else SensorNoise(), seed)

    def step(self) -> None:
        """Advance the simulation one step of ``1 / step_hz`` s."""
        self.tau = self.controller.torque(self.t, self.q, self.v)
        Fc, Fv, _, beta = self.friction.T
        self.a = pin.aba(self.model_true, self.data_true, self.q, self.v,
                         self.tau - (Fc * np.sign(self.v) + Fv * self.v + beta))
        self._last = (self.t, self.q.copy(), self.v.copy(), self.tau.copy(), self.a.copy())
        self.v = self.v + self.dt * self.a
        self.q = self.q + self.dt * self.v
        self.t += self.dt

    def measure(self) -> Measurement:
        """Sensor readings of the state at the start of the last step, with the torque applied over
        that step (call after :meth:`step`)."""
        nz = self.noise
        t, q_true, v, tau_true, a = self._last
        wrench = None
        if self._ft is not None:
            A, _ = self._ft.wrench_rows(q_true, v, a, np.zeros(6))
            wrench = nz.wrench(self.rng, A @ self.pi_payload)
        return Measurement(t, nz.position(q_true), nz.velocity(self.rng, v), nz.torque(self.rng, tau_true), wrench)
