"""Studies on a Dask cluster (``--scheduler``) give the figures of the local run."""
import json

import numpy as np
import pytest

from inertial_id.cli import main
from inertial_id.core.fanout import map_tasks

distributed = pytest.importorskip("distributed")

TIMINGS = ("update_time_p50_s", "update_time_p95_s", "row_time_per_sample_s")


def _square(x):
    return x * x


def without_timings(x):
    """The report minus wall-clock figures (they differ run to run on any machine)."""
    if isinstance(x, dict):
        return {k: without_timings(v) for k, v in x.items() if k not in TIMINGS}
    return x


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
    common = ["bounds-study", "--payloads", "4lb,8lb", "--trials", "2", "--seed", "5"]
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    assert main(common + ["--json", str(local)]) == 0
    assert main(common + ["--scheduler", cluster.scheduler_address, "--json", str(dask)]) == 0
    a, b = (without_timings(json.loads(p.read_text())) for p in (local, dask))
    assert a == b
    assert a["trials"] == 2 and np.isfinite(a["guaranteed"]["final_mass_width"])


def test_unreachable_scheduler_is_an_error(capsys):
    with pytest.raises(OSError):
        map_tasks(_square, [1], scheduler="tcp://127.0.0.1:9")
    assert main(["bounds-study", "--trials", "1", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "Dask scheduler" in capsys.readouterr().err
