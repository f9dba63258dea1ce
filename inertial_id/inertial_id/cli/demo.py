"""``inertial-id demo``: the node processes started on a simulated arm, watched by a monitor node of
this process until the final estimate, which is compared with the hidden payload (the options:
:mod:`.parsers.demo`), and whose mass width is compared with the sound floor of the run's rows (the
width no box sound under the profile's stated bounds beats on them: :func:`scored_rows`)."""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import NamedTuple

import numpy as np
import rclpy
from rclpy.signals import SignalHandlerOptions
from std_srvs.srv import Trigger

from ..core import offline
from ..core.data import bags
from ..core.estimators.run_floor import run_floor_kg, run_floors_with_one_bound_halved, wrench_floor_kg
from ..core.estimators.factory import make_estimator
from ..core.estimators.payload import Support
from ..core.payload.payload_apply import ApplyLimits, apply_verdict
from ..core.planning.native import STATUS_COMPILING
from ..core.robot.model import load_payloads, load_robot
from ..defaults import SIM_ENGINES
from ..nodes.launch import NODES, StopSignals, isolated_ros_env, start_node_set
from ..nodes.monitor import MonitorNode
from ..nodes.recorder import BackgroundRecorder, driver_periods_s, finish_recording
from ..nodes.sim_robot import END_ACK_TIMEOUT_S, RELIABLE_SENSOR_DEPTH
from ..sim.calibration import calibrated_profile, calibration_needed
from . import RunFailed, UserError
from .output import write_json


# Wall seconds without /clock advancing after which the simulated arm counts as stopped: far beyond
# what a loaded machine delays a process (the simulator slows down, it does not stall), short enough
# for a person waiting at the terminal.
SIM_STALL_S = 10.0
# Wall seconds a demo waits, before anything moves, for the planner to compile its optimiser's
# functions (once per machine and planner settings: 10-20 s on a quiet 2-core machine, a minute or
# more beside other work); after that it starts anyway, and says so.
COMPILE_WAIT_S = 300.0


class Interrupted(Exception):
    """SIGINT or SIGTERM came before the result (the signal's name): the demo stops every node and
    ends with exit code 0, one line saying so. ``nodes_started``: false when it came while the
    simulated arm was being calibrated, before any node."""

    def __init__(self, reason: str, nodes_started: bool = True):
        super().__init__(reason)
        self.nodes_started = nodes_started


class _Signalled(BaseException):
    """A signal's name, raised by the handler in the middle of a computation: not an Exception, so
    that no library's ``except Exception`` on the way takes it for a failure of its own."""


def check_stop(stop) -> None:
    """Raise :class:`Interrupted` once a signal came (``stop``: a StopSignals, or None)."""
    if stop is not None and stop.signal:
        raise Interrupted(stop.signal)


def com_error_m(truth, estimate) -> float:
    return float(np.linalg.norm(np.asarray(estimate[1:4]) / estimate[0] - np.asarray(truth[1:4]) / truth[0]))


def run(args) -> int:
    if not 0 < args.duration <= 60:
        raise UserError("--duration must be in (0, 60] seconds")
    robot = load_robot(args.robot)   # validates the profile before anything starts
    payload = args.payload or robot.spec.payload.sim
    if payload not in load_payloads():
        raise UserError(f"unknown payload '{payload}' (available: {', '.join(load_payloads())})")
    method = args.method or robot.spec.identification.method
    try:
        make_estimator(robot, method)    # refuses methods the profile cannot serve, before starting
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        result = run_demo(args.robot, payload, args.duration, method, args.real_time_factor,
                          args.log_dir, progress=not args.quiet, record=args.record, storage=args.storage,
                          engine=args.engine, calibrate=args.calibrate)
    except Interrupted as exc:
        print(f"inertial-id demo: stopped by {exc} before the result; "
              f"{'every node finished cleanly' if exc.nodes_started else 'no node had started'}",
              file=sys.stderr, flush=True)
        return 0
    except RuntimeError as exc:
        raise RunFailed(str(exc)) from None
    print_table(result)
    write_json(args.json, result)
    ok = passed(result)
    print(f"{'excitation complete' if result['excitation_complete'] else 'excitation cut short'} "
          f"({result['planner_message']}); truth {'inside' if result['truth_inside_bounds'] else 'OUTSIDE'} "
          f"the bounds: {'ok' if ok else 'FAILED; see the logs in ' + result['log_dir']}")
    if result.get("recording_missed"):
        raise RunFailed(f"the recording is incomplete: {result['recording']}")
    return 0 if ok else 1


