"""The simulated arm calibrated as a user calibrates a real one, for the nodes: ``calibrate`` on
payload-free runs of the same engine, joints and sensor (:func:`.harness.with_calibrations`), and a
copy of the robot profile that names the result (``identification.calibration``).

An arm that senses joint torque needs it on MuJoCo as on a real arm: the estimator's own sensor
model knows nothing of the joints' friction and damping nor of the run's torque offset (uncalibrated,
its bounds are flagged inconsistent and stay at the prior, honestly). On the pinocchio engine (the
estimator's own model) the stated bounds hold without one; calibrated there too, the box rests on the
sensor's measured error instead of the profile's stated bound and on the measured robot instead of
its stated ±5 % box."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from ..core.calibration.build import calibrate
from ..core.data.data_io import Run
from ..core.robot.model import load_robot, profile_file
from ..core.sim import Simulator
from ..defaults import SIM_JOINT_DAMPING_NMS_RAD, SIM_JOINT_FRICTION_NM
from .harness import Case, exciting_trajectory, payload_free, with_calibrations
from .mjcf import payload_from_principal

CALIBRATION_RUNS = 2


def calibration_needed(robot, engine: str, calibrate: bool = False) -> bool:
    """Whether the simulated ``robot`` is calibrated before it runs: an arm that senses joint torque
    and whose profile names no calibration, on mujoco always (the estimator's sensor model knows
    nothing of its joint friction), on the pinocchio engine when ``calibrate``."""
    return bool(robot.sensing.joint_torque and not robot.spec.identification.calibration
                and (calibrate or engine == "mujoco"))


def calibrated_profile(profile: str, folder, engine: str, damping_Nms_rad: float = SIM_JOINT_DAMPING_NMS_RAD,
                       frictionloss_Nm: float = SIM_JOINT_FRICTION_NM) -> str:
    """Path of a profile YAML written into ``folder``: ``profile`` (a name or a path) naming a
    calibration made in ``folder`` from two payload-free runs of its arm on ``engine``: on mujoco with
    the profile's armature and the given joint damping and Coulomb friction (default: those of the arm
    the simulated robot node runs), on pinocchio the simulator the nodes run, its sensors as the
    profile states."""
    robot = load_robot(profile)
    case = Case(f"{robot.name}-nodes", robot=profile, armature_kgm2=tuple(float(a) for a in robot.model.armature),
                damping_Nms_rad=float(damping_Nms_rad), frictionloss_Nm=float(frictionloss_Nm))
    if engine == "mujoco":
        (calibrated,) = with_calibrations([case], folder, CALIBRATION_RUNS)
        calibration = Path(calibrated.calibration)
    else:
        calibration = Path(folder) / "calibration-0.yaml"
        calibrate(robot, [_pinocchio_run(robot, payload_free(case, k)) for k in range(CALIBRATION_RUNS)]).write(calibration)
    with open(profile_file(profile), encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    raw.setdefault("identification", {})["calibration"] = str(calibration.resolve())
    path = Path(folder) / f"{robot.name}_calibrated.yaml"
    path.write_text(f"# {robot.name} on {engine}, calibrated on payload-free runs of the simulated arm\n"
                    + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return str(path)


def _pinocchio_run(robot, case: Case) -> Run:
    """``case``'s run (its payload, trajectory and noise seed, at the driver's rate) on the simulator
    of the pinocchio engine: the estimator's own model, the profile's sensor noise."""
    payload = payload_from_principal(case.mass_kg, case.com_m, case.principal_kgm2, case.principal_rpy_rad)
    sim = Simulator.from_profile(robot, payload, seed=case.noise_seed)
    sim.command(exciting_trajectory(robot, case.duration_s, case.trajectory_seed))
    every = max(1, int(round(1.0 / (sim.dt * robot.sensing.joint_states_hz))))
    samples = []
    for i in range(int(round((case.duration_s + 0.5) / sim.dt))):
        sim.step()
        if i % every == 0:
            samples.append(sim.measure())
    return Run(case.name, *(np.array([getattr(m, key) for m in samples]) for key in ("t", "q", "qd", "tau")))
