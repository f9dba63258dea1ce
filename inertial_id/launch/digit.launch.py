"""inertial_id on an Agility Digit arm. Digit has no ROS 2 driver of its own: /joint_states come from,
and trajectories go to, the bridge named in the profile (controller.bridge)."""
from inertial_id.nodes.launch_description import launch_description


def generate_launch_description():
    return launch_description("digit_arm", with_sim=False)
