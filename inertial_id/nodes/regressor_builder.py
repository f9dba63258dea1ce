"""regressor_builder: synchronizes /joint_states (and the wrist wrench), differentiates velocity,
and publishes rows of the payload measurement model as RegressorSample messages: joint-torque and
wrench rows per sample, and (``momentum_window`` > 0, joint torque sensing) momentum windows of
seed 003 with the payload columns followed by the robot's own columns."""
from __future__ import annotations

from collections import deque

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ..core import params
from ..core.momentum import MomentumWindows, robot_parameter_names
from ..core.row_builder import RowBuilder
from .common import RELIABLE_QOS, SENSOR_QOS, DropCounter, declare, declare_robot, run_node, s_to_stamp
from .inputs import JointStateParser, Rejected, parse_wrench


class RegressorBuilderNode(Node):
    def __init__(self):
        super().__init__("regressor_builder")
        from inertial_id.msg import RegressorSample
        self.RegressorSample = RegressorSample
        self.robot = declare_robot(self)
        sensing = self.robot.profile.get("sensing", {})
        use_tau = declare(self, "use_joint_torque", bool(sensing.get("joint_torque", False)),
                          "build joint-torque rows from JointState.effort")
        use_wrench = declare(self, "use_wrench", bool(sensing.get("wrench", False)),
                             "build wrench rows from the wrist F/T sensor")
        self.batch = declare(self, "batch_samples", 20, "samples per published RegressorSample message")
        self.sync_tol = declare(self, "sync_tolerance_s", 0.0005, "max stamp difference joint state <-> wrench")
        self.max_gap = declare(self, "max_gap_s", 0.05, "a larger gap between samples restarts differentiation")
        cutoff = declare(self, "cutoff_hz", 0.0, "causal low-pass on all signals before differencing (0: off)")
        rate = float(self.robot.profile.get("sim", {}).get("publish_hz", 500.0))
        self.rows = RowBuilder(self.robot, use_tau, use_wrench, rate, cutoff or None)
        ident = self.robot.profile.get("identification", {})
        self.momentum_window = declare(self, "momentum_window", int(ident.get("momentum_window", 0)),
                                       "samples per momentum window (0: no momentum rows)")
        if self.momentum_window and not use_tau:
            raise ValueError("momentum rows need joint torque sensing (use_joint_torque)")
        self.windows = self._new_windows()
        self.parser = JointStateParser(self.robot, need_effort=use_tau)
        self.names = params.parameter_names("payload")
        self.momentum_names = self.names + robot_parameter_names(self.robot.model)
        self.drops = DropCounter(self)
        self.wrenches: deque = deque(maxlen=400)
        self.joint_samples: deque = deque(maxlen=100)
        self.pending: dict[str, list] = {}
        self.pub = self.create_publisher(RegressorSample, "regressor_samples", RELIABLE_QOS)
        self.create_subscription(JointState, "/joint_states", self.on_joint_state, SENSOR_QOS)
        if use_wrench:
            self.create_subscription(WrenchStamped, declare(self, "wrench_topic", "/wrench", "wrist F/T topic"),
                                     self.on_wrench, SENSOR_QOS)
        self.last_t = None

    def on_wrench(self, msg: WrenchStamped) -> None:
        try:
            self.wrenches.append(parse_wrench(msg, self.robot.ft_frame))
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.drain()

    def on_joint_state(self, msg: JointState) -> None:
        try:
            self.joint_samples.append(self.parser.parse(msg))
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        self.drain()

    def drain(self) -> None:
        """Process queued joint samples in order; with wrench rows, each waits for its wrench (the
        two topics arrive in any order) until the wrench stream has passed its stamp."""
        while self.joint_samples:
            s = self.joint_samples[0]
            wrench = None
            if self.rows.use_wrench:
                best = min(self.wrenches, key=lambda tw: abs(tw[0] - s.t), default=None)
                if best is None or abs(best[0] - s.t) > self.sync_tol:
                    newest = self.wrenches[-1][0] if self.wrenches else -np.inf
                    if newest <= s.t + self.sync_tol and len(self.joint_samples) < self.joint_samples.maxlen:
                        return   # its wrench may still come
                    self.joint_samples.popleft()
                    self.drops.drop("no_matching_wrench", f"no wrench within {self.sync_tol} s of {s.t:.4f} s")
                    continue
                wrench = best[1]
            self.joint_samples.popleft()
            self.process(s, wrench)

    def process(self, s, wrench) -> None:
        if self.last_t is not None and s.t - self.last_t > self.max_gap:
            self.drops.drop("gap", f"{s.t - self.last_t:.3f} s without samples: restarting differentiation")
            self.rows.reset()
            self.windows = self._new_windows()
        self.last_t = s.t
        tau = s.tau if s.tau is not None else np.zeros(self.robot.nv)
        for rows in self.rows.push(s.t, s.q, s.qd, tau, wrench):
            self.pending.setdefault(rows.kind, []).append(rows)
        self.drops.ok()
        for kind, batch in list(self.pending.items()):
            if len(batch) >= self.batch:
                self.publish(kind, batch)
                self.pending[kind] = []
        if self.windows is not None:
            self.windows.add_sample(s.t, s.q, s.qd, s.tau)
            w = self.windows.take_rows()
            if w.rows:
                self.publish_momentum(s.t, w)

    def _new_windows(self):
        if not self.momentum_window:
            return None
        noise = self.rows.noise
        return MomentumWindows(self.robot, self.momentum_window, noise.torque_relative,
                               noise.torque_absolute_Nm, self.rows.model_error_Nm)

    def publish_momentum(self, t: float, w) -> None:
        msg = self.RegressorSample(kind="momentum", body="payload", parameter_names=self.momentum_names,
                                   rows=w.rows, samples=w.samples)
        s_to_stamp(t, msg.header.stamp)
        msg.header.frame_id = self.robot.payload_frame
        msg.regressor = np.hstack([w.Y, w.Y_r]).ravel().tolist()
        msg.measurement = w.U.tolist()
        msg.noise_bound = w.noise_bound.tolist()
        msg.noise_sigma = (w.noise_bound / np.sqrt(3.0)).tolist()
        self.pub.publish(msg)

    def publish(self, kind: str, batch) -> None:
        msg = self.RegressorSample()
        s_to_stamp(batch[-1].t, msg.header.stamp)
        msg.header.frame_id = self.robot.ft_frame if kind == "wrench" else self.robot.payload_frame
        msg.kind = kind
        msg.body = "payload"
        msg.parameter_names = self.names
        A = np.vstack([r.A for r in batch])
        msg.rows = A.shape[0]
        msg.samples = len(batch)
        msg.regressor = A.ravel().tolist()
        msg.measurement = np.concatenate([r.b for r in batch]).tolist()
        msg.noise_bound = np.concatenate([r.noise_bound for r in batch]).tolist()
        msg.noise_sigma = np.concatenate([r.noise_sigma for r in batch]).tolist()
        if kind == "wrench":
            msg.kinematics = np.concatenate([r.kinematics for r in batch]).tolist()
        self.pub.publish(msg)


def main(args=None) -> int:
    return run_node(RegressorBuilderNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
