"""Robot profile schema: every field of ``config/robots/<name>.yaml``, its type and its default.

A profile is validated once, when it is loaded (:func:`validate`): a wrong type, a missing required
field, a vector of the wrong length or an unknown key (a typo would otherwise be silently ignored)
raises :class:`ProfileError` with one line naming the field, e.g.
``kinova_gen3.yaml: limits.torque: expected 7 numbers (one per joint), got 5``. Defaults are filled
in, so consumers read ``profile["section"]["key"]`` without guessing.

Sections and what they are for:

- ``sensing``: what the robot's driver publishes (live settings: topics, rates, frames);
- ``identification``: estimator method and assumptions (window lengths in seconds);
- ``controller``: where trajectories go (a joint_trajectory_controller, or a bridge for Digit);
- ``sim``: the simulated arm only (never read on a real robot);
- ``planner``, ``obstacles``: the excitation planner (fields checked by
  :mod:`inertial_id.core.planning`), obstacle boxes in the base frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable


class ProfileError(ValueError):
    """A robot profile, payload or model file that cannot be used; the message names the problem."""


# --- field types ----------------------------------------------------------------------------------
# A field type is a function (value, path, n_joints) -> normalised value that raises _Invalid.

class _Invalid(Exception):
    def __init__(self, path: str, what: str):
        super().__init__(f"{path}: {what}")


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value, path, lo=-math.inf, hi=math.inf, integer=False):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if integer:
        ok = ok and float(value).is_integer()
    if not ok or not math.isfinite(value):
        raise _Invalid(path, f"expected {'an integer' if integer else 'a finite number'}, got {_describe(value)}")
    if not lo <= value <= hi:
        raise _Invalid(path, f"must lie in [{lo:g}, {hi:g}], got {value:g}")
    return int(value) if integer else float(value)


def number(lo=-math.inf, hi=math.inf):
    return lambda v, path, n: _number(v, path, lo, hi)


def integer(lo=-math.inf, hi=math.inf):
    return lambda v, path, n: _number(v, path, lo, hi, integer=True)


def boolean(v, path, n):
    if not isinstance(v, bool):
        raise _Invalid(path, f"expected true or false, got {_describe(v)}")
    return v


def string(v, path, n):
    if not isinstance(v, str) or not v:
        raise _Invalid(path, f"expected a non-empty string, got {_describe(v)}")
    return v


def optional(kind):
    return lambda v, path, n: None if v is None else kind(v, path, n)


def vector(size=None, lo=-math.inf, hi=math.inf):
    """A list of finite numbers: ``size`` entries, or one per joint when ``size`` is None."""
    def check(v, path, n):
        want = n if size is None else size
        if not isinstance(v, (list, tuple)):
            raise _Invalid(path, f"expected a list of {want} numbers, got {_describe(v)}")
        if len(v) != want:
            per = " (one per joint)" if size is None else ""
            raise _Invalid(path, f"expected {want} numbers{per}, got {len(v)}")
        return [_number(x, f"{path}[{i}]", lo, hi) for i, x in enumerate(v)]
    return check


def names(v, path, n):
    if not isinstance(v, (list, tuple)) or not v:
        raise _Invalid(path, f"expected a non-empty list of names, got {_describe(v)}")
    out = [string(x, f"{path}[{i}]", n) for i, x in enumerate(v)]
    if len(set(out)) != len(out):
        raise _Invalid(path, "a name appears twice")
    return out


def mapping(v, path, n):
    """A section whose fields another module checks (planner settings, payload shape)."""
    if not isinstance(v, dict):
        raise _Invalid(path, f"expected a mapping, got {_describe(v)}")
    return v


def list_of(item):
    def check(v, path, n):
        if not isinstance(v, (list, tuple)):
            raise _Invalid(path, f"expected a list, got {_describe(v)}")
        return [item(x, f"{path}[{i}]", n) for i, x in enumerate(v)]
    return check


@dataclass(frozen=True)
class Field:
    kind: Callable
    default: Any = None
    required: bool = False


def section(fields: dict, required: bool = False):
    """A mapping with known keys; unknown keys are refused (they are typos or stale settings)."""
    def check(v, path, n):
        if v is None:
            v = {}
        if not isinstance(v, dict):
            raise _Invalid(path, f"expected a mapping, got {_describe(v)}")
        unknown = sorted(set(v) - set(fields))
        if unknown:
            raise _Invalid(f"{path}.{unknown[0]}" if path else unknown[0],
                           f"unknown field (known: {', '.join(fields)})")
        out = {}
        for key, f in fields.items():
            sub = f"{path}.{key}" if path else key
            if v.get(key) is None:
                if f.required:
                    raise _Invalid(sub, "missing (required)")
                out[key] = f.default() if callable(f.default) else f.default
                continue
            out[key] = f.kind(v[key], sub, n)
        return out
    return check


def sub(fields: dict) -> Field:
    """A nested section that may be left out (defaults apply)."""
    return Field(section(fields), default=lambda: section(fields)({}, "", 0))


OBSTACLE = section({"name": Field(string, required=True),
                    "center": Field(vector(3), required=True),
                    "size": Field(vector(3, lo=0.0), required=True)})

LOOP_CLOSURE = section({"name": Field(string, required=True),
                        "frame_a": Field(string, required=True), "offset_a": Field(vector(3), required=True),
                        "frame_b": Field(string, required=True), "offset_b": Field(vector(3), required=True),
                        "components": Field(names, required=True)})

SCHEMA = section({
    "name": Field(string, required=True),
    "description": Field(string, default=""),
    "model": Field(section({"urdf": Field(string, required=True)}), required=True),
    "joints": Field(names, required=True),
    "actuated_joints": Field(optional(names)),           # closed chains: the motors; default all joints
    "loop_closures": Field(list_of(LOOP_CLOSURE), default=list),
    "rotor_inertia": Field(mapping, default=dict),       # closed chains: motor inertia per actuated joint
    "frames": Field(section({
        "base": Field(string, required=True),
        "payload": Field(string, required=True),         # payload parameters are expressed here
        "ft_sensor": Field(optional(string)),            # model frame of the F/T sensor, if any
    }), required=True),
    "sensing": sub({
        # what the driver publishes; the builder accepts any rate (it differentiates with stamps)
        "joint_states_topic": Field(string, default="/joint_states"),
        "joint_states_hz": Field(number(1.0, 1e5), default=500.0),
        "joint_torque": Field(boolean, default=False),
        "wrench": Field(boolean, default=False),
        "wrench_topic": Field(string, default="/wrench"),
        "wrench_frame_id": Field(optional(string)),     # the driver's frame_id (default: frames.ft_sensor)
        "filter_cutoff_hz": Field(number(0.0, 1e4), default=0.0),   # causal low-pass before differencing
    }),
    "dynamics": sub({"armature": Field(optional(vector(lo=0.0)))}),
    "limits": sub({key: Field(optional(vector(lo=lo))) for key, lo in (
        ("position_lower", -math.inf), ("position_upper", -math.inf), ("velocity", 0.0),
        ("acceleration", 0.0), ("torque", 0.0))}),
    "noise": sub({
        "joint_torque": sub({"relative": Field(number(0.0, 1.0), default=0.0),
                             "absolute_Nm": Field(number(0.0), default=0.0)}),
        "encoder_resolution_deg": Field(number(0.0, 10.0), default=0.0),
        "wrench": sub({"force_sigma_N": Field(number(0.0), default=0.0),
                       "torque_sigma_Nm": Field(number(0.0), default=0.0),
                       "bound_sigmas": Field(number(0.0), default=3.0)}),
        "model_error_Nm": Field(number(0.0), default=0.0),
        "model_error_N": Field(number(0.0), default=0.0),
    }),
    "identification": sub({
        "method": Field(string, default="lmi"),
        "momentum_window_s": Field(number(0.0, 10.0), default=0.0),     # 0: no momentum rows
        "robot_relative_error": Field(number(0.0, 1.0), default=0.05),
    }),
    "controller": sub({
        "topic": Field(string, default="/joint_trajectory_controller/joint_trajectory"),
        "type": Field(string, default="trajectory_msgs/JointTrajectory"),
        "bridge": Field(optional(string)),               # what turns the command into motion (Digit)
    }),
    "payload": sub({
        "name": Field(string, default="payload"),
        "prior_lower": Field(optional(vector(10))),
        "prior_upper": Field(optional(vector(10))),
        "sim": Field(string, default="dumbbell_5lb"),     # payload of the simulated arm
        "shape": Field(optional(mapping)),                # method pmd: inertial_id.core.pmd.shapes
        "pmd": Field(optional(mapping)),
    }),
    "sim": sub({
        "step_hz": Field(number(1000.0, 1e5), default=1000.0),
        "kp": Field(number(0.0), default=400.0),
        "kd": Field(number(0.0), default=40.0),
        "ki": Field(number(0.0), default=2000.0),
        "home": Field(optional(vector())),                 # initial pose of the simulated arm
    }),
    "excitation": sub({
        "period_s": Field(number(1e-3), default=10.0),
        "harmonics": Field(integer(1, 50), default=3),
        "amplitude_rad": Field(optional(vector(lo=0.0))),
        "seed": Field(integer(0), default=0),
        "sample_hz": Field(number(1.0), default=1000.0),
        "point_hz": Field(number(1.0), default=100.0),
    }),
    "planner": Field(mapping, default=dict),
    "obstacles": Field(list_of(OBSTACLE), default=list),
})


def validate(raw, source: str) -> dict:
    """The checked profile with defaults filled in; ``source`` (file name) prefixes errors."""
    if not isinstance(raw, dict):
        raise ProfileError(f"{source}: a robot profile is a mapping of sections, got {_describe(raw)}")
    raw = dict(raw)
    origin = raw.pop("_path", None)      # where load_profile found it (a validated profile may come again)
    joints = raw.get("joints")
    n = len(joints) if isinstance(joints, (list, tuple)) else 0
    try:
        profile = SCHEMA(raw, "", n)
    except _Invalid as exc:
        raise ProfileError(f"{source}: {exc}") from None
    if origin is not None:
        profile["_path"] = origin
    if profile["sim"]["home"] is None:
        profile["sim"]["home"] = [0.0] * n
    return profile


def momentum_window_samples(profile: dict) -> int:
    """Samples per momentum window at the driver's joint-state rate (0: no momentum rows)."""
    window_s = profile["identification"]["momentum_window_s"]
    return int(round(window_s * profile["sensing"]["joint_states_hz"])) if window_s > 0 else 0
