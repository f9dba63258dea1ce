"""A robot profile written from a URDF (``inertial-id profile init``): a complete, commented YAML that
:func:`inertial_id.core.robot.model.load_robot` accepts as written.

What the URDF states is copied (joints in model order, position, velocity and effort limits, the base
link); what it cannot state is derived by rules written into the file beside each value, so the user
sees what to replace with the arm's own figures:

- the payload prior from the rated payload: every payload of at most ``rated x``
  :data:`RATED_PAYLOAD_SAFETY` kg whose mass lies within :data:`PAYLOAD_REACH_M` of the payload
  link's origin (:func:`payload_prior`);
- acceleration (and, for wrench sensing, jerk) limits as multiples of the URDF's velocity limits,
  which a URDF has no field for;
- the planner's reach and acceleration share as fractions of those limits;
- a reflected rotor inertia (armature) per joint, which a URDF does not hold;
- sensor error bounds as conservative placeholders, to be replaced by ``inertial-id calibrate``'s
  figures or the sensor's datasheet.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from .model import build_model_from_urdf, load_payloads
from .profile_edit import write_profile_text
from .profile import ProfileError

SENSING_KINDS = ("joint_torque", "wrench")

# The prior's mass bound over the rated payload: an arm lifts somewhat more than its rating (the
# shipped Gen3 profile states 1.3x its 4 kg), and a prior that excludes the truth voids every bound.
RATED_PAYLOAD_SAFETY = 1.3
# Every point of the payload (hence its centre of mass) within this distance of the payload link's
# origin: a gripper plus a part of a tool, as on the shipped profiles' priors.
PAYLOAD_REACH_M = 0.2
# URDFs have no acceleration limit: full speed reached within a third of a second (the shipped Gen3
# and xArm7 profiles state 3.2 to 3.7 times their velocity limits).
ACCELERATION_PER_VELOCITY_PER_S = 3.0
# Wrench rows' acceleration error bound rests on a jerk limit (the xArm7 profile: 3x its acceleration).
JERK_PER_ACCELERATION_PER_S = 3.0
# Plans use this share of the acceleration limits, so the controller's tracking error stays small.
PLANNER_ACCELERATION_FRACTION = 0.3
# The planner's control points stay within centre +- a quarter of each joint's half range, at most this.
REACH_SHARE_OF_HALF_RANGE = 0.25
REACH_CAP_RAD = 0.6
# Kept free below each joint's torque limit by the certifier.
TORQUE_MARGIN_SHARE = 0.05
# The holding pose's search: sweeps over the joints, grid points per joint.
HOLDING_POSE_SWEEPS = 3
HOLDING_POSE_GRID = 13
# Radius of the link capsules: a guess at an arm's link shells, to be checked against the arm.
CAPSULE_RADIUS_M = 0.06
# The simulated arm's joint servo (sim.kp, kd, ki: computed torque on the model without the payload,
# 1/s^2, 1/s, 1/s^3): poles near 27 rad/s, a few hertz as an industrial arm's position loop. The
# shipped profiles' softer 400, 40, 2000 let a simulated UR5e's wrist stray 0.03-0.07 rad under a
# 3.6 kg payload the servo does not know; these keep it under 0.01 rad.
SIM_SERVO_GAINS = (1600.0, 80.0, 16000.0)
# Reflected rotor inertia per joint until calibrated (kg m^2).
ARMATURE_KG_M2 = 0.1
# Placeholders until calibrated: the digit_arm profile's torque sensor bound, a mid-range F/T sensor.
TORQUE_NOISE_RELATIVE = 0.05
TORQUE_NOISE_ABSOLUTE_NM = 0.5


@dataclass(frozen=True)
class UrdfArm:
    """What a profile takes from a URDF: the moving joints in model order with their limits, the
    base link, and per moving link the segment from its origin to the next joint (capsules)."""

    name: str
    joints: tuple[str, ...]
    position_lower_rad: np.ndarray
    position_upper_rad: np.ndarray
    velocity_rad_s: np.ndarray
    effort_Nm: np.ndarray
    base_link: str
    link_segments: tuple[tuple[str, np.ndarray], ...]    # (link, p_LN: next joint's origin in the link)
    model: pin.Model = field(repr=False)


def _link_of_joint(model: pin.Model, joint: int) -> pin.Frame | None:
    """The link (BODY frame) a joint moves whose origin is the joint's (URDF links are)."""
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == joint and frame.placement.isIdentity():
            return frame
    return None


