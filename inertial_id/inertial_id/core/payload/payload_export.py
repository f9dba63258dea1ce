"""Text forms of an identified payload: a URDF fragment (fixed joint + link with the identified
``<inertial>``) and a YAML of the values with their intervals (``inertial-id export``)."""
from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np
import yaml

from ..robot import params
from .payload_apply import PayloadInertia, com_interval


@dataclass(frozen=True)
class Identified:
    """The final estimate of a run and its box (pinocchio order, inertia about ``frame``'s origin)."""
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    frame: str
    method: str = ""
    robot: str = ""
    source: str = ""
    flags: dict | None = None

    @classmethod
    def from_run(cls, run, frame: str | None = None, source: str = "") -> Identified:
        """From a :class:`~inertial_id.studies.report.RunData` (its last estimate); ``frame`` overrides
        the run's payload frame."""
        if [n.split(".")[-1] for n in run.parameter_names][:10] != list(params.PARAMETER_NAMES):
            raise ValueError(f"not payload parameters in pinocchio order: {list(run.parameter_names)[:3]}...")
        frame = frame or run.frame
        if not frame:
            raise ValueError("the result does not name the payload frame: give --parent FRAME")
        estimate, lower, upper = (np.asarray(x[-1][:10], dtype=float) for x in (run.estimate, run.lower, run.upper))
        return cls(estimate, lower, upper, frame, run.method, run.robot, source, dict(run.flags))

    def payload(self) -> PayloadInertia:
        """The estimate as a payload inertia about ``frame``'s origin."""
        return PayloadInertia.from_params(self.estimate, self.frame)


def _num(x: float) -> str:
    return repr(float(x))          # shortest text that reads back to the same double


def urdf_fragment(identified: Identified, link: str = "payload") -> str:
    """``<robot>`` holding a fixed joint ``<frame> -> <link>`` (identity: the parameters are in the
    payload frame) and ``<link>`` with the identified inertial."""
    p = identified.payload()
    I = p.inertia_com_kg_m2
    flags = ", ".join(f"{k} {v}" for k, v in (identified.flags or {}).items())
    comment = (f"payload identified by inertial-id ({identified.method or 'unknown method'}, robot "
               f"{identified.robot or '?'}, {flags or 'no flags'}) from {identified.source or '?'}; "
               "mass kg, COM m in the parent frame, inertia kg m^2 about the COM in the parent frame's axes")
    return f"""<?xml version="1.0"?>
<!-- {comment.replace('--', '- -')} -->
<robot name={quoteattr(link + "_fragment")} xmlns:xacro="http://www.ros.org/wiki/xacro">
  <joint name={quoteattr(link + "_joint")} type="fixed">
    <parent link={quoteattr(identified.frame)}/>
    <child link={quoteattr(link)}/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>
  <link name={quoteattr(link)}>
    <inertial>
      <origin xyz="{' '.join(_num(x) for x in p.com_m)}" rpy="0 0 0"/>
      <mass value="{_num(p.mass_kg)}"/>
      <inertia ixx="{_num(I[0, 0])}" ixy="{_num(I[0, 1])}" ixz="{_num(I[0, 2])}" iyy="{_num(I[1, 1])}" iyz="{_num(I[1, 2])}" izz="{_num(I[2, 2])}"/>
    </inertial>
  </link>
</robot>
"""


def _interval(estimate, lower, upper) -> dict:
    return {"estimate": float(estimate), "lower": float(lower), "upper": float(upper)}


def yaml_text(identified: Identified) -> str:
    """Mass, COM (with the intervals the box implies), inertia about the COM (estimate), and the
    ten parameters with their intervals."""
    p = identified.payload()
    c_lo, c_hi = com_interval(identified.lower, identified.upper)
    I = p.inertia_com_kg_m2
    doc = {
        "frame": identified.frame, "robot": identified.robot, "method": identified.method,
        "source": identified.source, "flags": {k: bool(v) for k, v in (identified.flags or {}).items()},
        "mass_kg": _interval(p.mass_kg, identified.lower[0], identified.upper[0]),
        "com_m": {axis: _interval(p.com_m[k], c_lo[k], c_hi[k]) for k, axis in enumerate("xyz")},
        "inertia_about_com_kg_m2": {name: float(I[i, j]) for name, (i, j) in
                                    (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)),
                                     ("iyz", (1, 2)), ("izz", (2, 2)))},
        "parameters": {
            "order": "pinocchio [m, m*cx, m*cy, m*cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], inertia about the frame origin",
            **{name: {**_interval(e, lo, hi), "unit": params.parameter_unit(name)} for name, e, lo, hi in
               zip(params.PARAMETER_NAMES, identified.estimate, identified.lower, identified.upper)}},
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
