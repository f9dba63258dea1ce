"""The arm on MuJoCo: physics the project did not write, driven and read like the pinocchio
:class:`~inertial_id.core.sim.Simulator`.

**Plant.** :func:`~.mjcf.build_mjcf` of the robot with the payload and the joint physics
(:class:`~.mjcf.JointPlant`: armature, damping, Coulomb ``frictionloss``), stepped by ``mj_step``
at ``step_hz`` (>= 1 kHz) with MuJoCo's semi-implicit Euler integrator, its implicit damping
switched off (``eulerdamp`` disabled) so that the velocity advances by exactly ``dt`` times the
acceleration the sensors of the step saw.

**Controller** (the arm's joint trajectory controller; it does not know the payload or the plant's
armature, and of its damping and friction only the share ``friction_compensation`` gives it; the
pinocchio simulator's, :class:`inertial_id.core.sim.TrackingController`):
computed torque on the nominal robot model (the profile's
``robot.model``, its armature included, unless ``controller_model`` is given),
``tau = RNEA_nominal(q, v, qdd_d + kp e + kd de + ki int e)`` with ``e = q_d - q`` from the
commanded trajectory, clamped to the torque limits; the integral term takes up the payload's weight
and the friction (against Coulomb friction it stick-slips by a few mrad when holding still).
``friction_compensation`` (0 to 1, default 0): the fraction of the plant's Coulomb friction and
damping the drive adds on the commanded velocity (:meth:`~inertial_id.core.sim.TrackingController.compensate_friction`),
as a joint servo calibrated on its own friction does; it knows nothing of the payload. The
arm starts at rest at ``q0``, already holding the payload: the integrator starts at the value that
holds the plant still there (the plant's own gravity torque, read from MuJoCo, not from the
payload's parameters).

**Sensors**, read at the state at the start of the last step (as the pinocchio simulator's
:meth:`~inertial_id.core.sim.Simulator.measure`), with the torque applied over that step:

- joint positions and velocities (encoder quantization, optional velocity noise);
- joint torque on the **output side** (``torque_sensor="output"``, the default): the torque the
  joint transmits to its link, i.e. motor torque minus what the drive consumes before the sensor,
  ``tau_out = tau_motor - armature qdd - damping qd - friction``, with the rotor inertia, the
  viscous damping and the Coulomb friction all on the motor side of the sensor (a strain-wave
  gear's sensor, as in the Gen3's actuators). It equals the RNEA of the links and payload alone
  (no armature). ``torque_sensor="motor"`` reports the motor torque instead (a torque estimated
  from currents, as the xArm's driver reports): links + armature + damping + friction;
- the wrist F/T sensor: MuJoCo ``force`` and ``torque`` sensors at a site at the F/T frame on the
  payload body. They report the wrench the sensor exerts on the payload (MuJoCo's interaction
  force of the child body, from its parent), in the sensor frame, torque about the sensor origin:
  the project's convention, ``w_S = A(q, qd, qdd) @ pi_P`` of
  :meth:`~inertial_id.core.robot.regressor.PayloadRegressor.wrench_rows` (a test checks it to 1e-6).

Errors (:class:`~.errors.SensorErrors`): offsets and drift, filter lag, bounded sample errors.
:meth:`MujocoSimulator.record` takes the samples at the driver's rate (the profile's
``sensing.joint_states_hz``: 100 Hz for the xArm7, 1 kHz for the Gen3); the driver emulation of
``record-sim`` works as it does with the pinocchio simulator, from :meth:`~MujocoSimulator.measure`.

The estimators never see any of this but the samples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..core.robot.model import Robot
from ..core.sim import ControlledArm, Measurement, TrackingController
from ..defaults import SIM_FRICTION_COMPENSATION, SIM_JOINT_DAMPING_NMS_RAD, SIM_JOINT_FRICTION_NM
from .errors import ErrorSource, FirstOrderLag, SensorErrors
from .mjcf import FT_FORCE, FT_TORQUE, JointPlant, build_mjcf

TORQUE_SENSORS = ("output", "motor")


@dataclass
class Truth:
    """What the sensors of the last step would read without errors (and the acceleration)."""

    t: float                    # s
    q: np.ndarray               # rad
    qd: np.ndarray              # rad/s
    qdd: np.ndarray             # rad/s^2, MuJoCo's acceleration over the step
    tau_motor_Nm: np.ndarray    # the actuators' torque (after the torque-limit clamp)
    tau_output_Nm: np.ndarray   # transmitted to the links: motor - armature qdd - damping qd - friction
    tau_friction_Nm: np.ndarray  # Coulomb friction on the joints (MuJoCo's frictionloss constraint force)
    wrench_S: np.ndarray | None  # [f (N), n (N m)] on the payload, F/T frame (unfiltered)


@dataclass
class Recording:
    """Samples at the driver's rate: the readings (with errors) and the truth at the same instants."""

    t: np.ndarray               # (N,) s
    q: np.ndarray               # (N, nv) rad, measured
    qd: np.ndarray              # (N, nv) rad/s, measured
    tau: np.ndarray             # (N, nv) N m, measured (output side or motor, as the simulator's torque_sensor)
    wrench: np.ndarray | None   # (N, 6) measured, or None without an F/T sensor
    q_true: np.ndarray
    qd_true: np.ndarray
    qdd_true: np.ndarray
    tau_output_true_Nm: np.ndarray
    tau_motor_true_Nm: np.ndarray
    wrench_true: np.ndarray | None
    q_desired: np.ndarray       # (N, nv) rad, the commanded trajectory at the sample times


