"""Simulated arm as a ROS 2 node: tracks JointTrajectory commands, publishes /joint_states and the
wrist WrenchStamped, and (latched) the hidden payload's true parameters for comparison."""
from __future__ import annotations

import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from inertial_id_msgs.msg import InertialEstimate

from ..core.signals.stamps import stamp_s
from ..core.robot import params
from ..core.robot.model import payload_params
from ..core.signals.driver_streams import DriverEmulator, JointStateOut
from ..core.sim import Simulator
from ..core.trajectory import SampledTrajectory
from ..defaults import SIM_ENGINES, SIM_FRICTION_COMPENSATION, SIM_JOINT_DAMPING_NMS_RAD, SIM_JOINT_FRICTION_NM
from ..sim.engine import MujocoSimulator
from .common import (LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS, DropCounter, ManagedNode, declare, declare_robot, run_node,
                     s_to_stamp)
from .robot_state import RobotStatePublisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Reliable sensor streams keep a few seconds at kHz rates: room for a slow reader to catch up
RELIABLE_SENSOR_DEPTH = 5000
RELIABLE_SENSOR_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                                 depth=RELIABLE_SENSOR_DEPTH, durability=DurabilityPolicy.VOLATILE)
END_ACK_TIMEOUT_S = 30.0     # longest ~/end_streams waits for reliable subscribers to take the last samples
# Most simulated time stepped in one timer callback: behind by more than this, the simulation does not
# race to catch up (a burst of old samples) but runs slower than real time, as a loaded simulator does.
MAX_STEP_AHEAD_S = 0.02


