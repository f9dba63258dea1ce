"""When the guaranteed bounds are updated.

Every ``period_s`` of **data time** (the stamps of the rows), right after the row that reaches it:
the update then falls on the same rows whether they arrive live, from a replay at any rate, or
from a bag read offline, and the box (which depends on the update boundaries through the warm
starts and the rows kept between updates) is the same in all three. What is left after the last
boundary is folded in when the stream stops (the caller's final update).

A stamp more than one period before the latest one (a clock reset, a replay restarted, a driver
whose clock stepped back) restarts the schedule from that stamp and is counted in
``backward_jumps``: waiting for data time to catch up with the old boundary would stop the bounds
updates for as long as the jump.
"""
from __future__ import annotations

import numpy as np


class UpdateSchedule:
    """When bounds updates are due: every ``period_s`` of data time, restarting after a backward clock jump."""
    def __init__(self, period_s: float):
        self.period = float(period_s)
        self.next_t: float | None = None
        self.latest_t: float | None = None
        self.backward_jumps = 0

    def due(self, t: float) -> bool:
        """True when the row stamped ``t`` (just added) closes an update period. A period of 0:
        never (one update at the end)."""
        if self.period <= 0:
            return False
        if self.latest_t is not None and t < self.latest_t - self.period:
            self.backward_jumps += 1
            self.next_t = None
        self.latest_t = t if self.next_t is None or self.latest_t is None else max(self.latest_t, t)
        if self.next_t is None:
            self.next_t = t + self.period
            return False
        if t < self.next_t:
            return False
        self.next_t += self.period * np.floor((t - self.next_t) / self.period + 1)
        return True