def passed(result: dict) -> bool:
    """The demo's verdict on its result: the truth inside a physically consistent box."""
    return result["truth_inside_bounds"] and result["physically_consistent"]


def calibrated_for(profile: str, engine: str, log_dir: str, progress: bool, calibrate: bool = False) -> str:
    """The profile the nodes run with: on MuJoCo (or on any engine when ``calibrate``) an arm that
    senses joint torque and names no calibration is calibrated first on two payload-free runs of the
    same simulated arm, as a real one is (the calibration and a copy of the profile naming it go to
    ``log_dir``; the copy is returned)."""
    if not calibration_needed(load_robot(profile), engine, calibrate):
        return profile
    received: list[str] = []

    def stop(number, frame):
        received.append(signal.Signals(number).name)
        if len(received) == 1:        # a second one finds the calibration already stopping
            raise _Signalled(received[0])
    # a long computation with nothing to poll: a signal stops it where it is (nothing to clean up), or,
    # should the exception land where Python only reports it (a finalizer), once the calibration ends
    previous = {n: signal.signal(n, stop) for n in (signal.SIGINT, signal.SIGTERM)} \
        if threading.current_thread() is threading.main_thread() else {}
    try:
        if progress:
            print("calibrating the simulated arm's joint torque sensors on two payload-free runs, as "
                  "`inertial-id calibrate` does with a real arm's recordings", file=sys.stderr, flush=True)
        calibrated = calibrated_profile(profile, log_dir, engine)
    except _Signalled:
        pass
    except Exception:
        # the signal's exception, wrapped by a library it passed through (pydantic's serializer
        # reports it as a PydanticSerializationError): the signal decides, below
        if not received:
            raise
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if received:
        raise Interrupted(received[0], nodes_started=False)
    if progress:
        print(f"calibrated: {calibrated}", file=sys.stderr, flush=True)
    return calibrated


def run_demo(profile: str, payload: str, duration_s: float, method: str = "guaranteed", rtf: float = 1.0,
             log_dir: str | None = None, progress: bool = True, timeout_margin_s: float = 90.0,
             record: str | None = None, storage: str = "mcap", engine: str = SIM_ENGINES[0],
             calibrate: bool = False) -> dict:
    """Start the node processes and a monitor; return the final estimate against the truth
    (``calibrate``: :func:`calibrated_for`).

    Every node runs on the simulated arm's /clock (``use_sim_time``): the time limits are simulated
    seconds, and a simulator whose clock stops for :data:`SIM_STALL_S` wall seconds is a failure
    (RuntimeError with the reason). SIGINT or SIGTERM stops every node and raises :class:`Interrupted`
    once each has finished cleanly (RuntimeError if one did not).

    The nodes' logs go to ``log_dir``, else to a temporary folder: a failure (RuntimeError, a result
    that does not pass, a node that had to be killed) keeps it and names it, in the error or as the
    result's ``log_dir``; a run that passes, or that a signal stops cleanly, removes it."""
    temporary = log_dir is None
    log_dir = log_dir or tempfile.mkdtemp(prefix="inertial_id_demo_")
    try:
        return _run_nodes(profile, payload, duration_s, method, rtf, log_dir, temporary, progress,
                          timeout_margin_s, record, storage, engine, calibrate)
    except Interrupted:
        if temporary:
            shutil.rmtree(log_dir, ignore_errors=True)
        raise
    except RuntimeError as exc:
        if log_dir in str(exc):
            raise
        raise RuntimeError(f"{exc}; see the logs in {log_dir}") from exc


