"""Robot profile schema: every field of ``config/robots/<name>.yaml``, its type and its default, as
pydantic models.

A profile is validated once, when it is loaded (:func:`parse`): a wrong type, a missing required
field, a vector of the wrong length or an unknown key anywhere (a typo would otherwise be silently
ignored) raises :class:`ProfileError` with one line naming the field, e.g.
``kinova_gen3.yaml: limits.torque: expected 7 numbers (one per joint), got 5`` or
``kinova_gen3.yaml: planner.tracking_error.positon_rad: unknown key``. :func:`parse` returns the
typed :class:`RobotProfile`, complete with its defaults, and the code reads its attributes
(``profile.noise.model_error_Nm``); a profile edited so (sections replaced, :func:`edited`, each by
its ``model_copy(update=...)``) is written as a file by :func:`~.profile_edit.write_profile`.
:func:`validate` gives the checked profile as a plain mapping.

Sections and what they are for:

- ``sensing``: what the pipeline takes of the driver's output (live settings: topics, rates, frames);
- ``driver``: every stream the real driver publishes (rates, filled fields, wrapped and extra
  joints, stamp phases), which the simulator reproduces;
- ``identification``: estimator method and assumptions (window lengths in seconds);
- ``controller``: where trajectories go (a joint_trajectory_controller, or a bridge for Digit);
- ``sim``: the simulated arm only (never read on a real robot);
- ``planner``: the excitation planner (:mod:`inertial_id.core.planning.config`) and its certifier
  (:mod:`inertial_id.core.planning.certifier`): tracking-error tube, robot box floors, capsules;
- ``obstacles``: obstacle boxes in the base frame.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (AfterValidator, AllowInfNan, BaseModel, BeforeValidator, ConfigDict, Field,
                      Strict, StringConstraints, ValidationError, ValidationInfo, field_serializer,
                      field_validator, model_validator)
from pydantic_core import PydanticCustomError

from .errors import ProfileError


# --- field types ----------------------------------------------------------------------------------

def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _n_joints(info: ValidationInfo) -> int:
    return (info.context or {}).get("n_joints", 0)


def Number(ge: float | None = None, le: float | None = None, gt: float | None = None):
    """A finite number (an integer is accepted; true/false and strings are not) within bounds."""
    return Annotated[float, Strict(), AllowInfNan(False), Field(ge=ge, le=le, gt=gt)]


def Integer(ge: int | None = None, le: int | None = None):
    """An integer (true/false, floats and strings are not) within bounds."""
    return Annotated[int, Strict(), Field(ge=ge, le=le)]


Text = Annotated[str, Strict(), StringConstraints(min_length=1)]
Flag = Annotated[bool, Strict()]


def _length(size: int | None):
    """Checks a list's length: ``size`` entries, or one per joint when ``size`` is None."""
    def check(v: list, info: ValidationInfo) -> list:
        want = _n_joints(info) if size is None else size
        if len(v) != want:
            per = " (one per joint)" if size is None else ""
            raise PydanticCustomError("length", "expected {want} numbers{per}, got {got}",
                                      {"want": want, "per": per, "got": len(v)})
        return v
    return check


def Vector(size: int | None = None, ge: float | None = None):
    """A list of finite numbers: ``size`` entries, or one per joint when ``size`` is None."""
    return Annotated[list[Number(ge=ge)], AfterValidator(_length(size))]  # type: ignore[misc]  # built at run time for pydantic


