"""inertial_id on a real uFactory xArm7 with its wrist F/T sensor (xarm_ros2 driver)."""
from inertial_id.nodes.launch import launch_description


def generate_launch_description():
    return launch_description("xarm7", with_sim=False)
