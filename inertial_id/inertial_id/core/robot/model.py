"""Robot models: a pinocchio ``Model`` built from a URDF plus a robot profile (YAML).

A :class:`Robot` is constant (model, frame ids, limits, noise bounds); scratch space is a
``pinocchio.Data`` created by the caller, as in pinocchio. Nothing robot-specific lives in Python:
profiles are ``config/robots/<name>.yaml`` and payloads ``config/payloads.yaml``.
"""
from __future__ import annotations

import sysconfig
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from ...share import ament_share_directory, config_dirs
from . import params, strict_yaml
from .profile import ProfileError, RobotProfile, Sensing, edited, momentum_window_samples, parse, parse_mapping, validate


def _find_config(relative: str) -> Path:
    for d in config_dirs():
        if (d / relative).exists():
            return d / relative
    raise ProfileError(f"'{relative}' not found in any config directory ({', '.join(map(str, config_dirs()))})")


def available_profiles() -> list[str]:
    """Names of the robot profiles in the config directories."""
    names = set()
    for d in config_dirs():
        names |= {p.stem for p in (d / "robots").glob("*.yaml")}
    return sorted(names)


def profile_file(name_or_path: str) -> Path:
    """The YAML file of a profile given by name (``kinova_gen3``) or by path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return path
    try:
        return _find_config(f"robots/{name_or_path}.yaml")
    except ProfileError:
        raise ProfileError(f"unknown robot profile '{name_or_path}' "
                           f"(available: {', '.join(available_profiles())})") from None


def _read_yaml(path: Path):
    try:
        with open(path, encoding="utf-8") as f:
            return strict_yaml.load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path.name}: not a readable YAML file ({str(exc).splitlines()[0]})") from None


def load_profile(name_or_path: str) -> dict:
    """A profile by name or path (:func:`profile_file`) as a checked mapping with its defaults and
    ``_path``: the form to edit before :func:`load_robot` (the code reads the typed
    :attr:`Robot.spec`)."""
    path = profile_file(name_or_path)
    return {**validate(_read_yaml(path), path.name), "_path": str(path)}


EXAMPLE_ROBOT_DATA = "example-robot-data://"


def _example_robot_data_roots() -> list[Path]:
    """The ``robots`` folders of an installed example-robot-data: its PyPI wheel puts them under
    ``cmeel.prefix``, a source build in a ROS workspace under its share directory."""
    roots = [Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"]
    ament = ament_share_directory("example-robot-data")
    if ament is not None:
        roots.append(ament / "robots")
    return [root for root in roots if root.is_dir()]


def resolve_model_path(uri: str, profile_path: str | None = None) -> Path:
    """Resolve a model reference of a profile.

    ``example-robot-data://<robot>/urdf/<file>``: a URDF of the example-robot-data package, an optional
    dependency (no shipped profile uses it; no ROS distribution releases it: ``pip install
    example-robot-data``). Anything else: a path, absolute or relative to the profile's own folder (a
    profile and its URDF side by side anywhere, as ``profile init`` writes them), else to the profile's
    config directory (``config/robots/x.yaml`` names ``urdf/x.urdf``), else to a config directory.
    """
    if uri.startswith(EXAMPLE_ROBOT_DATA):
        roots = _example_robot_data_roots()
        if not roots:
            raise ProfileError(f"model '{uri}' needs the example-robot-data package, which is not installed "
                               "(pip install example-robot-data)")
        rel = uri[len(EXAMPLE_ROBOT_DATA):]
        for root in roots:
            if (root / rel).exists():
                return root / rel
        raise ProfileError(f"model '{uri}' is not in the example-robot-data package "
                           f"({', '.join(map(str, roots))})")
    path = Path(uri)
    if not path.is_absolute():
        folder = Path(profile_path).parent if profile_path else None
        candidates = [folder / path, folder.parent / path] if folder else []
        candidates += [d / path for d in config_dirs()]
        for c in candidates:
            if c.exists():
                return c
    if not path.exists():
        raise ProfileError(f"model file '{uri}' not found")
    return path


# URDF attributes that hold numbers; urdfdom reports a bad one on stderr and goes on with a default.
_URDF_NUMBERS = {"mass": ("value",), "inertia": ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                 "origin": ("xyz", "rpy"), "axis": ("xyz",)}


def _check_urdf_numbers(path: Path) -> None:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ProfileError(f"cannot parse URDF '{path}': {exc}") from None
    for tag, attributes in _URDF_NUMBERS.items():
        for element in root.iter(tag):
            for a in attributes:
                text = element.get(a)
                if text is None:
                    continue
                try:
                    values = [float(x) for x in text.split()]
                except ValueError:
                    values = [float("nan")]
                if not all(np.isfinite(values)) or (tag == "mass" and values[0] < 0):
                    raise ProfileError(f"URDF '{path}': <{tag} {a}=\"{text}\"> is not a finite "
                                       f"{'non-negative ' if tag == 'mass' else ''}number")


# Beyond these a link is not a robot's (a typo, a unit slip, a hostile file): the simulation and the
# identification would run on it and produce NaN or meaningless numbers.
MAX_LINK_MASS_KG = 1e4
MAX_LINK_INERTIA_KGM2 = 1e4


def _check_inertias(model: pin.Model, path: Path) -> None:
    """Every body physically possible: mass in [0, MAX_LINK_MASS_KG]; rotational inertia about the
    centre of mass positive semidefinite, entries within MAX_LINK_INERTIA_KGM2. (The triangle
    inequalities are not required: vendors' URDFs, e.g. example-robot-data's Romeo, break them
    slightly, and the estimators treat the robot's own parameters as uncertain anyway.)"""
    for j in range(1, model.njoints):
        inertia, name = model.inertias[j], model.names[j]
        m, I_c = float(inertia.mass), np.asarray(inertia.inertia, dtype=float)
        where = f"URDF '{path.name}': the body of joint '{name}'"
        if not 0.0 <= m <= MAX_LINK_MASS_KG:
            raise ProfileError(f"{where} has mass {m:.3g} kg (a body has 0..{MAX_LINK_MASS_KG:g} kg)")
        if np.max(np.abs(I_c)) > MAX_LINK_INERTIA_KGM2:
            raise ProfileError(f"{where} has an inertia entry of {np.max(np.abs(I_c)):.3g} kg m^2 "
                               f"(limit {MAX_LINK_INERTIA_KGM2:g})")
        principal = np.linalg.eigvalsh(0.5 * (I_c + I_c.T))
        tol = 1e-9 * max(1.0, float(np.max(np.abs(principal))))
        if principal[0] < -tol:
            raise ProfileError(f"{where} has an impossible inertia (principal moments "
                               f"{', '.join(f'{x:.3g}' for x in principal)} kg m^2: none may be negative)")


def build_model_from_urdf(path: Path) -> pin.Model:
    """The pinocchio model of a URDF whose numbers are finite and whose bodies are physically
    possible (:func:`_check_inertias`); :class:`ProfileError` otherwise."""
    _check_urdf_numbers(path)
    try:
        model = pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError) as exc:
        raise ProfileError(f"cannot parse URDF '{path}': {str(exc).strip().splitlines()[0]}") from None
    _check_inertias(model, Path(path))
    return model


