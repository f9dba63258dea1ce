"""Stamps: a ``builtin_interfaces`` Time or Duration (an rclpy message or one read by rosbags) in
seconds, the one conversion every reader uses."""
from __future__ import annotations

__all__ = ["stamp_ns", "stamp_s"]


def stamp_s(stamp) -> float:
    """``sec + 1e-9 nanosec`` of a ``builtin_interfaces/Time`` or ``Duration``."""
    return stamp.sec + 1e-9 * stamp.nanosec


def stamp_ns(stamp) -> int:
    """``stamp`` in integer nanoseconds: exact, for telling stamps apart."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec
