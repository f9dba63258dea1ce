"""What every node shares: the managed-node base (rclpy.lifecycle), parameter declaration with
descriptions, the robot profile, QoS choices, dropped-input accounting on /diagnostics, and the
main() wrapper."""
from __future__ import annotations

import ctypes
import faulthandler
import functools
import os
import sys
import time
import traceback
from collections import Counter
from typing import NoReturn

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.logging import get_logger
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from ..core.robot.model import Robot, load_robot
from ..core.robot.profile import ProfileError
from ..threads import single_threaded_math
from .compat import events_executor
from .executor import QueueOnceExecutor
from .launch import StopSignals


class ParameterError(ProfileError):
    """A node parameter of the wrong type or out of its range: the node ends with one line on
    stderr and exit code 2 (:func:`run_node`)."""


# High-rate sensor inputs: best effort like qos_profile_sensor_data, with a deeper queue so that
# bursts (a driver publishing several samples at once) are not lost to a momentarily busy node.
SENSOR_QOS = QoSProfile(reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST,
                        depth=200, durability=DurabilityPolicy.VOLATILE)
# Rows and estimates: every message matters; reliable with room for a slow consumer.
RELIABLE_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                          depth=500, durability=DurabilityPolicy.VOLATILE)
# Streams a late joiner may want from the start (a recorder started after the nodes): reliable, the
# last 500 kept (transient local); a volatile subscriber still gets only what follows its match.
KEPT_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                      depth=500, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Rows are few and each one counts: reliable, and keep all until taken (intake only checks and
# queues, so the reader keeps up; a writer that outruns it loses samples on its side, which DDS
# reports and the node counts as lost_in_transport).
ROWS_IN_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)
# Facts that late joiners need (true payload of the simulator, the last trajectory): latched.
LATCHED_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                         depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


# the estimator's /diagnostics counter of its final updates after the planner's motion ended (its
# DropCounter.event)
FINAL_UPDATE_EVENT = "final_update_on_motion_end"
# the estimator's /diagnostics value: the header stamp (integer ns) of the latest estimate it
# published from a final update (its box checked: one LP over every row kept, the F/T offset's
# stated box). A consumer that needs the checked box (the demo's monitor) matches it: the estimate
# may travel ahead of or behind the diagnostics, and the counter above says when the update began,
# not when its box went out
FINAL_ESTIMATE_STAMP = "final_estimate_stamp"
# beside it, why that update was made (session.MOTION_END, MOTION_FAILED, STREAM_PAUSE): the two
# provisional ones are withdrawn when the data go on, and the online boxes after them rest on the
# offset's stated box unchecked again until the next final update
FINAL_ESTIMATE_REASON = "final_estimate_reason"
_TYPE_NAMES = {bool: "a boolean (true or false)", int: "an integer", float: "a floating-point number (e.g. 2.0)",
               str: "a string"}
_FLOAT_MAX = sys.float_info.max
_INT64 = (-2**63, 2**63 - 1)


def parameter_descriptor(name: str, default, description: str, read_only: bool = True,
                         low=None, high=None, choices=()) -> ParameterDescriptor:
    """The descriptor of a parameter: its description, a FloatingPointRange / IntegerRange when
    ``low`` or ``high`` is given (inclusive), the allowed strings in ``additional_constraints``."""
    descriptor = ParameterDescriptor(name=name, description=description, read_only=read_only)
    if isinstance(default, float) and (low is not None or high is not None):
        descriptor.floating_point_range = [FloatingPointRange(
            from_value=float(-_FLOAT_MAX if low is None else low), to_value=float(_FLOAT_MAX if high is None else high),
            step=0.0)]
    elif isinstance(default, int) and not isinstance(default, bool) and (low is not None or high is not None):
        descriptor.integer_range = [IntegerRange(from_value=int(_INT64[0] if low is None else low),
                                                 to_value=int(_INT64[1] if high is None else high), step=1)]
    if choices:
        descriptor.additional_constraints = "one of: " + ", ".join(repr(c) for c in choices)
    return descriptor