def _run_nodes(profile: str, payload: str, duration_s: float, method: str, rtf: float, log_dir: str,
               temporary: bool, progress: bool, timeout_margin_s: float, record: str | None, storage: str,
               engine: str, calibrate: bool) -> dict:
    """:func:`run_demo` with its logs in ``log_dir`` (``temporary``: removed once the run passed and
    every node stopped cleanly)."""
    os.makedirs(log_dir, exist_ok=True)
    requested = profile
    profile = calibrated_for(profile, engine, log_dir, progress, calibrate)
    env = isolated_ros_env()
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    t_start = time.monotonic()
    # rclpy's signal handlers would shut the context down under the monitor (the next spin fails) and
    # raise KeyboardInterrupt anywhere: a signal is a stop request the loops below check instead
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    monitor = MonitorNode(keep_rows=True)
    robot = load_robot(profile)
    # the recorder listens before the nodes start, so that it has every message the nodes exchange;
    # a recording is compared with the live run: the sensor streams go reliably to it and the builder
    recorder = (BackgroundRecorder(record, recorded_topics(robot), storage, driver_periods_s(robot))
                if record else None)
    lossless = recorder is not None
    nodes = recording = interrupted = None
    stopped = {}
    stop = StopSignals()
    try:
        # every consumer listens before the simulated arm publishes its first sample: the builder,
        # the estimator and the recorder then have the same streams from the start (the builder
        # subscribes to the arm's streams once its rows publisher has matched the rows' readers)
        sim_time = {"use_sim_time": True}
        rows_readers = 2 + (recorder is not None)                   # estimator, monitor, recorder
        # the payload compensator's output is not part of the demo's result: not started
        nodes = start_node_set(profile, env, log_dir,
                               nodes=tuple(n for n in NODES if n not in ("sim_robot", "payload_compensator")),
                               regressor_builder={"method": method, "lossless_inputs": lossless,
                                                  "wait_for_rows_subscribers": rows_readers, **sim_time},
                               estimator={"method": method, **sim_time},
                               # the arm is the simulator's: while its clock stands still the arm
                               # does too, so the planner faults on the stall the demo fails on
                               excitation_planner={"duration_s": float(duration_s), "clock_stall_s": SIM_STALL_S,
                                                   **sim_time})
        wait_for_graph(monitor, nodes, bags.ROWS, rows_readers, t_start + timeout_margin_s, log_dir, stop)
        code = wait_for_compiled_planner(monitor, COMPILE_WAIT_S, stop, progress)
        t_arm = time.monotonic()              # the start's deadline counts from here
        sensor_readers = consumers_of_sensor_streams(robot, recorder is not None)
        nodes.start("sim_robot", {"robot_profile": profile, "payload": payload, "real_time_factor": float(rtf),
                                  "engine": engine,
                                  "reliable_sensor_streams": lossless, "publish_clock": True,
                                  **{f"wait_for_{k}_subscribers": n for k, n in sensor_readers.items()}},
                    env, log_dir)
        start_planner(monitor, t_arm + timeout_margin_s, stop)
        last_print = 0.0
        sim_limit_s = duration_s + timeout_margin_s          # simulated seconds from the start
        while True:
            rclpy.spin_once(monitor, timeout_sec=0.1)
            now = time.monotonic()
            check_nodes(nodes, stop, log_dir)
            if monitor.clock_stalled_s() > SIM_STALL_S:
                raise RuntimeError(f"the simulated arm stopped: /clock has not advanced for {SIM_STALL_S:.0f} s "
                                   f"(at {monitor.sim_elapsed_s():.1f} s of simulated time)")
            if monitor.sim_elapsed_s() > sim_limit_s:
                raise RuntimeError(f"no final estimate after {sim_limit_s:.0f} s of simulated time; "
                                   f"see the logs in {log_dir}")
            st = monitor.status
            if st is not None and st.state == "failed":
                raise RuntimeError(f"planner failed: {st.message}")
            # final: the estimate of the estimator's final update after the motion (its F/T offset
            # checked: the online boxes before it rest on the offset's stated box) or a checked one after it
            if st is not None and st.state == "done" and monitor.final_estimate is not None:
                break
            if progress and now - last_print >= 2.0:
                last_print = now
                print(progress_line(now - t_start, st, monitor.estimate), file=sys.stderr, flush=True)
        if recorder is not None:
            end_sensor_streams(monitor)
            finish_recording(monitor)
        est, truth = monitor.final_estimate, monitor.truth
        deadline = time.monotonic() + timeout_margin_s
        while truth is None and time.monotonic() < deadline:
            check_stop(stop)
            rclpy.spin_once(monitor, timeout_sec=0.1)
            truth = monitor.truth
        history = monitor.history()
        tracking = monitor.max_tracking_error()
        optimizer = monitor.optimizer_counts()
        if optimizer is not None:
            optimizer["code"] = code
    except Interrupted as exc:
        interrupted = exc
    finally:
        if recorder is not None:
            recording = recorder.stop(settle_topics=(robot.sensing.joint_states_topic, bags.ROWS))
        monitor.destroy_node()
        rclpy.try_shutdown()
        if nodes is not None:
            stopped = nodes.stop()
        stop.restore()
    unclean = "; ".join(f"node {n} " + ("had to be killed" if code is None else f"exited with code {code}")
                        for n, code in stopped.items() if code != 0)
    if unclean and interrupted is not None:
        raise RuntimeError(f"stopped by {interrupted}, but not cleanly: {unclean}; see the logs in {log_dir}")
    if interrupted is not None:
        raise interrupted
    if unclean:
        print(f"warning: {unclean} when stopped at the end; see the logs in {log_dir}", file=sys.stderr, flush=True)
    truth_v = np.asarray(truth.estimate)
    x, lo, hi = np.asarray(est.estimate), np.asarray(est.lower), np.asarray(est.upper)
    scored = scored_rows(robot, method, monitor.rows, truth_v, int(est.samples_used), lo, hi)
    result = {
        # the profile asked for; the calibrated copy the nodes ran with, when the demo made one (its
        # folder is the logs': gone with them once the run passed)
        "robot": requested, "calibrated_profile": profile if profile != requested else None,
        "payload": payload, "method": est.method,
        "parameter_names": list(est.parameter_names), "frame": est.header.frame_id,
        "truth": truth_v, "estimate": x, "lower": lo, "upper": hi,
        "samples": int(est.samples_used),
        "physically_consistent": bool(est.physically_consistent),
        "bounds_guaranteed": bool(est.bounds_guaranteed),
        "data_consistent": bool(est.data_consistent),
        "offset_checked": bool(est.offset_checked),
        "truth_inside_bounds": bool(np.all((truth_v >= lo) & (truth_v <= hi))),
        "apply": apply_verdict(ApplyLimits.from_robot(robot), x, lo, hi, est.bounds_guaranteed, est.data_consistent,
                               scored.gate_support, est.offset_checked),
        **scored.report,
        "mass_error_pct": float(abs(x[0] - truth_v[0]) / truth_v[0] * 100),
        "com_error_mm": com_error_m(truth_v, x) * 1000,
        "motion_s": float(duration_s),
        "excitation_complete": st.message.startswith("done after"),
        "planner_message": st.message,
        # the largest tracking errors and share of the certified tube (1: on its edge), from the planner
        "max_tracking_error": tracking,
        # the planner's optimised plans and how many converged within their time (replan_s less
        # certification), and which code its optimiser evaluated at the start
        "optimizer": optimizer,
        "history": history,
        "wall_time_s": time.monotonic() - t_start,
        "log_dir": log_dir,
        **({"bag": record, "recording": recording.describe(), "recording_missed": recording.missed}
           if record else {}),
    }
    if temporary and not unclean and passed(result):
        shutil.rmtree(log_dir, ignore_errors=True)
        result["log_dir"] = result["calibrated_profile"] = None
    return result


