"""Run folders, the preprocessing pipeline and the identify command's handling of bad input."""
import json

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.robot import closed_chain as cc
from inertial_id.core.robot import model as robot_model
from inertial_id.core.data.data_io import DataError, Pipeline, Run, read_run, write_run
from inertial_id.core.identification import problem as P
from inertial_id.core.identification.synthetic import fourier_joint_motion, synthesize

from paths import PACKAGE


def make_run(n=200, joints=3, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.01
    q = rng.normal(size=(n, joints))
    return Run("r", t, q, rng.normal(size=(n, joints)), rng.normal(size=(n, joints)))


def test_round_trip_and_separators(tmp_path):
    run = make_run()
    write_run(tmp_path / "a", run)
    back = read_run(tmp_path / "a")
    np.testing.assert_allclose(back.q, run.q)
    assert back.qdd is None
    comma = tmp_path / "b"
    comma.mkdir()
    for k in ("t", "q", "qd", "tau"):
        x = getattr(run, k).reshape(run.n_samples, -1)
        (comma / f"{k}.csv").write_text("\n".join(",".join(repr(float(v)) for v in row) for row in x))
    np.testing.assert_allclose(read_run(comma).tau, run.tau)


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "qd.csv").unlink(), "lacks qd.csv"),
    (lambda d: (d / "tau.csv").write_text("\n".join((d / "tau.csv").read_text().splitlines()[:-3])),
     "different numbers of rows: .*tau.csv 197"),
    (lambda d: (d / "q.csv").write_text((d / "q.csv").read_text().replace(
        (d / "q.csv").read_text().splitlines()[5], "nan nan nan")), r"q.csv: 1 rows with NaN/Inf \(first: row 6\)"),
    (lambda d: (d / "t.csv").write_text("\n".join(["0.5"] + (d / "t.csv").read_text().splitlines()[1:])),
     "not strictly increasing at row 2"),
    (lambda d: (d / "qd.csv").write_text("\n".join(" ".join(r.split()[:2]) for r in
                                                   (d / "qd.csv").read_text().splitlines())), "qd.csv: 2 columns, expected 3"),
])
def test_bad_run_folders_are_named(tmp_path, damage, message):
    write_run(tmp_path, make_run())
    damage(tmp_path)
    with pytest.raises(DataError, match=message):
        read_run(tmp_path)


def test_pipeline_differentiates_filters_and_downsamples():
    t = np.arange(2000) * 0.001
    qd = np.sin(2 * np.pi * t)[:, None]
    noisy = qd + 0.01 * np.random.default_rng(0).normal(size=qd.shape)
    run = Run("s", t, np.zeros_like(qd), noisy, noisy.copy())
    out = Pipeline(cutoff_hz=10.0, downsample=10).apply(run)
    assert out.n_samples == 200
    qdd_true = 2 * np.pi * np.cos(2 * np.pi * out.t)
    inner = slice(20, -20)                            # filter start-up at both ends
    assert np.max(np.abs(out.qdd[inner, 0] - qdd_true[inner])) < 0.05 * 2 * np.pi
    assert np.max(np.abs(out.qd[inner, 0] - np.sin(2 * np.pi * out.t[inner]))) < 0.01
    with pytest.raises(DataError, match="Nyquist"):
        Pipeline(cutoff_hz=600.0).apply(run)


@pytest.fixture(scope="module")
def four_bar_runs(tmp_path_factory):
    """Two synthetic four-bar runs (crank turning) with friction, written as run folders."""
    robot = robot_model.load_robot("four_bar")
    chain = cc.chain_from_profile(robot.model, robot.spec)
    layout = P.make_layout(chain, True)
    theta = layout.nominal.copy()
    theta[layout.n_inertial:] = [0.05, 0.02, 0.01, 0.01]
    root = tmp_path_factory.mktemp("four_bar")
    folders = []
    for seed in (0, 1):
        t = np.arange(800) * 0.005
        rng = np.random.default_rng(seed)
        q, qd, qdd = fourier_joint_motion(t, [0.0], [2.5], rng, base_hz=0.25)
        write_run(root / f"run{seed}", synthesize(chain, layout, theta, t, q, qd, qdd, name=f"run{seed}"))
        folders.append(str(root / f"run{seed}"))
    return folders, layout, theta


def test_identify_command_on_the_four_bar(four_bar_runs, tmp_path):
    folders, layout, theta = four_bar_runs
    out = tmp_path / "id.json"
    assert main(["identify", "--model", "four_bar", "--data", folders[0], "--validate", folders[1],
                 "--friction", "--method", "lmi", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    for key in ("parameter_names", "parameters", "base_parameters", "train_rms", "validation_rms",
                "lmi_min_eigenvalues", "constraint_residual", "wall_time_s"):
        assert key in report
    assert report["parameter_names"] == layout.names
    assert report["validation_rms"]["crank"] < 1e-6
    assert min(report["lmi_min_eigenvalues"].values()) > 0
    assert report["constraint_residual"]["position_m"] < 1e-10


@pytest.mark.parametrize("args, message", [
    (["--model", "no_such_robot"], "unknown robot profile"),
    (["--model", "four_bar", "--fixed", "gearbox"], "unknown parameter group"),
    (["--model", "kinova_gen3"], "columns; the model has 7 actuated joints"),
    (["--model", "config/urdf/four_bar.urdf"], "columns; the model has 3 actuated joints"),
    (["--model", "missing.urdf"], "not found"),
])
def test_identify_bad_input_is_one_line(four_bar_runs, capsys, monkeypatch, args, message):
    folders, _, _ = four_bar_runs
    monkeypatch.chdir(PACKAGE)
    assert main(["identify", "--data", folders[0], *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err


def test_identify_unreachable_pose_is_named(tmp_path, capsys):
    run = make_run(n=50, joints=6)
    run.q[:, 4:] = [0.27, 0.72]                       # toe cranks the linkage cannot follow
    write_run(tmp_path / "bad", Run("bad", run.t, run.q * np.array([0.1, 0.1, 0.1, 0.1, 1, 1]), run.qd,
                                    run.tau, np.zeros_like(run.q)))
    assert main(["identify", "--model", "digit_leg", "--data", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "loop closures" in err and len(err.strip().splitlines()) == 1


def test_identify_rank_deficient_data_is_named(four_bar_runs, tmp_path, capsys):
    folders, _, _ = four_bar_runs
    still = read_run(folders[0])
    write_run(tmp_path / "still", Run("still", still.t, np.full_like(still.q, 0.4), np.zeros_like(still.qd),
                                      still.tau, np.zeros_like(still.q)))
    assert main(["identify", "--model", "four_bar", "--data", str(tmp_path / "still"), "--friction"]) == 2
    err = capsys.readouterr().err
    assert "do not excite" in err and "unidentified" in err