def read_urdf(urdf_path: Path, payload_link: str, ft_frame: str | None = None) -> UrdfArm:
    """The URDF's facts a profile needs; :class:`ProfileError` naming what the URDF lacks."""
    model = build_model_from_urdf(urdf_path)
    where = f"URDF '{urdf_path.name}'"
    if model.nv == 0:
        raise ProfileError(f"{where} has no moving joint")
    several = [model.names[j] for j in range(1, model.njoints) if model.joints[j].nv != 1]
    if several:
        raise ProfileError(f"{where}: joint(s) {', '.join(several)} move in more than one degree of freedom: "
                           "only revolute and prismatic joints are supported")
    unbounded = [model.names[j] for j in range(1, model.njoints) if model.joints[j].nq != 1]
    if unbounded:
        raise ProfileError(f"{where}: joint(s) {', '.join(unbounded)} are continuous: give them type \"revolute\" "
                           "and the arm's position limits")
    for label, link in (("payload link", payload_link), ("F/T sensor frame", ft_frame)):
        if link is None:
            continue
        if not model.existFrame(link):
            links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
            raise ProfileError(f"{where} has no link '{link}' for the {label} (links: {', '.join(links)})")
        if model.frames[model.getFrameId(link)].parentJoint == 0:
            raise ProfileError(f"{label} '{link}' does not move with any joint of {where}: name a link "
                               "carried by the arm (its flange or tool link)")
    joints = tuple(model.names[1:])
    lower, upper = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    velocity, effort = model.velocityLimit.copy(), model.effortLimit.copy()
    for j, name in enumerate(joints):
        if not (np.isfinite(lower[j]) and np.isfinite(upper[j]) and lower[j] < upper[j]):
            raise ProfileError(f"{where}: joint '{name}' has no position range (<limit lower=... upper=...>)")
        for what, value in (("velocity", velocity[j]), ("effort", effort[j])):
            if not (np.isfinite(value) and value > 0):
                raise ProfileError(f"{where}: joint '{name}' has no {what} limit (<limit {what}=\"...\"> "
                                   "must be a positive number)")
    base = next(f.name for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == 0)
    payload_frame = model.frames[model.getFrameId(payload_link)]
    segments = []
    for j in range(1, model.njoints):
        link = _link_of_joint(model, j)
        if link is None:
            continue
        children = [k for k in range(j + 1, model.njoints) if model.parents[k] == j]
        if children:
            p_JN = model.jointPlacements[children[0]].translation
        elif payload_frame.parentJoint == j:
            p_JN = payload_frame.placement.translation
        else:
            p_JN = np.zeros(3)
        segments.append((link.name, link.placement.actInv(p_JN)))
    return UrdfArm(model.name or urdf_path.stem, joints, lower, upper, velocity, effort, base, tuple(segments), model)


def holding_pose(arm: UrdfArm, payload_link: str, mass_kg: float, reach_rad: np.ndarray) -> np.ndarray:
    """The excitation's centre: from mid-range, a coordinate search over a grid of poses at least
    ``reach_rad`` inside the position limits for the least largest share of a joint's torque limit
    that holding a point payload of ``mass_kg`` takes, the payload :data:`PAYLOAD_REACH_M` from the
    payload link's origin along whichever of its axes is worst. Ties go to the pose nearer mid-range.
    At mid-range a 7-DoF arm's wrist can need more than its torque limit to hold the prior's payload."""
    frame = arm.model.frames[arm.model.getFrameId(payload_link)]
    models = []
    for p_FP in np.vstack([np.eye(3), -np.eye(3)]) * PAYLOAD_REACH_M:
        model = pin.Model(arm.model)
        point = pin.Inertia(mass_kg, frame.placement.act(p_FP), np.zeros((3, 3)))
        model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + point
        models.append((model, model.createData()))

    def share(q):
        return max(float(np.max(np.abs(pin.computeGeneralizedGravity(m, d, q)) / arm.effort_Nm)) for m, d in models)

    middle = (arm.position_lower_rad + arm.position_upper_rad) / 2
    low = np.minimum(arm.position_lower_rad + reach_rad, middle)
    high = np.maximum(arm.position_upper_rad - reach_rad, middle)
    q = middle.copy()
    for _ in range(HOLDING_POSE_SWEEPS):
        for j in range(q.size):
            candidates = np.append(np.linspace(low[j], high[j], HOLDING_POSE_GRID), middle[j])
            shares = []
            for x in candidates:
                q[j] = x
                shares.append(share(q))
            # within a hair of the least, the candidate nearest mid-range: joints gravity does not
            # load stay where the excitation has room on both sides
            near_best = np.flatnonzero(np.asarray(shares) <= min(shares) + 1e-3)
            q[j] = candidates[near_best[np.argmin(np.abs(candidates[near_best] - middle[j]))]]
    return q


