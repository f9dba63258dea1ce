"""``inertial-id bag record-sim``: the simulated arm's driver streams, the commanded trajectory and the
payload's truth written into a bag, no nodes (the options: :mod:`.parsers.record_sim`)."""
from __future__ import annotations

import sys
import time

from ..core.data import bags
from ..core.robot import params
from ..core.robot.model import load_payloads, load_robot, payload_params
from ..core.robot.profile import ProfileError
from ..core.signals.driver_streams import DriverEmulator, JointStateOut
from ..core.sim import Simulator
from ..core.trajectory import excitation_from_profile
from . import UserError
from .progress import progress_bar


def record(robot, payload: str, duration_s: float, out, storage: str = "mcap",
           seed: int = 0, start_time_s: float | None = None, progress: bool = False) -> dict:
    """Simulate and write the bag; returns counts."""
    truth = payload_params(payload)
    sim = Simulator.from_profile(robot, truth, seed)
    step_hz = 1.0 / sim.dt
    driver = DriverEmulator(robot, step_hz)
    traj, report = excitation_from_profile(robot, duration_s)
    if not report.ok:
        raise UserError(f"the profile's excitation does not pass the limits: {report.message}")
    t0 = time.time() if start_time_s is None else float(start_time_s)
    controller = robot.spec.controller.topic
    suite = bags.suite_topics(robot)
    topics = {k: suite[k] for k in (bags.TRUTH, controller)}
    for topic, kind in driver.topics().items():
        topics[topic] = bags.TOPICS[bags.JOINT_STATES if kind == "joint_state" else bags.WRENCH]
    store = bags.typestore()
    ns = lambda t: int(round((t0 + t) * 1e9))  # noqa: E731
    with bags.BagWriter(out, storage, topics) as w:
        truth_msg = bags.message(store, "inertial_id_msgs/msg/InertialEstimate",
            header=bags.header(store, t0, robot.payload_frame), body="payload", method="truth",
            parameter_names=params.parameter_names("payload"), estimate=truth, lower=truth, upper=truth,
            covariance=truth[:0], physically_consistent=True, bounds_guaranteed=True, offset_checked=True,
            data_consistent=True, samples_used=0, condition_number=0.0)
        w.write(bags.TRUTH, ns(0.0), truth_msg)
        w.write(controller, ns(0.0), trajectory_msg(store, t0, robot.joint_names,
                                                    traj.resample(float(robot.spec.excitation.point_hz))))
        sim.command(traj)
        n_steps = int(round(duration_s * step_hz))
        with progress_bar(total=n_steps, desc="simulating", unit="step", enabled=progress) as bar:
            for _ in range(n_steps):
                sim.step()
                bar.update(1)
                if not driver.due(sim.t - sim.dt):     # measure() reads the state at the step's start
                    continue
                for o in driver.outputs(sim.measure()):
                    if isinstance(o, JointStateOut):
                        msg = bags.joint_state(store, t0 + o.t, o.names, o.position, o.velocity, o.effort)
                        msg.header.frame_id = o.frame_id
                    else:
                        msg = bags.wrench_stamped(store, t0 + o.t, o.frame_id, o.wrench)
                    w.write(o.topic, ns(o.t), msg)
        counts = dict(w.counts)
    return {"bag": str(out), "storage": storage, "robot": robot.name, "payload": payload,
            "driver": driver.model.name, "duration_s": duration_s, "messages": counts, "start_time_s": t0}


def trajectory_msg(store, t_s: float, joint_names, traj):
    T = store.types
    points = []
    for t, q, qd, qdd in zip(traj.t, traj.q, traj.qd, traj.qdd):
        sec = int(t)
        points.append(T["trajectory_msgs/msg/JointTrajectoryPoint"](
            positions=q, velocities=qd, accelerations=qdd, effort=q[:0],
            time_from_start=T["builtin_interfaces/msg/Duration"](sec=sec, nanosec=min(int((t - sec) * 1e9), 999_999_999))))
    return T["trajectory_msgs/msg/JointTrajectory"](header=bags.header(store, t_s), joint_names=list(joint_names),
                                                    points=points)


def run(args) -> int:
    if not 0 < args.duration <= 600:
        raise UserError("--duration must be in (0, 600] seconds")
    robot = load_robot(args.robot)
    payload = args.payload or robot.spec.payload.sim
    if payload not in load_payloads():
        raise UserError(f"unknown payload '{payload}' (available: {', '.join(load_payloads())})")
    try:
        r = record(robot, payload, args.duration, args.out, args.storage, args.seed, args.start_time, progress=True)
    except (bags.BagError, ProfileError) as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {args.out} ({args.storage}): " + ", ".join(f"{k} {v}" for k, v in r["messages"].items()),
          file=sys.stderr)
    return 0
