"""DDS domains of self-contained runs: a range from INERTIAL_ID_ROS_DOMAINS (parallel test workers
take disjoint ones, test/conftest.py), checked."""
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
