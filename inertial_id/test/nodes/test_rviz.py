"""RViz: the payload markers (content and frames) and the shipped .rviz configuration."""

import numpy as np
import pytest
import yaml

from inertial_id.core.data import markers
from inertial_id.core.robot import params
from inertial_id.core.robot.model import load_robot, payload_params

from paths import PACKAGE

CONFIG = PACKAGE / "config" / "rviz" / "kinova_gen3.rviz"


def box_inertia(m, sides):
    s2 = np.asarray(sides) ** 2
    return m / 12.0 * np.array([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]])


def test_equivalent_box_reproduces_mass_and_inertia(rng):
    from conftest import random_params
    for _ in range(20):
        pi = random_params(rng)
        c, R, sides = markers.equivalent_box(pi)
        m, c_ref, I_C = params.com_from_params(pi)
        np.testing.assert_allclose(c, c_ref)
        # the box, rotated by the marker's orientation, has the estimate's inertia about the COM
        q = markers.quaternion_xyzw(R)
        x, y, z, w = q
        R_q = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        np.testing.assert_allclose(R_q @ np.diag(box_inertia(m, sides)) @ R_q.T, I_C, atol=1e-9 * max(1, m))


def test_payload_markers_content():
    truth = payload_params("dumbbell_5lb")
    lo, hi = truth - 0.05 * np.abs(truth) - 1e-3, truth + 0.05 * np.abs(truth) + 1e-3
    specs = {(s.ns, s.id): s for s in markers.payload_markers(truth, lo, hi)}
    assert set(specs) == {("payload", 0), ("payload", 1), ("bounds", 0), ("text", 0)}
    com = truth[1:4] / truth[0]
    np.testing.assert_allclose(specs["payload", 0].position, com)
    assert specs["payload", 0].type == markers.SPHERE and specs["payload", 1].type == markers.CUBE
    # a dumbbell along the flange x axis: the longest side of its box is the one along x
    R = np.array(__import__("pinocchio").Quaternion(*specs["payload", 1].orientation_xyzw[[3, 0, 1, 2]])
                 .toRotationMatrix())
    longest_axis = R[:, int(np.argmax(specs["payload", 1].scale))]
    assert abs(longest_axis[0]) > 0.99
    bounds = specs["bounds", 0]
    assert np.all(np.abs(com - bounds.position) <= bounds.scale / 2)        # the COM box holds the COM
    assert np.all(bounds.scale > 0) and bounds.rgba[3] < 1
    text = specs["text", 0]
    assert text.type == markers.TEXT_VIEW_FACING and f"{truth[0]:.3f} kg" in text.text and f"{lo[0]:.3f}" in text.text


def test_no_markers_for_unusable_estimates():
    assert markers.payload_markers(np.full(10, np.nan)) == []
    inconsistent = payload_params("dumbbell_5lb").copy()
    inconsistent[4] = -1.0                                         # negative Ixx: no inertia box
    kinds = {(s.ns, s.id) for s in markers.payload_markers(inconsistent)}
    assert ("payload", 1) not in kinds and ("payload", 0) in kinds
    lo = np.full(10, -1.0)                                         # mass may be 0: COM unbounded
    kinds = {(s.ns, s.id) for s in markers.payload_markers(payload_params("dumbbell_5lb"), lo, -lo)}
    assert ("bounds", 0) not in kinds


@pytest.mark.ros
def test_marker_array_message_in_the_estimate_frame():
    from std_msgs.msg import Header
    from visualization_msgs.msg import Marker

    from inertial_id.nodes.markers import marker_array
    assert (Marker.CUBE, Marker.SPHERE, Marker.TEXT_VIEW_FACING) == (markers.CUBE, markers.SPHERE,
                                                                     markers.TEXT_VIEW_FACING)
    truth = payload_params("dumbbell_5lb")
    msg = marker_array(Header(frame_id="end_effector_link"), truth, truth - 0.01, truth + 0.01)
    assert len(msg.markers) == 5
    assert {m.header.frame_id for m in msg.markers} == {"end_effector_link"}
    # the previous estimate's markers are cleared first, then this estimate's are added
    assert msg.markers[0].action == Marker.DELETEALL
    assert all(m.action == Marker.ADD for m in msg.markers[1:])
    sphere = next(m for m in msg.markers if m.type == Marker.SPHERE)
    assert sphere.pose.position.x == pytest.approx(truth[1] / truth[0])


def test_rviz_config_shows_the_estimate_markers_in_the_payload_frame():
    cfg = yaml.safe_load(CONFIG.read_text())
    manager = cfg["Visualization Manager"]
    displays = {d["Class"]: d for d in manager["Displays"]}
    assert {"rviz_default_plugins/Grid", "rviz_default_plugins/TF", "rviz_default_plugins/MarkerArray"} <= set(displays)
    marker_display = displays["rviz_default_plugins/MarkerArray"]
    assert marker_display["Enabled"]
    assert marker_display["Topic"]["Value"] == "/inertial_estimate/markers"
    # the estimator publishes markers reliable and volatile: the display must subscribe compatibly
    assert marker_display["Topic"]["Reliability Policy"] in ("Reliable", "Best Effort")
    assert marker_display["Topic"]["Durability Policy"] == "Volatile"
    # the fixed frame is the Gen3's base, the markers in the payload frame reach it through /tf, the
    # robot model comes latched (the other robots' files: test_robot_state)
    assert manager["Global Options"]["Fixed Frame"] == load_robot("kinova_gen3").spec.frames.base
    model = displays["rviz_default_plugins/RobotModel"]
    assert model["Description Source"] == "Topic" and model["Description Topic"]["Value"] == "/robot_description"
    assert model["Description Topic"]["Durability Policy"] == "Transient Local"
