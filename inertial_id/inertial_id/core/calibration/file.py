"""The calibration file: what the payload estimators assume about the robot, in one versioned YAML.

A profile names it (``identification.calibration: path``, relative to the profile's folder) or a
command-line / launch argument overrides that. Contents (SI units, joints in profile order):
``torque_sign`` (logged effort = sign x rigid-body torque), ``effort_delay_s`` (the logged effort
lags the logged states by this much, per joint), ``friction`` ``Fc, Fv, Ia`` per joint,
``offsets`` (each calibration run's offset and the box ``center ± half_width`` the estimator keeps
the run's unknown offset in), ``windows`` (per momentum window length: the largest remaining error
seen per joint, the factor applied per joint and the row bound = their product; a file written
before the factors were kept per joint has one ``safety_factor`` for every joint), ``torque_range_Nm`` (the largest
|torque| the measured windows integrated, per joint: the windows' bounds hold up to it), ``plateaus``
(the detector of samples the model cannot explain), and ``provenance`` (runs, their data dates, when
and how it was made, validation).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ..robot.params import robot_parameters
from ..robot.profile import ProfileError
from .plateaus import PlateauDetector

# Version 2 added effort_delay_s: a version-1 file was measured without it (read as zero delays);
# a program reading version 1 only must refuse a version-2 file rather than ignore its delays.
# Version 3 added torque_range_Nm: an older file does not say up to which torque its bounds were
# measured, so every N m counts as beyond it (the profile's relative error on the whole torque).
CALIBRATION_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
# A lag longer than this is not a sensor filter but a broken stamp: refuse the file.
LARGEST_EFFORT_DELAY_S = 1.0
# A run-to-run bias is measured on two runs or more (each left out of a calibration on the others).
FEWEST_BIAS_RUNS = 2


class CalibrationError(ProfileError):
    """A calibration file that cannot be used with this robot; the message names the problem."""


@dataclass
class Calibration:
    """A robot calibration (see the module docstring); ``windows`` maps samples per window to
    ``{"duration_s", "max_error_Nm_s", "bound_Nm_s"}`` and, when written per joint, ``"factor"``
    (nv,); ``safety_factor``: the largest factor applied (an older file's only one)."""

    robot: str
    joints: list
    sample_rate_hz: float
    torque_sign: np.ndarray
    friction: np.ndarray            # (nv, 3) [Fc, Fv, Ia]
    offset_center_Nm: np.ndarray
    offset_half_width_Nm: np.ndarray
    windows: dict
    safety_factor: float
    detector: PlateauDetector
    provenance: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)      # fit details kept in the file for the reader
    path: str | None = None
    # RMS over the calibration runs of the payload estimate on a run without payload, calibrated on
    # the others (10,): the run-to-run bias the statistical interval adds (None: fewer than 2 runs)
    payload_bias_rms: np.ndarray | None = None
    effort_delay_s: np.ndarray | None = None    # (nv,); None: zero
    torque_range_Nm: np.ndarray | None = None   # (nv,) largest |torque| of the measured windows; None: zero
    payload_bias_runs: int | None = None        # how many runs payload_bias_rms rests on; see bias_runs()

    def window(self, samples: int) -> dict:
        """The calibrated bound of a window of ``samples`` samples."""
        if samples not in self.windows:
            raise CalibrationError(
                f"calibration{f' {self.path}' if self.path else ''} has no error bound for momentum windows of "
                f"{samples} samples (it has {sorted(self.windows)} at {self.sample_rate_hz:g} Hz): recalibrate "
                "with this window, or set identification.momentum_window_s and sensing.joint_states_hz to match")
        return self.windows[samples]

    def window_options(self, samples: int) -> dict:
        """Keyword arguments of :class:`~..momentum.MomentumWindows` for this calibration."""
        w = self.window(samples)
        return {"window_bound_Nm_s": np.asarray(w["bound_Nm_s"], dtype=float), "window_duration_s": w["duration_s"],
                "exclude": self.detector, "torque_sign": self.torque_sign, "effort_delay_s": self.delays(),
                "torque_range_Nm": self.torque_range()}

    def factors(self, samples: int) -> np.ndarray:
        """(nv,) the factor each joint's largest calibration error was multiplied by for windows of
        ``samples`` samples (a file without per-joint factors: ``safety_factor`` on every joint)."""
        w = self.window(samples)
        f = w.get("factor")
        return np.full(len(self.joints), float(self.safety_factor)) if f is None else np.asarray(f, dtype=float)

    def torque_range(self) -> np.ndarray:
        """(nv,) the largest |logged torque| per joint the bounds were measured up to (zeros when the
        file does not say)."""
        return np.zeros(len(self.joints)) if self.torque_range_Nm is None else np.asarray(self.torque_range_Nm, dtype=float)

    def bias_runs(self) -> int:
        """How many runs ``payload_bias_rms`` rests on, which sets its quantile; when the file does
        not say (written before it was kept), the fewest a bias comes from, whose quantile is the widest."""
        return FEWEST_BIAS_RUNS if self.payload_bias_runs is None else int(self.payload_bias_runs)

    def delays(self) -> np.ndarray:
        """(nv,) effort delays, s (zeros when the calibration has none)."""
        return np.zeros(len(self.joints)) if self.effort_delay_s is None else np.asarray(self.effort_delay_s, dtype=float)

    def robot_box(self, model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nominal, lower, upper) of the robot part ``theta_r``: link inertials at the model's
        nominal values and friction at the calibrated ones, exactly (the row bound covers their
        error, as measured); only each joint's offset ``beta`` is free, in the calibrated range."""
        if model.nv != len(self.joints):
            raise CalibrationError(f"calibration is for {len(self.joints)} joints, the model has {model.nv}")
        nominal = robot_parameters(model)
        nb = nominal.size - 4 * model.nv
        fr = nominal[nb:].reshape(model.nv, 4)
        fr[:, :3] = self.friction
        fr[:, 3] = self.offset_center_Nm
        nominal[nb:] = fr.ravel()
        half = np.zeros_like(nominal)
        half[nb + 3::4] = self.offset_half_width_Nm
        return nominal, nominal - half, nominal + half

    def to_dict(self) -> dict:
        """The calibration as the plain dict of its YAML file."""
        j = self.joints
        return {
            "version": CALIBRATION_VERSION, "kind": "inertial_id robot calibration", "robot": self.robot,
            "joints": list(j), "sample_rate_hz": float(self.sample_rate_hz),
            "torque_sign": [int(s) for s in self.torque_sign],
            "effort_delay_s": self.delays().tolist(),
            "torque_range_Nm": self.torque_range().tolist(),
            "friction": {k: self.friction[:, i].tolist() for i, k in enumerate(("Fc_Nm", "Fv_Nm_s_rad", "Ia_kg_m2"))},
            "offsets": {"center_Nm": self.offset_center_Nm.tolist(), "half_width_Nm": self.offset_half_width_Nm.tolist()},
            "safety_factor": float(self.safety_factor),
            "windows": [{"samples": int(n), "duration_s": float(w["duration_s"]),
                         "max_error_Nm_s": list(map(float, w["max_error_Nm_s"])),
                         "factor": list(map(float, self.factors(n))),
                         "bound_Nm_s": list(map(float, w["bound_Nm_s"]))} for n, w in sorted(self.windows.items())],
            "plateaus": self.detector.to_dict(),
            "statistical": {"payload_bias_rms": None if self.payload_bias_rms is None else self.payload_bias_rms.tolist(),
                            "payload_bias_runs": self.payload_bias_runs},
            "provenance": self.provenance, "report": self.report,
        }

    def write(self, path) -> None:
        """Write the calibration as YAML to ``path``."""
        Path(path).write_text(yaml.safe_dump(_plain(self.to_dict()), sort_keys=False, width=120, default_flow_style=None), encoding="utf-8")

    @classmethod
    def from_dict(cls, d: dict, path: str | None = None) -> Calibration:
        """The calibration of a file's dict; CalibrationError naming ``path`` and the problem."""
        where = path or "calibration"
        if not isinstance(d, dict) or d.get("kind") != "inertial_id robot calibration":
            raise CalibrationError(f"{where}: not an inertial_id calibration file")
        if d.get("version") not in READABLE_VERSIONS:
            raise CalibrationError(f"{where}: version {d.get('version')!r}, this program reads versions "
                                   f"{', '.join(map(str, READABLE_VERSIONS))}")
        try:
            n = len(d["joints"])
            arrays = {"torque_sign": d["torque_sign"], "Fc": d["friction"]["Fc_Nm"], "Fv": d["friction"]["Fv_Nm_s_rad"],
                      "Ia": d["friction"]["Ia_kg_m2"], "center": d["offsets"]["center_Nm"],
                      "half": d["offsets"]["half_width_Nm"], "effort_delay_s": d.get("effort_delay_s", [0.0] * n),
                      "torque_range_Nm": d.get("torque_range_Nm", [0.0] * n)}
            for k, v in arrays.items():
                v = np.asarray(v, dtype=float)
                if v.shape != (n,) or not np.all(np.isfinite(v)):
                    raise CalibrationError(f"{where}: {k}: expected {n} finite numbers")
                arrays[k] = v
            if np.any(arrays["torque_range_Nm"] < 0):
                raise CalibrationError(f"{where}: torque_range_Nm: expected torques >= 0 N m")
            if np.any(arrays["effort_delay_s"] < 0) or np.any(arrays["effort_delay_s"] > LARGEST_EFFORT_DELAY_S):
                raise CalibrationError(f"{where}: effort_delay_s: expected delays in [0, {LARGEST_EFFORT_DELAY_S:g}] s")
            windows = {}
            for w in d["windows"]:
                bound = np.asarray(w["bound_Nm_s"], dtype=float)
                if bound.shape != (n,) or not np.all(bound > 0):
                    raise CalibrationError(f"{where}: windows: bound_Nm_s needs {n} positive numbers")
                windows[int(w["samples"])] = {"duration_s": float(w["duration_s"]), "bound_Nm_s": bound,
                                              "max_error_Nm_s": np.asarray(w["max_error_Nm_s"], dtype=float)}
                if w.get("factor") is not None:     # absent from files written with one factor for all joints
                    factor = np.asarray(w["factor"], dtype=float)
                    if factor.shape != (n,) or not np.all(factor >= 1):
                        raise CalibrationError(f"{where}: windows: factor needs {n} numbers >= 1")
                    windows[int(w["samples"])]["factor"] = factor
            bias = _bias(d, where)
            return cls(str(d["robot"]), list(d["joints"]), float(d["sample_rate_hz"]), arrays["torque_sign"],
                       np.stack([arrays["Fc"], arrays["Fv"], arrays["Ia"]], axis=1), arrays["center"], arrays["half"],
                       windows, float(d["safety_factor"]), PlateauDetector.from_dict(d["plateaus"]),
                       d.get("provenance") or {}, d.get("report") or {}, path, bias,
                       arrays["effort_delay_s"], arrays["torque_range_Nm"],
                       payload_bias_runs=None if bias is None else _bias_runs(d, where))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, CalibrationError):
                raise
            raise CalibrationError(f"{where}: missing or malformed field ({exc})") from None


