"""JointState streams decoded a block at a time give what message-by-message reading gives, to the
bit: samples, drop reasons and the parser's state after them, on clean and forged streams."""
import numpy as np
import pytest

from inertial_id.core.data import bags
from inertial_id.core.data.joint_state_cdr import JointStateBlock, decode
from inertial_id.core.robot.model import load_robot
from inertial_id.core.signals.sensor_inputs import TWO_PI, JointStateParser

GEN3 = load_robot("kinova_gen3")
NAMES = list(GEN3.joint_names)
STORE = bags.typestore()


def message(k, names=NAMES, t0=100.0, dt=1e-3, frame="", effort=True, **fields):
    """The k-th message of a smooth stream wrapped to [-pi, pi), as ros2_kortex publishes it."""
    n = len(names)
    q = np.mod(0.3 + 0.004 * k * np.arange(1, n + 1) + np.pi, TWO_PI) - np.pi
    msg = bags.joint_state(STORE, t0 + k * dt, names, q, 0.1 * np.ones(n), np.linspace(-5, 5, n) if effort else None)
    msg.header.frame_id = frame
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def cdr(msg, little_endian=True):
    return bytes(STORE.serialize_cdr(msg, bags.JOINT_STATE_TYPE, little_endian=little_endian))


def deserialize(raw):
    return STORE.deserialize_cdr(raw, bags.JOINT_STATE_TYPE)


def both_ways(raws, make_parser):
    """(stream read message by message, its parser), (stream read by blocks, its parser), the items."""
    items = list(decode(raws, deserialize))
    one, by_block = make_parser(), make_parser()
    return ((bags.joint_states_of([(t, deserialize(raw)) for t, raw in raws], parser=one), one),
            (bags.joint_states_of(items, parser=by_block), by_block), items)


def assert_same(raws, make_parser=lambda: JointStateParser(GEN3, need_effort=True)):
    (a, pa), (b, pb), items = both_ways(raws, make_parser)
    for f in ("t", "log_time_ns", "q", "qd"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f
    assert (a.tau is None) == (b.tau is None) and (a.tau is None or a.tau.tobytes() == b.tau.tobytes())
    assert a.dropped == b.dropped and a.names == b.names
    assert pa.order.last_t == pb.order.last_t and pa.order._run == pb.order._run
    assert (pa.unwrap.last is None) == (pb.unwrap.last is None)
    assert pa.unwrap.last is None or pa.unwrap.last.tobytes() == pb.unwrap.last.tobytes()
    return a, items


def test_a_driver_stream_is_one_block_and_unwraps_as_message_by_message():
    raws = [(k * 1000, cdr(message(k))) for k in range(3000)]       # every joint crosses +-pi
    stream, items = assert_same(raws)
    assert all(isinstance(i, JointStateBlock) for i in items) and sum(len(i) for i in items) == 3000
    assert np.ptp(stream.q[:, 6]) > TWO_PI          # unwrapped beyond one turn


def test_forged_messages_are_dropped_for_the_same_reasons():
    msgs = [message(k) for k in range(400)]
    msgs[10].position[2] = np.nan
    msgs[11].effort[0] = np.inf
    msgs[12].velocity[1] = 1e6                           # absurd
    msgs[13].header.stamp.nanosec = 1_500_000_000        # invalid
    msgs[20].header.stamp = msgs[19].header.stamp        # not increasing
    msgs[30].header.stamp.sec += 5                       # one ahead: the next ones look old ...
    raws = [(k, cdr(m)) for k, m in enumerate(msgs)]
    stream, items = assert_same(raws)
    assert {"non_finite", "absurd_magnitude", "invalid_stamp", "stamp_not_increasing"} <= set(stream.dropped)
    assert all(isinstance(i, JointStateBlock) for i in items)      # same layout: still blocks


def test_layouts_that_change_mid_stream_fall_back_or_start_a_new_block():
    gripper = [*NAMES, "robotiq_85_left_knuckle_joint"]
    msgs = ([message(k) for k in range(100)]
            + [message(k, names=gripper) for k in range(100, 200)]             # a gripper joins
            + [message(k, names=NAMES[::-1]) for k in range(200, 300)]        # another joint order
            + [message(k, effort=False) for k in range(300, 350)]             # effort missing
            + [message(k, frame="base_link") for k in range(350, 400)]
            + [message(k, velocity=np.zeros(3)) for k in range(400, 420)])   # wrong length
    raws = [(k, cdr(m)) for k, m in enumerate(msgs)]
    raws[150] = (150, cdr(msgs[150], little_endian=False))                  # big-endian: by rosbags
    padded = bytearray(raws[250][1])
    assert padded[17] == 0          # after the empty frame_id (length, NUL) comes alignment padding
    padded[17] = 0x5A
    assert deserialize(bytes(padded)).name == msgs[250].name
    raws[250] = (250, bytes(padded))
    stream, items = assert_same(raws)
    assert stream.dropped["missing_effort"] == 50 and stream.dropped["wrong_length"] == 20
    assert sum(isinstance(i, JointStateBlock) for i in items) >= 6
    assert any(isinstance(i, tuple) and i[0] == 150 for i in items)
    assert_same(raws, lambda: JointStateParser.for_names(NAMES, wrapped=NAMES))     # no robot, effort taken


def test_a_step_of_half_a_turn_unwraps_as_message_by_message():
    """Where the turns taken from the differences could differ from the row-by-row rule (a step of
    exactly half a turn), the rows are unwrapped one at a time."""
    msgs = [message(k) for k in range(50)]
    for k, m in enumerate(msgs):
        m.position[0] = -np.pi + (np.pi if k % 2 else 0.0)
    assert_same([(k, cdr(m)) for k, m in enumerate(msgs)])


@pytest.mark.parametrize("need_effort", [True, False, None])
def test_every_message_rejected_by_the_block_is_counted(need_effort):
    raws = [(k, cdr(message(k, names=NAMES[:-1]))) for k in range(10)]       # a joint missing
    errors = []
    for items in ([(t, deserialize(raw)) for t, raw in raws], list(decode(raws, deserialize))):
        with pytest.raises(bags.BagError) as error:
            bags.joint_states_of(items, parser=JointStateParser(GEN3, need_effort=need_effort))
        errors.append(str(error.value))
    assert errors[0] == errors[1] and "missing_joint 10" in errors[0]
