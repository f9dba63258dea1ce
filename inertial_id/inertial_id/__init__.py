"""inertial_id: online identification of robot and payload inertial parameters.

Layers: ``inertial_id.core`` (ROS-free numerics), ``inertial_id.nodes`` (thin rclpy nodes),
``inertial_id.cli`` (the ``inertial-id`` command). The messages are the ``inertial_id_msgs`` package's.
"""
__version__ = "0.1.0"
