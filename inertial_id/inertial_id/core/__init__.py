"""ROS-free numerics of inertial_id. Nothing below this package imports rclpy."""
