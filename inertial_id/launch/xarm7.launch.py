"""inertial_id on a real uFactory xArm7 with its external F/T sensor (xarm_ros2 driver, report type
dev or rich). The arm moves only after `ros2 service call /excitation_planner/start std_srvs/srv/Trigger`."""
from inertial_id.nodes.launch_description import launch_description


def generate_launch_description():
    return launch_description("xarm7", with_sim=False)
