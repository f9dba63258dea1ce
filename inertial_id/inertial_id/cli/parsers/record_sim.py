"""``inertial-id bag record-sim``: a rosbag2 of the simulated arm playing the profile's exciting
trajectory (no nodes, no DDS): every stream the robot's real driver publishes, as the profile's
``driver`` section states them (e.g. ros2_kortex: 1 kHz /joint_states, wrapped positions, a gripper
joint with NaN effort; xarm_ros2: /joint_states at the broadcaster's rate without effort,
/xarm/joint_states and the F/T wrench stamped alike), the commanded trajectory on the profile's
controller topic and the hidden payload's truth, stamped and logged in data time."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("record-sim", help="record a rosbag2 of the simulated arm (node-free)",
                       description=__doc__)
    p.add_argument("--robot", default="kinova_gen3", help="robot profile (name or YAML path)")
    p.add_argument("--payload", default=None, help="payload carried (default: the profile's sim payload)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of exciting motion")
    p.add_argument("--out", required=True, metavar="BAG", help="bag folder to create")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--seed", type=int, default=0, help="seed of the sensor noise")
    p.add_argument("--start-time", type=float, default=None,
                   help="stamp of the first sample, s since the epoch (default: now)")
    p.set_defaults(handler="record_sim.run")
