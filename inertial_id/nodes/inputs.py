"""Input checks of the nodes: the parsing itself is ROS-free and shared with the offline
converters (:mod:`inertial_id.core.sensor_inputs`); here what only a subscription has."""
from __future__ import annotations

from ..core.sensor_inputs import (ABSURD_FACTOR, FUTURE_TOLERANCE_S, JointSample, JointStateParser,  # noqa: F401
                                  Rejected, StampOrder, checked_stamp, parse_wrench)


def lost_message_events(drops, reason: str):
    """Event callbacks that count, under ``reason``, the messages DDS reports lost on a
    subscription (sequence gaps from a writer, samples overwritten before this node took them):
    input lost to load is counted like any other drop."""
    from rclpy.event_handler import SubscriptionEventCallbacks

    def on_lost(info) -> None:
        if info.total_count_change > 0:
            drops.counts[reason] += info.total_count_change
            drops.node.get_logger().warning(f"{info.total_count_change} messages lost before this node "
                                            f"took them ({info.total_count} so far)", throttle_duration_sec=2.0)
    return SubscriptionEventCallbacks(message_lost=on_lost)
