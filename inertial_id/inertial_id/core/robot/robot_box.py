"""The robot-parameter box: how well the robot's own parameters are known, defined once.

The guaranteed estimators keep the robot part ``theta_r`` (link parameters in the joint frames,
pinocchio order, then friction ``[Fc, Fv, Ia, beta]`` per joint; see :mod:`.momentum`) as unknowns
inside this box (:func:`estimator_robot_box`: a calibration's when the profile names one), and the
excitation certifier proves its plans for every link and friction parameter inside a box that
contains it (:func:`certifier_half_widths`). Both are built here, so a certificate always covers
every robot the estimator allows.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .params import robot_parameters
from ..calibration import calibration_of

ROBOT_RELATIVE_ERROR = 0.05

# Half widths the box keeps where the nominal value is zero or small: a nominal zero (no friction in
# the URDF, a product of inertia that happens to vanish) is a lack of knowledge, not exact knowledge.
# Friction floors per joint, [Fc N m, Fv N m s/rad, Ia kg m^2, beta N m]; link floors relative to the
# link's own scale (largest |first moment|, largest |diagonal inertia|).
FRICTION_FLOOR = np.array([0.05, 0.02, 0.0, 0.05])


def _half_widths(model: pin.Model, relative: float, friction_floor) -> tuple[np.ndarray, np.ndarray]:
    nominal = robot_parameters(model)
    half = relative * np.abs(nominal)
    n_bodies = model.njoints - 1
    bodies = nominal[:10 * n_bodies].reshape(n_bodies, 10)
    floor = np.zeros((n_bodies, 10))
    floor[:, 1:4] = relative * np.abs(bodies[:, 1:4]).max(axis=1, keepdims=True)
    floor[:, 4:] = relative * np.abs(bodies[:, [4, 6, 9]]).max(axis=1, keepdims=True)
    floors = np.concatenate([floor.ravel(), np.tile(np.asarray(friction_floor, float), model.nv)])
    return nominal, np.maximum(half, floors)


def robot_parameter_box(model: pin.Model, relative: float = ROBOT_RELATIVE_ERROR,
                        friction_floor=FRICTION_FLOOR) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nominal, lower, upper) of the robot part ``theta_r``: every nominal value ± ``relative`` of its
    magnitude, and at least ± ``relative`` of its link's scale (first moments: the link's largest
    |m c|; inertias: its largest diagonal entry) or ± the friction floor; only the mass, never zero,
    keeps a purely relative box."""
    nominal, half = _half_widths(model, relative, friction_floor)
    return nominal, nominal - half, nominal + half


def link_half_widths(model: pin.Model, relative: float = ROBOT_RELATIVE_ERROR,
                     absolute_floor=None) -> np.ndarray:
    """(links, 10) half-widths about the nominal link parameters (joint frames, pinocchio order) of a
    box that contains the link part of :func:`robot_parameter_box` (rounded up, so ``nominal ±
    half-width`` covers its float bounds), widened to ``absolute_floor`` (10,) where that is larger."""
    nominal, lower, upper = robot_parameter_box(model, relative)
    n_links = 10 * (model.njoints - 1)
    half = np.nextafter(np.maximum(upper - nominal, nominal - lower)[:n_links], np.inf).reshape(-1, 10)
    if absolute_floor is not None:
        half = np.maximum(half, np.asarray(absolute_floor, dtype=float)[None, :])
    return half


def estimator_robot_box(robot, relative: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nominal, lower, upper) of ``theta_r`` as the guaranteed estimators of ``robot`` take it: the
    calibration's box when the profile names one, else :func:`robot_parameter_box` with ``relative``
    (default: the profile's ``identification.robot_relative_error``)."""
    calibration = calibration_of(robot)
    if calibration is not None:
        return calibration.robot_box(robot.model)
    if relative is None:
        relative = robot.spec.identification.robot_relative_error
    return robot_parameter_box(robot.model, relative)


def certifier_half_widths(robot, relative: float, absolute_floor=None) -> tuple[np.ndarray, np.ndarray]:
    """Half-widths ``(links (n, 10), friction (n, 4))`` about the certifier's nominal robot (the model's
    link parameters, friction ``[0, 0, armature, 0]``) of a box that contains
    :func:`estimator_robot_box` (rounded up); the link part is at least :func:`link_half_widths`."""
    nominal = robot_parameters(robot.model)
    _, lower, upper = estimator_robot_box(robot, relative)
    half = np.nextafter(np.maximum(np.maximum(upper - nominal, nominal - lower), 0.0), np.inf)
    n_links = 10 * (robot.model.njoints - 1)
    links = np.maximum(half[:n_links].reshape(-1, 10), link_half_widths(robot.model, relative, absolute_floor))
    return links, half[n_links:].reshape(-1, 4)