def _expected(default, low, high, choices) -> str:
    if choices:
        return "one of " + ", ".join(repr(c) for c in choices)
    text = _TYPE_NAMES.get(type(default), type(default).__name__)
    low, high = (None if v is None else f"{v:d}" if isinstance(v, int) else f"{v:g}" for v in (low, high))
    if low is not None and high is not None:
        return f"{text} in [{low}, {high}]"
    if low is not None:
        return f"{text} >= {low}"
    return f"{text} <= {high}" if high is not None else text


def declare(node: Node, name: str, default, description: str, read_only: bool = True, *,
            low=None, high=None, choices=()):
    """Declare a parameter with its default, description, type and range; return its value.

    The type is the default's (a float default takes ``low``/``high`` as a FloatingPointRange, an
    int default as an IntegerRange, both inclusive); ``choices`` lists the strings allowed. A value
    of another type, out of range or not among the choices is a :class:`ParameterError` (the node
    ends with one line and exit code 2). Parameters are read once, at start-up; they are declared
    read-only so that a ``ros2 param set`` is refused instead of silently ignored. A node that
    applies a change at run time declares it with ``read_only=False`` and registers a callback."""
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(low if low is not None else high, float):
        default = float(default)        # a float range given to a profile number written without a decimal point
    descriptor = parameter_descriptor(name, default, description, read_only, low, high, choices)
    try:
        # declared by an earlier configure (a managed node configured again after a cleanup or a
        # refused configuration): the value it holds, checked again below
        value = node.get_parameter(name).value if node.has_parameter(name) else \
            node.declare_parameter(name, default, descriptor).value
    except ParameterException:
        given = getattr(node, "_parameter_overrides", {}).get(name)
        shown = f"{given.value!r}" if given is not None else "the value given"
        if given is not None and isinstance(default, float) and type(given.value) is int:
            shown += f" (an integer: write {given.value}.0)"
        raise ParameterError(f"parameter {name}: expected {_expected(default, low, high, choices)}, got {shown}") \
            from None
    if choices and value not in choices:
        raise ParameterError(f"parameter {name}: expected {_expected(default, low, high, choices)}, got {value!r}")
    return value


def declare_robot(node: Node) -> Robot:
    profile = declare(node, "robot_profile", "kinova_gen3",
                      "robot profile: a name in config/robots/ or a path to a YAML file")
    return load_robot(profile)