def payload_prior(rated_payload_kg: float) -> tuple[np.ndarray, np.ndarray]:
    """The prior box (pinocchio order: m, m c, I about the payload link's origin) of every payload of
    at most ``rated x RATED_PAYLOAD_SAFETY`` kg whose points all lie within ``R = PAYLOAD_REACH_M`` of
    the origin: ``|m c_i| <= M R``, ``0 <= I_ii <= M R^2`` (as ``y^2 + z^2 <= R^2``) and
    ``|I_ij| <= M R^2 / 2`` (as ``|y z| <= (y^2 + z^2) / 2``)."""
    mass_kg = RATED_PAYLOAD_SAFETY * rated_payload_kg
    moment_kg_m, inertia_kg_m2 = mass_kg * PAYLOAD_REACH_M, mass_kg * PAYLOAD_REACH_M**2
    diagonal = np.array([True, False, True, False, False, True])      # Ixx, Ixy, Iyy, Ixz, Iyz, Izz
    upper = np.concatenate([[mass_kg], np.full(3, moment_kg_m), np.where(diagonal, inertia_kg_m2, inertia_kg_m2 / 2)])
    lower = np.concatenate([[0.0], -upper[1:4], np.where(diagonal, 0.0, -inertia_kg_m2 / 2)])
    return lower, upper


def simulated_payload(rated_payload_kg: float) -> str:
    """The catalogue's heaviest payload within the rating (the lightest when none is)."""
    catalogue = load_payloads()
    within = [name for name, spec in catalogue.items() if spec["mass_kg"] <= rated_payload_kg]
    pick = max if within else min
    return pick(within or catalogue, key=lambda name: catalogue[name]["mass_kg"])


def _name(text: str) -> str:
    """A URDF name as a YAML scalar: plain when it reads back as the same string, else quoted."""
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", text) and text not in ("null", "true", "false") \
        else json.dumps(text)


def _numbers(values) -> str:
    return "[" + ", ".join(f"{float(x):.6g}" for x in values) + "]"


