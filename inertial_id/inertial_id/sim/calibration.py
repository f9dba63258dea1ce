"""The simulated arm calibrated as a user calibrates a real one, for the nodes: ``calibrate`` on
payload-free runs of the same engine, joints and sensor (:func:`.harness.with_calibrations`), and a
copy of the robot profile that names the result (``identification.calibration``).

An arm that senses joint torque needs it on MuJoCo as on a real arm: the estimator's own sensor
model knows nothing of the joints' friction and damping nor of the run's torque offset (uncalibrated,
its bounds are flagged inconsistent and stay at the prior, honestly)."""
from __future__ import annotations

from pathlib import Path

import yaml

from ..core.robot.model import load_robot, profile_file
from .harness import Case, with_calibrations


def calibrated_profile(profile: str, folder, damping_Nms_rad: float, frictionloss_Nm: float) -> str:
    """Path of a profile YAML written into ``folder``: ``profile`` (a name or a path) naming a
    calibration made in ``folder`` from two payload-free MuJoCo runs of its arm, with the profile's
    armature and the given joint damping and Coulomb friction (those of the arm the nodes simulate)."""
    robot = load_robot(profile)
    case = Case(f"{robot.name}-nodes", robot=profile, armature_kgm2=tuple(float(a) for a in robot.model.armature),
                damping_Nms_rad=float(damping_Nms_rad), frictionloss_Nm=float(frictionloss_Nm))
    (calibrated,) = with_calibrations([case], folder)
    with open(profile_file(profile), encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    raw.setdefault("identification", {})["calibration"] = str(Path(calibrated.calibration).resolve())
    path = Path(folder) / f"{robot.name}_calibrated.yaml"
    path.write_text(f"# {robot.name} on MuJoCo, calibrated on payload-free runs of the simulated arm\n"
                    + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return str(path)
