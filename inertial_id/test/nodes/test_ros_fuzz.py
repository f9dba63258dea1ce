"""Fuzzing over DDS (issue 11): thousands of malformed JointState, WrenchStamped and RegressorSample
messages, mixed with valid ones, published to the real regressor_builder and estimator processes.

Asserted: no node dies; nothing non-finite is ever published; every message is accounted for on
/diagnostics (accepted + dropped (+ ignored) == received, where received is what the test sent
plus, for the estimator, what the builder published). The generator is seeded (numpy), so a
failure replays exactly.
"""
import os
import time

import numpy as np
import pytest
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState

from inertial_id.core.signals.stamps import stamp_s
from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.sim import Simulator
from inertial_id.nodes.common import RELIABLE_QOS, s_to_stamp
from inertial_id.nodes.launch import start_node_set
from ros_helpers import diagnostic_counts, spin_for, spin_until

pytestmark = pytest.mark.ros

N_PER_TYPE = int(os.environ.get("INERTIAL_ID_FUZZ_N", "5000"))
PUBLISH_HZ = 1500.0          # paced: the nodes' queues never overflow, so counts must match exactly
# Counters that are events, not messages: restarts after a stamp gap, samples missing from the
# stream (estimated from stamps), solver failures (asserted zero separately).
EVENTS = ("dropped.gap", "dropped.missed_samples", "dropped.solver_failed_bounds", "dropped.solver_failed_estimate",
          "dropped.solver_failed_on_rows")
SPECIAL = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e30, 1e6, -1e6, 5e-324, 0.0, -0.0, 1e-300]