class Scored(NamedTuple):
    """:func:`scored_rows`: the report's entries, and the ``~/apply`` gate's support from the rows
    folded in again (None: they do not add up to the estimator's, or its method has no final LP)."""
    report: dict
    gate_support: Support | None


def scored_rows(robot, method: str, messages, truth, samples_used: int, lower, upper) -> Scored:
    """The run's mass width against the sound floor of its rows (``messages``: the RegressorSample
    messages the monitor received beside the estimator, reliably and all kept).

    The estimator's input is the leading messages that add up to its ``samples_used``; folded in
    again offline (:class:`~..core.offline.RowIntake`, the node's checks and method), the floor is
    that of the rows the estimator kept (:func:`~..core.estimators.run_floor.run_floor_kg`; the
    simulated F/T sensor has no offset). The live box comes from the estimator's last bounds update,
    which may precede its last rows (the arm holding after the motion): the floor is then over a few
    more rows than the box, which can only raise the ratio.
    ``floor_with_one_bound_halved_kg``: the floor again with one stated bound halved at a time, which
    says which bound sets it.
    The floor is the error-free realization's: the recorded errors can cut a box below it (ratios down
    to 0.78 seen). On wrench rows, whose truth is known whole here (the payload, no offset),
    ``recorded_floor_kg`` is the floor of the rows as recorded: no sound box on them is narrower, so
    ``width_over_recorded_floor`` below 1 would be a box that is wrong for the errors these rows had.
    ``floor_rows`` says which rows were scored; the floor is None when the messages received do not
    add up to the estimator's samples (a reader that missed some) or the method keeps no rows for it."""
    intake = offline.RowIntake(robot, method, support_directions=ApplyLimits.from_robot(robot).gate_directions())
    rows = list(bags.rows_of((0, m) for m in messages))
    total = np.cumsum([m.samples for m in rows], dtype=int)
    rows = rows[:int(np.searchsorted(total, samples_used, side="right"))]
    for m in rows:
        intake.add(m)
    replayed = intake.finish()
    match = replayed.samples_used == samples_used
    floor = run_floor_kg(robot, intake.estimator, rows, truth, np.zeros(6)) if match else None
    halved = run_floors_with_one_bound_halved(robot, intake.estimator, rows, truth, np.zeros(6)) if floor else {}
    recorded = wrench_floor_kg(robot, rows, truth, np.zeros(6), recorded=True) if floor else None
    width = float(upper[0] - lower[0])
    return Scored({"sound_mass_width_floor_kg": floor, "width_over_floor": width / floor if floor else None,
            "floor_with_one_bound_halved_kg": halved, "recorded_floor_kg": recorded,
            "width_over_recorded_floor": width / recorded if recorded else None,
            "floor_rows": {"messages": len(rows), "samples": replayed.samples_used,
                           "samples_received": int(total[-1]) if total.size else 0, "rows_match": match,
                           "mass_width_kg": float(replayed.upper[0] - replayed.lower[0]),
                           "box_difference": offline.bounds_difference(replayed.lower, replayed.upper, lower, upper)}},
                  replayed.final_support if match else None)


