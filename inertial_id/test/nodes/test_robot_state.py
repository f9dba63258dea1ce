"""RViz's view of the robot: the links' transforms (TF) and robot_description of the simulated arm,
and markers that are replaced, never left stale."""
import numpy as np
import pinocchio as pin
import pytest
import yaml

from inertial_id.core.robot import robot_state
from inertial_id.core.robot.model import load_robot, payload_params

from paths import PACKAGE

LAUNCHED = ("kinova_gen3", "xarm7", "digit_arm")       # the profiles of launch/*.launch.py


@pytest.mark.parametrize("name", LAUNCHED)
def test_link_transforms_compose_to_forward_kinematics(name, rng):
    robot = load_robot(name)
    model, data = robot.model, robot.model.createData()
    edges = robot_state.link_tree(model)
    children = [c for _, c in edges]
    assert len(children) == len(set(children))                   # a tree: one parent per link
    names = {model.frames[i].name for e in edges for i in e}
    base, payload = robot.spec.frames.base, robot.payload_frame
    assert {base, payload} <= names
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    T = chain_pose(robot_state.link_transforms(model, data, q, edges), base, payload)
    pin.framesForwardKinematics(model, data, q)
    expected = data.oMf[model.getFrameId(base)].actInv(data.oMf[model.getFrameId(payload)])
    assert np.allclose(T.homogeneous, expected.homogeneous, atol=1e-12)
    # and they move with the joints
    moved = chain_pose(robot_state.link_transforms(model, data, q + 0.3, edges), base, payload)
    assert not np.allclose(moved.homogeneous, T.homogeneous, atol=1e-6)


def chain_pose(transforms, base, frame):
    """Pose of ``frame`` in ``base`` from the parent-to-child transforms (as TF composes them)."""
    tfs = {t.child: t for t in transforms}
    T = pin.SE3.Identity()
    while frame != base:
        t = tfs[frame]
        x, y, z, w = t.rotation_xyzw
        assert np.isclose(np.linalg.norm(t.rotation_xyzw), 1.0)
        T = pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), t.translation_m) * T
        frame = t.parent
    return T


@pytest.mark.parametrize("name", LAUNCHED)
def test_robot_description_is_the_model_urdf(name):
    robot = load_robot(name)
    model = pin.buildModelFromXML(robot_state.robot_description(robot))
    assert model.nq == robot.model.nq and [f.name for f in model.frames] == [f.name for f in robot.model.frames]


@pytest.mark.ros
def test_robot_description_is_latched_and_tf_published_when_tf2_msgs_exist():
    """An RViz that starts later still gets the description; /tf needs tf2_msgs (absent from the
    PyPI ROS wheels), without it nothing is published and nothing fails."""
    import importlib.util
    import time

    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import String

    from inertial_id.nodes.common import LATCHED_QOS
    from inertial_id.nodes.launch import isolated_ros_env
    from inertial_id.nodes.robot_state import RobotStatePublisher
    import os
    env = isolated_ros_env()
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    robot = load_robot("xarm7")
    rclpy.init()
    try:
        source, viewer = Node("robot_state_source"), Node("late_viewer")
        rsp = RobotStatePublisher(source, robot)
        got = []
        viewer.create_subscription(String, "/robot_description", lambda m: got.append(m.data), LATCHED_QOS)
        tfs = []
        if importlib.util.find_spec("tf2_msgs") is not None:
            from tf2_msgs.msg import TFMessage
            viewer.create_subscription(TFMessage, "/tf", tfs.append, 10)
        else:
            assert rsp.pub_tf is None
        deadline = time.monotonic() + 20.0
        k = 0
        while time.monotonic() < deadline and not (got and (tfs or rsp.pub_tf is None)):
            rsp.update(0.05 * k, np.zeros(robot.model.nq))
            k += 1
            for n in (source, viewer):
                rclpy.spin_once(n, timeout_sec=0.05)
        assert got and got[0] == robot_state.robot_description(robot)
        if rsp.pub_tf is not None:
            assert {t.child_frame_id for t in tfs[0].transforms} >= {robot.payload_frame}
        source.destroy_node()
        viewer.destroy_node()
    finally:
        rclpy.try_shutdown()


@pytest.mark.ros
def test_markers_are_replaced_not_accumulated():
    from std_msgs.msg import Header
    from visualization_msgs.msg import Marker

    from inertial_id.nodes.markers import marker_array
    truth = payload_params("dumbbell_5lb")
    header = Header(frame_id="link_eef")
    first = marker_array(header, truth, truth - 0.01, truth + 0.01)
    second = marker_array(header, truth * 1.01, truth - 0.005, truth + 0.005)
    ids = lambda msg: sorted((m.ns, m.id) for m in msg.markers[1:])   # noqa: E731
    assert ids(first) == ids(second)                                 # same markers, same ids: replaced
    # a mass interval that reaches 0 has no COM box: it is deleted with the rest, not left stale
    lo = truth - 0.01
    lo[0] = 0.0
    third = marker_array(header, truth, lo, truth + 0.01)
    assert third.markers[0].action == Marker.DELETEALL and ("bounds", 0) not in ids(third)
    # an unusable estimate clears the display
    nothing = marker_array(header, np.full(10, np.nan))
    assert [m.action for m in nothing.markers] == [Marker.DELETEALL]


def test_an_rviz_config_per_launched_robot_with_its_base_as_fixed_frame():
    """config/rviz/<profile>.rviz: the robot's base as fixed frame, in one TF tree with the payload
    frame the markers are stamped in; the files differ in nothing else."""
    folder = PACKAGE / "config" / "rviz"
    assert sorted(p.stem for p in folder.glob("*.rviz")) == sorted(LAUNCHED)
    shared = None
    for name in LAUNCHED:
        robot = load_robot(name)
        cfg = yaml.safe_load((folder / f"{name}.rviz").read_text())
        options = cfg["Visualization Manager"].pop("Global Options")
        assert options["Fixed Frame"] == robot.spec.frames.base, name
        assert shared is None or cfg == shared, name
        shared = cfg
        parent = {robot.model.frames[c].name: robot.model.frames[p].name for p, c in robot_state.link_tree(robot.model)}
        frame, chain = robot.payload_frame, [robot.payload_frame]
        while frame in parent:
            frame = parent[frame]
            chain.append(frame)
        assert options["Fixed Frame"] in chain, name
