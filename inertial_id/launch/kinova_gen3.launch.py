"""inertial_id on a real Kinova Gen3 with the ros2_kortex driver (joint torques in /joint_states).
The arm moves only after `ros2 service call /excitation_planner/start std_srvs/srv/Trigger`."""
from inertial_id.nodes.launch_description import launch_description


def generate_launch_description():
    return launch_description("kinova_gen3", with_sim=False)
