"""Launch files: standard launch_ros form, reading the same profiles as the embedded route."""
import ast
import importlib.util
from pathlib import Path

import pytest

LAUNCH = Path(__file__).resolve().parents[1] / "launch"
FILES = ["sim.launch.py", "kinova_gen3.launch.py", "xarm7.launch.py"]


@pytest.mark.parametrize("name", FILES)
def test_launch_file_defines_generate_launch_description(name):
    tree = ast.parse((LAUNCH / name).read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)


@pytest.mark.parametrize("name, nodes, profile", [("sim.launch.py", 4, "kinova_gen3"),
                                                  ("kinova_gen3.launch.py", 3, "kinova_gen3"),
                                                  ("xarm7.launch.py", 3, "xarm7")])
def test_launch_description_builds_where_launch_ros_is_installed(name, nodes, profile):
    if importlib.util.find_spec("launch_ros") is None:
        pytest.skip("launch_ros is not on PyPI: only a ROS install can build launch descriptions; "
                    "test_node_set_matches_the_launch_files checks the node set on the wheel route")
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), LAUNCH / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from launch_ros.actions import Node
    desc = module.generate_launch_description()
    assert sum(isinstance(e, Node) for e in desc.entities) == nodes


def test_node_set_matches_the_launch_files():
    """Both routes start the same executables: CMake installs scripts/<node> for each node."""
    from inertial_id.nodes.launch import NODES
    cmake = (LAUNCH.parent / "CMakeLists.txt").read_text()
    for node in NODES:
        assert (LAUNCH.parent / "scripts" / node).exists()
        assert f"scripts/{node}" in cmake
        assert importlib.util.find_spec(f"inertial_id.nodes.{node}") is not None
