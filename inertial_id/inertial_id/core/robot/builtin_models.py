"""Built-in robot models for identifiability studies, authored from published kinematic facts.

Each is a pinocchio ``Model`` built in code (no URDF). Kinematics follow Craig's modified DH
(``R = Rot_x(alpha_{i-1}) Rot_z(theta_i)``, joint origin ``[a_{i-1}, -d_i sin alpha, d_i cos alpha]``)
unless stated. Inertias are plausible values for simulation checks only; identifiability depends
on kinematics alone. Gravity is 9.81 m/s^2 along -z of the world (the base frame).

- ``planar_2r``: two parallel vertical axes, l1 = 0.3 m (RPNA paper, Fig. 4a).
- ``planar_2r_perp``: second axis perpendicular to the first (RPNA paper, Fig. 4b).
- ``puma560``: standard PUMA 560 (Craig, Table 3.4): a2 = 0.4318, d3 = 0.15005, a3 = 0.0203,
  d4 = 0.4318; masses from Armstrong, Khatib and Burdick (1986).
- ``scara``: RRPR, vertical axes, links 0.35 m and 0.30 m.
- ``cheetah_leg``: MIT Cheetah 3 front-left leg: ab/ad axis x at (0.268, 0.122, 0) of the torso, hip
  axis y 0.045 m outboard, knee axis y 0.342 m below the hip, shank 0.345 m (Cheetah-Software).
- ``stanford``: Stanford arm of Lin's Fig. 2 (the spec's table).

References:
- Wensing, Niemeyer, Slotine, "A Geometric Characterization of Observability in Inertial Parameter Identification" (seed 000)
- Lin, "An Identification Method for Estimating the Inertia Parameters of a Manipulator" (seed 002)
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from . import params
from .model import ProfileError, build_model_from_urdf, load_robot

GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class Link:
    """One moving body: joint kind (``'R'``/``'P'``), modified-DH row and inertia about the COM."""

    kind: str
    alpha: float          # alpha_{i-1}, rad
    a: float              # a_{i-1}, m
    d: float              # d_i (constant part for 'P'), m
    theta: float          # theta_i offset, rad
    mass: float
    com: tuple            # COM in the link frame, m
    inertia: tuple        # (Ixx, Iyy, Izz) about the COM, link axes, kg m^2
    name: str = ""


def mdh_placement(alpha: float, a: float, d: float, theta: float) -> pin.SE3:
    """Joint placement from modified Denavit-Hartenberg parameters (rad, m)."""
    R = pin.utils.rotate("x", alpha) @ pin.utils.rotate("z", theta)
    return pin.SE3(R, np.array([a, -d * np.sin(alpha), d * np.cos(alpha)]))


def mdh_model(links, gravity=GRAVITY) -> pin.Model:
    """A serial chain of revolute/prismatic z joints from modified DH links, with their inertias."""
    model = pin.Model()
    model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    parent = 0
    for i, link in enumerate(links, start=1):
        joint = pin.JointModelRZ() if link.kind == "R" else pin.JointModelPZ()
        parent = model.addJoint(parent, joint, mdh_placement(link.alpha, link.a, link.d, link.theta),
                                link.name or f"joint{i}")
        pi = params.params_from_com(link.mass, link.com, np.diag(link.inertia))
        model.appendBodyToJoint(parent, pin.Inertia.FromDynamicParameters(pi), pin.SE3.Identity())
    return model


D90 = np.pi / 2


def planar_2r() -> pin.Model:
    """Two parallel vertical axes, l1 = 0.3 m."""
    return mdh_model([Link("R", 0, 0, 0, 0, 1.0, (0.15, 0, 0), (0.01, 0.01, 0.01)),
                      Link("R", 0, 0.3, 0, 0, 0.8, (0.12, 0, 0), (0.01, 0.01, 0.01))])


def planar_2r_perp() -> pin.Model:
    """Two revolute joints, the second axis perpendicular to the first."""
    return mdh_model([Link("R", 0, 0, 0, 0, 1.0, (0.15, 0, 0), (0.01, 0.01, 0.01)),
                      Link("R", -D90, 0.3, 0, 0, 0.8, (0.12, 0, 0), (0.01, 0.01, 0.01))])


PUMA560_LINKS = (
    Link("R", 0, 0, 0, 0, 10.0, (0, 0, 0.1), (0.35, 0.35, 0.35)),
    Link("R", -D90, 0, 0, 0, 17.4, (0.068, 0.006, -0.016), (0.13, 0.524, 0.539)),
    Link("R", 0, 0.4318, 0.15005, 0, 4.8, (0, -0.070, 0.014), (0.066, 0.0125, 0.086)),
    Link("R", -D90, 0.0203, 0.4318, 0, 0.82, (0, 0, -0.019), (1.8e-3, 1.8e-3, 1.3e-3)),
    Link("R", D90, 0, 0, 0, 0.34, (0, 0, 0), (0.3e-3, 0.3e-3, 0.4e-3)),
    Link("R", -D90, 0, 0, 0, 0.09, (0, 0, 0.032), (0.15e-3, 0.15e-3, 0.04e-3)),
)


def puma560() -> pin.Model:
    """The standard PUMA 560 (Craig, Table 3.4)."""
    return mdh_model(PUMA560_LINKS)


def scara() -> pin.Model:
    """A SCARA arm: two revolute, one prismatic, one revolute joint about vertical axes."""
    return mdh_model([
        Link("R", 0, 0, 0.4, 0, 5.0, (0.175, 0, 0), (0.02, 0.2, 0.2)),
        Link("R", 0, 0.35, 0, 0, 3.0, (0.15, 0, 0), (0.01, 0.1, 0.1)),
        Link("P", 0, 0.30, 0, 0, 1.0, (0, 0, 0.1), (0.01, 0.01, 0.001)),
        Link("R", 0, 0, 0, 0, 0.5, (0, 0, 0.02), (0.001, 0.001, 0.001)),
    ])


def cheetah_leg() -> pin.Model:
    """A Cheetah leg (Cheetah-Software): abduction about x, hip and knee about y."""
    model = pin.Model()
    model.gravity = pin.Motion(GRAVITY, np.zeros(3))
    joints = [("abad", pin.JointModelRX(), (0.268, 0.122, 0.0), 0.54, (0, 0.036, 0)),
              ("hip", pin.JointModelRY(), (0.0, 0.045, 0.0), 1.5, (0, 0.016, -0.02)),
              ("knee", pin.JointModelRY(), (0.0, 0.0, -0.342), 0.26, (0, 0, -0.12))]
    parent = 0
    for name, joint, offset, mass, com in joints:
        parent = model.addJoint(parent, joint, pin.SE3(np.eye(3), np.array(offset)), name)
        pi = params.params_from_com(mass, com, np.diag([4e-3, 4e-3, 1e-3]))
        model.appendBodyToJoint(parent, pin.Inertia.FromDynamicParameters(pi), pin.SE3.Identity())
    return model


# Stanford arm, Lin's Fig. 2: (kind, theta offset, beta, b, d, mass, c, diag(I about COM)).
STANFORD_LINKS = (
    Link("R", 0, 0, 0, 0, 9.29, (0, 0.1105, 0.0175), (0.276, 0.255, 0.71)),
    Link("R", D90, 0, 0.1529, D90, 5.01, (0, 0, -0.1054), (0.108, 0.018, 0.1)),
    Link("P", D90, 0, 0.6447, 0, 4.25, (0, 0, -0.6447), (2.51, 2.51, 0.006)),
    Link("R", 0, 0, 0, 0, 1.08, (0.0092, 0.0054, 0), (0.002, 0.001, 0.001)),
    Link("R", D90, 0, 0, -D90, 0.63, (0, -0.0566, 0), (0.003, 0.003, 0.0004)),
    Link("R", D90, 0, 0, 0, 0.51, (0, 0, 0.1554), (0.013, 0.013, 0.0003)),
)


def stanford() -> pin.Model:
    """The Stanford arm of Lin's Fig. 2."""
    return mdh_model(STANFORD_LINKS)


