import numpy as np
import pinocchio as pin
import pytest
import trimesh

from inertial_id.core.pmd.shapes import (Box, Composite, Cylinder, ShapeError, Sphere, load_mesh, sample_points,
                                         shape_from_dict)


def test_box_at_paper_density_gives_the_papers_56_points_inside():
    p = sample_points(Box((0.20, 0.10, 0.05)), 0.04)
    assert p.shape == (56, 3)
    assert np.all(np.abs(p) <= [0.10, 0.05, 0.025])


def test_points_follow_the_pose_and_density():
    X = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, np.pi / 2), np.array([0.0, 0.0, 0.05]))
    p_O = sample_points(Cylinder(0.03, 0.1), 1.0)
    p_P = sample_points(Cylinder(0.03, 0.1), 1.0, X)
    np.testing.assert_allclose(p_P, p_O @ X.rotation.T + X.translation)
    volume_cm3 = np.pi * 3.0**2 * 10.0
    assert abs(len(p_O) / volume_cm3 - 1.0) < 0.15
    assert np.all(np.hypot(p_O[:, 0], p_O[:, 1]) <= 0.03)


def test_mesh_and_primitive_agree(tmp_path):
    for suffix in ("stl", "obj"):
        path = tmp_path / f"ball.{suffix}"
        trimesh.creation.icosphere(subdivisions=4, radius=50.0).export(path)   # millimetres
        mesh = load_mesh(path, scale=1e-3)
        p_mesh, p_sphere = sample_points(mesh, 0.5), sample_points(Sphere(0.05), 0.5)
        # the faceted sphere lies inside the true one: at most a few lattice points differ
        assert len(p_sphere) - 8 <= len(p_mesh) <= len(p_sphere)


def test_composite_is_the_union_of_its_boxes():
    spec = {"type": "composite", "boxes": [{"size": [0.1, 0.02, 0.02]}, {"size": [0.02, 0.1, 0.02], "xyz": [0.06, 0, 0]}]}
    shape, _ = shape_from_dict(spec)
    assert isinstance(shape, Composite)
    p = sample_points(shape, 1.0)
    inside_any = np.any([b.contains(p) for b in shape.boxes], axis=0)
    assert inside_any.all() and len(p) > 20


def test_open_mesh_is_rejected(tmp_path):
    mesh = trimesh.creation.box(extents=[1, 1, 1])
    mesh.update_faces(np.arange(len(mesh.faces) - 2))
    path = tmp_path / "open.stl"
    mesh.export(path)
    with pytest.raises(ShapeError, match="not watertight"):
        load_mesh(path)


def test_density_without_interior_points_is_rejected():
    # two 1 cm cubes 10 cm apart: a 2.9 cm lattice centred between them misses both
    shape, _ = shape_from_dict({"type": "composite", "boxes": [{"size": [0.01] * 3, "xyz": [0.05, 0, 0]},
                                                                {"size": [0.01] * 3, "xyz": [-0.05, 0, 0]}]})
    with pytest.raises(ShapeError, match="no point inside"):
        sample_points(shape, 0.04)
    assert len(sample_points(shape, 2.0)) >= 8
    with pytest.raises(ShapeError, match="all in one plane"):
        sample_points(Box((0.2, 0.1, 0.01)), 0.04)


def test_implausible_pose_is_rejected():
    spec = {"type": "box", "size": [0.1, 0.1, 0.1], "pose": {"xyz": [0, 0, 30.0]}}   # centimetres as metres
    shape, X = shape_from_dict(spec)
    with pytest.raises(ShapeError, match="beyond the plausible"):
        sample_points(shape, 0.04, X)


@pytest.mark.parametrize("spec, message", [
    ({"size": [1, 1, 1]}, "needs a 'type'"),
    ({"type": "cone"}, "unknown shape type"),
    ({"type": "box", "size": [0.1, -0.1, 0.1]}, "3 positive numbers"),
    ({"type": "cylinder", "radius": 0.1}, "needs 'length'"),
    ({"type": "mesh", "file": "/nonexistent/part.stl"}, "not found"),
    ({"type": "box", "size": [0.1, 0.1, 0.1], "pose": {"xyz": [0, 0]}}, "3 finite numbers"),
])
def test_bad_shape_descriptions_are_named(spec, message):
    with pytest.raises(ShapeError, match=message):
        shape_from_dict(spec)