def recorded_topics(robot) -> dict:
    """The suite's topics, with the QoS the simulated arm offers on its reliable sensor streams."""
    topics = bags.suite_topics(robot)
    sensing = robot.sensing
    for topic in (sensing.joint_states_topic, sensing.wrench_topic if sensing.wrench else None):
        if topic is not None:
            topics[topic] = (topics[topic][0], bags.qos(reliable=True, depth=RELIABLE_SENSOR_DEPTH))
    return topics


def consumers_of_sensor_streams(robot, recording: bool) -> dict:
    """Subscriptions the simulated arm's streams get in a demo: /joint_states by the builder, the
    planner and the recorder; the wrench (profiles with wrench rows) by the builder and the recorder."""
    counts = {"joint_state": 2 + recording}
    if robot.sensing.wrench:
        counts["wrench"] = 1 + recording
    return counts


def check_nodes(nodes, stop, log_dir: str) -> None:
    """:class:`Interrupted` once a signal came, or once a node finished cleanly (something stopped it: a
    Ctrl-C at a terminal reaches the whole process group, and a node can be quicker than this process
    at taking it); RuntimeError once a node exited otherwise."""
    check_stop(stop)
    dead = nodes.dead()
    if dead and all(nodes.procs[n].returncode == 0 for n in dead):
        raise Interrupted(f"{', '.join(dead)} finishing")
    if dead:
        raise RuntimeError(f"node(s) {', '.join(dead)} exited; see the logs in {log_dir}")


