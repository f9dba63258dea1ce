"""What ``inertial-id bench builder`` measures (:mod:`.builder`): the regressor_builder node started as
a process and fed a JointState stream over DDS by this process, standing in for the driver; the
node's /diagnostics account for every sample."""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import pinocchio as pin
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from inertial_id_msgs.msg import RegressorSample
from sensor_msgs.msg import JointState

from ..core.data.topics import DIAGNOSTICS, ROWS, relative
from ..core.robot.model import load_robot
from ..nodes.common import RELIABLE_QOS, SENSOR_QOS, s_to_stamp
from ..nodes.launch import isolated_ros_env, start_node_set

# Drop reasons that are events, not samples: a restart after a gap (its sample is used) and the
# transport's own loss reports (those samples also show as stamp gaps, counted as missed).
EVENT_REASONS = ("dropped.gap", "dropped.lost_in_transport")
TAIL_SAMPLES = 5


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stream(robot, rate_hz: float):
    """One second of a smooth motion at ``rate_hz`` (repeated with shifted stamps): positions,
    velocities and the rigid-body torques of the nominal model."""
    t = np.arange(int(round(rate_hz))) / rate_hz
    w = 2.0 * np.pi * np.arange(1, robot.nv + 1)          # whole periods in one second
    home = np.asarray(robot.spec.sim.home, dtype=float)
    q = home + 0.2 * np.sin(np.outer(t, w))
    qd = 0.2 * np.cos(np.outer(t, w)) * w
    qdd = -0.2 * np.sin(np.outer(t, w)) * w ** 2
    data = robot.model.createData()
    tau = np.array([pin.rnea(robot.model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    return q, qd, tau


def stream_through_builder(profile: str, rate_hz: float, seconds: float, log_dir: str | None = None) -> dict:
    robot = load_robot(profile)
    if not robot.sensing.joint_torque:
        raise ValueError(f"profile '{profile}' has no joint torque sensing (no momentum rows)")
    env = isolated_ros_env()
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    window = int(round(robot.spec.identification.momentum_window_s * rate_hz))
    topic = robot.sensing.joint_states_topic
    log_dir = log_dir or tempfile.mkdtemp(prefix="inertial_id_bench_builder_")
    nodes = start_node_set(profile, env, log_dir, nodes=("regressor_builder",),
                           regressor_builder={"joint_states_hz": float(rate_hz), "momentum_window": window})
    # the node on one core (the claim), the driver stand-in (this process) on the others
    builder_core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(nodes.procs["regressor_builder"].pid, {builder_core})
    driver_cores = set(range(os.cpu_count() or 1)) - {builder_core}
    if driver_cores:
        os.sched_setaffinity(0, driver_cores)
    rclpy.init()
    node = rclpy.create_node("bench_builder_driver")
    counts, windows = {}, [0]

    def on_diag(msg):
        for s in msg.status:
            if s.name.endswith("regressor_builder"):
                counts.update({v.key: int(v.value) for v in s.values})

    node.create_subscription(DiagnosticArray, DIAGNOSTICS, on_diag, 50)
    node.create_subscription(RegressorSample, relative(ROWS),
                             lambda m: windows.__setitem__(0, windows[0] + (m.kind == "momentum")), RELIABLE_QOS)
    pub = node.create_publisher(JointState, topic, SENSOR_QOS)
    try:
        deadline = time.monotonic() + 60.0
        while pub.get_subscription_count() < 1 or "accepted" not in counts:
            if time.monotonic() > deadline or nodes.dead():
                raise RuntimeError(f"regressor_builder not up; see {log_dir}")
            rclpy.spin_once(node, timeout_sec=0.05)
        q, qd, tau = _stream(robot, rate_hz)
        msg = JointState(name=list(robot.joint_names))
        pid = nodes.procs["regressor_builder"].pid
        cpu0, t0, t_stamp0 = _cpu_seconds(pid), time.monotonic(), time.time()
        n = int(round(seconds * rate_hz))
        sent = 0
        while sent < n:
            due = min(n, int((time.monotonic() - t0) * rate_hz) + 1)
            for k in range(sent, due):
                i = k % q.shape[0]
                s_to_stamp(t_stamp0 + k / rate_hz, msg.header.stamp)
                msg.position, msg.velocity, msg.effort = q[i].tolist(), qd[i].tolist(), tau[i].tolist()
                pub.publish(msg)
            sent = due
            time.sleep(0.0005)
        wall = time.monotonic() - t0
        cpu = _cpu_seconds(pid) - cpu0
        # a few last samples, slowly, on the same clock: the node sees the end of the stream, so
        # that samples lost just before it show as a stamp gap too
        for k in range(sent, sent + TAIL_SAMPLES):
            time.sleep(0.05)
            s_to_stamp(t_stamp0 + k / rate_hz, msg.header.stamp)
            pub.publish(msg)
        sent += TAIL_SAMPLES

        def counted() -> int:
            per_sample = sum(v for k, v in counts.items() if k.startswith("dropped.") and k not in EVENT_REASONS)
            return counts.get("accepted", 0) + per_sample

        settle = time.monotonic() + 20.0
        last, stable_since = -1, time.monotonic()
        while time.monotonic() < settle:
            rclpy.spin_once(node, timeout_sec=0.1)
            if counted() != last:
                last, stable_since = counted(), time.monotonic()
            elif time.monotonic() - stable_since > 3.0:
                break
    finally:
        node.destroy_node()
        rclpy.shutdown()
        nodes.stop()
    accepted = counts.get("accepted", 0)
    return {"robot": profile, "rate_hz": rate_hz, "seconds": seconds, "window": window,
            "publish_wall_s": wall, "sent": sent, "accepted": accepted, "accepted_fraction": accepted / sent,
            "missed_samples": counts.get("dropped.missed_samples", 0),
            "drops": {k: v for k, v in counts.items() if k.startswith("dropped.")},
            "unaccounted": sent - counted(), "momentum_windows": windows[0],
            "builder_cpu_fraction": cpu / wall, "builder_cpu_us_per_sample": 1e6 * cpu / sent,
            "builder_core": builder_core, "driver_cores": sorted(driver_cores)}
