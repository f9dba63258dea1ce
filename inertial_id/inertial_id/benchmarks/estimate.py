"""``estimate --bag`` speed: how many times faster than real time a recording is estimated, and where the time goes.

The recording is ``bag record-sim``'s (the profile's driver streams) unless ``--bag`` names one.

Timed in this process (CPU seconds of this process, so other load on the machine does not count):
the whole of :func:`~..core.offline.estimate_from_bag` (what ``estimate --bag`` times), and its
stages one after another: reading the joint states (bag, decoding, the live nodes' checks), forming
the rows, the estimator. The joint states are also read the reference way, one message object at a
time, in the same run: both streams must be identical to the bit, and their time ratio is reported.
Last, the two libraries' share alone (momentum rows): rosbags handing over the joint states'
messages and pinocchio's per-state pass (its calls and their results kept); the recording's
duration over that share is a speed that no implementation calling them so can exceed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..cli.parsers import positive_float, positive_int
from ..core import offline
from ..core.data import bags
from ..core.data.bags import is_bag
from ..core.robot.model import load_robot
from ..core.signals.momentum import MomentumRegressor
from ..core.signals.row_builder import SampleRows
from ..core.signals.sensor_inputs import JointStateParser

TARGET_SPEED_VS_REAL_TIME = 50.0


def _rosbag_folder(text: str) -> str:
    """An argparse ``type``, checked before the benchmark re-runs itself pinned to one core."""
    if not is_bag(text):
        raise argparse.ArgumentTypeError(f"{text}: not a rosbag2 folder (no metadata.yaml)")
    return text


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--seconds", type=positive_float, default=30.0, help="length of the recording")
    parser.add_argument("--bag", type=_rosbag_folder, help="estimate this bag instead of recording one")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs of each part (median reported)")


def _cpu(fn, repeats: int):
    """(median CPU seconds of ``repeats`` calls, the last call's result)."""
    times = []
    for _ in range(repeats):
        c0 = time.process_time()
        out = fn()
        times.append(time.process_time() - c0)
    return float(np.median(times)), out


def _same(a, b) -> bool:
    """Two joint streams identical to the bit (arrays, drop counts, names)."""
    arrays = ("t", "log_time_ns", "q", "qd", "tau")
    same = all((getattr(a, f) is None) == (getattr(b, f) is None) for f in arrays)
    return same and all(getattr(a, f) is None or getattr(a, f).tobytes() == getattr(b, f).tobytes() for f in arrays) \
        and a.dropped == b.dropped and a.names == b.names


def run(args) -> dict:
    robot = load_robot(args.robot)
    method = robot.spec.identification.method
    with tempfile.TemporaryDirectory(prefix="bench_estimate_") as folder:
        bag = args.bag or str(Path(folder) / "bag")
        if not args.bag:    # in a process of its own: the simulator's objects would slow this one down
            subprocess.run([sys.executable, "-m", "inertial_id.cli", "bag", "record-sim", "--robot", args.robot,
                            "--duration", str(args.seconds), "--out", bag, "--start-time", "1.7e9"],
                           check=True, capture_output=True)
        js_topic = robot.sensing.joint_states_topic
        data_s = bags.time_span_s(bags.read_topics(bag, [], times_only=[js_topic])[js_topic])
        whole_s, (_, result, info) = _cpu(lambda: offline.estimate_from_bag(bag, robot, method), args.repeats)
        kinds = offline.RowIntake(robot, method).estimator.kinds
        effort = SampleRows.from_profile(robot, kinds).needs_effort

        def read(blocks: bool):
            found = bags.read_topics(bag, [] if blocks else [js_topic], joint_states=[js_topic] if blocks else [])
            return bags.joint_states_of(found[js_topic], parser=JointStateParser(robot, need_effort=effort))
        read_s, stream = _cpu(lambda: read(True), args.repeats)
        reference_s, reference = _cpu(lambda: read(False), args.repeats)
        raw_s, _ = _cpu(lambda: bags.read_topics(bag, [], times_only=[js_topic]), args.repeats)
        rows_s, rows = _cpu(lambda: list(offline.rows_from_stream(robot, kinds, stream.t, stream.q, stream.qd,
                                                                  stream.tau)), args.repeats)

        def estimator():
            intake = offline.RowIntake(robot, method)
            for m in rows:
                intake.add(m)
            return intake.finish()
        estimator_s, _ = _cpu(estimator, args.repeats)
        libraries_s = None
        if "momentum" in kinds:     # the libraries' per-message and per-state calls alone
            regressor = MomentumRegressor(robot.model)

            def pinocchio_pass():
                for a in range(0, len(stream), offline.STREAM_CHUNK):
                    regressor.pinocchio_pass(stream.q[a:a + offline.STREAM_CHUNK], stream.qd[a:a + offline.STREAM_CHUNK])
            libraries_s = raw_s + _cpu(pinocchio_pass, args.repeats)[0]
    return {
        "robot": robot.name, "method": method, "source": info["source"], "joint_states": info.get("joint_states"),
        "data_duration_s": data_s, "repeats": args.repeats,
        "estimate_cpu_s": whole_s, "speed_vs_real_time": data_s / whole_s,
        "target_speed_vs_real_time": TARGET_SPEED_VS_REAL_TIME,
        # the stages, one after another
        "read_joint_states_cpu_s": read_s, "of_which_bag_messages_cpu_s": raw_s, "rows_cpu_s": rows_s,
        "estimator_cpu_s": estimator_s,
        # reading the bag's messages (rosbags) and the rows' pinocchio pass, nothing else: the speed
        # no implementation calling these two libraries per message and per state can exceed
        "rosbags_and_pinocchio_cpu_s": libraries_s,
        "speed_ceiling_vs_real_time": None if libraries_s is None else data_s / libraries_s,
        "reference_read_joint_states_cpu_s": reference_s,
        "read_speedup_vs_reference": reference_s / read_s,
        "streams_identical_to_reference": _same(stream, reference),
        "mass_kg": float(result.estimate[0]), "mass_width_kg": float(result.upper[0] - result.lower[0]),
    }
