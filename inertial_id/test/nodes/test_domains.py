"""DDS domains of self-contained runs: a range from INERTIAL_ID_ROS_DOMAINS (parallel test workers
take disjoint ones, test/conftest.py), checked; the ROS_HOME of a run goes away with its process."""
import pytest

from inertial_id.nodes.launch import DOMAINS_ENV, domain_range, isolated_ros_env


def test_the_range_is_read_and_checked(monkeypatch):
    monkeypatch.delenv(DOMAINS_ENV, raising=False)
    assert domain_range() == (1, 100)
    monkeypatch.setenv(DOMAINS_ENV, "51-60")
    monkeypatch.delenv("ROS_DOMAIN_ID", raising=False)
    assert {int(isolated_ros_env()["ROS_DOMAIN_ID"]) for _ in range(200)} <= set(range(51, 61))
    for bad in ("60-51", "7", "a-b", "0-300"):
        monkeypatch.setenv(DOMAINS_ENV, bad)
        with pytest.raises(ValueError, match=DOMAINS_ENV):
            domain_range()


def test_parallel_workers_have_disjoint_ranges(pytestconfig, monkeypatch):
    import conftest
    monkeypatch.delenv(DOMAINS_ENV, raising=False)     # this worker's own range comes back afterwards
    ranges = []
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
        conftest.pytest_configure(pytestconfig)
        ranges.append(domain_range())
    assert ranges == [(1, 50), (51, 100)]


def test_a_runs_ros_home_leaves_with_the_process_that_made_it():
    import subprocess
    import sys
    from pathlib import Path
    code = ("from pathlib import Path; from inertial_id.nodes.launch import isolated_ros_env; "
            "home = Path(isolated_ros_env()['ROS_HOME']); (home / 'state.yaml').write_text('x'); print(home)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    home = Path(run.stdout.strip())
    assert home.name.startswith("inertial_id_ros_home_") and not home.exists()
