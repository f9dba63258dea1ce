"""``inertial-id bag convert RUN_DIR --out BAG``: a recorded run folder (t.csv, q.csv, qd.csv, tau.csv,
optional qdd.csv; see ``identify``) as a rosbag2: /joint_states (position, velocity, effort, joint
names of the profile, stamped with t) and, with qdd.csv, the recording's own accelerations on
/joint_accelerations (Float64MultiArray, one message per joint state). ``identify --data`` and
``estimate --bag`` read the result."""
from __future__ import annotations

import sys

from . import UserError


def register(sub) -> None:
    p = sub.add_parser("convert", help="convert a run folder into a rosbag2", description=__doc__)
    p.add_argument("run", metavar="RUN_DIR", help="run folder")
    p.add_argument("--out", required=True, metavar="BAG", help="bag folder to create")
    p.add_argument("--robot", default="kinova_gen3", help="profile whose joint names label the columns")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--start-time", type=float, default=0.0,
                   help="seconds added to t.csv for the stamps (recordings often start at 0)")
    p.set_defaults(func=run)


def convert(run, joint_names, out, storage: str = "mcap", offset_s: float = 0.0) -> dict:
    """Write ``run`` (:class:`~..core.data.data_io.Run`) as a bag; message counts."""
    from ..core.data import bags
    store = bags.typestore()
    topics = {bags.JOINT_STATES: bags.TOPICS[bags.JOINT_STATES]}
    if run.qdd is not None:
        topics[bags.JOINT_ACCELERATIONS] = (bags.FLOAT_ARRAY_TYPE, bags.SENSOR_QOS)
    with bags.BagWriter(out, storage, topics) as w:
        for k in range(run.n_samples):
            t = offset_s + run.t[k]
            ns = int(round(t * 1e9))
            w.write(bags.JOINT_STATES, ns, bags.joint_state(store, t, joint_names, run.q[k], run.qd[k], run.tau[k]))
            if run.qdd is not None:
                w.write(bags.JOINT_ACCELERATIONS, ns, bags.float_array(store, run.qdd[k], "joint accelerations, rad/s^2"))
        return dict(w.counts)


def run(args) -> int:
    from ..core.data import bags
    from ..core.data.data_io import DataError, read_run
    from ..core.robot.model import load_robot
    robot = load_robot(args.robot)
    try:
        r = read_run(args.run, robot.nv)
        if args.start_time + r.t[0] < 0:
            raise UserError("stamps must not be negative: raise --start-time")
        counts = convert(r, robot.joint_names, args.out, args.storage, args.start_time)
    except (DataError, bags.BagError) as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {args.out} ({args.storage}): " + ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)
    return 0