def _bias(d: dict, where: str):
    bias = (d.get("statistical") or {}).get("payload_bias_rms")
    if bias is None:
        return None
    bias = np.asarray(bias, dtype=float)
    if bias.shape != (10,) or not np.all(np.isfinite(bias)) or np.any(bias < 0):
        raise CalibrationError(f"{where}: statistical.payload_bias_rms: expected 10 finite numbers >= 0")
    return bias


def _bias_runs(d: dict, where: str) -> int | None:
    """The runs the bias RMS rests on (None: not kept, see :meth:`Calibration.bias_runs`)."""
    runs = d["statistical"].get("payload_bias_runs")
    if runs is None:
        return None
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < FEWEST_BIAS_RUNS:
        raise CalibrationError(f"{where}: statistical.payload_bias_runs: expected a whole number >= {FEWEST_BIAS_RUNS}")
    return runs


def load_calibration(path) -> Calibration:
    """Read a calibration file (one-line :class:`CalibrationError` on any problem)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CalibrationError(f"calibration '{path}': not a readable YAML file ({str(exc).splitlines()[0]})") from None
    return Calibration.from_dict(data, str(path))


_CACHE: dict = {}


def calibration_of(robot) -> Calibration | None:
    """The calibration the robot's profile names (``identification.calibration``, a path relative
    to the profile's folder), checked against the robot's joints; None when it names none."""
    ident = robot.spec.identification
    name = ident.calibration
    if not name:
        return None
    path = Path(name)
    if not path.is_absolute() and robot.path:
        path = Path(robot.path).parent / path
    key = (str(path.resolve()), path.stat().st_mtime_ns if path.exists() else 0)
    if key not in _CACHE:
        _CACHE[key] = load_calibration(path)
    cal = _CACHE[key]
    if list(cal.joints) != list(robot.joint_names):
        raise CalibrationError(f"calibration {path}: joints {cal.joints} differ from the robot's {list(robot.joint_names)}")
    return cal


def _plain(x):
    """numpy scalars and arrays as plain YAML types."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def momentum_window(robot, calibration: Calibration | None) -> int:
    """Samples per momentum window: the profile's ``momentum_window_s`` at the calibration's sample
    rate when there is one (its bounds were measured on streams at that rate), else at the
    driver's rate."""
    if calibration is None:
        return robot.momentum_window_samples
    window_s = robot.spec.identification.momentum_window_s
    return int(round(window_s * calibration.sample_rate_hz)) if window_s > 0 else 0
