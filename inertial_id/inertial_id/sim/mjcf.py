"""MJCF of a robot, authored from the project's own pinocchio model (never from another model file).

The kinematic tree is the pinocchio model's: one MuJoCo body per joint, placed at the joint frame
(``model.jointPlacements``), its hinge (or slide) along the joint axis, its inertial the joint's
lumped body (``model.inertias``: mass, centre of mass, rotational inertia about the centre of mass
as ``fullinertia``, which MuJoCo diagonalizes itself, so tilted principal axes are kept). Gravity is
``model.gravity``. Contacts are disabled (no geoms are written) and joints are unlimited: the
simulator is about the arm's dynamics, not its collisions.

The payload is a body of its own, welded (no joint) to the body that carries the payload frame, at
the payload frame, with the given parameters (pinocchio order, payload frame). The wrist
force/torque sensor is a site on the payload body at the F/T frame with MuJoCo ``force`` and
``torque`` sensors: they report the wrench between the payload body and its parent, i.e. what the
sensor transmits to the payload (see :mod:`.engine` for the sign, which a test checks).

What a real arm adds at each joint (:class:`JointPlant`): reflected rotor inertia (``armature``,
kg m^2), viscous damping (``damping``, N m s/rad) and Coulomb friction (``frictionloss``, N m;
MuJoCo makes it a soft constraint, with ``solreffriction``). These belong to the plant only: the
robot model the estimators and the controller use is left as it is.

Units: SI throughout; angles in radians; quaternions in MuJoCo's order (w, x, y, z).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..core.robot.model import Robot, relative_placement

# site and sensor names of the wrist F/T sensor, the payload body's name
FT_SITE = "ft_sensor"
FT_FORCE = "ft_force"
FT_TORQUE = "ft_torque"
PAYLOAD_BODY = "payload"
# MuJoCo refuses moving bodies lighter than this (mjMINVAL); a payload below it is left out
MIN_MASS_KG = 1e-9


def _vector(n: int, value, name: str) -> np.ndarray:
    x = np.broadcast_to(np.asarray(0.0 if value is None else value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"{name}: expected {n} finite non-negative numbers, got {x.tolist()}")
    return x


@dataclass(frozen=True)
class JointPlant:
    """Per-joint physics of the real arm beyond its rigid links (all ``(nv,)``, joint side).

    ``armature_kgm2``: reflected rotor inertia; ``damping_Nms_rad``: viscous friction;
    ``frictionloss_Nm``: Coulomb friction; ``friction_solref``: MuJoCo's ``solreffriction``
    (time constant s, damping ratio) of the friction constraint, MuJoCo's default unless given."""

    armature_kgm2: np.ndarray
    damping_Nms_rad: np.ndarray
    frictionloss_Nm: np.ndarray
    friction_solref: tuple = field(default=(0.02, 1.0))

    @classmethod
    def make(cls, nv: int, armature=0.0, damping=0.0, frictionloss=0.0, friction_solref=(0.02, 1.0)) -> JointPlant:
        """Scalars or ``(nv,)`` vectors, checked finite and non-negative."""
        return cls(_vector(nv, armature, "armature"), _vector(nv, damping, "damping"),
                   _vector(nv, frictionloss, "frictionloss"), tuple(float(x) for x in friction_solref))

    @classmethod
    def ideal(cls, nv: int) -> JointPlant:
        """Rigid links only: no armature, damping or friction."""
        return cls.make(nv)

    @classmethod
    def from_profile(cls, robot: Robot, damping=0.0, frictionloss=0.0, armature=None) -> JointPlant:
        """The profile's reflected rotor inertia (``dynamics.armature``, as the robot model has it)
        unless ``armature`` is given; damping and friction as given (the profiles state none)."""
        return cls.make(robot.nv, robot.model.armature if armature is None else armature, damping, frictionloss)


