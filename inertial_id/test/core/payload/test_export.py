"""``inertial-id export`` (issue 21): the URDF fragment loads in pinocchio as part of the robot and
gives the same inverse dynamics as the estimate lumped into the payload frame's body; the YAML
carries the values with their intervals; user errors are one line and exit 2."""
import json
import re

import numpy as np
import pinocchio as pin
import pytest
import yaml

from inertial_id.cli import main
from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.payload.payload_apply import com_interval
from test_integrity_core import honest_wrench_rows


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """An estimate result of the guaranteed estimator on 1.5 s of the simulated xArm7 moving the dumbbell."""
    robot = robot_model.load_robot("xarm7")
    est = make_estimator(robot, "guaranteed", None)
    for A, b, e, s, da in honest_wrench_rows(robot, 1.5):
        est.add("wrench", A, b, e, s, A.shape[0] // 6, None, da)
    r = est.result()
    result = {"robot": "xarm7", "method": "guaranteed", "parameter_names": list(r.parameter_names),
              "estimate": r.estimate.tolist(), "lower": r.lower.tolist(), "upper": r.upper.tolist(),
              "bounds_guaranteed": bool(r.bounds_guaranteed), "data_consistent": bool(r.data_consistent),
              "physically_consistent": bool(r.physically_consistent)}
    path = tmp_path_factory.mktemp("export") / "result.json"
    path.write_text(json.dumps(result))
    return robot, r, path


def test_urdf_fragment_gives_the_estimates_inverse_dynamics(identified, tmp_path, rng):
    robot, r, result = identified
    urdf = tmp_path / "payload.urdf"
    assert main(["export", str(result), "--urdf", str(urdf)]) == 0
    fragment = urdf.read_text()
    # included in the robot's description: the fragment's joint and link before </robot>
    inner = re.search(r"<robot[^>]*>(.*)</robot>", fragment, re.S).group(1)
    base = robot_model.resolve_model_path(robot.spec.model.urdf).read_text()
    whole = base[:base.rindex("</robot>")] + inner + "</robot>\n"
    model = pin.buildModelFromXML(whole)
    assert model.existFrame("payload") and model.frames[model.getFrameId("payload")].parentJoint == \
        robot.payload_parent_joint
    model.armature = robot.model.armature
    with_estimate = robot_model.model_with_payload(robot, r.estimate)
    d1, d2 = model.createData(), with_estimate.createData()
    for _ in range(5):
        q = rng.uniform(robot.position_lower, robot.position_upper)
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        tau_urdf_Nm = pin.rnea(model, d1, q, v, a)
        tau_estimate_Nm = pin.rnea(with_estimate, d2, q, v, a)
        assert np.allclose(tau_urdf_Nm, tau_estimate_Nm, rtol=1e-10, atol=1e-10)
    # and the payload's share is there: without it the torques differ
    assert not np.allclose(pin.rnea(robot.model, robot.model.createData(), q, v, a), tau_estimate_Nm, atol=1e-3)


def test_yaml_has_the_values_and_their_intervals(identified, tmp_path):
    robot, r, result = identified
    out = tmp_path / "payload.yaml"
    assert main(["export", str(result), "--yaml", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["frame"] == robot.payload_frame and doc["flags"]["bounds_guaranteed"] == r.bounds_guaranteed
    m, c, I_C = params.com_from_params(r.estimate)
    assert doc["mass_kg"] == {"estimate": m, "lower": r.lower[0], "upper": r.upper[0]}
    lo, hi = com_interval(r.lower, r.upper)
    for k, axis in enumerate("xyz"):
        got = doc["com_m"][axis]
        assert got["lower"] == lo[k] and got["upper"] == hi[k] and got["lower"] <= got["estimate"] <= got["upper"]
        assert got["estimate"] == pytest.approx(c[k], rel=1e-12)
    assert doc["inertia_about_com_kg_m2"]["iyz"] == pytest.approx(I_C[1, 2], abs=1e-12)
    for k, name in enumerate(params.PARAMETER_NAMES):
        assert [doc["parameters"][name][x] for x in ("estimate", "lower", "upper")] == \
            [r.estimate[k], r.lower[k], r.upper[k]]
    assert doc["parameters"]["mcx"]["unit"] == "kg m"


def test_user_errors_are_one_line(identified, tmp_path, capsys):
    robot, r, result = identified
    cases = [[str(tmp_path / "missing.json"), "--urdf", str(tmp_path / "x.urdf")],
             [str(result)],
             [str(result), "--urdf", str(tmp_path / "no_such_dir" / "x.urdf")]]
    massless = json.loads(result.read_text())
    massless["estimate"][0] = 0.0
    (tmp_path / "massless.json").write_text(json.dumps(massless))
    cases.append([str(tmp_path / "massless.json"), "--urdf", str(tmp_path / "y.urdf")])
    for argv in cases:
        assert main(["export", *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("inertial-id export: error:"), (argv, err)


def test_export_of_a_bag_uses_its_offline_estimate(tmp_path):
    """A bag is read as ``report`` reads it (the profile's estimator offline): the fragment's
    inertial and the YAML carry the same final estimate, in the profile's payload frame."""
    from inertial_id.cli.record_sim import record
    robot = robot_model.load_robot("xarm7")
    bag = tmp_path / "bag"
    record(robot, "dumbbell_5lb", 2.0, bag, "mcap", seed=3)
    urdf, out = tmp_path / "p.urdf", tmp_path / "p.yaml"
    assert main(["export", str(bag), "--robot", "xarm7", "--urdf", str(urdf), "--yaml", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["frame"] == "link_eef" and doc["method"] == "guaranteed"
    mass = float(re.search(r'<mass value="([^"]+)"', urdf.read_text()).group(1))
    assert mass == doc["mass_kg"]["estimate"]
    assert doc["mass_kg"]["lower"] <= mass <= doc["mass_kg"]["upper"]
    truth = robot_model.payload_params("dumbbell_5lb")
    assert doc["flags"]["bounds_guaranteed"] and doc["mass_kg"]["lower"] <= truth[0] <= doc["mass_kg"]["upper"]
    for k, axis in enumerate("xyz"):
        assert doc["com_m"][axis]["lower"] <= truth[1 + k] / truth[0] <= doc["com_m"][axis]["upper"]
