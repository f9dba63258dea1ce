"""``inertial-id bench builder``: the regressor_builder node (a process, as launched) fed a
driver-rate JointState stream over DDS — 4 kHz by default (a torque-sensing arm's driver rate), best effort (the node
subscribes best effort to any driver) — for ``--seconds``. Reports the samples accepted, how every
other sample is accounted for on the node's /diagnostics (missed: stamp gaps at the driver rate;
dropped, by reason), the momentum windows published, and the node's CPU use (one core = 1.0). The
node runs pinned to one core, the driver stand-in (this process) on the others."""
from __future__ import annotations

from ..cli.parsers import positive_float


def add_arguments(p) -> None:
    p.add_argument("--robot", default="kinova_gen3", help="robot profile with joint torque sensing")
    p.add_argument("--rate", type=positive_float, default=4000.0, help="JointState rate, Hz")
    p.add_argument("--seconds", type=positive_float, default=60.0, help="length of the stream")


def run(args) -> dict:
    # the benchmark's parser imports this module: `bench builder --help` and its usage errors work without ROS
    from .builder_stream import stream_through_builder      # optional: rclpy and the ROS messages it uses
    return stream_through_builder(args.robot, args.rate, args.seconds)