class ManagedNode(LifecycleNode):
    """A managed node (``rclpy.lifecycle``) whose set-up is :meth:`configure`: parameters, the
    profile, publishers, subscriptions, timers, services and workers are made on the ``configure``
    transition and released on ``cleanup`` and ``shutdown``. A configuration the node cannot work
    with (a :class:`ProfileError`: profile, parameter) makes ``configure`` a FAILURE with one line in
    the log naming the field, and the node stays unconfigured. :attr:`active` is true between
    ``activate`` and ``deactivate``; subclasses gate what they do on it (:meth:`activate`,
    :meth:`deactivate`). With the ``autostart`` parameter (default true, like nav2's lifecycle
    manager) :func:`run_node` configures and activates the node at start; false, it waits for
    ``ros2 lifecycle set``."""

    def __init__(self, node_name: str):
        super().__init__(node_name)
        self.active = False
        self._failure: Exception | None = None     # why the last failed transition failed
        self._raise_failures = False               # autostart: run_node reports them, not the log
        self._base: set | None = None              # the entities the node had before configure()
        # what release() had to leave running ('' when nothing): a worker inside a native solver,
        # which no signal interrupts (run_node then ends the process without waiting for it)
        self.left_running = ""
        self.autostart = declare(self, "autostart", True,
                                 "configure and activate at start; false: wait for `ros2 lifecycle set`")

    def configure(self) -> None:
        """Read the parameters and the profile, make the node's entities (raise ProfileError when
        the configuration cannot be worked with)."""
        raise NotImplementedError

    def activate(self) -> None:
        """Called after :attr:`active` became true."""

    def deactivate(self) -> None:
        """Called after :attr:`active` became false."""

    def release(self) -> None:
        """Free what configure() made besides ROS entities (processes, threads); may be called
        more than once."""

    def _entities(self) -> set:
        return {*self.publishers, *self.subscriptions, *self.timers, *self.services, *self.clients,
                *self.waitables}

    def _destroy_own(self) -> None:
        """Release, and destroy the entities made since configure() began (those made later, on
        first use, included)."""
        self.release()
        own = set() if self._base is None else self._entities() - self._base
        self._base = None
        destroy = {**{id(e): self.destroy_publisher for e in self.publishers},
                   **{id(e): self.destroy_subscription for e in self.subscriptions},
                   **{id(e): self.destroy_timer for e in self.timers},
                   **{id(e): self.destroy_service for e in self.services},
                   **{id(e): self.destroy_client for e in self.clients}}
        for entity in own:
            if id(entity) in destroy:
                destroy[id(entity)](entity)
            elif hasattr(entity, "destroy"):     # action clients remove themselves from the node
                entity.destroy()
            else:
                self.remove_waitable(entity)

    def _transition(self, name: str, step) -> TransitionCallbackReturn:
        """Run ``step``; a ProfileError is a FAILURE (one line), anything else an ERROR with its
        traceback in the log (under autostart :func:`run_node` reports them instead)."""
        try:
            step()
        except Exception as exc:        # noqa: BLE001 -- rclpy would swallow it without a word
            self._failure = exc
            if not self._raise_failures:
                text = str(exc) if isinstance(exc, ProfileError) else traceback.format_exc().rstrip()
                self.get_logger().error(f"{name} failed: {text}")
            return TransitionCallbackReturn.FAILURE if isinstance(exc, ProfileError) else \
                TransitionCallbackReturn.ERROR
        return TransitionCallbackReturn.SUCCESS

    def on_configure(self, state) -> TransitionCallbackReturn:
        self._base = self._entities()
        result = self._transition("configure", self.configure)
        if result != TransitionCallbackReturn.SUCCESS:
            self._destroy_own()         # what the refused configuration made so far
        return result

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.active = True
        result = self._transition("activate", self.activate)
        return super().on_activate(state) if result == TransitionCallbackReturn.SUCCESS else result

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self.active = False
        result = self._transition("deactivate", self.deactivate)
        return super().on_deactivate(state) if result == TransitionCallbackReturn.SUCCESS else result

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        return self._transition("cleanup", self._destroy_own)

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self.active = False
        return self._transition("shutdown", self._destroy_own)

    def on_error(self, state) -> TransitionCallbackReturn:
        self.active = False
        return self._transition("error processing", self._destroy_own)

    def start_up(self) -> None:
        """Configure and activate (autostart). A refused configuration raises its ProfileError, a
        bug its own exception."""
        self._raise_failures = True
        try:
            for trigger in (self.trigger_configure, self.trigger_activate):
                self._failure = None
                if trigger() != TransitionCallbackReturn.SUCCESS:
                    raise self._failure or RuntimeError(f"{trigger.__name__} refused by the state machine")
        finally:
            self._raise_failures = False

    def destroy_node(self):
        self.active = False
        self.release()
        return super().destroy_node()


def when_active(callback):
    """An input callback of a :class:`ManagedNode` with a ``drops`` counter that takes input only
    while the node is active (otherwise counted as ``ignored.inactive``)."""
    @functools.wraps(callback)
    def gated(self, msg, *args):
        if not self.active:
            self.drops.ignore("inactive")
            return None
        return callback(self, msg, *args)
    return gated


def s_to_stamp(t: float, msg_stamp) -> None:
    sec = int(np.floor(t))
    carry, nanosec = divmod(int(round((t - sec) * 1e9)), 1_000_000_000)   # a fraction that rounds up to 1 s
    msg_stamp.sec, msg_stamp.nanosec = sec + carry, nanosec


