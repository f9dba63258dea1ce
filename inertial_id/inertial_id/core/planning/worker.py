"""The plan optimiser in a process of its own.

A plan (optimisation, then certification: 0.1-1 s) is Python and numpy, holding the interpreter for
most of its time. In a thread of the planner's process it would make every other thread of that
process wait: joint states not taken, the clock not advancing, gaps the monitor sees in a stream
published without any. Measured when the optimiser was CasADi's IPOPT, which holds the interpreter
for a whole solve: a 1 ms ticker thread beside one solve went up to 1.95 s between ticks. In a
separate process the optimiser only competes for a CPU core, never for the interpreter that watches
the arm.

The worker runs the newest request it has been sent (older ones that were not started are
superseded) and hands back ``(request_id, PlanResult)``.
"""
from __future__ import annotations

import multiprocessing as mp
import signal

from .optimizer import PlanOptimizer, PlanResult


def _serve(conn, robot, settings, cert_settings) -> None:
    """Child process: build the optimiser once, then plan the newest request until the parent goes.
    A Ctrl-C (or ros2 launch's SIGINT to the process group) is the parent's to handle: the child
    ends when the parent closes its end of the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    optimizer = PlanOptimizer(robot, settings, cert_settings)
    while True:
        try:
            job = conn.recv()
            while conn.poll():            # superseded requests are not planned
                job = conn.recv()
        except (EOFError, OSError):       # the parent closed its end or died
            return
        request_id, request = job
        try:
            result = optimizer.plan(request)
        except Exception as exc:          # a bug must not leave the parent waiting: no plan, said why
            result = PlanResult(None, None, reason=f"planner error: {type(exc).__name__}: {exc}")
        try:
            conn.send((request_id, result))
        except (EOFError, OSError):
            return


class PlanWorkerProcess:
    """Plans in a spawned child process; :meth:`submit` and :meth:`take` never block on a solve."""

    def __init__(self, robot, settings, cert_settings):
        # spawn, not fork: the parent runs DDS threads that a forked child must not inherit
        context = mp.get_context("spawn")
        self._conn, child_end = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_end, robot, settings, cert_settings),
                                        daemon=True, name="inertial_id-plan-worker")
        self._process.start()
        child_end.close()

    def submit(self, request_id, request) -> None:
        """Send a planning request to the worker process (dropped if it died: :meth:`alive` says so)."""
        try:
            self._conn.send((request_id, request))
        except (BrokenPipeError, OSError):
            pass

    def take(self):
        """The newest finished ``(request_id, PlanResult)``, or None."""
        done = None
        while True:
            try:
                if not self._conn.poll():
                    break
                done = self._conn.recv()
            except (EOFError, OSError):       # the worker died: alive() says so, the node faults
                break
        return done

    def alive(self) -> bool:
        """Whether the worker process is running."""
        return self._process.is_alive()

    def close(self) -> None:
        """Close the pipe and stop the worker (terminated if it does not exit within 2 s)."""
        self._conn.close()
        self._process.join(timeout=2.0)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=2.0)
