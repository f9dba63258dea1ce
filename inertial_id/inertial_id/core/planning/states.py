"""The states of the receding-horizon loop (:mod:`.receding`), as the planner node publishes them
(``ExcitationStatus.state``) and other nodes read them, without the planner's own imports."""
from __future__ import annotations

from enum import Enum

__all__ = ["ENDED", "MOVING", "PlannerState"]


class PlannerState(str, Enum):
    """Where the loop is (equal to its lower-case name as a string: what ExcitationStatus carries)."""

    # enum.StrEnum's str() and format() (the value: f"already {state}" reads "already planning"),
    # which Python 3.10 (ROS 2 Humble's) lacks; a plain (str, Enum) gives "PlannerState.PLANNING".
    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # typeshed gives Enum.__format__ and str.__format__ different self types; the same call at run time

    IDLE = "idle"
    PLANNING = "planning"
    EXECUTING = "executing"
    BRAKING = "braking"
    DONE = "done"
    FAILED = "failed"


MOVING = frozenset({PlannerState.PLANNING, PlannerState.EXECUTING, PlannerState.BRAKING})   # started, not yet at rest for good
ENDED = frozenset({PlannerState.DONE, PlannerState.FAILED})       # a motion ends in these