def wait_for_graph(node, nodes, topic: str, subscribers: int, deadline: float, log_dir: str, stop=None) -> None:
    """Spin ``node`` until ``topic`` has a publisher and ``subscribers`` subscriptions in the graph."""
    while not (node.count_publishers(topic) >= 1 and node.count_subscribers(topic) >= subscribers):
        check_nodes(nodes, stop, log_dir)
        if time.monotonic() > deadline:
            raise RuntimeError(f"{topic} has {node.count_publishers(topic)} publisher(s) and "
                               f"{node.count_subscribers(topic)} subscription(s), not yet 1 and {subscribers}: "
                               f"the nodes did not come up in time; see the logs in {log_dir}")
        rclpy.spin_once(node, timeout_sec=0.1)


def wait_for_compiled_planner(node, wait_s: float, stop=None, progress: bool = True) -> str | None:
    """Wait until the planner's optimiser no longer compiles (``optimizer.code`` on its /diagnostics)
    and return what serves. Plans made while it compiles are certified as any other, but optimised
    about twice as slowly, and fewer converge in their time: a first demo on a machine would show a
    wider box than the next. After ``wait_s``, the demo goes on and says so."""
    deadline = time.monotonic() + wait_s
    announced = False
    while time.monotonic() < deadline:
        check_stop(stop)
        code = node.optimizer_code
        if code is not None and code != STATUS_COMPILING:
            return code
        if code == STATUS_COMPILING and progress and not announced:
            announced = True
            print("planner: compiling its optimiser's functions for this robot (once per machine and settings)",
                  file=sys.stderr, flush=True)
        rclpy.spin_once(node, timeout_sec=0.1)
    print(f"warning: the planner's optimiser was still compiling after {wait_s:.0f} s; its first plans "
          "are optimised more slowly", file=sys.stderr, flush=True)
    return node.optimizer_code


def start_planner(node, deadline: float, stop=None) -> None:
    """Call the planner's ``~/start`` once it answers and has joint states (nothing moves before)."""
    client = node.create_client(Trigger, "/excitation_planner/start")
    try:
        while time.monotonic() < deadline:
            check_stop(stop)
            if not client.wait_for_service(timeout_sec=0.5):
                continue
            future = client.call_async(Trigger.Request())
            rclpy.spin_until_future_complete(node, future, timeout_sec=5.0)
            response = future.result()
            if response is not None and response.success:
                return
            if response is not None and "joint states" not in response.message:
                raise RuntimeError(f"planner refused to start: {response.message}")
            time.sleep(0.2)
        raise RuntimeError("the planner's ~/start service did not accept a start in time")
    finally:
        node.destroy_client(client)


