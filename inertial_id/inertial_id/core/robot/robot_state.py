"""What a robot_state_publisher gives RViz, computed with pinocchio: the robot's URDF text and the
transform of every link from its parent link at a joint configuration (ROS-free; the simulated arm's
node publishes them on /robot_description and /tf)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from .model import resolve_model_path


@dataclass
class LinkTransform:
    """Pose of link ``child`` in link ``parent`` (TF: header.frame_id = parent, child_frame_id = child)."""

    parent: str
    child: str
    translation_m: np.ndarray       # (3,), m
    rotation_xyzw: np.ndarray       # (4,), unit quaternion


def robot_description(robot) -> str:
    """The URDF text of the robot's model, as a driver publishes it on /robot_description."""
    return Path(resolve_model_path(robot.spec.model.urdf, robot.path)).read_text()


def link_tree(model: pin.Model) -> list[tuple[int, int]]:
    """``(parent, child)`` frame indices of every link (BODY frame) that has a parent link; the root
    link, whose parent is the universe, is the tree's root and has none."""
    edges = []
    for child, frame in enumerate(model.frames):
        if frame.type != pin.FrameType.BODY:
            continue
        parent = frame.parentFrame
        while parent > 0 and model.frames[parent].type != pin.FrameType.BODY:
            parent = model.frames[parent].parentFrame
        if parent > 0:
            edges.append((parent, child))
    return edges


def link_transforms(model: pin.Model, data: pin.Data, q, edges=None) -> list[LinkTransform]:
    """The transform of every link from its parent link at configuration ``q`` (forward kinematics)."""
    pin.framesForwardKinematics(model, data, np.asarray(q, dtype=float))
    out = []
    for parent, child in (link_tree(model) if edges is None else edges):
        T = data.oMf[parent].actInv(data.oMf[child])
        quat = pin.Quaternion(T.rotation)
        out.append(LinkTransform(model.frames[parent].name, model.frames[child].name, T.translation.copy(),
                                 np.array([quat.x, quat.y, quat.z, quat.w])))
    return out
