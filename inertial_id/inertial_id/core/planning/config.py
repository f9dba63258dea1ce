"""Settings of the receding-horizon excitation planner, from the profile's ``planner:`` section
(types, ranges, defaults: :class:`inertial_id.core.robot.profile.Planner`).

Keys read here (the certifier's own keys, e.g. ``capsules`` and ``tracking_error``, are read by
:class:`~.certifier.CertifierSettings`)::

    planner:
      horizon_s               # t_f, duration of every plan, s
      replan_s                # t_p, the next plan takes over this long after the executing one started, s
      bezier_degree           # >= 5; degree - 4 free control points per joint (the last one: the rest point)
      deadline_s              # wall time for optimise + certify; must leave room before the switch, s
      optimize_s              # of which at most this much for the optimisation, s
      search_s                # with a certified plan in hand, no larger step is searched past this, s
      cost_samples            # samples of the plan in the optimised information matrix
      report_samples          # N_s, samples of the plan for the reported cond(W_e)
      centre                  # rad, excitation centre (one per joint; default: sim.home)
      reach_rad               # free control points stay within centre +- reach
      acceleration_fraction   # plans use at most this fraction of the acceleration limits (the
                              # tracking error grows with acceleration; the certifier uses the full limits)
      max_plans               # at most this many exciting plans per start
      stop_shrink             # stop when the box's log-volume fell less than this over ...
      stop_patience           # ... the last this many plans
      brake_duration_s        # first duration tried for a braking plan on a fault, s
      stale_after_s           # joint states older than this are a fault, s
      hold_wait_s             # a start waits this long for a box that certifies holding still, s
      command_lead_s          # commands start this long after they are issued (transport latency), s

The defaults are the schema's, stated there only.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robot.model import ProfileError


@dataclass(frozen=True)
class PlannerSettings:
    """The planner's timing, excitation region and stopping rule (the module docstring says each)."""

    horizon_s: float
    replan_s: float
    degree: int
    deadline_s: float
    optimize_s: float
    search_s: float
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
        """Free control points per joint, ``degree - 4`` (the last of them: the rest point)."""
        return self.degree - 4

    @classmethod
    def from_profile(cls, robot) -> PlannerSettings:
        """The settings of ``robot``'s profile (types, ranges and their order checked by the schema,
        :class:`inertial_id.core.robot.profile.Planner`)."""
        planner = robot.spec.planner
        if planner is None:
            raise ProfileError(f"profile '{robot.name}' has no planner: section")
        centre = np.asarray(planner.centre, dtype=float)
        if np.any(centre < robot.position_lower) or np.any(centre > robot.position_upper):
            raise ProfileError("planner.centre lies outside the position limits")
        return cls(horizon_s=planner.horizon_s, replan_s=planner.replan_s, degree=planner.bezier_degree,
                   deadline_s=planner.deadline_s, optimize_s=planner.optimize_s,
                   search_s=planner.search_s,
                   cost_samples=planner.cost_samples, report_samples=planner.report_samples,
                   centre=centre, reach_rad=np.asarray(planner.reach_rad, dtype=float),
                   acceleration_fraction=planner.acceleration_fraction, max_plans=planner.max_plans,
                   stop_shrink=planner.stop_shrink, stop_patience=planner.stop_patience,
                   brake_duration_s=planner.brake_duration_s, stale_after_s=planner.stale_after_s,
                   hold_wait_s=planner.hold_wait_s, command_lead_s=planner.command_lead_s)