def payload_inertia(pi_payload) -> tuple[float, np.ndarray, np.ndarray]:
    """``(mass_kg, c_P (3,), I_C (3, 3))`` of parameters ``pi_payload`` (pinocchio order, frame P):
    mass, centre of mass in P, rotational inertia about the centre of mass in P's axes."""
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(pi_payload, dtype=float))
    return (float(inertia.mass), np.asarray(inertia.lever, dtype=float).copy(),
            np.asarray(inertia.inertia, dtype=float).copy())


def payload_from_principal(mass_kg: float, c_P, principal_kgm2, rpy_PI) -> np.ndarray:
    """Parameters (pinocchio order, frame P) of a body of mass ``mass_kg`` with centre of mass at
    ``c_P`` (m) and principal moments ``principal_kgm2`` about it along axes rotated from P's by
    roll-pitch-yaw ``rpy_PI`` (rad): tilted principal axes when the angles are not zero."""
    R_PI = pin.rpy.rpyToMatrix(*np.asarray(rpy_PI, dtype=float))
    I_C = R_PI @ np.diag(np.asarray(principal_kgm2, dtype=float)) @ R_PI.T
    return pin.Inertia(float(mass_kg), np.asarray(c_P, dtype=float), I_C).toDynamicParameters()


def _f(x) -> str:
    """Numbers as the shortest text that reads back exactly."""
    return " ".join(repr(float(v)) for v in np.atleast_1d(np.asarray(x, dtype=float)))


def _pose(M: pin.SE3) -> str:
    q = pin.Quaternion(M.rotation)
    q.normalize()
    return f'pos="{_f(M.translation)}" quat="{_f([q.w, q.x, q.y, q.z])}"'


def _inertial(mass: float, com, I_C) -> str:
    I = 0.5 * (np.asarray(I_C) + np.asarray(I_C).T)
    full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
    return f'<inertial pos="{_f(com)}" mass="{_f(mass)}" fullinertia="{_f(full)}"/>'


def _axis(joint) -> tuple[str, np.ndarray]:
    """MuJoCo joint type and axis (joint frame) of a one-dof pinocchio joint."""
    name = joint.shortname()
    unit = {"X": [1.0, 0, 0], "Y": [0, 1.0, 0], "Z": [0, 0, 1.0]}
    if name in ("JointModelRX", "JointModelRY", "JointModelRZ"):
        return "hinge", np.array(unit[name[-1]])
    if name in ("JointModelPX", "JointModelPY", "JointModelPZ"):
        return "slide", np.array(unit[name[-1]])
    if name == "JointModelRevoluteUnaligned":
        return "hinge", np.asarray(joint.extract().axis, dtype=float)
    if name == "JointModelPrismaticUnaligned":
        return "slide", np.asarray(joint.extract().axis, dtype=float)
    raise ValueError(f"joint type {name} is not supported by the MJCF writer (one-dof joints only)")


def _body_names(model: pin.Model) -> dict[int, str]:
    """Each joint's body named after its link (the BODY frame at the joint frame), else the joint."""
    names = {}
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint > 0 and frame.parentJoint not in names \
                and frame.placement.isIdentity(1e-12):
            names[frame.parentJoint] = frame.name
    return {j: names.get(j, f"{model.names[j]}_body") for j in range(1, model.njoints)}


