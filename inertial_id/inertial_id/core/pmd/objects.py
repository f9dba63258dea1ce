"""The eight test objects of point-mass discretization's reference (Fig. 3) as composite boxes with exact inertia.

A 3D-printed bar (16 x 12 x 4 cm, PLA, modelled as a uniform box) with a 4 x 3 grid of slots, each
empty or holding a steel (101 g) or ABS (17 g) cube of 2.4 cm. Weights add to the bar's mass (the
printed slot walls are part of the bar's mass), so each object is an exact sum of uniform boxes.
The bar sits on the sensor flange: its frame O is at the bar's centre, 2 cm above the flange along z.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..robot import params
from .shapes import Box

BAR_SIZE_M = (0.16, 0.12, 0.04)
BAR_MASS_KG = 0.060
WEIGHT_SIZE_M = (0.024, 0.024, 0.024)
STEEL_KG, ABS_KG = 0.101, 0.017
SLOT_X_M = (-0.06, -0.02, 0.02, 0.06)     # columns c0..c3
SLOT_Y_M = (-0.04, 0.0, 0.04)             # rows r0..r2
X_SO = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.02]))   # bar frame in the sensor (flange) frame

# Slot fillings, rows r0..r2 top to bottom, columns c0..c3 left to right: S steel, A ABS, . empty.
CONFIGURATIONS = {
    "Hammer":      ("...S", "AAAS", "...S"),
    "Barbell":     ("S..S", "S..S", "S..S"),
    "Tee":         ("...A", "SSSA", "...A"),
    "Uniform":     ("SSSS", "SSSS", "SSSS"),
    "Corners":     ("S..S", "....", "S..S"),
    "Rod":         ("....", "SSSS", "...."),
    "Half-N-Half": ("SSAA", "SSAA", "SSAA"),
    "Empty":       ("....", "....", "...."),
}


@dataclass(frozen=True)
class BenchObject:
    """A test object: name, outline, pose in the sensor frame, exact parameters (pinocchio order, sensor frame)."""
    name: str
    shape: Box                  # the bar's outline, frame O
    X_SO: pin.SE3               # shape pose in the sensor frame
    pi_S: np.ndarray            # exact parameters, pinocchio order, sensor frame


def _params_O(layout: tuple[str, str, str]) -> np.ndarray:
    pi = params.box_inertia_params(BAR_MASS_KG, BAR_SIZE_M)
    for y, row in zip(SLOT_Y_M, layout):
        for x, slot in zip(SLOT_X_M, row):
            if slot != ".":
                pi = pi + params.box_inertia_params(STEEL_KG if slot == "S" else ABS_KG, WEIGHT_SIZE_M, (x, y, 0.0))
    return pi


def bench_object(name: str) -> BenchObject:
    """The test object ``name``; KeyError naming the available ones."""
    if name not in CONFIGURATIONS:
        raise KeyError(f"unknown test object '{name}' (available: {', '.join(CONFIGURATIONS)})")
    return BenchObject(name, Box(BAR_SIZE_M), X_SO, params.transform_params(_params_O(CONFIGURATIONS[name]), X_SO))


def bench_objects() -> list[BenchObject]:
    """All eight test objects."""
    return [bench_object(name) for name in CONFIGURATIONS]
