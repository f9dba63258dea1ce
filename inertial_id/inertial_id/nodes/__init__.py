"""Thin rclpy nodes: parse messages, call ``inertial_id.core``, publish. No algorithms here."""
