"""The plan optimiser in a process of its own.

A plan (optimisation, then certification: 0.1-1 s) is Python and numpy, holding the interpreter for
most of its time. In a thread of the planner's process it would make every other thread of that
process wait: joint states not taken, the clock not advancing, gaps the monitor sees in a stream
published without any. Measured when the optimiser was CasADi's IPOPT, which holds the interpreter
for a whole solve: a 1 ms ticker thread beside one solve went up to 1.95 s between ticks. In a
separate process the optimiser only competes for a CPU core, never for the interpreter that watches
the arm.

The worker runs the newest request it has been sent (older ones that were not started are
superseded) and hands back ``(request_id, PlanResult)``. It also says which code its optimiser
evaluates (:mod:`.native`'s status: ``compiling`` on a machine's first run with these settings, then
``compiled``), as soon as it changes: on a first run the plans are optimised more slowly until the
compiler is done, which a demo or an operator may want to wait for before a start.
"""
from __future__ import annotations

import multiprocessing as mp
import signal

from .optimizer import PlanOptimizer, PlanResult

# s: how often a worker whose optimiser is still compiling looks whether the compiler is done
CODE_POLL_S = 0.5
# the first item of what the worker sends: a plan's result, or which code its optimiser evaluates
PLAN, CODE = "plan", "code"


def _serve(conn, robot, settings, cert_settings) -> None:
    """Child process: build the optimiser once, then plan the newest request until the parent goes.
    A Ctrl-C (or ros2 launch's SIGINT to the process group) is the parent's to handle: the child
    ends when the parent closes its end of the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    optimizer = PlanOptimizer(robot, settings, cert_settings)
    native, code = optimizer.nlp.native, None
    while True:
        try:
            # done first: the compiler's thread sets the final status before it says done, so once
            # done the status read next is the last there is to send
            done = native.wait(0)
            if native.status != code:
                code = native.status
                conn.send((CODE, code))
            if not conn.poll(None if done else CODE_POLL_S):
                continue
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
            conn.send((PLAN, request_id, result))
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
        self._code: str | None = None      # which code the optimiser evaluates; None until the worker said
        self._done = None                  # the newest (request_id, PlanResult) not yet taken

    def _receive(self) -> None:
        """Read what the worker sent: its code's status, plan results (the newest kept)."""
        while True:
            try:
                if not self._conn.poll():
                    return
                kind, *said = self._conn.recv()
            except (EOFError, OSError):       # the worker died: alive() says so, the node faults
                return
            if kind == CODE:
                self._code = said[0]
            else:
                self._done = tuple(said)

    def submit(self, request_id, request) -> None:
        """Send a planning request to the worker process (dropped if it died: :meth:`alive` says so)."""
        try:
            self._conn.send((request_id, request))
        except (BrokenPipeError, OSError):
            pass

    def take(self):
        """The newest finished ``(request_id, PlanResult)`` not taken before, or None."""
        self._receive()
        done, self._done = self._done, None
        return done

    def code(self) -> str | None:
        """Which code the optimiser evaluates (:mod:`.native`'s status), or None before the worker said."""
        self._receive()
        return self._code

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
