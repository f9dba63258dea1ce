"""excitation_planner: the certified receding-horizon excitation planner of provably-safe online
identification as a thin node over :class:`~inertial_id.core.planning.receding.RecedingHorizon`.

- Nothing moves until ``~/start`` (std_srvs/Trigger); ``~/stop`` brakes on a certified plan.
- Plans are optimised and certified in a worker process; a plan is published only with a certificate
  (for every payload in the box of the newest estimate whose bounds are guaranteed and data
  consistent, robot parameters in their box, states in the tracking tube).
- Commands go out on the controller topic, reliable and VOLATILE (a late joiner must not replay an
  old trajectory), as JointTrajectory points sampled from the Bezier timeline, stamped with the time
  they start; a command is stamped at or before the time it is sent, so a controller honouring the
  stamp continues without a step.
- Joint states older than ``planner.stale_after_s``, or any sample outside the certified tube
  (position, velocity, estimated acceleration) or the joint limits, brake on a certified braking plan
  from the current desired state; a new start is needed to move again. Every sample is checked (at
  the next 50 Hz tick), in every state after a start, holding still included.
- One clock: plans, tracking and staleness run on the node's ROS time (``use_sim_time`` follows
  /clock). A clock that stops advancing for ``clock_stall_s`` of wall time (a simulator that died
  or was stopped) is a fault too, seen by a timer on the steady clock.
- Plans are optimised in a process of their own (:mod:`inertial_id.core.planning.worker`): a plan
  holds the interpreter for most of its time, and in a thread it would starve the joint-state callback.
  Joint states have a callback group of their own, on two threads of
  :class:`~inertial_id.nodes.executor.QueueOnceExecutor` (rclpy's own multi-threaded executor left
  them waiting up to 1.7 s behind copies of queued callbacks).
- Estimates count only from the node named ``estimator_node``, and only while the graph, read anew
  for each estimate, shows it as the estimate topic's sole publisher and the only node of that name
  (messages carry no sender identity on Humble and Jazzy: :mod:`~inertial_id.nodes.compat`); any
  other estimate is dropped as ``estimate_from_other_node`` with the reason. A publisher that sends
  one estimate and leaves the graph before the planner takes it is not seen: only DDS-Security
  (SROS2 permissions on the topic) rules that out, as it rules out a node taking the estimator's name.
- ``excitation_status`` carries the state, the certificate's finite margins and clearance, the
  excitation cost and the condition number cond(W_e) of the last plan's excitation matrix.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

import time
from array import array
from collections import deque
from dataclasses import replace

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from inertial_id_msgs.msg import ExcitationStatus, InertialEstimate

from ..core.planning.anchor import RecentSamples
from ..core.planning.certifier import CertifierSettings
from ..core.planning.config import PlannerSettings
from ..core.planning.monitor import ERROR_NAMES
from ..core.planning.optimizer import cached_certify
from ..core.planning.receding import RecedingHorizon
from ..core.planning.states import MOVING, PlannerState
from ..core.planning.worker import PlanWorkerProcess
from ..core.robot.profile import ProfileError
from ..core.signals.stamps import stamp_s
from .compat import topic_publishers
from .common import RELIABLE_QOS, SENSOR_QOS, DropCounter, ManagedNode, declare, declare_robot, run_node, s_to_stamp
from .controller_client import INTERFACES, ActionCommands, TopicCommands, duration
from .inputs import JointStateParser, Rejected

# the pace of the ROS clock is measured over this much wall time; a plan's deadline grows by at most
# 1 / MIN_CLOCK_PACE on a slowed-down simulation
CLOCK_PACE_WINDOW_S = 2.0
MIN_CLOCK_PACE = 0.1
# commands start this far in the past (repeating what was already commanded), so a receiver whose
# clock lags ours (a simulator falling behind under load) never sees a step
BACKDATE_S = 2.0

# what a stop or a dead plan worker interrupts (a braking loop is already on its way to rest)
LOOP_RUNNING = frozenset({PlannerState.PLANNING, PlannerState.EXECUTING})


def estimate_sender_refusal(publishers, nodes, estimator_node: str) -> str:
    """Why an estimate just taken on a topic whose publishers are ``publishers`` ((node name, node
    namespace) each) cannot be attributed to the node named ``estimator_node`` ('' when it can),
    given the graph's ``nodes`` ((name, namespace) each). Only the topic's sole publisher being that
    node, and the only node of that name in its namespace, attributes it. Fail safe: while anyone
    else publishes the topic no estimate is taken, the estimator's included (which of them sent it
    cannot be told), and an estimate with no publisher in the graph (gone before the graph was read,
    or not announced yet) is refused too."""
    if not publishers:
        return "no publisher of estimates in the graph (gone, or not announced yet)"
    others = sorted({f"{ns.rstrip('/')}/{name}" for name, ns in publishers if name != estimator_node})
    if others:
        if all(name != estimator_node for name, _ in publishers):
            return f"published by {', '.join(others)}, not '{estimator_node}'"
        return f"'{estimator_node}' is not the only publisher of estimates: {', '.join(others)} too"
    if len(publishers) > 1:
        return f"{len(publishers)} publishers of estimates named '{estimator_node}'"
    ns = publishers[0][1]
    twins = sum(1 for name, namespace in nodes if name == estimator_node and namespace == ns)
    if twins > 1:
        return f"{twins} nodes named '{ns.rstrip('/')}/{estimator_node}'"
    return ""


class ExcitationPlannerNode(ManagedNode):
    """The planner as a managed node: set up on configure (the worker process started), a start is
    taken only while active, and deactivating brakes to rest on a certified plan (state
    ``braking``, then ``done``); after that only an activation and a new start move the arm."""

    def __init__(self):
        super().__init__("excitation_planner")

    def configure(self) -> None:
        self.ExcitationStatus = ExcitationStatus
        self.robot = declare_robot(self)
        self.budget = declare(self, "duration_s", 30.0, "time budget of the exciting motion after a start, s",
                              low=0.0, high=86400.0)
        self.point_hz = declare(self, "point_hz", 100.0, "points per second of the published trajectories",
                                 low=1.0, high=10000.0)
        topic = declare(self, "joint_states_topic", self.robot.spec.sensing.joint_states_topic,
                        "JointState topic")
        self.settings = PlannerSettings.from_profile(self.robot)
        cert = CertifierSettings.from_profile(self.robot)
        # this process certifies holds and braking plans; the worker process plans and certifies the rest
        wait = declare(self, "wait_for_estimate", True,
                       "after a start, move only once an estimate with guaranteed bounds and data consistent "
                       "with the payload box has arrived (taken at rest: a payload outside the box never moves); "
                       "false only for a bench without an estimator")
        self.rh = RecedingHorizon(self.robot, self.settings, cert, cached_certify(self.robot, cert), wait_for_estimate=wait)
        self.command_margin_s = declare(self, "command_margin_s", 0.03,
                                        "a command is sent only this long or more before it takes effect (time "
                                        "for transport to the controller), s; a later one is withheld and the "
                                        "arm brakes on what was sent", low=0.0, high=10.0)
        self.clock_stall_s = declare(self, "clock_stall_s", 2.0,
                                     "wall-clock seconds without the ROS clock advancing that count as a stopped "
                                     "clock (a fault; only possible with use_sim_time)", low=0.01, high=3600.0)
        self.submitted = None
        # on the steady clock, as the status below: a planner still compiling its optimiser says so
        # before the simulated arm's first /clock (the demo waits for it)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.drops = DropCounter(self, clock=steady)
        self.parser = JointStateParser(self.robot, need_effort=False, clock_s=self.now)
        interface = declare(self, "command_interface", "topic",
                            "how plans reach the controller: 'topic' (JointTrajectory on controller.topic) or "
                            "'action' (FollowJointTrajectory goals on controller.action, tolerances from the "
                            "certified tube; a rejected or aborted goal brakes)")
        controller = self.robot.spec.controller
        if interface not in INTERFACES:
            raise ProfileError(f"command_interface must be one of {', '.join(INTERFACES)}, not '{interface}'")
        if interface == "action":
            if not controller.action:
                raise ProfileError("command_interface 'action' needs controller.action in the robot profile")
            self.commands = ActionCommands(self, controller.action, self.robot.joint_names, self.rh.tube,
                                           declare(self, "goal_time_tolerance_s", 0.5,
                                                   "FollowJointTrajectory goal_time_tolerance, s", low=0.0, high=60.0), self.on_controller_fault)
        else:
            self.commands = TopicCommands(self, controller.topic)
        self.worker = PlanWorkerProcess(self.robot, self.settings, cert)     # once the configuration holds
        # 10 Hz: a reliable recorder that falls behind by more than a short queue's second (a loaded
        # machine) would lose status messages (CI: 3 in one demo recording); 500 is 50 s of them
        self.pub_status = self.create_publisher(ExcitationStatus, "excitation_status", RELIABLE_QOS)
        self.last_js = None          # (receipt, ROS time s; sample)
        # an arm that senses joint torque: the last window's measured torque anchors every
        # certificate of a run (core.planning.anchor), read on the joint-state thread, used at a start
        self.recent = RecentSamples(self.robot) if self.robot.sensing.joint_torque else None
        self.unchecked = deque(maxlen=10_000)     # samples not yet checked against the tube and limits
        # joint states in a group of their own: they keep arriving (and staleness stays meaningful)
        # while the main group certifies a braking plan or a hold; from here on, on the other thread
        # while this configure goes on (what they touch is made above)
        self.create_subscription(JointState, topic, self.on_joint_state, SENSOR_QOS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self.estimator_node = declare(self, "estimator_node", "estimator",
                                      "name of the node whose InertialEstimate messages the planner uses; an "
                                      "estimate is dropped (estimate_from_other_node) unless that node is the "
                                      "topic's only publisher in the graph")
        self.estimate_topic = self.create_subscription(InertialEstimate, "inertial_estimate", self.on_estimate,
                                                       RELIABLE_QOS).topic_name
        self.create_service(Trigger, "~/start", self.on_start)
        self.create_service(Trigger, "~/stop", self.on_stop)
        self.last_said = None
        self.clock_seen = (self.now(), time.monotonic())    # (ROS time, wall time it was last seen to advance)
        self.clock_samples: deque = deque()                 # (wall, ROS) times, the last ~2 s
        self.clock_pace = 1.0                               # ROS seconds per wall second (at most 1)
        self.create_timer(0.02, self.tick)
        # status and the clock watchdog on the steady clock: they go on when the ROS clock stops
        self.create_timer(0.1, self.publish_status, clock=steady)
        self.create_timer(0.1, self.watch_clock, clock=steady)

    def now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def joint_state_age(self) -> float | None:
        """ROS-time seconds since the last joint state was taken (None: never)."""
        return None if self.last_js is None else self.now() - self.last_js[0]

    # --- inputs ----------------------------------------------------------------------------------

    def on_joint_state(self, msg) -> None:
        try:
            s = self.parser.parse(msg)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.last_js = (self.now(), s)
        self.unchecked.append((s.t, s.q, s.qd))
        if self.recent is not None:
            self.recent.add(s.t, s.q, s.qd, self.parser.effort_of(msg))
        self.drops.ok()

    def estimate_sender(self) -> str:
        """Why the estimate just taken may not be the configured estimator's ('' when it can only be
        that). Only Kilted's message info names the sender (:mod:`.compat`), so on every distribution
        alike the graph decides, read anew for each estimate (they come at ~0.5 Hz; a publisher that
        appeared since the last one is seen): see :func:`estimate_sender_refusal`. Without
        DDS-Security anyone can take the estimator's name; SROS2 permissions are what make it binding
        (README)."""
        return estimate_sender_refusal(topic_publishers(self, self.estimate_topic),
                                       self.get_node_names_and_namespaces(), self.estimator_node)

    def on_estimate(self, msg) -> None:
        why = self.estimate_sender()
        if why:
            self.drops.drop("estimate_from_other_node", why)
            return
        if msg.header.frame_id != self.robot.payload_frame or len(msg.lower) != 10 or len(msg.upper) != 10:
            self.drops.drop("estimate_frame_or_size", f"frame '{msg.header.frame_id}', {len(msg.lower)} bounds")
            return
        self.drops.event("estimate_used")
        self.send(self.rh.on_estimate(self.now(), msg.lower, msg.upper, msg.bounds_guaranteed, msg.data_consistent,
                                      stamp_s(msg.data_stamp)))
        self.say()

    def on_start(self, request, response):
        if not self.active:
            response.success, response.message = False, "not active: activate the node first (ros2 lifecycle set)"
            return response
        if self.last_js is None or self.joint_state_age() > self.settings.stale_after_s:
            response.success, response.message = False, "no recent joint states: not starting"
            return response
        sample = self.last_js[1]
        if np.max(np.abs(sample.qd)) > 0.05:
            response.success, response.message = False, "the arm is moving: a start needs it at rest"
            return response
        response.success = self.rh.start(self.now(), sample.q, float(self.budget))
        response.message = self.rh.message
        self.anchor_hold()
        return response

    def anchor_hold(self) -> None:
        """A start waiting to certify holding still takes the last window of measured torques, once
        one is complete (:mod:`..core.planning.anchor`)."""
        if self.recent is None or not self.rh.awaits_anchor:
            return
        anchor = self.recent.anchor()
        if anchor is not None and self.rh.anchor_on(anchor):
            self.get_logger().info(f"certificates anchored on the torque measured at {anchor.time_s:.3f} s")

    def on_stop(self, request, response):
        self.send(self.rh.stop(self.now()))
        response.success, response.message = True, self.rh.message
        return response

    def deactivate(self) -> None:
        """Brake to rest on a certified plan (what ``~/stop`` does) when planning or moving; a motion
        already braking (a fault, whose ``failed`` must stand) goes on to rest as it is."""
        if self.rh.state in LOOP_RUNNING:
            self.send(self.rh.stop(self.now(), "deactivated"))
        self.say()

    # --- loop ------------------------------------------------------------------------------------

    def tick(self) -> None:
        rh = self.rh
        req = rh.request(self.now())
        if req is not None and self.submitted != req[0]:
            self.submitted = req[0]
            request_id, request = req
            # the deadline is in ROS seconds: on a simulation slowed down by a loaded machine, as
            # many wall seconds more as it runs slower (never fewer than real time gives)
            deadline_s = self.settings.deadline_s if request.deadline_s is None else request.deadline_s
            self.worker.submit(request_id, replace(request, deadline_s=deadline_s / self.clock_pace))
        done = self.worker.take()
        if not self.worker.alive() and rh.state in LOOP_RUNNING and not rh.faulted:
            self.send(rh.fault(self.now(), "the plan worker process exited"))
        if done is not None:
            self.send(rh.offer(self.now(), *done))
        age = self.joint_state_age()
        if age is None and rh.state in MOVING:
            age = np.inf
        measured = []             # every sample since the last tick (appended by the other thread)
        while self.unchecked:
            measured.append(self.unchecked.popleft())
        self.anchor_hold()
        self.send(rh.tick(self.now(), age, measured))
        self.say()

    def say(self) -> None:
        rh = self.rh
        if (rh.state, rh.message) != self.last_said:      # every change of state or reason, once
            self.last_said = (rh.state, rh.message)
            if rh.state in (PlannerState.FAILED, PlannerState.BRAKING):
                self.get_logger().error(f"{rh.state}: {rh.message}")
            else:
                self.get_logger().info(f"{rh.state}: {rh.message}")

    def watch_clock(self) -> None:
        """Fault when the ROS clock has stood still for ``clock_stall_s`` of wall time while moving;
        keep the pace of the ROS clock (ROS seconds per wall second, over the last ~2 s)."""
        now, wall = self.now(), time.monotonic()
        self.clock_samples.append((wall, now))
        while len(self.clock_samples) > 2 and wall - self.clock_samples[1][0] >= CLOCK_PACE_WINDOW_S:
            self.clock_samples.popleft()
        (wall_0, ros_0) = self.clock_samples[0]
        span = wall - wall_0
        if span >= 0.5 * CLOCK_PACE_WINDOW_S and now > ros_0:
            self.clock_pace = float(np.clip((now - ros_0) / span, MIN_CLOCK_PACE, 1.0))
        if now != self.clock_seen[0]:
            self.clock_seen = (now, wall)
            return
        stalled = wall - self.clock_seen[1]
        if stalled > self.clock_stall_s and self.rh.state in MOVING and not self.rh.faulted:
            self.send(self.rh.fault(now, f"clock stopped: no /clock for {stalled:.1f} s (simulator stalled?)"))
            self.say()

    def send(self, cmd) -> None:
        """Publish ``cmd`` if it reaches the controller ``command_margin_s`` before it takes effect;
        otherwise withhold it (the arm brakes on what was sent: certified, ending at rest). The
        message is built first and the time checked last, right before it goes out: building it
        takes long on a loaded machine, and a command checked before that could still leave late."""
        if cmd is None:
            return
        t_from = min(cmd.t_from, self.now() - BACKDATE_S)
        t, q, qd, qdd = self.rh.sample(t_from, cmd.t_to, float(self.point_hz))
        msg = JointTrajectory()
        s_to_stamp(t_from, msg.header.stamp)
        msg.joint_names = list(self.robot.joint_names)
        # array('d') rows: rclpy serialises them ~15x faster than lists (a braking command's latency)
        msg.points = [JointTrajectoryPoint(positions=array("d", a), velocities=array("d", b),
                                           accelerations=array("d", c), time_from_start=duration(tk))
                      for tk, a, b, c in zip(t.tolist(), q, qd, qdd)]
        slack = cmd.takes_effect - self.now()
        if slack < self.command_margin_s:
            self.drops.event(f"command_withheld_late.{cmd.kind}")
            self.get_logger().warning(f"withheld a {cmd.kind} command: it would take effect {slack * 1000:.0f} ms "
                                      f"after it is sent")
            self.rh.withdraw(cmd, f"it would take effect {slack * 1000:.0f} ms after it is sent, less than the "
                                  f"{self.command_margin_s * 1000:.0f} ms margin")
            self.say()
        else:
            self.commands.send(msg)
            self.get_logger().info(f"published {len(msg.points)} points ({cmd.kind}, {slack * 1000:.0f} ms before it "
                                   f"takes effect) from {t_from:.3f} s: {cmd.reason}")
        if cmd.kind == "brake":         # braking on the executing plan is out: now look for a shorter brake
            self.say()
            self.send(self.rh.shorter_brake(self.now()))

    def on_controller_fault(self, why: str) -> None:
        """The controller refused or aborted a trajectory: brake (once per motion) and say why."""
        self.drops.event("controller_fault")
        if self.rh.state in MOVING and not self.rh.faulted:
            self.send(self.rh.fault(self.now(), why))
        self.say()

    def release(self) -> None:
        if getattr(self, "worker", None) is not None:   # not when the configuration was refused before it started
            self.worker.close()
            self.worker = None

    def publish_status(self) -> None:
        rh = self.rh
        st = self.ExcitationStatus()
        st.header.stamp = self.get_clock().now().to_msg()
        st.state, st.trajectory_id, st.message = rh.state, rh.plans, rh.message
        result = rh.last_result
        cert = rh.segments[-1].certificate if rh.segments else rh.last_certificate
        if result is not None:
            st.solve_time = float(result.total_s)
            if result.certified:
                st.excitation_cost = float(result.cost)
        if cert is not None:
            st.min_joint_margin = float(cert.min_joint_margin_rad)
            st.min_velocity_margin = float(cert.min_velocity_margin_rad_s)
            st.min_torque_margin = float(cert.min_torque_margin_Nm)
            st.min_obstacle_clearance = float(cert.min_obstacle_clearance_m)
        st.certified = bool(cert is not None and cert.certified)
        if result is not None and result.certified:
            st.condition_number = float(result.condition_number)
        self.pub_status.publish(st)
        # how close the arm came to leaving the certified tube, on /diagnostics beside the counters
        values = self.drops.values
        for name, error in zip(ERROR_NAMES, rh.max_tracking_error):
            values[f"tracking.max_{name}"] = f"{error:.4g}"
        values["tracking.max_tube_share"] = f"{rh.max_tube_share:.3g}"
        code = self.worker.code() if self.worker is not None else None
        if code is not None:         # compiling, compiled, or why the slower code serves
            values["optimizer.code"] = code
        # whether each plan's optimiser converges in the time it has, live (bench planner and study
        # plan measure it offline)
        values["optimizer.plans"], values["optimizer.converged"] = str(rh.optimized), str(rh.converged)
        if result is not None and result.status:
            values["optimizer.last_iterations"] = str(result.iterations)
            values["optimizer.last_optimize_s"] = f"{result.optimize_s:.3g}"


def main(args=None) -> int:
    return run_node(ExcitationPlannerNode, args, threads=2)