@dataclass(frozen=True)
class Robot:
    """Constant description of a robot for identification: pinocchio model + profile facts."""

    name: str
    model: pin.Model                  # the robot without payload, joints in profile order
    joint_names: tuple[str, ...]
    payload_frame: str
    payload_frame_id: int
    ft_frame: str | None
    ft_frame_id: int | None
    position_lower: np.ndarray
    position_upper: np.ndarray
    velocity_limit: np.ndarray
    acceleration_limit: np.ndarray
    torque_limit: np.ndarray
    jerk_limit: np.ndarray            # rad/s^3; inf where the profile states none
    spec: RobotProfile = field(repr=False)   # the checked profile, typed
    path: str | None = None           # where the profile was read: its relative file names start there

    @property
    def nv(self) -> int:
        """Number of velocity coordinates of the model."""
        return self.model.nv

    @property
    def payload_parent_joint(self) -> int:
        """Index of the joint that carries the payload frame."""
        return self.model.frames[self.payload_frame_id].parentJoint

    @property
    def sensing(self) -> Sensing:
        """What the driver publishes: ``joint_states_topic``, ``joint_states_hz``, ``wrench_topic``, ...
        (profile ``sensing:``, checked by :mod:`inertial_id.core.robot.profile`)."""
        return self.spec.sensing

    @property
    def wrench_frame_id(self) -> str | None:
        """``frame_id`` of the driver's WrenchStamped: its own label of the F/T frame (model frame
        ``ft_frame``), e.g. ``uf_ft_sensor_ext_data`` for xarm_ros2."""
        return self.sensing.wrench_frame_id or self.ft_frame

    @property
    def momentum_window_samples(self) -> int:
        """Samples per momentum window ``h`` of the profile."""
        return momentum_window_samples(self.spec)

    def with_profile(self, **sections) -> Robot:
        """This robot with the named profile sections replaced (typed, or as mappings), the profile
        checked again. The model is not rebuilt, so an edit of a section it is built from
        (:data:`MODEL_SECTIONS`) is refused: ``load_robot`` that profile instead."""
        spec = edited(self.spec, self.name, **sections)
        changed = [key for key in MODEL_SECTIONS if getattr(spec, key) != getattr(self.spec, key)]
        if changed:
            raise ValueError(f"with_profile cannot change {', '.join(changed)}: the model is built from "
                             "them (load_robot the edited profile)")
        return replace(self, spec=spec)

    def payload_prior(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) prior box of the payload parameters, pinocchio order, payload frame; a
        :class:`ProfileError` saying how to state it when the profile has none (every payload
        estimator and the planner need one)."""
        p = self.spec.payload
        missing = [key for key in ("prior_lower", "prior_upper") if getattr(p, key) is None]
        if missing:
            raise ProfileError(f"{self.name}: payload.{missing[0]}: missing (required to identify a payload): state "
                               "payload.prior_lower and prior_upper, 10 numbers each [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, "
                               "Ixz, Iyz, Izz] in the payload frame, bounding every payload the arm may carry "
                               "(inertial-id profile init writes them from the rated payload)")
        return np.asarray(p.prior_lower, dtype=float), np.asarray(p.prior_upper, dtype=float)


# the profile sections load_robot builds the model, frames and limits from
MODEL_SECTIONS = ("name", "model", "joints", "frames", "dynamics", "limits")


def _limit(profile: RobotProfile, key: str, default: np.ndarray, n: int) -> np.ndarray:
    values = getattr(profile.limits, key)
    if values is None:
        return np.asarray(default, dtype=float)
    values = np.asarray(values, dtype=float)
    if values.shape != (n,):
        raise ProfileError(f"limits.{key} has {values.size} entries for {n} joints")
    return values


def load_robot(profile: dict | str | RobotProfile, path: str | None = None) -> Robot:
    """Build a :class:`Robot` from a profile (a mapping, typed, a name or a YAML path); ``path``:
    where a profile given as such was read (a mapping may say it as ``_path``)."""
    if isinstance(profile, str):
        file = profile_file(profile)
        profile, path = parse(_read_yaml(file), file.name), str(file)
    if isinstance(profile, dict):
        profile, path = parse_mapping(profile, path)
    spec = profile
    urdf = resolve_model_path(spec.model.urdf, path)
    model = build_model_from_urdf(urdf)
    joints = tuple(spec.joints)
    model_joints = tuple(model.names[1:])
    if model_joints != joints:
        raise ProfileError(f"profile joints {list(joints)} differ from the model's moving joints "
                           f"{list(model_joints)} (order matters)")
    if model.nq != model.nv:
        raise ProfileError("only models with one coordinate per velocity (no continuous or "
                           "spherical joints) are supported here")
    frames = spec.frames

    def frame_id(name):
        if name is None:
            return None
        if not model.existFrame(name):
            raise ProfileError(f"frame '{name}' is not in model {urdf.name}")
        return model.getFrameId(name)

    n = model.nv
    armature = spec.dynamics.armature
    if armature is not None:
        if len(armature) != n:
            raise ProfileError(f"dynamics.armature has {len(armature)} entries for {n} joints")
        model.armature = np.asarray(armature, dtype=float)
    # every consumer (regressors, the certifier's enclosure, the simulator, identifiability) reads
    # model.gravity: setting it here is what makes a tilted base one profile entry
    g_B = np.asarray(spec.dynamics.gravity_m_s2, dtype=float)
    if not 1.0 <= np.linalg.norm(g_B) <= 30.0:
        raise ProfileError(f"dynamics.gravity_m_s2: |g| = {np.linalg.norm(g_B):.3g} m/s^2 is not a gravity")
    model.gravity = pin.Motion(g_B, np.zeros(3))
    torque_limit = _limit(spec, "torque", model.effortLimit, n)
    # passive joints of closed chains (Digit) have none; a robot without any actuator is no robot
    if not np.all(np.isfinite(torque_limit) & (torque_limit >= 0)) or not np.any(torque_limit > 0):
        raise ProfileError(f"limits.torque: torque limits must be finite, >= 0 and not all zero (profile "
                           f"limits.torque or the URDF's effort), got {torque_limit.tolist()}")
    return Robot(
        name=spec.name, model=model, joint_names=joints,
        payload_frame=frames.payload, payload_frame_id=frame_id(frames.payload),
        ft_frame=frames.ft_sensor, ft_frame_id=frame_id(frames.ft_sensor),
        position_lower=_limit(spec, "position_lower", model.lowerPositionLimit, n),
        position_upper=_limit(spec, "position_upper", model.upperPositionLimit, n),
        velocity_limit=_limit(spec, "velocity", model.velocityLimit, n),
        acceleration_limit=_limit(spec, "acceleration", np.full(n, np.inf), n),
        torque_limit=torque_limit,
        jerk_limit=_limit(spec, "jerk", np.full(n, np.inf), n),
        spec=spec, path=path,
    )


def relative_placement(model: pin.Model, frame_A: int, frame_B: int) -> pin.SE3:
    """Pose of frame B in frame A (``X_AB``); both must be fixed on the same body."""
    if model.frames[frame_A].parentJoint != model.frames[frame_B].parentJoint:
        raise ProfileError(f"frames '{model.frames[frame_A].name}' and '{model.frames[frame_B].name}' "
                           "are not on the same body")
    return model.frames[frame_A].placement.actInv(model.frames[frame_B].placement)


def model_with_payload(robot: Robot, pi_payload) -> pin.Model:
    """A copy of the robot model with the payload (parameters in the payload frame) lumped into the
    body of the payload frame's parent joint."""
    model = pin.Model(robot.model)
    frame = model.frames[robot.payload_frame_id]
    inertia = frame.placement.act(pin.Inertia.FromDynamicParameters(np.asarray(pi_payload, dtype=float)))
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + inertia
    return model


