"""Meaningless input to the CLI: one line on stderr, a non-zero exit, never a traceback, never a
report as if the input meant something (issue 11)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.data.data_io import Run, write_run

LINK = """  <link name="{name}"><inertial><origin xyz="0.1 0 0"/><mass value="{mass}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="0.01"/></inertial></link>
"""
JOINT = """  <joint name="j{k}" type="revolute"><parent link="l{p}"/><child link="l{k}"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 {ay} {az}"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
"""


def urdf_text(joints: int, mass="1.0", iyy="0.01") -> str:
    body = LINK.format(name="l0", mass="1.0", iyy="0.01")
    for k in range(1, joints + 1):
        body += LINK.format(name=f"l{k}", mass=mass, iyy=iyy) + JOINT.format(k=k, p=k - 1, ay=k % 2, az=1 - k % 2)
    return f'<?xml version="1.0"?>\n<robot name="r{joints}">\n{body}</robot>\n'


def write_urdf(folder: Path, joints: int = 2, **kw) -> str:
    path = folder / f"r{joints}_{len(kw)}.urdf"
    path.write_text(urdf_text(joints, **kw))
    return str(path)


def write_good_run(folder: Path, n: int = 300, joints: int = 2) -> Path:
    rng = np.random.default_rng(0)
    t = np.arange(n) * 0.01
    q = np.sin(np.outer(t, np.arange(1, joints + 1)))
    write_run(folder, Run("r", t, q, np.cos(q), rng.normal(size=(n, joints))))
    return folder


def damaged_run(tmp_path: Path, damage) -> str:
    folder = write_good_run(tmp_path / "run")
    damage(folder)
    return str(folder)


def binary_tau(folder):
    (folder / "tau.csv").write_bytes(bytes(range(256)) * 8)


def utf16_q(folder):
    (folder / "q.csv").write_bytes((folder / "q.csv").read_text().encode("utf-16"))


def keep_rows(k):
    def damage(folder):
        for name in ("t", "q", "qd", "tau"):
            lines = (folder / f"{name}.csv").read_text().splitlines()
            (folder / f"{name}.csv").write_text("\n".join(lines[:k]) + "\n")
    return damage


def huge_tau(folder):
    tau = np.loadtxt(folder / "tau.csv")
    np.savetxt(folder / "tau.csv", np.full_like(tau, 1e300))


def bad_yaml_profile(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: broken\njoints: [a, b\nmodel: {urdf: x.urdf\n")
    return str(path)


def scalar_joints_profile(tmp_path):
    path = tmp_path / "five.yaml"
    path.write_text(f"name: five\njoints: 5\nmodel:\n  urdf: {write_urdf(tmp_path)}\n")
    return str(path)


# (case id, argv builder from tmp_path)
CASES = [
    ("identify-binary-file", lambda p: ["identify", "--model", write_urdf(p), "--data", damaged_run(p, binary_tau)]),
    ("identify-utf16-file", lambda p: ["identify", "--model", write_urdf(p), "--data", damaged_run(p, utf16_q)]),
    ("identify-one-row", lambda p: ["identify", "--model", write_urdf(p), "--data", damaged_run(p, keep_rows(1))]),
    ("identify-two-rows", lambda p: ["identify", "--model", write_urdf(p), "--data", damaged_run(p, keep_rows(2))]),
    ("identify-downsample-0", lambda p: ["identify", "--model", write_urdf(p), "--data",
                                         str(write_good_run(p / "run")), "--downsample", "0"]),
    ("identify-filter-order-0", lambda p: ["identify", "--model", write_urdf(p), "--data",
                                           str(write_good_run(p / "run")), "--cutoff-hz", "5", "--filter-order", "0"]),
    ("identify-torques-1e300", lambda p: ["identify", "--model", write_urdf(p), "--data", damaged_run(p, huge_tau)]),
    ("identify-nan-inertia-urdf", lambda p: ["identify", "--model", write_urdf(p, iyy="nan"), "--data",
                                             str(write_good_run(p / "run"))]),
    ("identifiability-zero-joint-urdf", lambda p: ["study", "identifiability", write_urdf(p, joints=0)]),
    ("identifiability-nan-inertia-urdf", lambda p: ["study", "identifiability", write_urdf(p, mass="nan")]),
    ("identifiability-samples-negative", lambda p: ["study", "identifiability", "planar_2r", "--method", "svd",
                                                    "--samples", "-4"]),
    ("identifiability-gear-ratio-nan", lambda p: ["study", "identifiability", "planar_2r", "--motors", "--gear-ratio", "nan"]),
    ("identifiability-gear-ratio-0", lambda p: ["study", "identifiability", "planar_2r", "--motors", "--gear-ratio", "0"]),
    ("pmd-study-speeds-nan", lambda p: ["study", "pmd", "--speeds", "nan", "--trials", "1"]),
    ("bounds-study-xarm7", lambda p: ["study", "bounds", "--robot", "xarm7", "--trials", "1"]),
]
# Profiles that are not valid YAML or have the wrong types: configuration errors, exit 2.
PROFILE_CASES = [
    ("identifiability-bad-yaml-profile", lambda p: ["study", "identifiability", bad_yaml_profile(p)]),
    ("identifiability-scalar-joints-profile", lambda p: ["study", "identifiability", scalar_joints_profile(p)]),
    ("bounds-study-bad-yaml-profile", lambda p: ["study", "bounds", "--robot", bad_yaml_profile(p), "--trials", "1"]),
    ("identify-scalar-joints-profile", lambda p: ["identify", "--model", scalar_joints_profile(p), "--data",
                                                  str(write_good_run(p / "run"))]),
]


def _check_one_line(code, err):
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert code != 0


@pytest.mark.parametrize("case, argv", CASES, ids=[c[0] for c in CASES])
def test_meaningless_input_is_one_line_nonzero(tmp_path, capsys, case, argv):
    code = main(argv(tmp_path))
    _check_one_line(code, capsys.readouterr().err)


@pytest.mark.parametrize("case, argv", PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES])
def test_bad_profiles_are_configuration_errors(tmp_path, capsys, case, argv):
    code = main(argv(tmp_path))
    _check_one_line(code, capsys.readouterr().err)
    assert code == 2


@pytest.mark.parametrize("case", ["identify-utf16-file", "identifiability-zero-joint-urdf"])
def test_installed_command_reports_one_line(tmp_path, case):
    """The same through the installed entry point, in a fresh process (no pytest capture)."""
    argv = dict(CASES)[case](tmp_path)
    exe = Path(sys.executable).with_name("inertial-id")
    proc = subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=120)
    _check_one_line(proc.returncode, proc.stderr)


@pytest.mark.parametrize("method", ["rpna", "svd"])
def test_one_joint_urdf_is_analysed(tmp_path, capsys, method):
    """A valid one-joint URDF is meaningful input: a revolute joint about y under gravity along z
    identifies the inertia about its axis and the two first moments off the axis (3 of 10)."""
    import json
    out = tmp_path / "r.json"
    assert main(["study", "identifiability", write_urdf(tmp_path, joints=1), "--method", method, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["num_base_parameters"] == 3
    assert sorted(report["base_parameters"]) == ["Iyy1", "mcx1", "mcz1"]