def build_mjcf(robot: Robot, pi_payload, plant: JointPlant | None = None, step_hz: float = 1000.0,
               integrator: str = "Euler", torque_limited: bool = True) -> str:
    """The MJCF text of ``robot`` carrying ``pi_payload`` (pinocchio order, payload frame) with the
    joint physics ``plant`` (default: :meth:`JointPlant.ideal`), stepped at ``step_hz``.

    One motor per joint (gear 1, so ``ctrl`` is the joint torque in N m), clamped to the profile's
    torque limits when ``torque_limited``. Sensors: ``ft_force`` and ``ft_torque`` at the site
    ``ft_sensor`` (when the profile has an F/T frame)."""
    model = robot.model
    nv = model.nv
    plant = JointPlant.ideal(nv) if plant is None else plant
    for name in ("armature_kgm2", "damping_Nms_rad", "frictionloss_Nm"):
        if np.shape(getattr(plant, name)) != (nv,):
            raise ValueError(f"JointPlant.{name}: expected {nv} values")
    if not step_hz >= 1000.0:
        raise ValueError("the MuJoCo simulator steps at 1 kHz or faster")
    names = _body_names(model)
    children: dict[int, list[int]] = {}
    for j in range(1, model.njoints):
        children.setdefault(model.parents[j], []).append(j)
    frame_P = model.frames[robot.payload_frame_id]
    m_P, c_P, I_P = payload_inertia(pi_payload)
    if m_P < 0:
        raise ValueError(f"payload mass {m_P} kg is negative")
    solref = _f(plant.friction_solref)

    def payload_xml(indent: str) -> list[str]:
        lines = [f'{indent}<body name="{PAYLOAD_BODY}" {_pose(frame_P.placement)}>']
        if m_P > MIN_MASS_KG:
            lines.append(f"{indent}  {_inertial(m_P, c_P, I_P)}")
        if robot.ft_frame_id is not None:
            X_PS = relative_placement(model, robot.payload_frame_id, robot.ft_frame_id)
            lines.append(f'{indent}  <site name="{FT_SITE}" {_pose(X_PS)}/>')
        lines.append(f"{indent}</body>")
        return lines

    def body_xml(j: int, depth: int) -> list[str]:
        ind = "  " * depth
        kind, axis = _axis(model.joints[j])
        k = model.joints[j].idx_v
        inertia = model.inertias[j]
        lines = [f'{ind}<body name="{names[j]}" {_pose(model.jointPlacements[j])}>',
                 f'{ind}  <joint name="{model.names[j]}" type="{kind}" axis="{_f(axis)}" limited="false" '
                 f'armature="{_f(plant.armature_kgm2[k])}" damping="{_f(plant.damping_Nms_rad[k])}" '
                 f'frictionloss="{_f(plant.frictionloss_Nm[k])}" solreffriction="{solref}"/>']
        if inertia.mass > 0:
            lines.append(f"{ind}  {_inertial(inertia.mass, inertia.lever, inertia.inertia)}")
        for c in children.get(j, []):
            lines += body_xml(c, depth + 1)
        if j == frame_P.parentJoint:
            lines += payload_xml(ind + "  ")
        lines.append(f"{ind}</body>")
        return lines

    world = []
    for j in children.get(0, []):
        world += body_xml(j, 2)
    motors = []
    for j in range(1, model.njoints):
        k = model.joints[j].idx_v
        limit = float(robot.torque_limit[k])
        clamp = f'ctrllimited="true" ctrlrange="{_f([-limit, limit])}"' if torque_limited else 'ctrllimited="false"'
        motors.append(f'    <motor name="{model.names[j]}_motor" joint="{model.names[j]}" gear="1" {clamp}/>')
    sensors = []
    if robot.ft_frame_id is not None:
        sensors = [f'    <force name="{FT_FORCE}" site="{FT_SITE}"/>',
                   f'    <torque name="{FT_TORQUE}" site="{FT_SITE}"/>']
    return "\n".join([
        f'<mujoco model="{robot.name}_inertial_id">',
        '  <compiler angle="radian" autolimits="false" inertiafromgeom="false" boundmass="0" boundinertia="0" '
        'balanceinertia="false" fusestatic="false"/>',
        f'  <option timestep="{_f(1.0 / step_hz)}" gravity="{_f(model.gravity.linear)}" integrator="{integrator}">',
        '    <flag contact="disable"/>',
        '  </option>',
        '  <worldbody>',
        *world,
        '  </worldbody>',
        '  <actuator>',
        *motors,
        '  </actuator>',
        '  <sensor>',
        *sensors,
        '  </sensor>',
        '</mujoco>',
        ""])


def compile_model(xml: str):
    """The ``mujoco.MjModel`` of an MJCF string (in memory, no files)."""
    import mujoco      # optional: mujoco (~0.2 s), for the mujoco engine only
    return mujoco.MjModel.from_xml_string(xml)
