"""``sensor_msgs/JointState`` streams decoded many messages at a time.

A driver publishes the same message over and over: the same frame, the same joint names, the same
field lengths; only the stamp and the numbers change. Such a run of messages has one byte layout,
so it is decoded with numpy in one pass (:class:`JointStateBlock`) instead of one message object
at a time (``inertial-id bench estimate`` times both).

A layout is taken from a message rosbags has deserialized: the offsets of the stamp and of the
three float64 sequences follow from the CDR rules (little-endian, 4-byte-aligned lengths, 8-byte
aligned doubles) and are checked against what rosbags read. Every other byte of that message (the
encapsulation header, the frame, the names, the lengths, the padding) is the layout's signature:
a later message joins the block only if its length and all those bytes are the same. Anything
else (a big-endian message, other names, other lengths, different padding, a damaged message) is
deserialized by rosbags and returned as a message, so the result is what reading message by
message gives, to the bit (``test_joint_state_cdr``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JointStateBlock", "decode"]

_HEADER = 4                 # CDR encapsulation header, before the data the alignment counts from
_FIELDS = ("position", "velocity", "effort")
_FIRST_CHUNK = 64           # messages compared at once, doubled while they keep matching


@dataclass
class JointStateBlock:
    """Consecutive JointState messages of one layout: names and frame shared, the rest per message."""

    log_time_ns: np.ndarray     # (N,)
    frame_id: str
    names: tuple
    sec: np.ndarray             # (N,) int64
    nanosec: np.ndarray         # (N,) int64
    position: np.ndarray        # (N, len(position)) float64
    velocity: np.ndarray
    effort: np.ndarray

    def __len__(self) -> int:
        return self.log_time_ns.size


@dataclass(frozen=True)
class _Layout:
    size: int
    frame_id: str
    names: tuple
    fields: tuple               # per field: (byte offset of its first double, count)
    signature: np.ndarray       # bool (size,): the bytes every message of the layout shares
    template: np.ndarray        # uint8 (size,): the first message's bytes


def _aligned(offset: int, alignment: int) -> int:
    return (offset + alignment - 1) // alignment * alignment


def _layout(raw: bytes, msg) -> _Layout | None:
    """The layout of ``raw`` read by rosbags as ``msg``; None when it is not one this module decodes."""
    buf = np.frombuffer(raw, dtype=np.uint8)
    if buf.size < _HEADER + 8 or bytes(raw[:2]) != b"\x00\x01":      # little-endian plain CDR only
        return None
    try:
        r = 8                                   # after the stamp
        strings = [msg.header.frame_id.encode(), *(n.encode() for n in msg.name)]
        r = _aligned(r, 4) + 4 + len(strings[0]) + 1
        r = _aligned(r, 4) + 4                  # the names' count
        for s in strings[1:]:
            r = _aligned(r, 4) + 4 + len(s) + 1
        fields = []
        for name in _FIELDS:
            values = np.asarray(getattr(msg, name), dtype=np.float64)
            r = _aligned(r, 4)
            if int.from_bytes(raw[_HEADER + r:_HEADER + r + 4], "little") != values.size:
                return None
            r += 4
            if values.size:
                r = _aligned(r, 8)
            start = _HEADER + r
            r += 8 * values.size
            if _HEADER + r > buf.size or buf[start:_HEADER + r].tobytes() != values.tobytes():
                return None
            fields.append((start, values.size))
        sec, nanosec = np.frombuffer(raw, "<i4", 1, _HEADER)[0], np.frombuffer(raw, "<u4", 1, _HEADER + 4)[0]
        if (sec, nanosec) != (msg.header.stamp.sec, msg.header.stamp.nanosec):
            return None
    except (AttributeError, UnicodeError, ValueError):
        return None
    signature = np.ones(buf.size, dtype=bool)
    signature[_HEADER:_HEADER + 8] = False
    for start, count in fields:
        signature[start:start + 8 * count] = False
    return _Layout(buf.size, msg.header.frame_id, tuple(msg.name), tuple(fields), signature, buf.copy())


def _block(layout: _Layout, rows: np.ndarray, log_time_ns) -> JointStateBlock:
    """The messages ``rows`` (uint8, (N, size)) of ``layout``."""
    def doubles(start, count):
        return np.ascontiguousarray(rows[:, start:start + 8 * count]).view("<f8")
    stamp = np.ascontiguousarray(rows[:, _HEADER:_HEADER + 8])
    return JointStateBlock(np.asarray(log_time_ns, dtype=np.int64), layout.frame_id, layout.names,
                           stamp[:, :4].copy().view("<i4")[:, 0].astype(np.int64),
                           stamp[:, 4:].copy().view("<u4")[:, 0].astype(np.int64),
                           *(doubles(start, count) for start, count in layout.fields))


def decode(raws, deserialize):
    """``raws``: ``[(log_time_ns, CDR bytes)]`` of one JointState topic, in order; ``deserialize``:
    CDR bytes -> message (the bag's typestore). Yields, in the same order, :class:`JointStateBlock`
    for runs of messages sharing a layout and ``(log_time_ns, message)`` for each other message."""
    sizes = np.fromiter((len(raw) for _, raw in raws), dtype=np.int64, count=len(raws))
    i = 0
    while i < len(raws):
        t_ns, raw = raws[i]
        msg = deserialize(raw)
        layout = _layout(raw, msg)
        if layout is None:
            yield t_ns, msg
            i += 1
            continue
        same_size = np.flatnonzero(sizes[i:] != layout.size)
        end = i + (same_size[0] if same_size.size else sizes.size - i)
        chunk, j = _FIRST_CHUNK, i
        while j < end:
            k = min(end, j + chunk)
            rows = np.frombuffer(b"".join(raw for _, raw in raws[j:k]), dtype=np.uint8).reshape(k - j, layout.size)
            differs = np.flatnonzero((rows[:, layout.signature] != layout.template[layout.signature]).any(axis=1))
            if differs.size:
                k = j + differs[0]
                rows = rows[:k - j]
            if k > j:
                yield _block(layout, rows, [t for t, _ in raws[j:k]])
            if differs.size:
                break
            j, chunk = k, 2 * chunk
        i = k