BUILTIN_MODELS = {
    "planar_2r": planar_2r, "planar_2r_perp": planar_2r_perp, "puma560": puma560,
    "scara": scara, "cheetah_leg": cheetah_leg, "stanford": stanford,
}


def random_model(rng: np.random.Generator, n_bodies: int, tree: bool = True,
                 prismatic_fraction: float = 0.3) -> pin.Model:
    """A random chain or tree: revolute/prismatic joints with random or axis-aligned axes (so that
    parallel and perpendicular special cases occur) and random or zero offsets."""
    model = pin.Model()
    model.gravity = pin.Motion(GRAVITY, np.zeros(3))
    for i in range(1, n_bodies + 1):
        parent = int(rng.integers(0, i)) if tree else i - 1
        if rng.random() < 0.5:
            axis = np.eye(3)[rng.integers(3)]
            R = pin.utils.rotate("xyz"[rng.integers(3)], D90 * rng.integers(4))
        else:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            R = pin.Quaternion(rng.normal(size=4)).normalized().matrix()
        offset = rng.normal(scale=0.3, size=3) * (rng.random(3) < 0.7)
        joint = (pin.JointModelPrismaticUnaligned(axis) if rng.random() < prismatic_fraction
                 else pin.JointModelRevoluteUnaligned(axis))
        jid = model.addJoint(parent, joint, pin.SE3(R, offset), f"joint{i}")
        pi = params.params_from_com(rng.uniform(0.5, 2), rng.normal(scale=0.1, size=3),
                                    np.diag(rng.uniform(0.01, 0.05, 3)))
        model.appendBodyToJoint(jid, pin.Inertia.FromDynamicParameters(pi), pin.SE3.Identity())
    return model


