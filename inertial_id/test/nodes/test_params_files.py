"""config/params/<node>.yaml: written from the nodes' own declarations (the robot-independent ones at
their defaults), and what a node started like the launch files start it holds, read back over its
parameter services as ``ros2 param dump`` does; a launch argument (``-p``) wins over the file."""
import subprocess
import sys

import pytest
import yaml

from ros_helpers import call_idempotent

pytestmark = pytest.mark.ros


def test_the_params_files_are_what_the_nodes_declare():
    run = subprocess.run([sys.executable, "-m", "inertial_id.nodes.params_files", "--check"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]


def test_every_file_leaves_out_what_comes_from_the_profile():
    from inertial_id.nodes.launch import params_file
    from inertial_id.nodes.params_files import NODE_CLASSES
    for node in NODE_CLASSES:
        written = yaml.safe_load(params_file(node).read_text())[f"/{node}"]["ros__parameters"]
        assert written["autostart"] is True
        assert not {"robot_profile", "use_sim_time", "method", "joint_states_topic", "cutoff_hz",
                    "publish_hz"} & set(written), (node, sorted(written))


def test_a_node_holds_its_params_file_and_a_launch_argument_wins(ros_env, tmp_path, monkeypatch):
    import rclpy
    from rcl_interfaces.srv import GetParameters

    from inertial_id.nodes.launch import params_file, start_node_set
    written = yaml.safe_load(params_file("estimator").read_text())
    written["/estimator"]["ros__parameters"].update(publish_period_s=0.7, bounds_period_s=3.0)
    (tmp_path / "config" / "params").mkdir(parents=True)
    (tmp_path / "config" / "params" / "estimator.yaml").write_text(yaml.safe_dump(written))
    monkeypatch.setenv("INERTIAL_ID_CONFIG", str(tmp_path / "config"))     # looked up before the package's
    procs = start_node_set("kinova_gen3", ros_env, str(tmp_path), nodes=("estimator",),
                           estimator={"state_file": "none", "bounds_period_s": 4.0})
    node = rclpy.create_node("params_test")
    try:
        client = node.create_client(GetParameters, "/estimator/get_parameters")
        reply = call_idempotent(node, client, GetParameters.Request(names=["publish_period_s", "bounds_period_s",
                                                                           "state_max_age_s", "autostart"]))
        publish, bounds, max_age, autostart = reply.values
    finally:
        node.destroy_node()
        procs.stop()
    assert publish.double_value == 0.7                  # from the file (the default is 0.5)
    assert bounds.double_value == 4.0                   # the launch argument over the file's 3.0
    assert max_age.double_value == written["/estimator"]["ros__parameters"]["state_max_age_s"]
    assert autostart.bool_value
