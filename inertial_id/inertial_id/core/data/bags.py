"""rosbag2 recordings (MCAP or sqlite3) without a ROS install, through the ``rosbags`` library.

Writing: :class:`BagWriter` declares each topic with its message type and the QoS its publisher
offers (written into ``metadata.yaml`` and the storage the way ``ros2 bag record`` does), and
takes either message objects of the bag's typestore or CDR bytes as received over DDS. The
project's own messages (``msg/*.msg``) are registered in the typestore from their definitions,
so any rosbag2 tool can read them back from the definitions stored in the bag.

Reading: :func:`messages` iterates a bag in log-time order (any storage format; message types are
taken from the definitions in the bag, from the kilted typestore for a bag without any);
:func:`read_topics` reads several topics in one pass; the ``read_*`` functions turn the topics of
this suite into numpy streams, and the ``*_of`` functions do the same for messages already read.

Log time is what ``ros2 bag record`` stores: the receive time. Streams also keep each message's
header stamp, which is what the pipeline uses.
"""
from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import yaml
from rosbags.highlevel import AnyReader
from rosbags.interfaces import Connection, Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

from ...share import MSGS_PACKAGE, share_dirs
from ..signals.row_builder import RowMessage
from ..signals.sensor_inputs import JointStateParser, Rejected
from .joint_state_cdr import JointStateBlock, decode
from ..signals.stamps import stamp_s
# The suite's topics, also read as ``bags.<NAME>`` by the CLI and the tests.
from .topics import (DIAGNOSTICS, ESTIMATE, JOINT_ACCELERATIONS, JOINT_STATES, MARKERS, ROWS,  # noqa: F401
                     STATUS, TRUTH, WRENCH)

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
BAG_VERSION: Final = 9          # the rosbag2 format version that kilted's ``ros2 bag record`` writes

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
WRENCH_TYPE = "geometry_msgs/msg/WrenchStamped"
TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"

# What "infinite" durations look like in metadata written by ros2 bag record (rmw's default).
_INFINITE = QosTime(sec=9223372036, nsec=854775807)


def qos(reliable: bool, depth: int, latched: bool = False) -> Qos:
    """An offered QoS profile as rosbag2 stores it (keep-last history, automatic liveliness)."""
    return Qos(QosHistory.KEEP_LAST, depth,
               QosReliability.RELIABLE if reliable else QosReliability.BEST_EFFORT,
               QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
               _INFINITE, _INFINITE, QosLiveliness.AUTOMATIC, _INFINITE, False)


# The publishers' QoS in this suite (inertial_id.nodes; test_bags checks they agree).
SENSOR_QOS = qos(reliable=False, depth=200)
RELIABLE_QOS = qos(reliable=True, depth=500)
LATCHED_QOS = qos(reliable=True, depth=1, latched=True)
ESTIMATE_QOS = qos(reliable=True, depth=500, latched=True)
DEFAULT_QOS = qos(reliable=True, depth=10)      # also the planner's commands

# topic -> (message type, offered QoS) of everything the suite publishes; the controller topic of a
# profile (JointTrajectory) is added by :func:`suite_topics`.
TOPICS = {
    JOINT_STATES: (JOINT_STATE_TYPE, SENSOR_QOS),
    WRENCH: (WRENCH_TYPE, SENSOR_QOS),
    ROWS: (f"{MSGS_PACKAGE}/msg/RegressorSample", ESTIMATE_QOS),       # kept for late joiners, as the estimates
    ESTIMATE: (f"{MSGS_PACKAGE}/msg/InertialEstimate", ESTIMATE_QOS),
    MARKERS: ("visualization_msgs/msg/MarkerArray", DEFAULT_QOS),
    STATUS: (f"{MSGS_PACKAGE}/msg/ExcitationStatus", RELIABLE_QOS),
    TRUTH: (f"{MSGS_PACKAGE}/msg/InertialEstimate", LATCHED_QOS),
    DIAGNOSTICS: ("diagnostic_msgs/msg/DiagnosticArray", DEFAULT_QOS),
}
FLOAT_ARRAY_TYPE = "std_msgs/msg/Float64MultiArray"


class BagError(ValueError):
    """A bag that cannot be read or written as asked; the message names the bag and the problem."""