def profile_text(arm: UrdfArm, urdf_ref: str, payload_link: str, rated_payload_kg: float,
                 sensing: str = "joint_torque", ft_frame: str | None = None) -> str:
    """The profile's YAML, every derived value with its rule beside it."""
    if sensing not in SENSING_KINDS:
        raise ProfileError(f"sensing must be one of {', '.join(SENSING_KINDS)}, got '{sensing}'")
    wrench = sensing == "wrench"
    n = len(arm.joints)
    acceleration = ACCELERATION_PER_VELOCITY_PER_S * arm.velocity_rad_s
    half_range = (arm.position_upper_rad - arm.position_lower_rad) / 2
    reach = np.minimum(REACH_SHARE_OF_HALF_RANGE * half_range, REACH_CAP_RAD)
    prior_lower, prior_upper = payload_prior(rated_payload_kg)
    centre = holding_pose(arm, payload_link, prior_upper[0], reach)
    capsules = "\n".join(f"    - {{frame: {_name(link)}, p0: [0.0, 0.0, 0.0], p1: {_numbers(p1)}, radius: {CAPSULE_RADIUS_M:g}}}"
                         for link, p1 in arm.link_segments)
    jerk = (f"""  # |jerk| of the motion, rad/s^3: the wrench rows' acceleration error bound rests on it. Here
  # {JERK_PER_ACCELERATION_PER_S:g}x the acceleration limits per second; state what your controller holds.
  jerk: {_numbers(JERK_PER_ACCELERATION_PER_S * acceleration)}
""" if wrench else "")
    sensor_frame = ft_frame or payload_link
    description = f"{arm.name} ({n} joints), {sensing.replace('_', ' ')} sensing, payload on {payload_link}"
    return f"""# Robot profile of {arm.name}, written by `inertial-id profile init` from {Path(urdf_ref).name}.
# Copied from the URDF: joints, position, velocity and torque limits, the base link. Everything else
# follows a stated rule (the comment beside it): replace those values with your arm's own figures.
# Schema and defaults: docs reference/profiles; a wrong or missing field is refused at load.
name: {_name(arm.name)}
description: {json.dumps(description)}
model:
  urdf: {json.dumps(urdf_ref)}        # relative to this file's folder, or absolute
joints: [{', '.join(map(_name, arm.joints))}]
frames:
  base: {_name(arm.base_link)}
  payload: {_name(payload_link)}          # payload parameters are expressed in this link's frame
  ft_sensor: {_name(sensor_frame) if wrench else 'null'}
sensing:
  joint_states_topic: /joint_states
  joint_states_hz: 500.0               # set to your driver's JointState rate
  joint_torque: {'false' if wrench else 'true'}                   # JointState.effort holds measured joint torques (N m)
  wrench: {'true' if wrench else 'false'}
{'''  wrench_topic: /wrench              # the driver's geometry_msgs/WrenchStamped
  wrench_hz: 500.0                     # set to your sensor's rate
''' if wrench else ''}dynamics:
  # Reflected rotor inertia per joint, kg m^2 (joint side), which a URDF does not hold: {ARMATURE_KG_M2:g} on
  # every joint, the order of a geared arm's (the shipped Gen3 and xArm7 profiles state 0.1 to 0.3).
  # Without it a light wrist carrying the payload is too stiff to simulate. calibrate fits the rest (Ia).
  armature: {_numbers(np.full(n, ARMATURE_KG_M2))}
limits:                                # SI units, from the URDF unless stated
  position_lower: {_numbers(arm.position_lower_rad)}
  position_upper: {_numbers(arm.position_upper_rad)}
  velocity: {_numbers(arm.velocity_rad_s)}
  # The URDF has no acceleration limit: {ACCELERATION_PER_VELOCITY_PER_S:g}x the velocity limit per second (full speed
  # within {1 / ACCELERATION_PER_VELOCITY_PER_S:.2g} s). Replace with your arm's datasheet figures.
  acceleration: {_numbers(acceleration)}
{jerk}  torque: {_numbers(arm.effort_Nm)}
noise:
  # PLACEHOLDERS, conservative: the guarantee rests on these bounds holding. Run
  # `inertial-id calibrate` on payload-free runs (docs tutorials/calibrate), name its file in
  # identification.calibration, and state your sensor's datasheet error here.
  joint_torque: {{relative: {TORQUE_NOISE_RELATIVE:g}, absolute_Nm: {TORQUE_NOISE_ABSOLUTE_NM:g}}}   # |error| <= relative*|tau| + absolute
  encoder_resolution_deg: 0.02
  wrench: {{force_sigma_N: 0.5, torque_sigma_Nm: 0.02, bound_sigmas: 3.0,
           # the sensor's zero is an unknown of each run within +-these, moving at most this fast
           offset_N: 2.0, offset_Nm: 0.1, offset_drift_N_per_s: 0.01, offset_drift_Nm_per_s: 0.0005}}
  model_error_Nm: 0.05                 # row error from differentiating velocity and quantization
  model_error_N: 0.1
identification:
  method: guaranteed                   # rls | lmi | pmd | log_cholesky | guaranteed
  momentum_window_s: {'0.0' if wrench else '0.1'}               # {'no joint torque rows: wrench rows only' if wrench else 'length of a momentum window'}
  robot_relative_error: 0.05           # the URDF's link parameters known to +-5 % (a calibration replaces this)
payload:
  name: payload
  # Prior box, pinocchio order [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], in the payload frame:
  # mass in [0, {RATED_PAYLOAD_SAFETY:g} x the rated {rated_payload_kg:g} kg]; every point of the payload within
  # {PAYLOAD_REACH_M:g} m of the payload link's origin, so |m c| <= M R per axis, 0 <= I_ii <= M R^2 and
  # |I_ij| <= M R^2 / 2 (inertia about that origin). A payload outside it voids the bounds: widen it then.
  prior_lower: {_numbers(prior_lower)}
  prior_upper: {_numbers(prior_upper)}
  sim: {simulated_payload(rated_payload_kg)}                 # the simulator's payload (config/payloads.yaml): the heaviest within the rating
sim:
  # where holding the prior's heaviest payload takes the least of the torque limits (a grid search,
  # at least planner.reach_rad inside the position limits): check it is clear of the arm and the cell
  home: {_numbers(centre)}
  # the simulated joint servo (computed torque without the payload), 1/s^2, 1/s, 1/s^3
  kp: {SIM_SERVO_GAINS[0]:g}
  kd: {SIM_SERVO_GAINS[1]:g}
  ki: {SIM_SERVO_GAINS[2]:g}
excitation:
  period_s: 10.0
  harmonics: 3
  amplitude_rad: {_numbers(reach)}    # = planner.reach_rad; shrunk until the limits pass
  seed: 7
planner:
  horizon_s: 3.0
  replan_s: 1.5
  deadline_s: 1.3
  optimize_s: 1.0
  # joint states older than this are a fault while moving, s: the shipped profiles' figure (the
  # schema's 0.2 s braked a simulated UR5e on a loaded machine); your driver's rate sets the floor
  stale_after_s: 0.5
  centre: {_numbers(centre)}    # = sim.home
  # control points stay within centre +- reach: {REACH_SHARE_OF_HALF_RANGE:g} of each joint's half range, at most {REACH_CAP_RAD:g} rad
  reach_rad: {_numbers(reach)}
  acceleration_fraction: {PLANNER_ACCELERATION_FRACTION:g}           # plans use this share of limits.acceleration
  time_intervals: 64
  torque_margin_Nm: {_numbers(TORQUE_MARGIN_SHARE * arm.effort_Nm)}   # {TORQUE_MARGIN_SHARE:g} of limits.torque kept free
  # The tube around a plan the certificate covers; the planner brakes outside it, and a wider tube
  # widens every torque enclosure. `inertial-id profile tube --write` measures the simulated arm's;
  # the real arm's controller is measured on the arm (the planner's tracking.max_* diagnostics)
  # before the planner moves it (docs tutorials/planner_safety).
  tracking_error: {{position_rad: 0.03, velocity_rad_s: 0.15, acceleration_rad_s2: 0.6}}   # placeholder: the xArm7's simulated tube
  robot_absolute_floor: {{mass_kg: 0.01, first_moment_kg_m: 0.002, inertia_kg_m2: 0.0005}}
  # Occupancy: per link, its origin to the next joint's, radius {CAPSULE_RADIUS_M:g} m (check against the link shells);
  # the payload: every point within {PAYLOAD_REACH_M:g} m of its link's origin (the prior's rule).
  capsules:
{capsules}
    - {{frame: {_name(payload_link)}, p0: [0.0, 0.0, 0.0], p1: [0.0, 0.0, 0.0], radius: {PAYLOAD_REACH_M:g}}}
obstacles: []                          # axis-aligned boxes in the base frame: {{name, center, size}} (m)
"""


