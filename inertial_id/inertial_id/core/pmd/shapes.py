"""Payload shapes and the points sampled inside them (the reference's section III-B).

A shape is a closed solid described in its own frame O; a profile places it in the payload (flange)
frame P with the pose ``X_PO``. Point masses sit on a cubic lattice of pitch ``(1/density)^(1/3)``,
centred on the shape's bounding box, keeping the lattice points inside the solid.

Profile YAML schema (``payload: shape:``), lengths in metres::

    type: box | cylinder | sphere | composite | mesh
    size: [x, y, z]                          # box
    radius: 0.03                             # cylinder (axis along z) and sphere
    length: 0.10                             # cylinder
    boxes: [{size: [x, y, z], xyz: [x, y, z]}, ...]   # composite: axis-aligned boxes in O
    file: gripper.stl                        # mesh (STL/OBJ, anything trimesh reads), watertight
    scale: 0.001                             # mesh: file units -> metres (default 1)
    pose: {xyz: [0, 0, 0.03], rpy: [0, 0, 0]}   # X_PO, shape frame in the payload frame
    density_per_cm3: 0.04                    # lattice points per cubic centimetre

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import trimesh

# A wrist-held payload lies within this distance of the flange; anything farther is a pose typo
# (millimetres given as metres, a base-frame pose pasted into the flange frame).
MAX_REACH_M = 1.0
DEFAULT_DENSITY_PER_CM3 = 0.04


class ShapeError(ValueError):
    """A shape description that cannot be used; the message names the problem."""


@dataclass(frozen=True)
class Box:
    """Axis-aligned box (m, object frame O): full edge lengths and centre."""
    size: tuple[float, float, float]
    center: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corners (m, frame O)."""
        c, h = np.asarray(self.center), 0.5 * np.asarray(self.size)
        return np.array([c - h, c + h])

    def contains(self, p_O: np.ndarray) -> np.ndarray:
        """(N,) bool: which points ``p_O`` (N, 3) lie inside."""
        lo, hi = self.bounds()
        return np.all((p_O >= lo) & (p_O <= hi), axis=1)


@dataclass(frozen=True)
class Cylinder:
    """Solid cylinder about the z axis of frame O, centred at its origin (m)."""
    radius: float
    length: float

    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corners of the bounding box (m, frame O)."""
        h = np.array([self.radius, self.radius, 0.5 * self.length])
        return np.array([-h, h])

    def contains(self, p_O: np.ndarray) -> np.ndarray:
        """(N,) bool: which points ``p_O`` (N, 3) lie inside."""
        return (np.hypot(p_O[:, 0], p_O[:, 1]) <= self.radius) & (np.abs(p_O[:, 2]) <= 0.5 * self.length)


@dataclass(frozen=True)
class Sphere:
    """Solid sphere centred at the origin of frame O (m)."""
    radius: float

    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corners of the bounding box (m, frame O)."""
        return np.array([-np.full(3, self.radius), np.full(3, self.radius)])

    def contains(self, p_O: np.ndarray) -> np.ndarray:
        """(N,) bool: which points ``p_O`` (N, 3) lie inside."""
        return np.linalg.norm(p_O, axis=1) <= self.radius


@dataclass(frozen=True)
class Composite:
    """Union of boxes (m, frame O)."""
    boxes: tuple[Box, ...]

    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corners of the bounding box (m, frame O)."""
        b = np.array([box.bounds() for box in self.boxes])
        return np.array([b[:, 0].min(axis=0), b[:, 1].max(axis=0)])

    def contains(self, p_O: np.ndarray) -> np.ndarray:
        """(N,) bool: which points ``p_O`` (N, 3) lie in any of the boxes."""
        return np.any([box.contains(p_O) for box in self.boxes], axis=0)


@dataclass(frozen=True)
class Mesh:
    """A watertight triangle mesh (m, frame O)."""
    mesh: trimesh.Trimesh

    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corners of the bounding box (m, frame O)."""
        return np.asarray(self.mesh.bounds)

    def contains(self, p_O: np.ndarray) -> np.ndarray:
        # Generalized winding number (sum of signed solid angles, Van Oosterom-Strackee): exact for
        # watertight meshes and needs no spatial index (trimesh's ray test needs rtree).
        """(N,) bool: which points ``p_O`` (N, 3) lie inside (winding number)."""
        tri = self.mesh.triangles
        inside = np.empty(len(p_O), dtype=bool)
        for start in range(0, len(p_O), 256):
            d = tri[None, :, :, :] - p_O[start:start + 256, None, None, :]
            a, b, c = d[:, :, 0], d[:, :, 1], d[:, :, 2]
            la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
            det = np.einsum("ptk,ptk->pt", a, np.cross(b, c))
            den = (la * lb * lc + np.einsum("ptk,ptk->pt", a, b) * lc
                   + np.einsum("ptk,ptk->pt", b, c) * la + np.einsum("ptk,ptk->pt", c, a) * lb)
            winding = np.arctan2(det, den).sum(axis=1) / (2 * np.pi)
            inside[start:start + 256] = np.abs(winding) > 0.5
        return inside


Shape = Box | Cylinder | Sphere | Composite | Mesh