# --- payloads -------------------------------------------------------------------------------------

def load_payloads() -> dict:
    """The payload catalogue (config/payloads.yaml) as a dict."""
    with open(_find_config("payloads.yaml")) as f:
        return strict_yaml.load(f)


def _dumbbell_params(spec: dict) -> np.ndarray:
    """Two solid cylindrical heads on a solid handle, axis along x, centred at the origin."""
    m, L = spec["mass_kg"], spec["length_m"]
    r_h, l_h, r_b = spec["head_radius_m"], spec["head_length_m"], spec["handle_radius_m"]
    v_head = np.pi * r_h**2 * l_h
    v_bar = np.pi * r_b**2 * (L - 2 * l_h)
    rho = m / (2 * v_head + v_bar)
    # cylinder_inertia_params puts the axis along z; rotate it onto x
    R = pin.SE3(pin.rpy.rpyToMatrix(0.0, np.pi / 2, 0.0), np.zeros(3))
    pi = np.zeros(10)
    for mass, radius, length, x in ((rho * v_head, r_h, l_h, (L - l_h) / 2),
                                    (rho * v_head, r_h, l_h, -(L - l_h) / 2),
                                    (rho * v_bar, r_b, L - 2 * l_h, 0.0)):
        part = params.transform_params(params.cylinder_inertia_params(mass, radius, length), R)
        pi += params.transform_params(part, pin.SE3(np.eye(3), np.array([x, 0.0, 0.0])))
    return pi


def payload_params(name_or_spec: str | dict) -> np.ndarray:
    """True inertial parameters (pinocchio order, payload frame) of a catalogue payload."""
    spec = load_payloads().get(name_or_spec) if isinstance(name_or_spec, str) else name_or_spec
    if spec is None:
        raise ProfileError(f"unknown payload '{name_or_spec}' (available: {', '.join(load_payloads())})")
    if spec["type"] == "dumbbell":
        pi = _dumbbell_params(spec)
    elif spec["type"] == "box":
        pi = params.box_inertia_params(spec["mass_kg"], spec["size_m"])
    else:
        raise ProfileError(f"unknown payload type '{spec['type']}'")
    return params.transform_params(pi, pin.SE3(np.eye(3), np.asarray(spec["com_offset_m"], dtype=float)))