class Fuzzer:
    """Seeded mutations of valid messages."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def value(self, scale: float):
        r = self.rng.random()
        if r < 0.5:
            return float(self.rng.choice(SPECIAL))
        return float(self.rng.normal() * scale * 10 ** self.rng.integers(0, 4))

    def array(self, good, scale: float):
        """A mutated copy of ``good``: other length, special values, or scaled entries."""
        x = list(map(float, good))
        kind = self.rng.integers(0, 5)
        if kind == 0 and x:
            x = x[:int(self.rng.integers(0, len(x)))]
        elif kind == 1:
            x = x + [self.value(scale) for _ in range(self.rng.integers(1, 4))]
        elif kind == 2 and x:
            for k in self.rng.choice(len(x), self.rng.integers(1, len(x) + 1), replace=False):
                x[k] = self.value(scale)
        elif kind == 3:
            x = [v * float(self.rng.choice([-1.0, 10.0, 1e3, 1e8])) for v in x]
        return x

    def stamp(self, stamp, t_ok: float):
        kind = self.rng.integers(0, 6)
        if kind == 0:
            stamp.sec, stamp.nanosec = int(self.rng.integers(-2**31, 2**31 - 1)), int(self.rng.integers(0, 2**32))
        elif kind == 1:
            s_to_stamp(t_ok + float(self.rng.choice([1e6, 10.0, 1.0, 0.3])), stamp)       # in the future
        elif kind == 2:
            stamp.nanosec = int(self.rng.choice([1_000_000_000, 2**32 - 1]))               # invalid nanosec
        elif kind == 3:
            s_to_stamp(t_ok - float(self.rng.choice([1e-9, 1e-4, 1.0, 1e3])), stamp)      # in the past
        else:
            s_to_stamp(t_ok, stamp)

    def names(self, good):
        names = list(good)
        if len(names) < 2:
            return names + ["joint_1"]
        kind = self.rng.integers(0, 5)
        if kind == 0:
            names[self.rng.integers(len(names))] = str(self.rng.choice(["", "x" * 300, "elbow_of_someone_else"]))
        elif kind == 1:
            names = names + ["finger_joint"]                                    # extra joint: ignored
        elif kind == 2:
            names[1] = names[0]                                                 # duplicate
        elif kind == 3:
            names = list(self.rng.permutation(names))
        elif kind == 4:
            names = names[:self.rng.integers(0, len(names))]
        return names

    def joint_state(self, good: JointState) -> JointState:
        msg = JointState()
        msg.header.stamp = good.header.stamp
        msg.name, msg.position, msg.velocity, msg.effort = list(good.name), list(good.position), \
            list(good.velocity), list(good.effort)
        t_ok = stamp_s(good.header.stamp)
        for _ in range(self.rng.integers(1, 3)):
            field = self.rng.integers(0, 5)
            if field == 0:
                msg.name = self.names(msg.name)
            elif field == 1:
                msg.position = self.array(msg.position, 1.0)
            elif field == 2:
                msg.velocity = self.array(msg.velocity, 1.0)
            elif field == 3:
                msg.effort = self.array(msg.effort, 10.0) if self.rng.random() < 0.8 else []
            else:
                self.stamp(msg.header.stamp, t_ok)
        return msg

    def wrench(self, good: WrenchStamped) -> WrenchStamped:
        msg = WrenchStamped()
        msg.header.stamp, msg.header.frame_id = good.header.stamp, good.header.frame_id
        f, n = msg.wrench.force, msg.wrench.torque
        w = [good.wrench.force.x, good.wrench.force.y, good.wrench.force.z,
             good.wrench.torque.x, good.wrench.torque.y, good.wrench.torque.z]
        kind = self.rng.integers(0, 4)
        if kind == 0:
            msg.header.frame_id = str(self.rng.choice(["", "world", "fuzz_frame"]))
        elif kind == 1:
            self.stamp(msg.header.stamp, stamp_s(good.header.stamp))
        else:
            w = (self.array(w, 10.0) + [0.0] * 6)[:6]
        f.x, f.y, f.z, n.x, n.y, n.z = w
        return msg

    def rows(self, names, t_ok: float, plausible: bool = False):
        """Malformed rows, or with ``plausible`` well-formed random ones (they exercise the solvers)."""
        from inertial_id_msgs.msg import RegressorSample
        rows = int(self.rng.integers(1, 12))
        cols = len(names)
        kind = str(self.rng.choice(["wrench", "joint_torque", "momentum", "", "wrench"]))
        A = self.rng.normal(size=rows * cols) * float(self.rng.choice([1.0, 10.0]))
        b = self.rng.normal(size=rows) * 5.0
        e = np.abs(self.rng.normal(size=rows)) + 0.1
        msg = RegressorSample(kind=kind, body="payload", parameter_names=list(names), rows=rows, samples=rows,
                              regressor=A.tolist(), measurement=b.tolist(), noise_bound=e.tolist(),
                              noise_sigma=(e / 3).tolist())
        msg.header.frame_id = "fuzz"
        s_to_stamp(t_ok, msg.header.stamp)
        for _ in range(0 if plausible else self.rng.integers(1, 3)):
            field = self.rng.integers(0, 7)
            if field == 0:
                msg.regressor = self.array(msg.regressor, 1.0)
            elif field == 1:
                msg.measurement = self.array(msg.measurement, 10.0)
            elif field == 2:
                msg.noise_bound = self.array(msg.noise_bound, 1.0)
            elif field == 3:
                msg.noise_sigma = self.array(msg.noise_sigma, 1.0)
            elif field == 4:
                msg.rows = int(self.rng.choice([0, rows + 1, 2**32 - 1]))
            elif field == 5:
                msg.parameter_names = self.names(msg.parameter_names)
            else:
                self.stamp(msg.header.stamp, t_ok)
        return msg


def _finite(*arrays) -> bool:
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in arrays)


def test_fuzzed_inputs_are_counted_and_survived(ros_env, tmp_path):
    import rclpy
    from inertial_id_msgs.msg import InertialEstimate, RegressorSample
    robot = robot_model.load_robot("xarm7")
    sensing = robot.sensing
    procs = start_node_set("xarm7", ros_env, str(tmp_path), nodes=("regressor_builder", "estimator"),
                           regressor_builder={"use_joint_torque": True, "use_wrench": True, "lossless_inputs": True},
                           estimator={"method": "lmi", "bounds_period_s": 0.5, "publish_period_s": 0.25,
                                      "state_file": "none"})
    node = rclpy.create_node("fuzz_test")
    fuzz = Fuzzer(seed=11)
    try:
        # reliable, keep all: the publisher waits for slow readers instead of discarding (flow control)
        lossless = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_ALL)
        pub_js = node.create_publisher(JointState, sensing.joint_states_topic, lossless)
        pub_w = node.create_publisher(WrenchStamped, sensing.wrench_topic, lossless)
        pub_rows = node.create_publisher(RegressorSample, "regressor_samples", lossless)
        diag, built, estimates = diagnostic_counts(node), [], []
        node.create_subscription(RegressorSample, "regressor_samples",
                                 lambda m: built.append(m) if m.header.frame_id != "fuzz" else None, lossless)
        node.create_subscription(InertialEstimate, "inertial_estimate", estimates.append, RELIABLE_QOS)
        assert spin_until(node, lambda: pub_js.get_subscription_count() >= 1 and pub_w.get_subscription_count() >= 1
                          and pub_rows.get_subscription_count() >= 2, 30.0), "nodes did not come up"

        sim = Simulator.from_profile(robot, robot_model.payload_params("dumbbell_5lb"), seed=3)
        # valid stamps trail the clock (only stamps ahead of it are refused)
        t0 = node.get_clock().now().nanoseconds * 1e-9 - 0.1
        names = list(robot.joint_names)
        sent = {"js": 0, "wrench": 0, "rows": 0}          # every message, valid ones included
        malformed = {"js": 0, "wrench": 0, "rows": 0}

        def valid_pair():
            for _ in range(2):
                sim.step()
            m = sim.measure()
            js = JointState(name=names, position=m.q.tolist(), velocity=m.qd.tolist(), effort=m.tau.tolist())
            s_to_stamp(t0 + m.t, js.header.stamp)
            w = WrenchStamped()
            w.header.stamp, w.header.frame_id = js.header.stamp, robot.wrench_frame_id
            f, n = w.wrench.force, w.wrench.torque
            f.x, f.y, f.z, n.x, n.y, n.z = (float(x) for x in m.wrench)
            return js, w

        def paced(k, start):
            ahead = start + k / PUBLISH_HZ - time.monotonic()
            if ahead > 0 or k % 50 == 0:
                spin_for(node, max(ahead, 0.0))

        def total(counts, skip=EVENTS):
            return counts.get("accepted", 0) + sum(v for key, v in counts.items()
                                                   if (key.startswith("dropped.") or key.startswith("ignored."))
                                                   and key not in skip)

        # warm-up until both subscriptions are matched on the nodes' side too (discovery is not
        # symmetric in time); then a baseline, once nothing is in flight
        def warm():
            for _ in range(5):
                js, w = valid_pair()
                pub_w.publish(w)
                pub_js.publish(js)
            pub_rows.publish(fuzz.rows(params.parameter_names("payload"), t0 + sim.t))
            spin_for(node, 0.1)
            return diag.get("regressor_builder", {}).get("accepted", 0) > 0 and total(diag.get("estimator", {})) > 0

        assert spin_until(node, warm, 30.0), f"no counts on /diagnostics: {diag}"
        spin_for(node, 2.5)
        base_b, base_e = total(diag["regressor_builder"]), total(diag["estimator"])
        base_built = len(built)

        # sensor streams: each malformed message is a mutation of the next valid one, sent before it
        start = time.monotonic()
        k = 0
        while malformed["js"] < N_PER_TYPE or malformed["wrench"] < N_PER_TYPE:
            js, w = valid_pair()
            for key, pub, msg in (("js", pub_js, fuzz.joint_state(js)), ("wrench", pub_w, fuzz.wrench(w))):
                if malformed[key] < N_PER_TYPE:
                    pub.publish(msg)
                    sent[key] += 1
                    malformed[key] += 1
            pub_w.publish(w)
            pub_js.publish(js)
            sent["js"] += 1
            sent["wrench"] += 1
            k += 4
            paced(k, start)
        # rows straight to the estimator
        start = time.monotonic()
        columns = params.parameter_names("payload")
        for k in range(N_PER_TYPE + N_PER_TYPE // 10):
            plausible = k % 11 == 10
            pub_rows.publish(fuzz.rows(columns, t0 + sim.t, plausible))
            sent["rows"] += 1
            malformed["rows"] += not plausible
            paced(k, start)
        # one more valid pair flushes joint samples still waiting for their wrench
        js, w = valid_pair()
        pub_w.publish(w)
        pub_js.publish(js)
        sent["js"] += 1
        sent["wrench"] += 1

        def accounted():
            b, e = diag.get("regressor_builder", {}), diag.get("estimator", {})
            return (total(b) - base_b == sent["js"] + sent["wrench"]
                    and total(e) - base_e == sent["rows"] + len(built) - base_built)

        # wait while the nodes work through their queues (a loaded machine may take a while)
        progress = [None, time.monotonic()]

        def settled():
            now = (total(diag.get("regressor_builder", {})), total(diag.get("estimator", {})))
            if now != progress[0]:
                progress[:] = [now, time.monotonic()]
            return accounted() or time.monotonic() - progress[1] > 15.0

        spin_until(node, settled, 180.0)
        ok = accounted()
        spin_for(node, 2.0)          # counts must stay put: nothing counted twice, late or extra
        b, e = diag.get("regressor_builder", {}), diag.get("estimator", {})
        report = (f"sent {sent} (malformed {malformed}), builder published {len(built)}; baselines {base_b}, {base_e}, {base_built}; "
                  f"builder {b}; estimator {e}; "
                  f"dead {procs.dead()}")
        assert procs.dead() == [], report
        assert all(v >= N_PER_TYPE for v in malformed.values()), report
        assert ok and accounted(), report
        assert b["accepted"] > 0.3 * N_PER_TYPE and e["accepted"] > 0, report      # valid data still flows
        assert sum(e.get(k, 0) for k in EVENTS[2:]) == 0, report
        assert e.get("dropped.absurd_measurement", 0) > 0 and e.get("dropped.non_finite", 0) > 0, report
        assert b.get("dropped.stamp_in_future", 0) > 0 and b.get("dropped.wrench_stamp_in_future", 0) > 0, report
        for m in built:
            assert _finite(m.regressor, m.measurement, m.noise_bound, m.noise_sigma, m.kinematics)
        assert estimates, report
        for m in estimates:
            assert _finite(m.estimate, m.lower, m.upper, m.covariance, [m.condition_number])
        # still working: a fresh estimate after all of it
        n_before = len(estimates)
        for _ in range(200):
            js, w = valid_pair()
            pub_w.publish(w)
            pub_js.publish(js)
            spin_for(node, 0.002)
        assert spin_until(node, lambda: len(estimates) > n_before, 10.0), report
    finally:
        node.destroy_node()
        procs.stop()
