"""Studies on a Dask cluster (``--scheduler``) give the figures of the local run."""
import json
import math

import distributed
import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core import fanout
from inertial_id.core.fanout import map_tasks

pytestmark = pytest.mark.slow          # local process pools and a Dask cluster

TIMINGS = ("update_time_p50_s", "update_time_p95_s", "row_time_per_sample_s", "solve_time_p50_s")


def _square(x):
    return x * x


def without_timings(x):
    """The report minus wall-clock figures (they differ run to run on any machine)."""
    if isinstance(x, dict):
        return {k: without_timings(v) for k, v in x.items() if k not in TIMINGS}
    return x


def assert_same_figures(a, b, path="report"):
    """Equal structure and values; floats to 1e-12 relative. Dask workers run BLAS on one thread
    (the nanny sets OMP/OPENBLAS_NUM_THREADS=1) while this process may use several, so a sum can
    round differently in its last bit: the bounds study's log-Cholesky widths differ by 1 ulp."""
    assert type(a) is type(b), path
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_same_figures(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_figures(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == b or math.isclose(a, b, rel_tol=1e-12) or (math.isnan(a) and math.isnan(b)), f"{path}: {a} != {b}"
    else:
        assert a == b, path


@pytest.fixture(scope="module")
def cluster():
    # one worker process, one thread: the machine's cores are shared
    c = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    yield c
    c.close(timeout=120)       # generous: the shared machine may be busy


def test_map_tasks_keeps_order(cluster):
    args = list(range(7, 0, -1))
    assert map_tasks(_square, args, scheduler=cluster.scheduler_address) == [a * a for a in args]
    assert map_tasks(_square, args) == [a * a for a in args]


def test_bounds_study_on_a_dask_cluster_equals_the_local_run(cluster, tmp_path):
    common = ["study", "bounds", "--payloads", "4lb,8lb", "--trials", "2", "--seed", "5"]
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    assert main(common + ["--json", str(local)]) == 0
    assert main(common + ["--scheduler", cluster.scheduler_address, "--json", str(dask)]) == 0
    a, b = (without_timings(json.loads(p.read_text())) for p in (local, dask))
    assert_same_figures(a, b)
    assert a["trials"] == 2 and np.isfinite(a["guaranteed"]["final_mass_width"])


def test_pmd_study_on_a_dask_cluster_equals_the_local_run(cluster, tmp_path):
    common = ["study", "pmd", "--speeds", "1,2", "--samples", "60", "--trials", "2", "--density", "0.02", "--seed", "3"]
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    assert main(common + ["--json", str(local)]) == 0
    assert main(common + ["--scheduler", cluster.scheduler_address, "--json", str(dask)]) == 0
    a, b = (without_timings(json.loads(p.read_text())) for p in (local, dask))
    assert_same_figures(a, b)
    assert sorted(a["speeds"]) == ["1", "2"] and a["trials"] == 2
    assert all(np.isfinite(a["speeds"][s]["methods"]["PMD"]["com_err_pct"]) for s in a["speeds"])


def test_pmd_draws_depend_on_their_place_only(tmp_path):
    """Each speed's figures do not change when another speed is added after it (its own draws are
    seeded by the object, speed and trial), and a different seed gives different draws."""
    def study(*argv):
        path = tmp_path / "r.json"
        assert main(["study", "pmd", "--samples", "60", "--trials", "1", "--density", "0.02", *argv,
                     "--json", str(path)]) == 0
        return without_timings(json.loads(path.read_text()))
    one, two, other = study("--speeds", "1"), study("--speeds", "1,2"), study("--speeds", "1", "--seed", "1")
    assert one["speeds"]["1"] == two["speeds"]["1"]
    assert one["speeds"]["1"] != other["speeds"]["1"]


def test_unreachable_scheduler_is_an_error(capsys, monkeypatch):
    # nothing listens on port 9: the timeout only decides how long the refusals are retried
    monkeypatch.setattr(fanout, "CONNECT_TIMEOUT_S", 2.0)
    with pytest.raises(OSError):
        map_tasks(_square, [1], scheduler="tcp://127.0.0.1:9")
    assert main(["study", "bounds", "--trials", "1", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "Dask scheduler" in capsys.readouterr().err
    assert main(["study", "pmd", "--speeds", "1", "--trials", "1", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "Dask scheduler" in capsys.readouterr().err
