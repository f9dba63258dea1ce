"""The one place that knows how rclpy differs between the ROS 2 distributions the suite runs on:
Humble (rclpy 3.3), Jazzy (7.1) and Kilted (9.1). Every other module uses only what all three have
(``test/project/test_distro_compat.py`` checks that on the source).

- Event callbacks of a subscription (``message_lost`` and the like): the class
  ``SubscriptionEventCallbacks`` lives in ``rclpy.event_handler`` from Iron on (Jazzy keeps
  ``rclpy.qos_event`` only as a deprecated alias), in ``rclpy.qos_event`` on Humble.
- The events executor, ``rclpy.experimental.EventsExecutor``: Kilted, and Jazzy from rclpy 7.1.4 (a
  backport); Humble has none. :func:`events_executor` falls back to ``SingleThreadedExecutor``: the
  same one-callback-at-a-time semantics and the same ``add_node``/``spin_once``/``remove_node``,
  at more CPU per message.
- Message info: Humble's executor calls a subscription callback with the message alone; Jazzy and
  Kilted pass the message info too when the callback requires a second argument. The suite's
  subscription callbacks therefore take the message only.
- Who sent a message: only Kilted's message info carries a ``publisher_gid`` (Jazzy's has the two
  timestamps and two sequence numbers, Humble passes none). The graph is the same on all three:
  :func:`topic_publishers` names the nodes publishing a topic, which is how the suite attributes
  messages (the planner's estimates).
"""
from __future__ import annotations

from rclpy.executors import SingleThreadedExecutor
from rclpy.logging import get_logger

try:                                    # Iron and later (Jazzy, Kilted)
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:                     # Humble
    from rclpy.qos_event import SubscriptionEventCallbacks

try:                                    # Kilted, and Jazzy from rclpy 7.1.4
    from rclpy.experimental import EventsExecutor
except ImportError:                     # Humble, Jazzy before rclpy 7.1.4
    EventsExecutor = None

__all__ = ["SubscriptionEventCallbacks", "events_executor", "topic_publishers"]


def events_executor():
    """A new executor for a node that wants little CPU per message: rclpy's events executor where
    the distribution has one, else (Humble, Jazzy before rclpy 7.1.4) a ``SingleThreadedExecutor``,
    said once in the log."""
    if EventsExecutor is not None:
        return EventsExecutor()
    global _fallback_said
    if not _fallback_said:
        _fallback_said = True
        get_logger("inertial_id").info("this rclpy has no events executor (rclpy.experimental): "
                                       "using SingleThreadedExecutor")
    return SingleThreadedExecutor()


_fallback_said = False


def topic_publishers(node, topic: str) -> list[tuple[str, str]]:
    """(node name, node namespace) of every publisher the graph shows on ``topic`` (fully qualified
    or relative to ``node``), one entry per publisher: the sender identity available on every
    distribution. A node not yet (or no longer) announced in the graph has rmw's placeholder name."""
    return [(info.node_name, info.node_namespace) for info in node.get_publishers_info_by_topic(topic)]