def suite_topics(robot=None) -> dict:
    """topic -> (type, QoS) of the suite, with the driver topics and controller topic of ``robot``'s
    profile when given."""
    topics = dict(TOPICS)
    if robot is not None:
        sensing = robot.sensing
        topics[sensing.joint_states_topic] = TOPICS[JOINT_STATES]
        if sensing.wrench:
            topics[sensing.wrench_topic] = TOPICS[WRENCH]
        topics[robot.spec.controller.topic] = (TRAJECTORY_TYPE, DEFAULT_QOS)
    return topics


def msg_dirs() -> list[Path]:
    """Where the project's .msg files are (inertial_id_msgs' ``msg/``, first match first)."""
    dirs = [d / "msg" for d in share_dirs(MSGS_PACKAGE)]
    return [d for d in dirs if d.is_dir() and any(d.glob("*.msg"))]


@functools.lru_cache(maxsize=1)
def typestore():
    """The kilted typestore plus this package's messages, parsed from their .msg definitions."""
    store = get_typestore(Stores.ROS2_KILTED)
    dirs = msg_dirs()
    if not dirs:
        raise BagError(f"the {MSGS_PACKAGE} message definitions (msg/*.msg) are not installed")
    types = {}
    for path in sorted(dirs[0].glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{MSGS_PACKAGE}/msg/{path.stem}"))
    store.register(types)
    return store


_BASE_DEFAULTS = {"string": "", "bool": False, "float32": 0.0, "float64": 0.0}
_ARRAY_DTYPES = {"float64": np.float64, "float32": np.float32, "uint8": np.uint8, "int8": np.int8,
                 "uint16": np.uint16, "int16": np.int16, "uint32": np.uint32, "int32": np.int32,
                 "uint64": np.uint64, "int64": np.int64}


def message(store, typename: str, **fields):
    """A message of ``typename`` with the given fields and every other field at its zero value
    (as rclpy constructs messages), so writers need not follow every field a definition adds."""
    msgdef = store.get_msgdef(typename)
    values = {}
    for name, (node, spec) in msgdef.fields:
        if name in fields:
            values[name] = fields.pop(name)
        elif node.name == "NAME":
            values[name] = message(store, spec)
        elif node.name == "BASE":
            values[name] = _BASE_DEFAULTS.get(spec[0], 0)
        else:   # arrays and sequences: numeric ones are numpy arrays, others lists
            inner, size = spec
            dtype = _ARRAY_DTYPES.get(inner[1][0]) if inner[0].name == "BASE" else None
            if size and node.name == "ARRAY":
                values[name] = np.zeros(size, dtype) if dtype else [message(store, inner[1])] * size
            else:
                values[name] = np.zeros(0, dtype) if dtype else []
    if fields:
        raise BagError(f"{typename} has no field(s) {', '.join(fields)}")
    return msgdef.cls(**values)


def stamp(store, t_s: float):
    """builtin_interfaces/Time of ``t_s`` seconds, rounded to the nanosecond (rounding whole
    nanoseconds, not the fraction: a fraction that rounds up to 1 s carries into ``sec``)."""
    sec, nanosec = divmod(int(round(t_s * 1e9)), 1_000_000_000)
    return store.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)


def header(store, t_s: float, frame_id: str = ""):
    """A ``std_msgs/Header`` of ``store`` stamped ``t_s`` (s)."""
    return store.types["std_msgs/msg/Header"](stamp=stamp(store, t_s), frame_id=frame_id)


def joint_state(store, t_s: float, names, q, qd, tau=None):
    """A ``sensor_msgs/JointState`` of ``store``: stamp (s), names, ``q`` (rad), ``qd`` (rad/s), ``tau`` (N m, empty when None)."""
    f64 = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731  (the serializer needs contiguous)
    return store.types[JOINT_STATE_TYPE](
        header=header(store, t_s), name=list(names), position=f64(q), velocity=f64(qd),
        effort=f64(tau if tau is not None else []))


def wrench_stamped(store, t_s: float, frame_id: str, w):
    """A ``geometry_msgs/WrenchStamped`` of ``store`` in ``frame_id``: ``w = [f (N), tau (N m)]``."""
    T = store.types
    w = [float(x) for x in w]
    return T[WRENCH_TYPE](header=header(store, t_s, frame_id), wrench=T["geometry_msgs/msg/Wrench"](
        force=T["geometry_msgs/msg/Vector3"](*w[:3]), torque=T["geometry_msgs/msg/Vector3"](*w[3:])))


