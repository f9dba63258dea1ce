"""The real Kinova Gen3 runs (../shared/data/kinova_gen3_real) as rosbag2 recordings: converted
with ``bag convert``, read back by ``identify --data BAG`` with the same content as the run folders."""
import json

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.data import bags
from inertial_id.core.data.data_io import Run, read_run, write_run

from paths import REAL_GEN3


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen3bags")
    folders, bag_paths = [], []
    for i, storage in ((1, "mcap"), (2, "sqlite3"), (3, "mcap")):
        load = lambda stem: np.loadtxt(REAL_GEN3 / f"{stem}_downsampled_{i}.csv")  # noqa: E731
        folder = root / f"run{i}"
        write_run(folder, Run(f"run{i}", load("t"), load("q"), load("q_d"), load("tau"), load("q_dd")))
        bag = root / f"run{i}_bag"
        assert main(["bag", "convert", str(folder), "--out", str(bag), "--storage", storage]) == 0
        folders.append(folder)
        bag_paths.append(bag)
    return folders, bag_paths


@pytest.mark.shared_data
def test_bag_holds_the_run(converted):
    for folder, bag in zip(*converted):
        a, b = read_run(folder), read_run(bag)
        for k in ("q", "qd", "tau", "qdd"):
            np.testing.assert_array_equal(getattr(b, k), getattr(a, k))
        np.testing.assert_allclose(b.t, a.t, atol=1e-9)
        js = bags.read_joint_states(bag)
        assert js.names == [f"joint_{k}" for k in range(1, 8)]


@pytest.mark.shared_data
def test_identify_reads_bags(converted, tmp_path):
    _, bag_paths = converted
    out = tmp_path / "gen3.json"
    assert main(["identify", "--model", "kinova_gen3", "--data", *map(str, bag_paths[:2]),
                 "--validate", str(bag_paths[2]), "--friction", "--method", "lmi", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["train_samples"] == 2650
    for j in (f"joint_{k}" for k in range(1, 8)):
        assert report["validation_rms"][j] < report["nominal_validation_rms"][j], j


def test_bag_without_effort_is_a_one_line_error(tmp_path, capsys):
    store = bags.typestore()
    bag = tmp_path / "noeffort"
    with bags.BagWriter(bag, "mcap", {bags.JOINT_STATES: bags.TOPICS[bags.JOINT_STATES]}) as w:
        for k in range(10):
            w.write(bags.JOINT_STATES, k * 1000, bags.joint_state(store, k * 1e-6, ["joint_1"], [0.0], [0.0]))
    assert main(["identify", "--model", "kinova_gen3", "--data", str(bag)]) == 2
    assert "no effort" in capsys.readouterr().err
