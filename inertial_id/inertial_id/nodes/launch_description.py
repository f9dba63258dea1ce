"""The launch_ros description of the node set, which ``launch/*.launch.py`` return: the one module
of the package that needs the ROS 2 launch packages (:mod:`.launch` starts the same node set
without them, where launch_ros is absent: PyPI wheels)."""
from __future__ import annotations

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from .launch import NODES, launch_arguments, node_parameters, params_file


def launch_description(default_profile: str, with_sim: bool):
    """A launch_ros LaunchDescription of the node set, for ``ros2 launch inertial_id ...`` and
    ``inertial-id launch``: the inertial_id nodes (builder, estimator, planner, payload compensator),
    plus the simulated arm standing in for the robot's driver when ``with_sim``. Arguments: :func:`launch_arguments`.
    The excitation planner does not move the robot until its ``~/start`` service is called."""
    arguments = launch_arguments(with_sim)

    def nodes(context):
        values = {name: context.perform_substitution(LaunchConfiguration(name)) for name, _, _ in arguments}
        # the node's params file first: the launch arguments override it
        return [Node(package="inertial_id", executable=name, name=name, output="screen",
                     parameters=[*(str(f) for f in [params_file(name)] if f is not None), node_parameters(name, values)])
                for name in NODES if with_sim or name != "sim_robot"]

    declared = [DeclareLaunchArgument(name, default_value=default_profile if default is None else default,
                                      description=description) for name, default, description in arguments]
    return LaunchDescription(declared + [OpaqueFunction(function=nodes)])
