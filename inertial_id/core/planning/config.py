"""Settings of the receding-horizon excitation planner, from the profile's ``planner:`` section.

Keys read here (the certifier's own keys, e.g. ``capsules`` and ``tracking_error``, are read by
:class:`~.certifier.CertifierSettings`)::

    planner:
      horizon_s: 3.0          # t_f, duration of every plan (seed 003)
      replan_s: 1.5           # t_p, the next plan takes over this long after the executing one started
      bezier_degree: 7        # >= 5; degree - 4 free control points per joint (the last one: the rest point)
      deadline_s: 1.0         # wall time for optimise + certify; must leave room before the switch
      optimize_s: 0.15        # of which at most this much for the optimisation
      cost_samples: 32        # samples of the plan in the optimised information matrix
      report_samples: 128     # N_s of seed 003 for the reported cond(W_e)
      centre: [...]           # rad, excitation centre (one per joint)
      reach_rad: [...]        # free control points stay within centre +- reach
      acceleration_fraction: 0.5  # plans use at most this fraction of the acceleration limits (the
                              # tracking error grows with acceleration; the certifier uses the full limits)
      max_plans: 12           # at most this many exciting plans per start
      stop_shrink: 0.02       # stop when the box's log-volume fell less than this over ...
      stop_patience: 3        # ... the last this many plans
      brake_duration_s: 1.0   # first duration tried for a braking plan on a fault
      stale_after_s: 0.2      # joint states older than this are a fault
      hold_wait_s: 10.0       # a start waits this long for a box that certifies holding still
      command_lead_s: 0.1     # commands start this long after they are issued (transport latency)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import ProfileError


def _number(section: dict, key: str, default=None, minimum: float | None = None, integer: bool = False):
    value = section.get(key, default)
    if value is None:
        raise ProfileError(f"planner.{key} is missing")
    try:
        value = int(value) if integer else float(value)
    except (TypeError, ValueError):
        raise ProfileError(f"planner.{key} must be a number, got {value!r}") from None
    if not np.isfinite(value) or (minimum is not None and value < minimum):
        raise ProfileError(f"planner.{key} must be finite and >= {minimum}, got {value}")
    return value


def _vector(section: dict, key: str, n: int, default=None) -> np.ndarray:
    value = section.get(key, default)
    if value is None:
        raise ProfileError(f"planner.{key} is missing")
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProfileError(f"planner.{key} must be a list of {n} numbers") from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ProfileError(f"planner.{key} must be a list of {n} finite numbers, got {value!r}")
    return v


@dataclass(frozen=True)
class PlannerSettings:
    horizon_s: float
    replan_s: float
    degree: int
    deadline_s: float
    optimize_s: float
    cost_samples: int
    report_samples: int
    centre: np.ndarray
    reach_rad: np.ndarray
    acceleration_fraction: float
    max_plans: int
    stop_shrink: float
    stop_patience: int
    brake_duration_s: float
    stale_after_s: float
    hold_wait_s: float
    command_lead_s: float

    @property
    def free_points(self) -> int:
        return self.degree - 4

    @classmethod
    def from_profile(cls, robot) -> "PlannerSettings":
        section = robot.profile.get("planner")
        if not isinstance(section, dict):
            raise ProfileError(f"profile '{robot.name}' has no planner: section")
        n = robot.nv
        horizon = _number(section, "horizon_s", 3.0, 0.1)
        replan = _number(section, "replan_s", 1.5, 0.05)
        if replan >= horizon:
            raise ProfileError(f"planner.replan_s ({replan}) must be shorter than planner.horizon_s ({horizon})")
        degree = _number(section, "bezier_degree", 7, 5, integer=True)
        deadline = _number(section, "deadline_s", 1.0, 0.01)
        lead = _number(section, "command_lead_s", 0.1, 0.0)
        if deadline + lead >= replan:
            raise ProfileError(f"planner.deadline_s + planner.command_lead_s ({deadline + lead}) must be "
                               f"shorter than planner.replan_s ({replan})")
        centre = _vector(section, "centre", n, robot.profile.get("sim", {}).get("home"))
        lo, hi = robot.position_lower, robot.position_upper
        if np.any(centre < lo) or np.any(centre > hi):
            raise ProfileError("planner.centre lies outside the position limits")
        reach = _vector(section, "reach_rad", n)
        if np.any(reach < 0):
            raise ProfileError("planner.reach_rad must be non-negative")
        optimize = _number(section, "optimize_s", 0.15, 0.0)
        if optimize >= deadline:
            raise ProfileError(f"planner.optimize_s ({optimize}) must be shorter than planner.deadline_s ({deadline})")
        return cls(horizon_s=horizon, replan_s=replan, degree=degree, deadline_s=deadline, optimize_s=optimize,
                   cost_samples=_number(section, "cost_samples", 32, 4, integer=True),
                   report_samples=_number(section, "report_samples", 128, 4, integer=True),
                   centre=centre, reach_rad=reach,
                   acceleration_fraction=_number(section, "acceleration_fraction", 1.0, 0.01),
                   max_plans=_number(section, "max_plans", 12, 1, integer=True),
                   stop_shrink=_number(section, "stop_shrink", 0.02, 0.0),
                   stop_patience=_number(section, "stop_patience", 3, 1, integer=True),
                   brake_duration_s=_number(section, "brake_duration_s", 1.0, 0.05),
                   stale_after_s=_number(section, "stale_after_s", 0.2, 0.001),
                   hold_wait_s=_number(section, "hold_wait_s", 10.0, 0.0),
                   command_lead_s=lead)
