"""``inertial-id bag convert``: a run folder written as a rosbag2 (the options: :mod:`.parsers.convert_run`)."""
from __future__ import annotations

import sys

from ..core.data import bags
from ..core.data.data_io import DataError, read_run
from ..core.robot.model import load_robot
from . import UserError


def convert(run, joint_names, out, storage: str = "mcap", offset_s: float = 0.0) -> dict:
    """Write ``run`` (:class:`~..core.data.data_io.Run`) as a bag; message counts."""
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