def _broadcast(v, info: ValidationInfo):
    """A single number stands for the same value on every joint."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return [v] * _n_joints(info)
    if not isinstance(v, (list, tuple)):
        raise PydanticCustomError("per_joint", "expected a number or a list of {n} numbers (one per joint), "
                                  "got {got}", {"n": _n_joints(info), "got": _describe(v)})
    return v


PerJoint = Annotated[Vector(ge=0.0), BeforeValidator(_broadcast)]
"""A non-negative value per joint, given as one number for all joints or a list of one per joint."""


def _unique(v: list) -> list:
    if not v:
        raise PydanticCustomError("names", "expected a non-empty list of names")
    if len(set(v)) != len(v):
        raise PydanticCustomError("names", "a name appears twice")
    return v


Names = Annotated[list[Text], AfterValidator(_unique)]


class Section(BaseModel):
    """A mapping with known keys; unknown keys are refused (they are typos or stale settings). A key
    given as null takes its default (a required one is then missing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_take_defaults(cls, v):
        return {k: x for k, x in v.items() if x is not None} if isinstance(v, dict) else v


# --- sections -------------------------------------------------------------------------------------

class ModelFile(Section):
    """The robot's model file (URDF), relative to the package's config/ directory."""
    urdf: Text


class LoopClosure(Section):
    """A closed-chain constraint: two points, one on each frame, coincide in the listed components."""
    name: Text
    frame_a: Text
    offset_a: Vector(3)
    frame_b: Text
    offset_b: Vector(3)
    components: Names


class Frames(Section):
    """Model frames: the base, the payload's (its parameters are expressed there), the F/T sensor's."""
    base: Text
    payload: Text                          # payload parameters are expressed here
    ft_sensor: Text | None = None       # model frame of the F/T sensor, if any


class Sensing(Section):
    """What the driver publishes; the builder accepts any rate (it differentiates with stamps)."""
    joint_states_topic: Text = "/joint_states"
    joint_states_hz: Number(1.0, 1e5) = 500.0
    joint_torque: Flag = False
    wrench: Flag = False
    wrench_topic: Text = "/wrench"
    wrench_frame_id: Text | None = None     # the driver's frame_id (default: frames.ft_sensor)
    filter_cutoff_hz: Number(0.0, 1e4) = 0.0    # causal low-pass before differencing
    # joint samples are paired with the wrench interpolated between two samples at most 1.5 periods
    # of this rate apart (inertial_id.core.signals.driver_streams.pair_wrenches)
    wrench_hz: Number(0.1, 1e5) = 1000.0


class JointStateStream(Section):
    """A JointState stream of the driver: stamps at ``phase_s + k / hz`` of its clock."""
    topic: Text
    hz: Number(0.1, 1e5)
    phase_s: Number(0.0, 10.0) = 0.0
    effort: Flag = True                        # false: the effort array is NaN (not exported)
    extra_joints: list[Text] = []              # published at rest with NaN effort (a gripper's)
    frame_id: Text | None = None
    publisher: Text | None = None


class WrenchStream(Section):
    """The driver's F/T WrenchStamped stream."""
    topic: Text
    hz: Number(0.1, 1e5)
    phase_s: Number(0.0, 10.0) = 0.0           # streams of one driver callback share phase and stamps
    frame_id: Text
    filtered: Flag = False                     # low-passed by the driver or controller
    load_compensated: Flag = False             # the configured TCP load's wrench removed
    publisher: Text | None = None


class Driver(Section):
    """Every stream the real driver publishes, reproduced by the simulator (sim_robot, record-sim:
    inertial_id.core.signals.driver_streams). Without streams: one, from ``sensing``."""
    name: Text | None = None
    reference: Text | None = None           # where these facts were read (source files, versions)
    wrapped_joints: list[Text] = []            # positions published wrapped to [-pi, pi]
    joint_states: list[JointStateStream] = []
    wrench: WrenchStream | None = None


class Dynamics(Section):
    """Known parts of the robot model beyond the URDF: reflected rotor inertia per joint (kg m^2) and
    gravity in the base frame (m/s^2; a tilted or wall-mounted base rotates it)."""
    armature: Vector(ge=0.0) | None = None
    gravity_m_s2: Vector(3) = [0.0, 0.0, -9.81]


class Limits(Section):
    """Joint limits in SI units; absent ones come from the URDF."""
    position_lower: Vector() | None = None
    position_upper: Vector() | None = None
    velocity: Vector(ge=0.0) | None = None
    acceleration: Vector(ge=0.0) | None = None
    # largest |jerk| (rad/s^3) of the arm's motion between velocity reversals and impacts: what the
    # wrench rows' acceleration error bound assumes of the signal between two samples
    # (inertial_id.core.signals.acceleration_bound); without it, wrench rows are not guaranteed
    jerk: Vector(ge=0.0) | None = None
    torque: Vector(ge=0.0) | None = None


class TorqueNoise(Section):
    """Joint torque sensor error bound: |error| <= relative |tau| + absolute_Nm."""
    relative: Number(0.0, 1.0) = 0.0
    absolute_Nm: Number(0.0) = 0.0


class WrenchNoise(Section):
    """F/T sensor noise (standard deviations) and the multiple of them taken as a bound."""
    force_sigma_N: Number(0.0) = 0.0
    torque_sigma_Nm: Number(0.0) = 0.0
    bound_sigmas: Number(0.0) = 3.0
    # the sensor's zero offset per axis is somewhere within +-these (datasheet zero error and drift,
    # or what is left of a tare): estimated as an unknown of every run; 0: the sensor is tared
    offset_N: Number(0.0) = 0.0
    offset_Nm: Number(0.0) = 0.0
    # how fast that offset may move from its value at a run's start (N/s, N m/s): in the bound of the
    # integrated wrench rows (core.signals.wrench_momentum)
    offset_drift_N_per_s: Number(0.0) = 0.0
    offset_drift_Nm_per_s: Number(0.0) = 0.0


class Noise(Section):
    """Sensor error bounds and the model error a row may carry."""
    joint_torque: TorqueNoise = TorqueNoise()
    encoder_resolution_deg: Number(0.0, 10.0) = 0.0
    velocity_rad_s: Number(0.0) = 0.0       # bound on the error of the reported joint velocities
    wrench: WrenchNoise = WrenchNoise()
    model_error_Nm: Number(0.0) = 0.0
    model_error_N: Number(0.0) = 0.0

    @property
    def torque_row_floor_Nm(self) -> float:
        """The least bound of a joint torque row (an error-free sample): the sensor's absolute error
        plus the model error."""
        return self.joint_torque.absolute_Nm + self.model_error_Nm

    def wrench_row_floor(self) -> np.ndarray:
        """(6,) least bound of a wrench row, ``[f (N) x3, n (N m) x3]`` (an error-free sample): the
        sensor's ``bound_sigmas`` sigmas plus the model error."""
        w = self.wrench
        sigma = np.array([w.force_sigma_N] * 3 + [w.torque_sigma_Nm] * 3)
        return w.bound_sigmas * sigma + np.array([self.model_error_N] * 3 + [self.model_error_Nm] * 3)


class Identification(Section):
    """Estimator method and assumptions (window lengths in seconds, the robot box)."""
    method: Text = "lmi"
    momentum_window_s: Number(0.0, 10.0) = 0.0      # 0: no momentum rows
    robot_relative_error: Number(0.0, 1.0) = 0.05   # the robot box (inertial_id.core.robot.robot_box)
    calibration: Text | None = None              # robot calibration file (inertial-id calibrate), relative to the profile


class Controller(Section):
    """Where trajectories go (a joint_trajectory_controller, or a bridge for Digit)."""
    topic: Text = "/joint_trajectory_controller/joint_trajectory"
    type: Text = "trajectory_msgs/JointTrajectory"
    action: Text | None = None          # its control_msgs/FollowJointTrajectory action (planner command_interface)
    bridge: Text | None = None          # what turns the command into motion (Digit)


# Where each driver serves its set-load service by default (the profile's apply.service overrides):
# xarm_ros2's xarm_api under its hw_ns (default xarm), Universal_Robots_ROS2_Driver's
# io_and_status_controller, franka_ros2's franka_hardware service server.
DRIVER_SERVICE_DEFAULTS = {"xarm_set_tcp_load": "/xarm/set_tcp_load",
                           "ur_set_payload": "/io_and_status_controller/set_payload",
                           "franka_set_load": "/service_server/set_load"}


class Apply(Section):
    """How ``~/apply`` hands the identified payload to the robot (:mod:`inertial_id.core.payload.payload_apply`):
    through a driver's set-load service (xArm ``SetTcpLoad``, UR ``SetPayload``, Franka ``SetLoad``),
    as a latched InertiaStamped topic, or not at all."""
    interface: Literal["xarm_set_tcp_load", "ur_set_payload", "franka_set_load", "inertia_topic", "none"] = "none"
    # the driver's set-load service (default: where the interface's driver serves it,
    # inertial_id.core.payload.payload_apply.DRIVER_SERVICES)
    service: Text | None = None
    topic: Text = "/payload_inertia"           # inertia_topic: latched geometry_msgs/InertiaStamped
    # The need the gate follows from: the static torque error per joint (N m) the robot's controller
    # tolerates when it takes the applied payload as true; required with an interface.
    tolerated_torque_Nm: PerJoint | None = None
    timeout_s: Number(gt=0.0, le=60.0) = 5.0   # wait this long for the driver's reply

    @model_validator(mode="before")
    @classmethod
    def _widths_replaced(cls, v):
        if isinstance(v, dict) and {"max_mass_width_kg", "max_com_width_m"} & v.keys():
            raise PydanticCustomError("replaced", "max_mass_width_kg and max_com_width_m were replaced by "
                                      "tolerated_torque_Nm, the torque error your controller tolerates (the "
                                      "widths follow from it: docs tutorials/apply_payload)")
        return v

    def driver_service(self) -> str | None:
        """The set-load service ``~/apply`` calls (None: the interface calls no driver)."""
        default = DRIVER_SERVICE_DEFAULTS.get(self.interface)
        return None if default is None else self.service or default

    @model_validator(mode="after")
    def _need_with_interface(self):
        if self.interface != "none" and self.tolerated_torque_Nm is None:
            raise PydanticCustomError("need", "tolerated_torque_Nm is required with interface {interface}: "
                                      "the torque error per joint (N m) your controller tolerates",
                                      {"interface": self.interface})
        return self


class Pose(Section):
    """A pose: translation (m) and roll-pitch-yaw (rad)."""
    xyz: Vector(3) = [0.0, 0.0, 0.0]
    rpy: Vector(3) = [0.0, 0.0, 0.0]


class ShapeBox(Section):
    """One box of a composite payload shape: edge lengths and centre (m)."""
    size: Vector(3, ge=0.0)
    xyz: Vector(3) = [0.0, 0.0, 0.0]


class PayloadShape(Section):
    """Method pmd: the payload's solid (semantics: :mod:`inertial_id.core.pmd.shapes`)."""
    type: Literal["box", "cylinder", "sphere", "composite", "mesh"]
    size: Vector(3, ge=0.0) | None = None
    radius: Number(0.0) | None = None
    length: Number(0.0) | None = None
    boxes: list[ShapeBox] | None = None
    file: Text | None = None
    scale: Number(gt=0.0) | None = None
    pose: Pose | None = None
    density_per_cm3: Number(gt=0.0) | None = None


class PmdOptions(Section):
    """Options of the point-mass discretization method (c1, lambda)."""
    model_config = ConfigDict(populate_by_name=True)
    c1: Number(0.0) | None = None
    lambda_: Number(0.0) | None = Field(None, alias="lambda")


class Payload(Section):
    """The payload: name, prior box (pinocchio order, payload frame), the simulated one, its shape."""
    name: Text = "payload"
    prior_lower: Vector(10) | None = None
    prior_upper: Vector(10) | None = None
    sim: Text = "dumbbell_5lb"                 # payload of the simulated arm
    shape: PayloadShape | None = None
    pmd: PmdOptions | None = None

    @field_serializer("shape", "pmd")
    def _given_keys_only(self, v):
        # the pmd module reads these as written: absent keys take its own defaults
        return None if v is None else v.model_dump(exclude_none=True, by_alias=True)


class Sim(Section):
    """The simulated arm only: step rate, computed-torque gains, initial pose."""
    step_hz: Number(1000.0, 1e5) = 1000.0
    kp: Number(0.0) = 400.0
    kd: Number(0.0) = 40.0
    ki: Number(0.0) = 2000.0
    home: Vector()                          # initial pose of the simulated arm (zeros unless given)


class Excitation(Section):
    """The fixed Fourier-series excitation about the home pose."""
    period_s: Number(1e-3) = 10.0
    harmonics: Integer(1, 50) = 3
    amplitude_rad: Vector(ge=0.0) | None = None
    seed: Integer(0) = 0
    sample_hz: Number(1.0) = 1000.0
    point_hz: Number(1.0) = 100.0


class TrackingError(Section):
    """Half-widths of the tube around a plan that the certificate covers (the node brakes outside)."""
    position_rad: PerJoint
    velocity_rad_s: PerJoint
    acceleration_rad_s2: PerJoint


class RobotFloor(Section):
    """Least half-widths of the certifier's box on the link parameters (inertial_id.core.robot.robot_box)."""
    mass_kg: Number(0.0)
    first_moment_kg_m: Number(0.0)
    inertia_kg_m2: Number(0.0)


class Capsule(Section):
    """Segment p0-p1 (m) in ``frame`` plus ``radius``: a link's or the payload's occupancy."""
    frame: Text
    p0: Vector(3)
    p1: Vector(3)
    radius: Number(0.0)


def _shorter(than: str, *plus: str) -> Callable[[Any, float, ValidationInfo], float]:
    """A field validator: this value (plus the fields ``plus``) must stay below field ``than``."""
    def check(cls, v: float, info: ValidationInfo) -> float:
        data = info.data
        if than not in data or any(p not in data for p in plus):
            return v                # the other field failed already and is reported
        total = v + sum(data[p] for p in plus)
        if total >= data[than]:
            assert info.field_name is not None      # set for a field validator
            what = " + ".join([info.field_name, *plus])
            raise PydanticCustomError("order", f"{what} ({total:g}) must be shorter than {than} ({data[than]:g})")
        return v
    return check


class Planner(Section):
    """The receding-horizon excitation planner (meaning of each key: inertial_id.core.planning.config)
    and its certifier (inertial_id.core.planning.certifier)."""
    horizon_s: Number(0.1) = 3.0
    replan_s: Number(0.05) = 1.5
    bezier_degree: Integer(5) = 7
    deadline_s: Number(0.01) = 1.3
    command_lead_s: Number(0.0) = 0.1
    optimize_s: Number(0.0) = 1.0
    search_s: Number(0.0) = 1.15
    cost_samples: Integer(4) = 32
    report_samples: Integer(4) = 128
    centre: Vector()                        # sim.home unless given (RobotProfile fills it)
    reach_rad: Vector(ge=0.0)
    acceleration_fraction: Number(0.01, 1.0) = 1.0
    max_plans: Integer(1) = 12
    stop_shrink: Number(0.0) = 0.02
    stop_patience: Integer(1) = 3
    brake_duration_s: Number(0.05) = 1.0
    stale_after_s: Number(0.001) = 0.2
    hold_wait_s: Number(0.0) = 10.0
    # certifier
    time_intervals: Integer(1, 4096)
    torque_margin_Nm: PerJoint
    tracking_error: TrackingError
    robot_absolute_floor: RobotFloor
    capsules: Annotated[list[Capsule], Field(min_length=1)]

    _replan_within_horizon = field_validator("replan_s")(classmethod(_shorter("horizon_s")))
    _command_within_replan = field_validator("command_lead_s")(classmethod(_shorter("replan_s", "deadline_s")))
    _optimize_within_deadline = field_validator("optimize_s")(classmethod(_shorter("deadline_s")))
    _search_within_deadline = field_validator("search_s")(classmethod(_shorter("deadline_s")))


class Obstacle(Section):
    """An axis-aligned box in the base frame (m)."""
    name: Text
    center: Vector(3)
    size: Vector(3, ge=0.0)


class RobotProfile(Section):
    """A whole robot profile (``config/robots/<name>.yaml``)."""
    name: Text
    description: str = ""
    model: ModelFile
    joints: Names
    actuated_joints: Names | None = None        # closed chains: the motors; default all joints
    loop_closures: list[LoopClosure] = []
    rotor_inertia: dict[Text, Number(0.0)] = {}     # closed chains: motor inertia per actuated joint
    frames: Frames
    sensing: Sensing = Sensing()
    driver: Driver = Driver()
    dynamics: Dynamics = Dynamics()
    limits: Limits = Limits()
    noise: Noise = Noise()
    identification: Identification = Identification()
    controller: Controller = Controller()
    apply: Apply = Apply()
    payload: Payload = Payload()
    sim: Sim
    excitation: Excitation = Excitation()
    planner: Planner | None = None
    obstacles: list[Obstacle] = []

    @model_validator(mode="before")
    @classmethod
    def _poses_default(cls, v):
        # the defaults that depend on other fields, stated once: sim.home is zeros, planner.centre is
        # sim.home (a wrong home is reported at sim, which comes first)
        if not (isinstance(v, dict) and isinstance(v.get("joints"), (list, tuple))):
            return v
        v = dict(v)
        sim = {} if v.get("sim") is None else v["sim"]
        if isinstance(sim, dict) and sim.get("home") is None:
            sim = v["sim"] = {**sim, "home": [0.0] * len(v["joints"])}
        planner = v.get("planner")
        if isinstance(planner, dict) and planner.get("centre") is None and isinstance(sim, dict):
            v["planner"] = {**planner, "centre": sim["home"]}
        return v

    @model_validator(mode="after")
    def _torque_rows_need_a_bound(self):
        # Every joint torque row's bound is at least absolute_Nm + model_error_Nm: at zero it claims an
        # exact sensor, and the estimator drops each row whose bound is zero. Profiles without a payload
        # prior identify no payload (whole-robot ones state their error in the identification).
        if (self.sensing.joint_torque and self.payload.prior_lower is not None
                and self.noise.torque_row_floor_Nm <= 0.0):
            raise PydanticCustomError(
                "no_torque_bound", "noise.joint_torque.absolute_Nm: the torque sensor's error bound is zero "
                "(absolute_Nm and model_error_Nm are 0 or missing) with sensing.joint_torque true: state "
                "noise.joint_torque.relative and absolute_Nm from the sensor's datasheet, or run inertial-id "
                "calibrate on payload-free runs and state what it measured")
        return self

    @field_validator("rotor_inertia")
    @classmethod
    def _rotor_per_joint(cls, v: dict, info: ValidationInfo) -> dict:
        for key in v:
            if key not in info.data.get("joints", v):
                raise PydanticCustomError("unknown_key", "unknown key", {"key": key})
        return v


# --- errors ---------------------------------------------------------------------------------------

def _where(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _what(error: Mapping[str, Any]) -> str:
    kind, ctx, value = error["type"], error.get("ctx", {}), error.get("input")
    got = _describe(value)
    if kind == "missing":
        return "missing (required)"
    if kind in ("extra_forbidden", "unknown_key"):
        return "unknown key"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return f"expected a finite number, got {got}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, got {got}"
    if kind == "bool_type":
        return f"expected true or false, got {got}"
    if kind in ("string_type", "string_too_short"):
        return f"expected a non-empty string, got {got}"
    if kind == "list_type":
        return f"expected a list, got {got}"
    if kind in ("dict_type", "model_type"):
        return f"expected a mapping, got {got}"
    if kind == "too_short":
        return "expected a non-empty list"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {got}"
    bound = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
    if kind in bound:
        limit = next(iter(ctx.values()))
        return f"must be {bound[kind]} {limit:g}, got {got}"
    return error["msg"]


def _one_line(exc: ValidationError) -> str:
    """The first error of a validation, as ``field: what is wrong``."""
    error = exc.errors()[0]
    where = _where(error["loc"] + ((error["ctx"]["key"],) if error["type"] == "unknown_key" else ()))
    return f"{where}: {_what(error)}" if where else _what(error)


# --- entry points ---------------------------------------------------------------------------------

def parse(raw, source: str) -> RobotProfile:
    """The typed profile; ``source`` (file name) prefixes errors."""
    if isinstance(raw, RobotProfile):
        return raw
    if not isinstance(raw, dict):
        raise ProfileError(f"{source}: a robot profile is a mapping of sections, got {_describe(raw)}")
    raw = {k: v for k, v in raw.items() if k != "_path"}      # where load_profile found it
    joints = raw.get("joints")
    n = len(joints) if isinstance(joints, (list, tuple)) else 0
    try:
        return RobotProfile.model_validate(raw, context={"n_joints": n})
    except ValidationError as exc:
        raise ProfileError(f"{source}: {_one_line(exc)}") from None


def parse_mapping(raw: dict, path: str | None) -> tuple[RobotProfile, str | None]:
    """A profile given as a YAML mapping, and where it was read (its ``_path``, else ``path``)."""
    return parse(raw, raw.get("name", "profile")), raw.get("_path", path)


def validate(raw, source: str) -> dict:
    """The checked profile as a mapping with defaults filled in, for what edits or writes YAML;
    ``source`` (file name) prefixes errors. A validated profile validates again."""
    profile = parse(raw, source).model_dump()
    if isinstance(raw, dict) and raw.get("_path") is not None:
        profile["_path"] = raw["_path"]
    return profile


def edited(profile: RobotProfile, source: str, **sections) -> RobotProfile:
    """``profile`` with the named sections replaced (typed, or as mappings to validate), checked
    again as a whole: a section's edit may break a rule that spans sections."""
    return parse({**dict(profile), **sections}, source)


def momentum_window_samples(profile: RobotProfile) -> int:
    """Samples per momentum window at the driver's joint-state rate (0: no momentum rows)."""
    window_s = profile.identification.momentum_window_s
    return int(round(window_s * profile.sensing.joint_states_hz)) if window_s > 0 else 0
