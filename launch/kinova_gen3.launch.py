"""inertial_id on a real Kinova Gen3 (ros2_kortex driver publishing /joint_states with torques)."""
from inertial_id.nodes.launch import launch_description


def generate_launch_description():
    return launch_description("kinova_gen3", with_sim=False)