class MujocoSimulator(ControlledArm):
    """The robot with the payload on MuJoCo under a joint trajectory controller that does not know
    the payload, with sensors that err (module docstring). Interface of
    :class:`~inertial_id.core.sim.Simulator`: ``command``, ``hold``, ``desired``, ``step``,
    ``measure``, and ``t``, ``dt``, ``q``, ``v``, ``tau``, ``a``."""

    def __init__(self, robot: Robot, pi_payload, step_hz: float = 1000.0, kp: float = 400.0,
                 kd: float = 40.0, ki: float = 2000.0, errors: SensorErrors | None = None, seed: int = 0,
                 q0=None, plant: JointPlant | None = None, torque_sensor: str = "output",
                 controller_model: pin.Model | None = None, friction_compensation: float = 0.0):
        import mujoco      # optional: mujoco (~0.2 s), for the mujoco engine only
        if torque_sensor not in TORQUE_SENSORS:
            raise ValueError(f"torque_sensor must be one of {', '.join(TORQUE_SENSORS)}, not '{torque_sensor}'")
        self._mj = mujoco
        self.robot = robot
        self.plant = JointPlant.ideal(robot.nv) if plant is None else plant
        self.xml = build_mjcf(robot, pi_payload, self.plant, step_hz)
        self.mj_model = mujoco.MjModel.from_xml_string(self.xml)
        self.mj_model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
        self.mj_data = mujoco.MjData(self.mj_model)
        self.dt = float(self.mj_model.opt.timestep)
        self.torque_sensor = torque_sensor
        self.errors = errors or SensorErrors()
        self.rng = np.random.default_rng(seed)
        self.source = ErrorSource(self.errors, robot.nv, self.rng)
        self._wrench_filter = FirstOrderLag(self.errors.wrench_lag_s, self.dt)
        self._torque_filter = FirstOrderLag(self.errors.torque_lag_s, self.dt)
        self._qadr = np.array([self.mj_model.jnt_qposadr[self.mj_model.joint(n).id] for n in robot.joint_names])
        self._vadr = np.array([self.mj_model.jnt_dofadr[self.mj_model.joint(n).id] for n in robot.joint_names])
        if self.mj_model.nu != robot.nv or self.mj_model.nv != robot.nv:
            raise ValueError("the MJCF model's joints and motors differ from the robot's")
        self._actuators = np.array([self.mj_model.actuator(f"{n}_motor").id for n in robot.joint_names])
        self._has_ft = robot.ft_frame_id is not None
        if self._has_ft:
            f, n = self.mj_model.sensor(FT_FORCE), self.mj_model.sensor(FT_TORQUE)
            self._ft_adr = np.r_[f.adr[0]:f.adr[0] + 3, n.adr[0]:n.adr[0] + 3]
        self.armature = self.mj_model.dof_armature[self._vadr].copy()
        nominal = robot.model if controller_model is None else controller_model
        # start at rest at q0 holding the payload: the integrator holds the plant's gravity torque
        q0 = np.asarray(q0 if q0 is not None else robot.spec.sim.home, dtype=float)
        d = self.mj_data
        d.qpos[self._qadr] = q0
        d.qvel[:] = 0.0
        mujoco.mj_forward(self.mj_model, d)
        g_plant = d.qfrc_bias[self._vadr].copy()
        self.controller = TrackingController(nominal, robot.torque_limit, self.dt, kp, kd, ki, q0, g_plant)
        if not 0.0 <= friction_compensation <= 1.0:
            raise ValueError(f"friction_compensation must lie in [0, 1], not {friction_compensation}")
        if friction_compensation > 0.0:
            self.controller.compensate_friction(friction_compensation * self.plant.frictionloss_Nm,
                                                friction_compensation * self.plant.damping_Nms_rad)
        self.tau = g_plant.copy()
        self.a = np.zeros(robot.nv)
        self.truth: Truth | None = None
        self._filtered = (None, None)

    @classmethod
    def from_profile(cls, robot: Robot, pi_payload, seed: int = 0, noise: bool = True,
                     plant: JointPlant | None = None, distribution: str = "gaussian_clipped",
                     torque_sensor: str = "output", friction_compensation: float = 0.0,
                     **error_overrides) -> MujocoSimulator:
        """Step rate and gains from the profile's ``sim:`` section; sensor errors at the profile's
        stated bounds (``distribution``) when ``noise``; ``plant`` default :meth:`JointPlant.from_profile`."""
        sim = robot.spec.sim
        errors = SensorErrors.at_profile_bounds(robot, distribution if noise else "none", **error_overrides)
        return cls(robot, pi_payload, float(sim.step_hz), sim.kp, sim.kd, sim.ki, errors, seed,
                   plant=JointPlant.from_profile(robot) if plant is None else plant, torque_sensor=torque_sensor,
                   friction_compensation=friction_compensation)

    @classmethod
    def as_simulated_robot(cls, robot: Robot, pi_payload, seed: int = 0, friction_Nm: float = SIM_JOINT_FRICTION_NM,
                           damping_Nms_rad: float = SIM_JOINT_DAMPING_NMS_RAD,
                           friction_compensation: float = SIM_FRICTION_COMPENSATION) -> MujocoSimulator:
        """The arm as the simulated robot node runs it (``engine:=mujoco``): the profile's armature, the
        node's Coulomb friction and damping on every joint, compensated by the servos by that share."""
        plant = JointPlant.from_profile(robot, damping=damping_Nms_rad, frictionloss=friction_Nm)
        return cls.from_profile(robot, pi_payload, seed, plant=plant, friction_compensation=friction_compensation)

    # --- state ------------------------------------------------------------------------------------

    @property
    def t(self) -> float:
        """Simulation time (s)."""
        return float(self.mj_data.time)

    @property
    def q(self) -> np.ndarray:
        """Joint positions now (rad, profile order)."""
        return self.mj_data.qpos[self._qadr].copy()

    @property
    def v(self) -> np.ndarray:
        """Joint velocities now (rad/s, profile order)."""
        return self.mj_data.qvel[self._vadr].copy()

    # --- stepping -----------------------------------------------------------------------------------

    def step(self) -> None:
        """Advance one step of ``dt``: control from the state now, ``mj_step``, record what the
        sensors saw at the step's start."""
        m, d, va = self.mj_model, self.mj_data, self._vadr
        t, q, v = float(d.time), d.qpos[self._qadr], d.qvel[va]      # fancy indexing: copies
        d.ctrl[self._actuators] = self.controller.torque(t, q, v)
        self._mj.mj_step(m, d)
        qdd = d.qacc[va]
        tau_motor = d.qfrc_actuator[va]
        friction = d.qfrc_constraint[va]
        tau_out = tau_motor + d.qfrc_passive[va] + friction - self.armature * qdd
        wrench = d.sensordata[self._ft_adr] if self._has_ft else None
        self.tau, self.a = tau_motor, qdd
        self.truth = Truth(t, q, v, qdd, tau_motor, tau_out, friction, wrench)
        tau_true = tau_out if self.torque_sensor == "output" else tau_motor
        self._filtered = (self._torque_filter(tau_true) if self._torque_filter.alpha < 1.0 else tau_true,
                          wrench if wrench is None or self._wrench_filter.alpha >= 1.0 else self._wrench_filter(wrench))

    def measure(self) -> Measurement:
        """Sensor readings of the state at the start of the last step, with the torque applied over
        that step (call after :meth:`step`)."""
        tr, src = self.truth, self.source
        if tr is None:
            raise RuntimeError("measure() reads the last step: call step() first")
        tau_f, wrench_f = self._filtered
        wrench = src.wrench(tr.t, wrench_f) if wrench_f is not None else None
        return Measurement(tr.t, src.position(tr.q), src.velocity(tr.qd), src.torque(tau_f), wrench)

    def record(self, duration_s: float, rate_hz: float | None = None) -> Recording:
        """Step for ``duration_s`` (s) from now (tracking what was commanded) and take the samples
        at ``rate_hz`` (default: the profile's ``sensing.joint_states_hz``; it must divide the step
        rate), stamped with the simulation time of the state they read."""
        rate = float(self.robot.sensing.joint_states_hz if rate_hz is None else rate_hz)
        every = int(round(1.0 / (self.dt * rate)))
        if every < 1 or abs(every * self.dt * rate - 1.0) > 1e-9:
            raise ValueError(f"sample rate {rate:g} Hz must divide the step rate {1 / self.dt:g} Hz")
        n = int(round(duration_s / self.dt))
        cols = {k: [] for k in Recording.__dataclass_fields__}
        k0 = int(round(self.t / self.dt))
        for _ in range(n):
            self.step()
            k = int(round(self.truth.t / self.dt))
            if (k - k0) % every:
                continue
            m, tr = self.measure(), self.truth
            for key, x in (("t", m.t), ("q", m.q), ("qd", m.qd), ("tau", m.tau), ("wrench", m.wrench),
                           ("q_true", tr.q), ("qd_true", tr.qd), ("qdd_true", tr.qdd),
                           ("tau_output_true_Nm", tr.tau_output_Nm), ("tau_motor_true_Nm", tr.tau_motor_Nm),
                           ("wrench_true", tr.wrench_S), ("q_desired", self.desired(tr.t)[0])):
                cols[key].append(x)
        return Recording(**{k: (None if not v or v[0] is None else np.array(v)) for k, v in cols.items()})
