"""``inertial-id bag convert RUN_DIR --out BAG``: a recorded run folder (t.csv, q.csv, qd.csv, tau.csv,
optional qdd.csv; see ``identify``) as a rosbag2: /joint_states (position, velocity, effort, joint
names of the profile, stamped with t) and, with qdd.csv, the recording's own accelerations on
/joint_accelerations (Float64MultiArray, one message per joint state). ``identify --data`` and
``estimate --bag`` read the result."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("convert", help="convert a run folder into a rosbag2", description=__doc__)
    p.add_argument("run", metavar="RUN_DIR", help="run folder")
    p.add_argument("--out", required=True, metavar="BAG", help="bag folder to create")
    p.add_argument("--robot", default="kinova_gen3", help="profile whose joint names label the columns")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--start-time", type=float, default=0.0,
                   help="seconds added to t.csv for the stamps (recordings often start at 0)")
    p.set_defaults(handler="convert_run.run")