class DropCounter:
    """Counts dropped inputs by reason; warns (throttled) and publishes counts on /diagnostics."""

    def __init__(self, node: Node, period_s: float = 1.0, warn_period_s: float = 2.0, clock=None):
        """``clock``: the publishing timer's (the node's own by default: under ``use_sim_time`` it
        publishes nothing before the first /clock)."""
        self.node = node
        self.counts: Counter = Counter()
        self.accepted = 0
        self.status_message = "running"
        self.level = DiagnosticStatus.OK
        self.values: dict[str, str] = {}     # readings the node states beside its counters (key -> text)
        self._last_warn: dict[str, float] = {}
        self._warn_period_s = warn_period_s
        self._pub = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_timer(period_s, self.publish, clock=clock)

    def drop(self, reason: str, detail: str = "") -> None:
        self.counts[reason] += 1
        self._warn(reason, f"dropped input ({reason}){': ' + detail if detail else ''} [{self.counts[reason]} so far]")

    def _warn(self, key: str, text: str) -> None:
        """Log ``text`` as a warning, at most once per warn period for ``key``."""
        now = time.monotonic()
        if now - self._last_warn.get(key, -1e9) >= self._warn_period_s:
            self._last_warn[key] = now
            self.node.get_logger().warning(text)

    def ignore(self, reason: str) -> None:
        """Valid input this node does not use (e.g. rows of another kind): counted, not warned."""
        self.counts[f"ignored.{reason}"] += 1

    def event(self, name: str, n: int = 1, detail: str = "") -> None:
        """Something to see on /diagnostics that is neither a drop nor ignored input (e.g. a stamp
        jump): counted as ``event.<name>``; warned (throttled) when it comes with a ``detail``."""
        key = f"event.{name}"
        self.counts[key] += n
        if detail:
            self._warn(key, f"{name}: {detail} [{self.counts[key]} so far]")

    def ok(self, n: int = 1) -> None:
        self.accepted += n

    def set_status(self, level, message: str) -> None:
        self.level, self.status_message = level, message

    def publish(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        status = DiagnosticStatus()
        status.name = f"inertial_id: {self.node.get_name()}"
        status.hardware_id = self.node.get_name()
        status.level, status.message = self.level, self.status_message
        dropped = {r: c for r, c in self.counts.items() if not r.startswith(("ignored.", "event."))}
        if self.accepted == 0 and dropped:
            # input arrives and none of it is usable: say so, in the status and (throttled) the log
            reason = max(dropped, key=dropped.get)
            status.level = max(status.level, DiagnosticStatus.WARN)
            status.message = (f"no usable input yet: {sum(dropped.values())} dropped, mostly '{reason}'"
                              + ("" if self.status_message == "running" else f"; {self.status_message}"))
            self._warn("no_usable_input", status.message)
        status.values = [KeyValue(key="accepted", value=str(self.accepted))]
        status.values += [KeyValue(key=r if r.startswith(("ignored.", "event.")) else f"dropped.{r}", value=str(c))
                          for r, c in sorted(self.counts.items())]
        status.values += [KeyValue(key=k, value=v) for k, v in sorted(self.values.items())]
        msg.status = [status]
        self._pub.publish(msg)


SHUTDOWN_GRACE_S = 2.0


def _context_goes_down(within_s: float) -> bool:
    """Whether rclpy's context is down, or goes down within ``within_s`` (a signal's shutdown in progress)."""
    end = time.monotonic() + within_s
    while rclpy.ok():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


# Longest a spinning node takes to notice a stop request (the executor's wait returns at least this often)
SPIN_POLL_S = 0.1


def _end_process() -> NoReturn:
    """Exit code 0 now, without the interpreter's teardown of native libraries.

    Called once the node is destroyed (state saved, last messages out), the context is down and
    its log closed: nothing is left to do. What the teardown would still run frees only what the
    operating system frees anyway: the DDS participant, HiGHS's worker threads, C++ static
    destructors. It has cost a clean stop twice. A thread still inside a native library aborts
    the process when that library's thread pool is torn down under it (HiGHS: "terminate called
    without an active exception", exit -6). And once (CI, Jazzy) an estimator with every thread
    joined stayed 20 s past its last log line, until the launcher's SIGTERM killed it (exit -15).
    A kill by SIGTERM, not our handler, means Python's finalization had already begun."""
    sys.stdout.flush()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)      # the C library's buffered streams (rcutils may log to stdout)
    os._exit(0)