def float_array(store, values, label: str = ""):
    """A ``std_msgs/Float64MultiArray`` of ``store`` holding ``values`` (one dimension named ``label``)."""
    T = store.types
    values = np.ascontiguousarray(values, dtype=np.float64)
    dim = T["std_msgs/msg/MultiArrayDimension"](label=label, size=values.size, stride=values.size)
    return T["std_msgs/msg/Float64MultiArray"](
        layout=T["std_msgs/msg/MultiArrayLayout"](dim=[dim], data_offset=0), data=values)


class _SharedSqlite3Writer(Sqlite3Writer):
    """rosbags' sqlite3 storage on a connection any thread may use: Python's sqlite3 refuses a
    connection outside the thread that opened it, and a recorder opens its bag in one thread and
    writes from its executor's (:class:`BagWriter` serializes the calls)."""

    def __init__(self, path, compression) -> None:
        super().__init__(path, compression)       # creates the schema (committed: executescript)
        self.conn.close()
        self.conn = sqlite3.connect(f"file:{self.path}", uri=True, check_same_thread=False)
        self.cursor = self.conn.cursor()


class _Writer(Writer):
    STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.SQLITE3: _SharedSqlite3Writer}


class BagWriter:
    """A rosbag2 being written, usable from any thread (calls are serialized). ``topics`` maps
    topic -> (message type, offered QoS). ``counts``: messages written per topic."""

    def __init__(self, path, storage: str = "mcap", topics: dict | None = None):
        if storage not in STORAGES:
            raise BagError(f"unknown bag storage '{storage}' (choose from {', '.join(STORAGES)})")
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"'{self.path}' exists already; not overwriting")
        self.store = typestore()
        self._lock = threading.Lock()
        self._writer = _Writer(self.path, version=BAG_VERSION, storage_plugin=STORAGES[storage])
        self._writer.open()
        self._connections: dict[str, Connection] = {}
        self.counts: dict[str, int] = {}
        for topic, (msgtype, offered) in (topics or {}).items():
            self.add_topic(topic, msgtype, offered)

    def add_topic(self, topic: str, msgtype: str, offered: Qos = DEFAULT_QOS) -> None:
        """Declare ``topic`` with its message type and the QoS its publisher offers."""
        with self._lock:
            self._connections[topic] = self._writer.add_connection(
                topic, msgtype, typestore=self.store, offered_qos_profiles=[offered])
            self.counts[topic] = 0

    def write(self, topic: str, log_time_ns: int, msg) -> None:
        """A message object of :func:`typestore`."""
        conn = self._connections[topic]
        self.write_cdr(topic, log_time_ns, self.store.serialize_cdr(msg, conn.msgtype))

    def write_cdr(self, topic: str, log_time_ns: int, data) -> None:
        """A message already serialized as CDR (as received from DDS)."""
        with self._lock:
            self._writer.write(self._connections[topic], int(log_time_ns), bytes(data))
            self.counts[topic] += 1

    def close(self) -> None:
        """Finish the bag (storage and metadata.yaml)."""
        with self._lock:
            self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def bag_dir(path) -> Path:
    """The bag folder of ``path`` (the folder itself, or a .mcap/.db3 file inside one)."""
    path = Path(path)
    if path.is_file() and path.suffix in (".mcap", ".db3"):
        path = path.parent
    if not (path / "metadata.yaml").is_file():
        raise BagError(f"'{path}' is not a rosbag2 folder (no metadata.yaml)")
    return path


def is_bag(path) -> bool:
    """Whether ``path`` is a rosbag2 folder (or a file in one)."""
    try:
        bag_dir(path)
    except BagError:
        return False
    return True