def init_profile(urdf_path: str | Path, payload_link: str, rated_payload_kg: float, out_path: str | Path,
                 sensing: str = "joint_torque", ft_frame: str | None = None, force: bool = False) -> Path:
    """Write the profile of the URDF to ``out_path`` (refused where a file exists, unless ``force``),
    after checking that :func:`~.model.load_robot` accepts it as written. Returns the path written."""
    urdf_path, out_path = Path(urdf_path), Path(out_path)
    if not (np.isfinite(rated_payload_kg) and rated_payload_kg > 0):
        raise ProfileError(f"the rated payload must be a positive number of kg, got {rated_payload_kg}")
    if ft_frame is not None and sensing != "wrench":
        raise ProfileError("an F/T sensor frame is given only with wrench sensing")
    if not urdf_path.is_file():
        raise ProfileError(f"URDF '{urdf_path}' not found")
    if out_path.exists() and not force:
        raise ProfileError(f"'{out_path}' exists: pass --force to overwrite it")
    arm = read_urdf(urdf_path, payload_link, ft_frame)
    # relative when the URDF sits in the profile's folder (or below), so the two can move together
    urdf_abs = urdf_path.resolve()
    try:
        urdf_ref = urdf_abs.relative_to(out_path.resolve().parent).as_posix()
    except ValueError:
        urdf_ref = str(urdf_abs)
    write_profile_text(out_path, profile_text(arm, urdf_ref, payload_link, rated_payload_kg, sensing, ft_frame))
    return out_path