def run_node(node_class, args=None, threads: int = 1) -> int:
    """Entry point shared by the nodes: init, spin until shutdown.

    SIGINT and SIGTERM (what ``ros2 launch`` and process managers send; any number of them) end the
    node with exit code 0 and no traceback: the executor stops taking callbacks, the node is destroyed
    (its workers joined, its last messages published) while the context is still up, then the
    context is shut down, and the node's last log line says it finished; the process then ends at
    once (:func:`_end_process`: not through the native libraries' teardown). A configuration the node
    cannot work with (profile, parameters: a :class:`ProfileError` while constructing or, with
    ``autostart``, configuring a :class:`ManagedNode`) is one line on stderr and exit code 2. Anything
    else is a bug and keeps its traceback. A node with ``executor_kind = "events"`` is spun by rclpy's
    events executor. The node's BLAS runs on one thread (:func:`~inertial_id.threads.single_threaded_math`);
    a crash in native code prints every thread's Python stack (:mod:`faulthandler`)."""
    # Not rclpy's signal handlers (rclpy/src/rclpy/signal_handler.cpp, the same from humble to kilted):
    # they chain to Python's SIGINT handler, so a KeyboardInterrupt is raised wherever the main thread
    # is (inside a callback, inside destroy_node; once per signal, and a Ctrl-C at a terminal reaches
    # a launched node twice, from the terminal and from the launcher), and their thread shuts the
    # context down at once, under a callback still publishing ("publisher's context is invalid") and
    # before the node is destroyed (its last log lines fail to reach /rosout). A signal here only asks
    # the loop below to stop; the context goes down last. Installed before init: a signal during the
    # start-up is a stop request too.
    stop = StopSignals()
    # a crash in native code (a signal like SIGSEGV) leaves the Python stack of every thread on stderr,
    # in the launch log, instead of only the exit code
    faulthandler.enable()
    single_threaded_math()
    rclpy.init(args=args if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)
    node = executor = None
    finished = False
    try:
        try:
            node = node_class()
            if isinstance(node, ManagedNode) and node.autostart:
                node.start_up()
        except ProfileError as exc:
            print(f"{node_class.__name__}: {exc}", file=sys.stderr, flush=True)
            return 2
        if threads > 1:     # callbacks in separate callback groups run while another one computes
            executor = QueueOnceExecutor(threads)
        elif getattr(node, "executor_kind", "single_threaded") == "events":
            executor = events_executor()        # single-threaded where rclpy has none (Humble)
        else:
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        while stop.signal is None and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_POLL_S)
        finished = True
    except (KeyboardInterrupt, ExternalShutdownException):
        finished = True
    except Exception:
        # The context shut down by another party (signals no longer do it, see above) under the
        # executor; a message it was taking at that moment fails to convert. That is the shutdown,
        # not a bug of this node. The executor can fail before the context reports it is down, so the
        # context is given a moment to go down.
        if not _context_goes_down(SHUTDOWN_GRACE_S):
            raise
        finished = True
    finally:
        if executor is not None:
            executor.shutdown()         # no callback runs from here on (a pool's running ones end first)
        left = ""
        if node is not None:
            name = node.get_name()
            node.destroy_node()
            left = getattr(node, "left_running", "")
            if finished:
                get_logger(name).info(f"finished ({stop.signal or 'the context was shut down'})"
                                      f"{'; ' + left + ' left running' if left else ''}")
        rclpy.try_shutdown()
    _end_process()
