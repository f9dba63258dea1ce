"""The receding-horizon planner driving a simulated arm, ROS-free: one loop for the studies and the
tube measurement.

Planning runs inline, and the CPU time a plan took is charged to simulated time (the result is
offered that long after the request), so a slow plan misses its switch as it would live on a core
of its own. CPU, not wall time: on a shared machine the other jobs' load would otherwise decide how
many plans a run makes. Every joint-state sample (at the driver's rate, :func:`joint_state_steps`) goes
to the planner's monitor; a braking command is followed at once by the shorter brake the planner
certifies, as the planner node sends it.

The simulator is any arm with the interface of :class:`~inertial_id.core.sim.Simulator`
(``t``, ``q``, ``step``, ``measure``, ``command``).
"""
from __future__ import annotations

import time
from collections.abc import Callable

from ..trajectory import SampledTrajectory
from .optimizer import PlanOptimizer
from .receding import Command, RecedingHorizon
from .states import ENDED

__all__ = ["SimulatedRun", "joint_state_steps"]


def joint_state_steps(robot, step_hz: float) -> int:
    """Simulator steps per joint-state sample of ``robot``'s driver (``sensing.joint_states_hz``)."""
    return max(1, int(round(step_hz / float(robot.spec.sensing.joint_states_hz))))


class SimulatedRun:
    """``rh`` and ``opt`` on ``sim``; the plans made, their CPU times and every fault that braked."""

    def __init__(self, sim, rh: RecedingHorizon, opt: PlanOptimizer, step_hz: float, optimise: bool = True):
        self.sim, self.rh, self.opt = sim, rh, opt
        if optimise:      # a plan's time is charged to the simulation: time it as the compiled planner
            opt.nlp.native.wait()
        self.step_hz, self.optimise = float(step_hz), optimise
        # the driver's joint-state rate, in simulator steps
        self.js_every = joint_state_steps(rh.robot, step_hz)
        self.plan_times: list[float] = []
        self.conds: list[float] = []
        self.optimisations: list[tuple] = []     # (IPOPT converged, iterations, optimisation s) per optimised plan
        self.faults: list[str] = []              # why the arm braked (a tube breach, a dropout, ...)

    def send(self, cmd: Command | None) -> None:
        """Command the reference ``cmd`` spans (a brake: then the shorter brake too)."""
        if cmd is None:
            return
        t, q, qd, qdd = self.rh.sample(cmd.t_from, cmd.t_to, self.step_hz)
        self.sim.command(SampledTrajectory(t, q, qd, qdd), start_time=cmd.t_from)
        if cmd.kind == "brake":
            self.send(self.rh.shorter_brake(self.sim.t))

    def run(self, max_time_s: float, update_period_s: float,
            on_sample: Callable | None = None, on_step: Callable | None = None,
            on_update: Callable[[], Command | None] | None = None, time_budget_s: float = float("inf")) -> None:
        """Start the planner and step until ``max_time_s`` (simulated s) or the planner's end.
        ``on_sample(m)``: every joint-state sample, before the planner's monitor sees it;
        ``on_step()``: after every simulator step; ``on_update()``: every ``update_period_s``, its
        command sent (a new box for the planner)."""
        sim, rh = self.sim, self.rh
        rh.start(sim.t, sim.q.copy(), time_budget_s)
        ready = None                       # (time the pending result becomes available, id, result)
        next_update = sim.t + update_period_s
        step = 0
        while sim.t < max_time_s:
            req = rh.request(sim.t)
            if req is not None and (ready is None or ready[1] != req[0]):
                t0 = time.process_time()
                result = self.opt.plan(req[1], optimise=self.optimise)
                elapsed = time.process_time() - t0
                self.plan_times.append(elapsed)
                if self.optimise:
                    self.optimisations.append((result.converged, result.iterations, result.optimize_s))
                if result.certified:
                    self.conds.append(result.condition_number)
                ready = (sim.t + elapsed, req[0], result)
            if ready is not None and sim.t >= ready[0]:
                self.send(rh.offer(sim.t, ready[1], ready[2]))
                ready = None
                continue
            sim.step()
            step += 1
            m = sim.measure()              # every step: the simulator's sensor filters advance on it
            if step % self.js_every == 0:
                if on_sample is not None:
                    on_sample(m)
                faulted = rh.faulted
                self.send(rh.tick(m.t, 0.0, (m.t, m.q, m.qd)))
                if rh.faulted and not faulted:
                    self.faults.append(rh.message)
            if on_step is not None:
                on_step()
            if sim.t >= next_update:
                next_update += update_period_s
                if on_update is not None:
                    self.send(on_update())
            if rh.state in ENDED and ready is None:
                break
