"""A simulated arm standing in for the driver, and the inertial_id nodes:
ros2 launch inertial_id sim.launch.py robot_profile:=xarm7"""
from inertial_id.nodes.launch_description import launch_description


def generate_launch_description():
    return launch_description("kinova_gen3", with_sim=True)