def topics_in(path) -> dict[str, str]:
    """topic -> message type of a bag (from its metadata.yaml: no need to open the storage)."""
    try:
        # libyaml's loader: ruamel's pure-Python one takes ~40 ms on a bag's metadata
        meta = yaml.load((bag_dir(path) / "metadata.yaml").read_text(),
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["rosbag2_bagfile_information"]
        return {t["topic_metadata"]["name"]: t["topic_metadata"]["type"] for t in meta["topics_with_message_count"]}
    except (KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
        raise BagError(f"bag '{path}': unreadable metadata.yaml ({exc})") from None


class _DefaultTypes:
    """The default typestore as :class:`AnyReader` uses it (its ``fielddefs``, for a bag that stores
    no message definitions), built on first use: bags written by rosbag2 or rosbags carry their
    definitions, and building the kilted store costs about 0.15 s, a tenth of reading a 30 s bag."""

    @property
    def fielddefs(self):
        return typestore().fielddefs


@contextlib.contextmanager
def _reader(path):
    """An open :class:`AnyReader` of the bag at ``path``. What reading it raises (a damaged chunk,
    a truncated file, a corrupt message) is a :class:`BagError` too."""
    try:
        # a stand-in that builds the typestore when AnyReader first reads its fielddefs
        reader = AnyReader([bag_dir(path)], default_typestore=_DefaultTypes())  # type: ignore[arg-type]
        reader.open()
    except BagError:
        raise
    except Exception as exc:   # rosbags raises its own error types for damaged or foreign files
        raise BagError(f"cannot open bag '{path}': {type(exc).__name__}: {exc}") from None
    try:
        yield reader
    except BagError:
        raise
    except Exception as exc:   # noqa: BLE001 - damaged content: OverflowError, ReaderError, struct.error, ...
        raise BagError(f"bag '{path}' is damaged: {type(exc).__name__}: {exc}") from None
    finally:
        reader.close()


def check_readable(path) -> int:
    """Read every message of the bag (not deserialized) before a command streams it: the number of
    messages, or :class:`BagError` if any part is damaged, including chunks the reader skips
    without a word (fewer messages than metadata.yaml counts)."""
    with _reader(path) as reader:
        read = sum(1 for _ in reader.messages())
    try:
        meta = yaml.load((bag_dir(path) / "metadata.yaml").read_text(),
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["rosbag2_bagfile_information"]
        stated = int(meta["message_count"])
    except (KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
        raise BagError(f"bag '{path}': unreadable metadata.yaml ({exc})") from None
    if read < stated:
        raise BagError(f"bag '{path}' is damaged: {read} of the {stated} messages metadata.yaml counts are readable")
    return read


def _raw(reader, topics):
    """``(connection, log_time_ns, CDR bytes)`` of ``topics`` in log-time order (the order of the
    file for equal times)."""
    conns = [c for c in reader.connections if c.topic in set(topics)]
    # (rosbags reads every connection when given none)
    return reader.messages(connections=conns) if conns else ()


def messages(path, topics):
    """``(topic, log_time_ns, message)`` of the given topics, in log-time order (the order of the
    file for equal times)."""
    with _reader(path) as reader:
        for conn, t_ns, raw in _raw(reader, topics):
            yield conn.topic, t_ns, reader.deserialize(raw, conn.msgtype)


def read_topics(path, topics, times_only=(), joint_states=()) -> dict[str, list]:
    """One pass over a bag: ``topic -> [(log_time_ns, message)]`` for each of ``topics`` and
    ``topic -> [log_time_ns]`` for each of ``times_only`` (not deserialized), in log-time order;
    a topic the bag does not have maps to an empty list. The JointState topics among
    ``joint_states`` are read as :func:`~.joint_state_cdr.decode` gives them (runs of one layout as
    blocks), which :func:`joint_states_of` takes."""
    deserialized = {*topics, *joint_states}
    out: dict[str, list[Any]] = {topic: [] for topic in (*times_only, *topics, *joint_states)}
    raw_states: dict[str, list[tuple[int, bytes]]] = {}
    with _reader(path) as reader:
        blocks = {c.topic: c.msgtype for c in reader.connections
                  if c.topic in set(joint_states) and c.msgtype == JOINT_STATE_TYPE}
        for conn, t_ns, raw in _raw(reader, out):
            if conn.topic in blocks:
                raw_states.setdefault(conn.topic, []).append((t_ns, raw))
            else:
                out[conn.topic].append((t_ns, reader.deserialize(raw, conn.msgtype))
                                       if conn.topic in deserialized else t_ns)
        for topic, raws in raw_states.items():
            out[topic] = list(decode(raws, lambda raw, msgtype=blocks[topic]: reader.deserialize(raw, msgtype)))
    return out


def time_span_s(log_times_ns) -> float:
    """Seconds between the first and the last of ``log_times_ns``."""
    return (max(log_times_ns) - min(log_times_ns)) * 1e-9 if len(log_times_ns) > 1 else 0.0


@dataclass
class JointStream:
    """Joint states in recorded order, columns in ``names`` order; ``tau`` None without effort."""

    t: np.ndarray                # header stamps, s
    log_time_ns: np.ndarray
    names: list
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray | None
    dropped: dict

    def __len__(self) -> int:
        return self.t.size


def read_joint_states(path, joint_names=None, topic: str = JOINT_STATES, parser=None) -> JointStream:
    """Joint states of a bag: :func:`joint_states_of` its messages on ``topic``."""
    return joint_states_of(read_topics(path, (), joint_states=[topic])[topic], joint_names,
                           f"bag '{path}' has no usable messages on {topic}", parser)


def joint_states_of(msgs, joint_names=None, empty_error: str = "no usable joint states", parser=None) -> JointStream:
    """``[(log_time_ns, JointState)]`` (and blocks of them, :func:`read_topics`) as a stream in the
    parser's joint order, through the live nodes' checks (:class:`~.sensor_inputs.JointStateParser`):
    ``parser`` (a consumer's, e.g. the builder's for a robot: magnitudes, unwrapped joints, effort
    only when its rows use it) or one for ``joint_names`` (default: the first message's names) that
    takes effort when present. Joints not named (a gripper's) are ignored, as live. Messages the
    parser rejects are counted by reason in ``dropped``, not returned; none left raises
    :class:`BagError` (``empty_error``). ``tau`` is None unless every message kept has effort."""
    # pieces of the stream, in order: (t, log_time_ns, q, qd, tau or None), one per message or block
    pieces: list[tuple] = []
    dropped: dict[str, int] = {}
    for item in msgs:
        block = item if isinstance(item, JointStateBlock) else None
        if parser is None:
            names = block.names if block is not None else item[1].name
            parser = JointStateParser.for_names(list(joint_names) if joint_names is not None else list(names))
        if block is not None:
            parsed = parser.parse_block(block)
            for reason, count in parsed.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + count
            if parsed.index.size:
                pieces.append((parsed.t, block.log_time_ns[parsed.index], parsed.q, parsed.qd, parsed.tau))
            continue
        t_ns, msg = item
        try:
            s = parser.parse(msg)
        except Rejected as r:
            dropped[r.reason] = dropped.get(r.reason, 0) + 1
            continue
        pieces.append(([s.t], [t_ns], [s.q], [s.qd], None if s.tau is None else [s.tau]))
    if not pieces:
        raise BagError(empty_error + (f" (dropped: {', '.join(f'{k} {v}' for k, v in dropped.items())})"
                                      if dropped else ""))
    n = len(parser.joint_names)
    column = lambda k, dtype=float: np.concatenate([np.asarray(p[k], dtype=dtype) for p in pieces])  # noqa: E731
    tau = None if any(p[4] is None for p in pieces) else column(4).reshape(-1, n)
    return JointStream(column(0), column(1, np.int64), list(parser.joint_names), column(2).reshape(-1, n),
                       column(3).reshape(-1, n), tau, dropped)


def read_wrenches(path, topic: str = WRENCH):
    """``(t (N,), frame_ids, w (N, 6))``: header stamps, frames and [force; torque]."""
    return wrenches_of(read_topics(path, [topic])[topic])


def wrenches_of(msgs):
    """:func:`read_wrenches` of ``[(log_time_ns, WrenchStamped)]``."""
    ts, frames, ws = [], [], []
    for _, msg in msgs:
        f, n = msg.wrench.force, msg.wrench.torque
        ts.append(stamp_s(msg.header.stamp))
        frames.append(msg.header.frame_id)
        ws.append((f.x, f.y, f.z, n.x, n.y, n.z))
    return np.array(ts), frames, np.array(ws, dtype=float).reshape(-1, 6)


def read_float_arrays(path, topic: str) -> tuple[np.ndarray, np.ndarray]:
    """``(log_time_ns (N,), values (N, k))`` of a Float64MultiArray topic."""
    logs, rows = [], []
    for _, t_ns, msg in messages(path, [topic]):
        logs.append(t_ns)
        rows.append(np.asarray(msg.data, dtype=float))
    return np.array(logs, dtype=np.int64), np.array(rows)


@dataclass
class EstimateStream:
    """InertialEstimate messages of one topic, in recorded order."""

    t: np.ndarray               # header stamps, s
    log_time_ns: np.ndarray
    parameter_names: list
    method: str
    frame_id: str
    estimate: np.ndarray        # (N, n)
    lower: np.ndarray
    upper: np.ndarray
    samples_used: np.ndarray
    condition_number: np.ndarray
    physically_consistent: np.ndarray
    bounds_guaranteed: np.ndarray
    data_consistent: np.ndarray

    def __len__(self) -> int:
        return self.t.size


def read_estimates(path, topic: str = ESTIMATE) -> EstimateStream | None:
    """The InertialEstimate stream of ``topic`` (None when the bag has none)."""
    return estimates_of(read_topics(path, [topic])[topic])


def estimates_of(msgs) -> EstimateStream | None:
    """:func:`read_estimates` of ``[(log_time_ns, InertialEstimate)]``."""
    if not msgs:
        return None
    first = msgs[0][1]
    col = lambda f, dtype=float: np.array([getattr(m, f) for _, m in msgs], dtype=dtype)  # noqa: E731
    return EstimateStream(
        t=np.array([stamp_s(m.header.stamp) for _, m in msgs]), log_time_ns=np.array([t for t, _ in msgs]),
        parameter_names=list(first.parameter_names), method=first.method, frame_id=first.header.frame_id,
        estimate=np.array([m.estimate for _, m in msgs], dtype=float),
        lower=np.array([m.lower for _, m in msgs], dtype=float),
        upper=np.array([m.upper for _, m in msgs], dtype=float),
        samples_used=col("samples_used", np.int64), condition_number=col("condition_number"),
        physically_consistent=col("physically_consistent", bool), bounds_guaranteed=col("bounds_guaranteed", bool),
        data_consistent=col("data_consistent", bool))


@dataclass
class StatusStream:
    """The planner's status messages of a bag as arrays: stamps (s), states, messages, margins (rad, rad/s, N m, m) and excitation cost."""
    t: np.ndarray
    state: list
    message: list
    min_joint_margin: np.ndarray
    min_velocity_margin: np.ndarray
    min_torque_margin: np.ndarray
    min_obstacle_clearance: np.ndarray
    excitation_cost: np.ndarray


def read_status(path, topic: str = STATUS) -> StatusStream | None:
    """The status stream on ``topic`` (None: no messages)."""
    msgs = [m for _, _, m in messages(path, [topic])]
    if not msgs:
        return None
    col = lambda f: np.array([getattr(m, f) for m in msgs], dtype=float)  # noqa: E731
    return StatusStream(np.array([stamp_s(m.header.stamp) for m in msgs]), [m.state for m in msgs],
                        [m.message for m in msgs], col("min_joint_margin"), col("min_velocity_margin"),
                        col("min_torque_margin"), col("min_obstacle_clearance"), col("excitation_cost"))


def read_rows(path, topic: str = ROWS):
    """RegressorSample messages in recorded (= received) order, as :class:`RowMessage`. Messages
    whose arrays do not fit their declared shape are skipped."""
    return rows_of((t_ns, m) for _, t_ns, m in messages(path, [topic]))


def acceleration_bound_of(m) -> np.ndarray | None:
    """A RegressorSample's ``acceleration_bound`` (flat; the intake checks its shape); None when empty."""
    da = np.asarray(m.acceleration_bound, dtype=float)
    return da if da.size else None


def rows_of(msgs):
    """:func:`read_rows` of ``[(log_time_ns, RegressorSample)]``."""
    for _, m in msgs:
        cols = len(m.parameter_names)
        A = np.asarray(m.regressor, dtype=float)
        if cols == 0 or A.size != m.rows * cols or len(m.measurement) != m.rows:
            continue
        yield RowMessage(stamp_s(m.header.stamp), m.kind, list(m.parameter_names), A.reshape(m.rows, cols),
                         np.asarray(m.measurement, dtype=float), np.asarray(m.noise_bound, dtype=float),
                         np.asarray(m.noise_sigma, dtype=float), int(m.samples),
                         np.asarray(m.kinematics, dtype=float) if len(m.kinematics) else None,
                         acceleration_bound_of(m))


def read_truth(path) -> np.ndarray | None:
    """The simulator's true payload parameters, when the bag recorded them."""
    return truth_of(read_topics(path, [TRUTH])[TRUTH])


def truth_of(msgs) -> np.ndarray | None:
    """:func:`read_truth` of ``[(log_time_ns, InertialEstimate)]`` (the first message)."""
    return np.asarray(msgs[0][1].estimate, dtype=float) if msgs else None


def read_trajectories(path, topic: str):
    """``[(log_time_ns, joint_names, t (P,), q (P, n))]`` of the JointTrajectory messages on ``topic``."""
    out = []
    for _, t_ns, m in messages(path, [topic]):
        t = np.array([stamp_s(p.time_from_start) for p in m.points])
        q = np.array([p.positions for p in m.points], dtype=float).reshape(t.size, -1)
        out.append((t_ns, list(m.joint_names), t, q))
    return out
