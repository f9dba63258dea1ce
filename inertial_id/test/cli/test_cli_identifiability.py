"""``inertial-id study identifiability`` / ``study minimal-parameters`` / ``bench identifiability``, in
process."""
import json

import pytest

from inertial_id.cli import main

LIMB = """<robot name="r">
  <link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  {extra}
</robot>"""


def run(tmp_path, *args):
    out = tmp_path / "out.json"
    rc = main([*args, "--json", str(out)])
    return rc, json.loads(out.read_text())


@pytest.mark.parametrize("args, count", [
    (["puma560"], 36), (["puma560", "--motors"], 40), (["scara"], 8), (["scara", "--motors"], 11),
    (["cheetah_leg"], 17), (["cheetah_leg", "--motors"], 18), (["planar_2r"], 4),
    (["planar_2r_perp"], 8), (["stanford"], 33), (["puma560", "--no-gravity"], 34)])
@pytest.mark.parametrize("method", ["rpna", "svd"])
def test_identifiability_counts(tmp_path, args, count, method):
    rc, report = run(tmp_path, "study", "identifiability", *args, "--method", method)
    assert rc == 0
    assert report["num_base_parameters"] == count and report["method"] == method
    assert len(report["combinations"]) == count
    assert {"model", "per_body", "wall_time_s"} <= set(report)
    if method == "rpna":
        assert sum(b["n_parameters"] - b["dim_T"] for b in report["per_body"]) == count


def test_identifiability_report_fields(tmp_path):
    rc, report = run(tmp_path, "study", "identifiability", "planar_2r")
    assert rc == 0 and report["model"] == "planar_2r"
    assert [(b["name"], b["dim_V"], b["dim_K"], b["dim_T"]) for b in report["per_body"]] == [
        ("joint1", 2, 1, 9), ("joint2", 4, 4, 7)]
    assert "Izz1 + 0.09*m2" in report["combinations"]


def test_floating_cheetah_counts_the_leg_as_the_paper(tmp_path):
    for extra, count in (([], 21), (["--motors"], 24)):
        rc, report = run(tmp_path, "study", "identifiability", "cheetah_leg", "--floating-base", *extra)
        assert rc == 0 and report["floating_base"]
        assert report["num_base_parameters_excluding_floating_base"] == count
        assert report["num_base_parameters"] == count + 10


def test_urdf_and_profile_models(tmp_path):
    urdf = tmp_path / "limb.urdf"
    urdf.write_text(LIMB.format(extra=""))
    rc, report = run(tmp_path, "study", "identifiability", str(urdf))
    assert rc == 0 and report["num_base_parameters"] == 4
    rc, report = run(tmp_path, "study", "identifiability", "xarm7")
    assert rc == 0 and len(report["per_body"]) == 7


@pytest.mark.parametrize("content, message", [
    ("<robot", "cannot parse URDF"),
    (LIMB.format(extra='<joint name="j3" type="revolute"><parent link="a"/><child link="c"/>'
                       '<axis xyz="0 0 1"/></joint>'), "closed kinematic loop"),
    (LIMB.format(extra='<link name="d"/><joint name="ball" type="spherical"><parent link="c"/>'
                       '<child link="d"/></joint>'), "joint 'ball' has type 'spherical'"),
])
def test_bad_urdf_is_a_one_line_user_error(tmp_path, capsys, content, message):
    urdf = tmp_path / "bad.urdf"
    urdf.write_text(content)
    assert main(["study", "identifiability", str(urdf)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_unknown_model_is_a_user_error(capsys):
    assert main(["study", "identifiability", "no_such_robot"]) == 2
    assert "neither a built-in model" in capsys.readouterr().err


def test_minimal_parameters_stanford(tmp_path):
    rc, report = run(tmp_path, "study", "minimal-parameters", "stanford")
    assert rc == 0
    assert len(report["parameters"]) == 33 and report["parameters"][0] == "U1_33"
    errors = [abs(a - b) for a, b in zip(report["true_values"], report["identified_values"])]
    assert max(errors) < 1e-6
    assert report["regressor_ranks"] == {"1": 1, "2": 6, "3": 4, "4": 7, "5": 7, "6": 7}
    assert len(report["table1"]) == 3 and report["table1"][2]["u1^(3)"] is None
    assert report["table1"][0]["u1^(2)"] == pytest.approx([0.7648, -0.6442, 0.0], abs=5e-5)
    assert report["rebuilt_H_max_abs_error"] < 1e-10


def test_minimal_parameters_noise_study_and_refusal(tmp_path, capsys):
    rc, report = run(tmp_path, "study", "minimal-parameters", "stanford", "--noise", "0.01", "--trials", "4")
    assert rc == 0 and report["noise_study"]["torque_noise"] == 0.01
    assert max(abs(a - b) for a, b in zip(report["true_values"], report["identified_values"])) > 1e-6
    assert main(["study", "minimal-parameters", "stanford", "--q-base", "0.7,0,0,0.7,0.7,0.7"]) == 2
    assert "step 2.2" in capsys.readouterr().err


def test_bench_identifiability(tmp_path):
    rc, report = run(tmp_path, "bench", "identifiability", "--sizes", "8,16", "--calls", "1")
    assert rc == 0
    assert report["num_base_parameters_rpna"] == report["num_base_parameters_numeric"]
    assert [s["N"] for s in report["scaling"]] == [8, 16]
    assert report["rpna_ms"] > 0 and report["numeric_ms"] > 0