def load_mesh(path: str | Path, scale: float = 1.0) -> Mesh:
    """A watertight triangle mesh from a file (STL, OBJ, ...), scaled to metres."""
    path = Path(path)
    if not path.exists():
        raise ShapeError(f"mesh file '{path}' not found")
    try:
        mesh = trimesh.load_mesh(str(path))
    except Exception as exc:  # trimesh raises many types for unreadable files
        raise ShapeError(f"cannot read mesh '{path}': {exc}") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ShapeError(f"mesh '{path}' holds no triangles")
    if not mesh.is_watertight:
        raise ShapeError(f"mesh '{path}' is not watertight: its inside is undefined "
                         f"(close the holes, e.g. with trimesh.repair.fill_holes)")
    mesh.apply_scale(scale)
    return Mesh(mesh)


def _positive(spec: dict, key: str, n: int | None = None):
    try:
        value = np.asarray(spec[key], dtype=float)
    except KeyError:
        raise ShapeError(f"shape type '{spec.get('type')}' needs '{key}'") from None
    except (TypeError, ValueError):
        raise ShapeError(f"shape '{key}' must be numeric, got {spec[key]!r}") from None
    if value.shape != (() if n is None else (n,)) or not np.all(np.isfinite(value)) or np.any(value <= 0):
        raise ShapeError(f"shape '{key}' must be {'a positive number' if n is None else f'{n} positive numbers'}"
                         f", got {spec[key]!r}")
    return float(value) if n is None else tuple(value.tolist())


def _vector3(spec: dict, key: str) -> np.ndarray:
    value = np.asarray(spec.get(key, [0.0, 0.0, 0.0]), dtype=float)
    if value.shape != (3,) or not np.all(np.isfinite(value)):
        raise ShapeError(f"'{key}' must be 3 finite numbers, got {spec.get(key)!r}")
    return value


def shape_from_dict(spec: dict, base_dir: str | Path | None = None) -> tuple[Shape, pin.SE3]:
    """(shape, X_PO) from a profile's ``payload: shape:`` mapping (schema in the module docstring)."""
    if not isinstance(spec, dict) or "type" not in spec:
        raise ShapeError("a payload shape needs a 'type' (box, cylinder, sphere, composite, mesh)")
    kind = spec["type"]
    shape: Shape
    if kind == "box":
        shape = Box(_positive(spec, "size", 3))
    elif kind == "cylinder":
        shape = Cylinder(_positive(spec, "radius"), _positive(spec, "length"))
    elif kind == "sphere":
        shape = Sphere(_positive(spec, "radius"))
    elif kind == "composite":
        if not spec.get("boxes"):
            raise ShapeError("a composite shape needs a non-empty list 'boxes'")
        shape = Composite(tuple(Box(_positive(b, "size", 3), tuple(_vector3(b, "xyz"))) for b in spec["boxes"]))
    elif kind == "mesh":
        if "file" not in spec:
            raise ShapeError("a mesh shape needs 'file'")
        path = Path(spec["file"])
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        shape = load_mesh(path, _positive(spec, "scale") if "scale" in spec else 1.0)
    else:
        raise ShapeError(f"unknown shape type '{kind}' (box, cylinder, sphere, composite, mesh)")
    pose = spec.get("pose") or {}
    X_PO = pin.SE3(pin.rpy.rpyToMatrix(*_vector3(pose, "rpy")), _vector3(pose, "xyz"))
    return shape, X_PO


def sample_points(shape: Shape, density_per_cm3: float = DEFAULT_DENSITY_PER_CM3,
                  X_PO: pin.SE3 | None = None, max_reach_m: float = MAX_REACH_M) -> np.ndarray:
    """Lattice points inside ``shape``, expressed in the payload frame P: ``(n, 3)`` metres."""
    X_PO = pin.SE3.Identity() if X_PO is None else X_PO
    if not np.isfinite(density_per_cm3) or density_per_cm3 <= 0:
        raise ShapeError(f"point density must be positive, got {density_per_cm3}")
    pitch_m = 0.01 * density_per_cm3 ** (-1.0 / 3.0)
    lo, hi = shape.bounds()
    counts = np.floor((hi - lo) / pitch_m).astype(int) + 1
    if np.prod(counts) > 2_000_000:
        raise ShapeError(f"density {density_per_cm3}/cm^3 gives a lattice of {np.prod(counts)} points; "
                         f"use a lower density")
    axes = [0.5 * (l + h) + (np.arange(n) - 0.5 * (n - 1)) * pitch_m for l, h, n in zip(lo, hi, counts)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    p_O = grid[shape.contains(grid)]
    if len(p_O) == 0:
        raise ShapeError(f"density {density_per_cm3}/cm^3 (lattice pitch {100 * pitch_m:.2f} cm) puts no "
                         f"point inside the shape; raise the density")
    if np.linalg.matrix_rank(np.column_stack([p_O, np.ones(len(p_O))]), tol=1e-9) < 4:
        # points on a plane cannot carry a general inertia (and their pseudo-inertia is singular)
        raise ShapeError(f"density {density_per_cm3}/cm^3 gives {len(p_O)} points, all in one plane; "
                         f"raise the density so that they span the volume")
    p_P = p_O @ X_PO.rotation.T + X_PO.translation
    reach = np.linalg.norm(p_P, axis=1).max()
    if reach > max_reach_m:
        raise ShapeError(f"the shape pose puts payload points {reach:.3g} m from the flange, beyond the "
                         f"plausible {max_reach_m} m (pose in metres, in the flange frame?)")
    return p_P


def bounding_box_size(shape: Shape) -> np.ndarray:
    """Side lengths of the shape's axis-aligned bounding box in its own frame (metres)."""
    lo, hi = shape.bounds()
    return hi - lo