def end_sensor_streams(node) -> None:
    """Have the simulated arm stop publishing once its reliable subscribers (builder, recorder) have
    every sample it sent: the recording then ends where the nodes' input ends."""
    client = node.create_client(Trigger, "/sim_robot/end_streams")
    try:
        response = None
        if client.wait_for_service(timeout_sec=10.0):
            future = client.call_async(Trigger.Request())
            rclpy.spin_until_future_complete(node, future, timeout_sec=END_ACK_TIMEOUT_S + 10.0)
            response = future.result()
        if response is None or not response.success:
            print(f"warning: the recording may lack the last sensor samples "
                  f"({response.message if response else 'the simulated arm did not answer'})",
                  file=sys.stderr, flush=True)
    finally:
        node.destroy_client(client)


def progress_line(t: float, status, est) -> str:
    state = status.state if status is not None else "starting"
    if est is None:
        return f"[{t:6.1f} s] planner: {state:10s} waiting for the first estimate"
    return (f"[{t:6.1f} s] planner: {state:10s} samples {est.samples_used:7d}  mass {est.estimate[0]:.3f} kg "
            f"in [{est.lower[0]:.3f}, {est.upper[0]:.3f}]")


def print_table(r: dict) -> None:
    print(f"\npayload '{r['payload']}' on {r['robot']} ({r['method']}, frame {r['frame']}, "
          f"{r['samples']} samples, {r['wall_time_s']:.1f} s wall)")
    print(f"{'parameter':>10s} {'truth':>11s} {'estimate':>11s} {'lower':>11s} {'upper':>11s}  inside")
    for name, t, x, lo, hi in zip(r["parameter_names"], r["truth"], r["estimate"], r["lower"], r["upper"]):
        print(f"{name.split('.')[-1]:>10s} {t:11.5f} {x:11.5f} {lo:11.5f} {hi:11.5f}  {'yes' if lo <= t <= hi else 'NO'}")
    print(f"mass error {r['mass_error_pct']:.3f} %, COM error {r['com_error_mm']:.2f} mm, "
          f"physically consistent: {r['physically_consistent']}, bounds guaranteed: {r['bounds_guaranteed']}, "
          f"truth inside bounds: {r['truth_inside_bounds']}")
    floor = r["sound_mass_width_floor_kg"]
    width = r["upper"][0] - r["lower"][0]
    if floor:
        print(f"mass width {width:.3f} kg, {r['width_over_floor']:.2f}x the sound floor of the run's rows "
              f"({floor:.3f} kg: what the stated bounds allow at best)")
        if r["recorded_floor_kg"]:
            print(f"{r['width_over_recorded_floor']:.2f}x the floor of the rows as recorded "
                  f"({r['recorded_floor_kg']:.3f} kg: no sound box on them is narrower)")
        halved = {k: v for k, v in r["floor_with_one_bound_halved_kg"].items() if v is not None}
        if halved:
            print("that floor with one stated bound halved: " + ", ".join(f"{k} {v:.3f} kg" for k, v in halved.items()))
    else:
        rows = r["floor_rows"]
        print(f"mass width {width:.3f} kg; no sound floor: " +
              ("the method keeps no rows for one" if rows["rows_match"] else
               f"the {rows['messages']} rows messages received beside the estimator are not its input "
               f"({rows['samples']} samples against {r['samples']})"))
    a = r["apply"]
    print(f"~/apply would {'accept the box' if a['accepted'] else 'refuse: ' + a['refusal']}")
    e = r["max_tracking_error"]
    if e is not None:
        print(f"largest tracking error {e['position_error_rad']:.4f} rad, {e['velocity_error_rad_s']:.4f} rad/s, "
              f"{e['acceleration_error_rad_s2']:.3f} rad/s^2: {100 * e['tube_share']:.0f} % of the certified tube")
    o = r["optimizer"]
    if o is not None and o["plans"]:
        print(f"the planner's optimiser converged in {o['converged']} of {o['plans']} plans within their time "
              f"({o['code']} code)")
