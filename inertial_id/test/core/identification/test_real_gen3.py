"""Real Kinova Gen3 data (../shared/data/kinova_gen3_real, three runs): identify on runs 1 and 2,
validate on run 3 against the nominal URDF model without friction."""
import json

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.data.data_io import Run, write_run

from paths import REAL_GEN3


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory):
    """The shared files converted into run folders (t, q, qd, qdd, tau)."""
    if not REAL_GEN3.is_dir():
        pytest.skip(f"real Gen3 recordings absent: {REAL_GEN3.resolve()} (/work/shared/data/kinova_gen3_real "
                    "in the project's layout)")
    root = tmp_path_factory.mktemp("gen3")
    folders = []
    for i in (1, 2, 3):
        load = lambda stem: np.loadtxt(REAL_GEN3 / f"{stem}_downsampled_{i}.csv")  # noqa: E731
        write_run(root / f"run{i}", Run(f"run{i}", load("t"), load("q"), load("q_d"), load("tau"), load("q_dd")))
        folders.append(str(root / f"run{i}"))
    return folders


@pytest.mark.shared_data
def test_identified_model_beats_nominal_on_held_out_run(run_folders, tmp_path):
    out = tmp_path / "gen3.json"
    assert main(["identify", "--model", "kinova_gen3", "--data", *run_folders[:2],
                 "--validate", run_folders[2], "--friction", "--method", "lmi", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    joints = [f"joint_{k}" for k in range(1, 8)]
    for j in joints:
        assert report["validation_rms"][j] < report["nominal_validation_rms"][j], j
    assert min(report["lmi_min_eigenvalues"].values()) > 0
    names = report["parameter_names"]
    theta = dict(zip(names, report["parameters"]))
    for j in joints:
        assert theta[f"{j}.Fc"] >= 0 and theta[f"{j}.Fv"] >= 0 and theta[f"{j}.Ia"] >= 0
    assert len(names) == 98 and report["train_samples"] == 2650