URDF_JOINT_TYPES = {"revolute", "continuous", "prismatic", "fixed", "floating", "planar"}


def check_urdf(path: Path) -> None:
    """Reject, with a message naming the problem, URDFs that are not open kinematic trees or use
    joints the analysis does not cover (before pinocchio parses them)."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ProfileError(f"cannot parse URDF '{path}': {exc}") from None
    parent_joint: dict[str | None, str | None] = {}
    for joint in root.iter("joint"):
        name, kind = joint.get("name"), joint.get("type")
        if kind not in URDF_JOINT_TYPES:
            raise ProfileError(f"URDF '{path}': joint '{name}' has type '{kind}', which is not "
                               f"covered (supported: {', '.join(sorted(URDF_JOINT_TYPES))})")
        if joint.find("mimic") is not None:
            raise ProfileError(f"URDF '{path}': joint '{name}' is a mimic joint (a coupled closed "
                               "loop), which the identifiability analysis does not cover")
        child_element = joint.find("child")
        if child_element is None:
            raise ProfileError(f"URDF '{path}': joint '{name}' has no child link")
        child = child_element.get("link")
        if child in parent_joint:
            raise ProfileError(f"URDF '{path}': closed kinematic loop, link '{child}' is the child of "
                               f"both '{parent_joint[child]}' and '{name}'; only open chains and "
                               "trees are covered")
        parent_joint[child] = name


def load_any_model(name: str) -> tuple[str, pin.Model]:
    """(name, model) from a built-in model name, a URDF path or a robot profile name/path."""
    if name in BUILTIN_MODELS:
        return name, BUILTIN_MODELS[name]()
    path = Path(name)
    if path.suffix == ".urdf" or path.suffix == ".xml":
        if not path.exists():
            raise ProfileError(f"URDF file '{name}' not found")
        check_urdf(path)
        return path.stem, build_model_from_urdf(path)
    try:
        robot = load_robot(name)
    except ProfileError as exc:
        raise ProfileError(f"'{name}' is neither a built-in model ({', '.join(BUILTIN_MODELS)}), "
                           f"a URDF file nor a usable robot profile: {exc}") from None
    return robot.name, robot.model
