"""``inertial-id bag replay BAG``: publish a rosbag2 onto live topics with /clock, so nodes started with
``use_sim_time:=true`` (``ros2 launch inertial_id <robot>.launch.py`` plus ``use_sim_time``, or
the nodes of ``demo``) run on the recorded data; RViz shows it as it would live. By default only
the sensor streams (JointState, WrenchStamped) and the simulator's truth are published: never the
recorded trajectory commands, nor the outputs the running nodes publish again."""
from __future__ import annotations

from . import non_negative_float, positive_float, str_list


def register(sub) -> None:
    p = sub.add_parser("replay", help="publish a rosbag2 onto live topics (simulated time)", description=__doc__)
    p.add_argument("bag", metavar="BAG", help="rosbag2 folder (MCAP or sqlite3)")
    p.add_argument("--rate", type=positive_float, default=1.0, help="playback speed (1 = as recorded)")
    p.add_argument("--topics", type=str_list, default=None, metavar="T1,T2",
                   help="topics to publish (default: the sensor streams and the simulator's truth)")
    p.add_argument("--no-clock", action="store_true", help="do not publish /clock")
    p.add_argument("--tail", type=non_negative_float, default=5.0, metavar="S",
                   help="simulated seconds the clock runs on after the last message (timers fire on the last data)")
    p.set_defaults(handler="replay.run")