class SimRobotNode(ManagedNode):
    """The simulated arm, managed like a driver: set up on configure; the simulation runs only while
    active (the wall time spent inactive is given up, as when it falls behind)."""

    def __init__(self):
        super().__init__("sim_robot")

    def configure(self) -> None:
        self.robot = declare_robot(self)
        prof = self.robot.spec
        payload = declare(self, "payload", prof.payload.sim,
                          "payload the simulated arm carries (name in config/payloads.yaml)")
        self.rtf = declare(self, "real_time_factor", 1.0, "simulated seconds per wall-clock second (at most)",
                           low=1e-3, high=1e3)
        # /clock: the other nodes (use_sim_time) then run on the simulation's time, so a machine too
        # slow for real time slows the whole suite down instead of making the arm look dead
        self.pub_clock = self.create_publisher(ClockMsg, "/clock", 10) if declare(
            self, "publish_clock", False, "publish the simulated time on /clock (for nodes with use_sim_time)") \
            else None
        clock_hz = declare(self, "clock_hz", 200.0, "rate of /clock messages when publish_clock, Hz",
                           low=1.0, high=1e5)
        self.next_clock_s = 0.0
        self.clock_period_s = 1.0 / clock_hz
        seed = declare(self, "seed", 0, "seed of the sensor noise", low=0)
        # The simulator stands in for the robot's driver: same topics, rate and frame names.
        sensing = self.robot.sensing
        publish_hz = declare(self, "publish_hz", float(prof.sim.step_hz),
                             "rate at which the driver emulation is asked what is due, Hz: the step rate, so that "
                             "every stream of the profile's driver section publishes at its own rate and phase",
                             low=1e-3, high=1e6)
        extra = declare(self, "extra_joints", "", "comma-separated joints the driver also reports "
                        "(e.g. a gripper's), published at rest before the arm's joints")
        self.extra_joints = [j.strip() for j in extra.split(",") if j.strip()]
        step_hz = prof.sim.step_hz
        self.truth = payload_params(payload)
        engine = declare(self, "engine", SIM_ENGINES[0], "physics of the simulated arm: pinocchio (the estimator's own "
                         "model, exact) or mujoco (the profile's joint armature, damping and Coulomb friction, a "
                         "model the estimator does not share)", choices=SIM_ENGINES)
        friction = declare(self, "joint_friction_Nm", SIM_JOINT_FRICTION_NM, "Coulomb friction of every joint, "
                           "on the motor side of the joint torque sensor (engine mujoco), N m", low=0.0, high=1e3)
        damping = declare(self, "joint_damping_Nms_rad", SIM_JOINT_DAMPING_NMS_RAD, "viscous damping of every "
                          "joint, on the motor side (engine mujoco), N m s/rad", low=0.0, high=1e3)
        compensation = declare(self, "joint_friction_compensation", SIM_FRICTION_COMPENSATION, "share of that friction and damping the "
                               "joint servos compensate on the commanded velocity, as a drive calibrated on its own "
                               "friction does (engine mujoco; 0: none, and the wrist leaves the certified tube at "
                               "reversals)", low=0.0, high=1.0)
        if engine == "mujoco":
            self.sim = MujocoSimulator.as_simulated_robot(self.robot, self.truth, seed, friction, damping, compensation)
        else:
            self.sim = Simulator.from_profile(self.robot, self.truth, seed)
        self.steps_per_publish = max(1, int(round(step_hz / publish_hz)))
        self._driver = None              # the driver emulation, made on the first publication
        self.drops = DropCounter(self)
        self.jump_tolerance = (declare(self, "jump_tolerance_rad", 1e-3, "a command stepping the reference by more "
                                       "than this is counted (event.command_reference_jump), rad", low=0.0),
                               declare(self, "jump_tolerance_rad_s", 1e-2, "as jump_tolerance_rad, for velocity, rad/s", low=0.0))
        self.max_jump = np.zeros(2)
        sensor_qos = RELIABLE_SENSOR_QOS if declare(
            self, "reliable_sensor_streams", False,
            "publish joint states and wrench reliably (a driver publishes best effort), for subscribers that "
            "must not lose a sample (a recording compared with what the nodes consumed)") else SENSOR_QOS
        self.pub_js = self.create_publisher(JointState, declare(
            self, "joint_states_topic", sensing.joint_states_topic, "JointState topic"), sensor_qos)
        self.pub_wrench = None
        if self.robot.ft_frame_id is not None:
            self.pub_wrench = self.create_publisher(WrenchStamped, declare(
                self, "wrench_topic", sensing.wrench_topic, "topic of the wrist F/T sensor"), sensor_qos)
            self.wrench_frame_id = declare(self, "wrench_frame_id", self.robot.wrench_frame_id,
                                           "frame_id of the published wrench (the driver's name of the F/T frame)")
        truth_pub = self.create_publisher(InertialEstimate, "/sim/payload_truth", LATCHED_QOS)
        msg = InertialEstimate(body="payload", method="truth", parameter_names=params.parameter_names("payload"),
                               estimate=self.truth.tolist(), lower=self.truth.tolist(), upper=self.truth.tolist(),
                               physically_consistent=True, bounds_guaranteed=True, offset_checked=True,
                               data_consistent=True)
        msg.header.frame_id = self.robot.payload_frame
        truth_pub.publish(msg)
        self.robot_state = RobotStatePublisher(self, self.robot)   # /robot_description, /tf for RViz
        self.create_subscription(JointTrajectory, prof.controller.topic, self.on_trajectory, RELIABLE_QOS)
        # A real driver publishes from power-on, whoever listens. A run that compares a recording
        # with what its nodes consumed (demo --record) holds the simulation until every consumer
        # has matched, so that all of them see the same stream from its first sample.
        self.awaited = [(self.pub_js, declare(self, "wait_for_joint_state_subscribers", 0,
                                              "hold the simulation clock and publish nothing until the JointState "
                                              "publisher has this many matched subscriptions (0: start at once)",
                                              low=0, high=1000))]
        if self.pub_wrench is not None:
            self.awaited.append((self.pub_wrench, declare(
                self, "wait_for_wrench_subscribers", 0,
                "as wait_for_joint_state_subscribers, for the wrench publisher", low=0, high=1000)))
        self.started = self.ended = False
        self.create_service(Trigger, "~/end_streams", self.on_end_streams)
        if any(n > 0 for _, n in self.awaited):
            self.get_logger().info("holding the simulation until " + ", ".join(
                f"{pub.topic_name} has {n} subscriptions" for pub, n in self.awaited))
        else:
            self.start()
        # the simulation is paced by the wall clock: this node is the source of /clock, never its follower
        self.create_timer(0.01, self.advance, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"simulating {self.robot.name} on {engine} carrying '{payload}' "
                               f"({step_hz:.0f} Hz steps, publishing at {step_hz / self.steps_per_publish:.0f} Hz)")

    def on_trajectory(self, msg: JointTrajectory) -> None:
        if not self.started:
            self.drops.drop("trajectory_while_held", "the simulation waits for its subscribers")
            return
        names = list(msg.joint_names)
        if sorted(names) != sorted(self.robot.joint_names):
            self.drops.drop("trajectory_joint_names", f"got {names}")
            return
        if len(msg.points) < 2:
            if len(msg.points) == 1:     # a single point: hold it (stop / hold-position command)
                order = [names.index(j) for j in self.robot.joint_names]
                self.sim.hold(np.asarray(msg.points[0].positions)[order])
            return
        order = [names.index(j) for j in self.robot.joint_names]
        t = np.array([stamp_s(p.time_from_start) for p in msg.points])
        n = len(names)

        def column(field):
            rows = [getattr(p, field) for p in msg.points]
            if any(len(r) != n for r in rows):
                return np.zeros((t.size, n))
            return np.asarray(rows, float)[:, order]

        q = column("positions")
        if not (np.all(np.isfinite(q)) and np.all(np.diff(t) > 0)):
            self.drops.drop("trajectory_invalid", "non-finite positions or non-increasing times")
            return
        # a set header.stamp is when the trajectory starts (joint_trajectory_controller semantics): a
        # command stamped in the past continues exactly where the previous one was, whatever the latency
        stamp = stamp_s(msg.header.stamp)
        start = stamp - self.t0_stamp if stamp > 0 else None
        jump_q, jump_qd = self.sim.command(SampledTrajectory(t, q, column("velocities"), column("accelerations")),
                                           start_time=start)
        self.max_jump = np.maximum(self.max_jump, (jump_q, jump_qd))
        if jump_q > self.jump_tolerance[0] or jump_qd > self.jump_tolerance[1]:
            # what a late command does to a joint_trajectory_controller: the reference steps
            self.drops.event("command_reference_jump")
            self.get_logger().warning(f"a command made the reference step by {jump_q:.4f} rad, {jump_qd:.4f} rad/s "
                                      f"(it arrived after it took effect); largest so far {self.max_jump[0]:.4f} rad, "
                                      f"{self.max_jump[1]:.4f} rad/s")
        self.drops.ok()

    def start(self) -> None:
        """Simulated time 0 is now."""
        self.started = True
        self.t0_wall = time.monotonic()
        self.t0_stamp = Clock(clock_type=ClockType.SYSTEM_TIME).now().nanoseconds * 1e-9

    def on_end_streams(self, request, response):
        """Publish no more sensor samples (the end of a recorded run; /clock goes on, so that nodes on
        simulated time fold in what they hold); answer once every reliable subscriber has
        acknowledged the last sample, so that ending this process then loses none of them."""
        self.ended = True
        pubs = [self.pub_js] + ([self.pub_wrench] if self.pub_wrench is not None else [])
        response.success = all(pub.wait_for_all_acked(Duration(seconds=END_ACK_TIMEOUT_S)) for pub in pubs)
        response.message = ("sensor streams ended" if response.success else
                            f"sensor streams ended; not every sample acknowledged within {END_ACK_TIMEOUT_S} s")
        return response

    def advance(self) -> None:
        if not self.active:
            return
        if not self.started:
            if any(pub.get_subscription_count() < n for pub, n in self.awaited):
                return
            self.start()
            self.get_logger().info("subscribers matched, simulation started: " + ", ".join(
                f"{pub.topic_name} {pub.get_subscription_count()}" for pub, _ in self.awaited))
        target = (time.monotonic() - self.t0_wall) * self.rtf
        behind = target - self.sim.t - MAX_STEP_AHEAD_S
        if behind > 0:
            # the wall-clock time the simulation could not keep up with is given up, not caught up;
            # without /clock the stamps then jump like a driver's that missed cycles
            self.t0_wall += behind / self.rtf
            if self.pub_clock is None:
                self.t0_stamp += behind
            target -= behind
        while self.sim.t + 0.5 * self.sim.dt < target:
            self.sim.step()
            if int(round(self.sim.t / self.sim.dt)) % self.steps_per_publish == 0:
                self.publish_clock()
                if not self.ended:     # after ~/end_streams time goes on (nodes on /clock finish), the sensors are silent
                    self.publish(self.sim.measure())

    def publish_clock(self) -> None:
        """/clock up to the sample about to be published, so that no sample is ahead of the clock."""
        if self.pub_clock is None or self.sim.t + 1e-9 < self.next_clock_s:
            return
        self.next_clock_s = self.sim.t + self.clock_period_s
        msg = ClockMsg()
        s_to_stamp(self.t0_stamp + self.sim.t, msg.clock)
        self.pub_clock.publish(msg)

    def publish(self, m) -> None:
        """What the robot's driver publishes at the measurement ``m`` (the profile's driver section,
        :class:`~inertial_id.core.signals.driver_streams.DriverEmulator`): the stream the pipeline reads goes
        to the ``joint_states_topic`` publisher, the wrench to ``wrench_topic`` (both remappable), the
        driver's other streams to their own topics."""
        if self._driver is None:
            self._driver = DriverEmulator(self.robot, self.robot.spec.sim.step_hz, self.extra_joints)
            self._driver_pubs = {self.robot.sensing.joint_states_topic: self.pub_js}
            for s in self._driver.model.joint_states:
                if s.topic not in self._driver_pubs:
                    self._driver_pubs[s.topic] = self.create_publisher(JointState, s.topic, self.pub_js.qos_profile)
        self.robot_state.update(self.t0_stamp + m.t, m.q)
        for o in self._driver.outputs(m):
            if isinstance(o, JointStateOut):
                js = JointState()
                s_to_stamp(self.t0_stamp + o.t, js.header.stamp)
                js.header.frame_id = o.frame_id
                js.name, js.position, js.velocity, js.effort = (
                    o.names, o.position.tolist(), o.velocity.tolist(), o.effort.tolist())
                self._driver_pubs[o.topic].publish(js)
            elif self.pub_wrench is not None:
                w = WrenchStamped()
                s_to_stamp(self.t0_stamp + o.t, w.header.stamp)
                w.header.frame_id = self.wrench_frame_id
                (w.wrench.force.x, w.wrench.force.y, w.wrench.force.z,
                 w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z) = o.wrench.tolist()
                self.pub_wrench.publish(w)


def main(args=None) -> int:
    return run_node(SimRobotNode, args)
