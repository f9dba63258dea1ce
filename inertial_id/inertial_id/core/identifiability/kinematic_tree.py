"""The kinematic facts identifiability needs, taken from a pinocchio model (what a URDF gives).

A :class:`KinematicTree` is constant: per moving body its parent, the joint placement at q = 0,
the joint's free modes ``Phi`` (motion subspace, ``[v; w]``, child frame) and an optional rotor.
Bodies are numbered 1..N in pinocchio's joint order (parents come first); 0 is the fixed world.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

# Joints whose motion subspace is constant in the child frame (RPNA covers "fixed free modes").
SUPPORTED_JOINTS = {
    "JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned",
    "JointModelRUBX", "JointModelRUBY", "JointModelRUBZ", "JointModelRevoluteUnboundedUnaligned",
    "JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned",
    "JointModelHX", "JointModelHY", "JointModelHZ", "JointModelHelicalUnaligned",
    "JointModelFreeFlyer", "JointModelSpherical", "JointModelTranslation", "JointModelPlanar",
}


class UnsupportedModelError(ValueError):
    """The model has a feature the identifiability analysis does not cover; the message names it."""


@dataclass(frozen=True)
class Rotor:
    """Axisymmetric motor rotor of a 1-DoF joint, mounted on the joint's parent body.

    ``X_parent_rotor``: rotor frame in the parent frame; its z axis is the motor axis.
    The rotor turns ``gear_ratio`` times as fast as the joint.
    """

    X_parent_rotor: pin.SE3
    gear_ratio: float


@dataclass(frozen=True)
class KinematicTree:
    """The model as RPNA sees it: bodies numbered from 1, parents, joint placements, free modes, rotors, gravity."""
    names: tuple[str, ...]                 # body (joint) names, index b-1 for body b
    parents: tuple[int, ...]               # parent body of body b (0 = world)
    X_parent_joint: tuple[pin.SE3, ...]    # joint frame in the parent frame at q = 0
    Phi: tuple[np.ndarray, ...]            # (6, nv_b) free modes in the child frame
    rotors: tuple[Rotor | None, ...]
    gravity: np.ndarray                    # (3,) world gravity, m/s^2

    @property
    def n_bodies(self) -> int:
        """Number of moving bodies."""
        return len(self.names)

    def children(self, b: int) -> list[int]:
        """Bodies whose parent is body ``b`` (0: the world)."""
        return [c for c in range(1, self.n_bodies + 1) if self.parents[c - 1] == b]


def motion_subspaces(model: pin.Model) -> list[np.ndarray]:
    """``Phi`` of every joint (index ``j - 1``) at the neutral configuration, in the joint's own
    frame (constant for :data:`SUPPORTED_JOINTS`)."""
    data = model.createData()
    pin.computeJointJacobians(model, data, pin.neutral(model))
    out = []
    for jid in range(1, model.njoints):
        # (6, nv) even when nv == 1, where pinocchio hands back a flat vector
        J = np.reshape(pin.getJointJacobian(model, data, jid, pin.ReferenceFrame.LOCAL), (6, model.nv))
        j = model.joints[jid]
        out.append(J[:, j.idx_v:j.idx_v + j.nv].copy())
    return out


def check_supported(model: pin.Model) -> None:
    """UnsupportedModelError unless every joint has free modes constant in its child frame."""
    for jid in range(1, model.njoints):
        kind = model.joints[jid].shortname()
        if kind not in SUPPORTED_JOINTS:
            raise UnsupportedModelError(
                f"joint '{model.names[jid]}' is of type {kind}, whose free modes are not fixed; "
                "the identifiability analysis covers revolute, prismatic, helical, planar, "
                "spherical, translation and free-flyer joints")


def default_rotors(model: pin.Model, gear_ratio: float = 50.0) -> tuple[Rotor | None, ...]:
    """One rotor per 1-DoF revolute/prismatic/helical joint, at the joint, spinning about its axis.

    The gear ratio is ``model.rotorGearRatio`` where the model declares a rotor inertia, else
    ``gear_ratio`` (a geared motor; with ratio 1 and a parallel axis the rotor is never identifiable).
    """
    rotors: list[Rotor | None] = []
    for jid, Phi in enumerate(motion_subspaces(model), start=1):
        j = model.joints[jid]
        if j.nv != 1:
            rotors.append(None)
            continue
        phi = Phi[:, 0]
        axis = phi[3:] if np.linalg.norm(phi[3:]) > 0 else phi[:3]
        R = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), axis / np.linalg.norm(axis))
        declared = model.rotorInertia[j.idx_v] > 0   # URDFs declare no motors; pinocchio's default ratio is 1
        n = float(model.rotorGearRatio[j.idx_v]) if declared else gear_ratio
        rotors.append(Rotor(model.jointPlacements[jid] * pin.SE3(R.matrix(), np.zeros(3)), n))
    return tuple(rotors)


def tree_from_model(model: pin.Model, rotors=None) -> KinematicTree:
    """Kinematic facts of ``model``; ``rotors``: one entry (or None) per moving joint."""
    check_supported(model)
    n = model.njoints - 1
    rotors = tuple(rotors) if rotors is not None else (None,) * n
    if len(rotors) != n:
        raise ValueError(f"{len(rotors)} rotor entries for {n} joints")
    for jid, rotor in enumerate(rotors, start=1):
        if rotor is not None and model.joints[jid].nv != 1:
            raise UnsupportedModelError(f"joint '{model.names[jid]}': rotors are covered on 1-DoF joints only")
    return KinematicTree(
        names=tuple(model.names[1:]),
        parents=tuple(int(p) for p in model.parents[1:]),
        X_parent_joint=tuple(pin.SE3(model.jointPlacements[j]) for j in range(1, n + 1)),
        Phi=tuple(motion_subspaces(model)),
        rotors=rotors,
        gravity=np.array(model.gravity.linear),
    )


def with_floating_base(model: pin.Model, name: str = "floating_base") -> pin.Model:
    """``model`` with its fixed world replaced by a free-flying body ``name`` (a no-op if the root
    is already free). The new body carries no inertia; every original body keeps its own."""
    if model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer":
        return model
    out = pin.Model()
    out.gravity = model.gravity
    out.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), name)
    for jid in range(1, model.njoints):
        new = out.addJoint(int(model.parents[jid]) + 1, model.joints[jid], model.jointPlacements[jid],
                           model.names[jid])
        out.appendBodyToJoint(new, model.inertias[jid], pin.SE3.Identity())
    return out


def without_gravity(model: pin.Model) -> pin.Model:
    """A copy of ``model`` with zero gravity."""
    out = pin.Model(model)
    out.gravity = pin.Motion.Zero()
    return out
