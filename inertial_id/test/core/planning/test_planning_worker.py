"""The plan optimiser in its own process: results come back under their request id, the newest
request supersedes one not yet started, and a dead worker is seen, never an exception."""
import time
from dataclasses import replace

import pytest

from inertial_id.core.robot.model import load_robot
from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.worker import PlanWorkerProcess
from test_planning_optimizer import rest_request


@pytest.fixture(scope="module")
def worker():
    robot = load_robot("kinova_gen3")
    settings = PlannerSettings.from_profile(robot)
    w = PlanWorkerProcess(robot, settings, CertifierSettings.from_profile(robot))
    yield w, robot, settings
    w.close()


def wait_for(worker, timeout_s=120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = worker.take()
        if done is not None:
            return done
        time.sleep(0.05)
    raise AssertionError("no result from the worker process")


def test_a_request_comes_back_certified_under_its_id(worker):
    w, robot, settings = worker
    w.submit(7, replace(rest_request(robot, settings), deadline_s=20.0))
    request_id, result = wait_for(w)
    assert request_id == 7 and result.certified, result.reason
    assert result.plan.duration_s == pytest.approx(settings.horizon_s)


def test_the_newest_request_supersedes_one_not_started():
    """Sent to a worker still starting (its child imports and builds the optimiser for a second or
    more), all three wait in the pipe: only the newest is planned. A worker already waiting could take
    the first before the others arrive (a loaded machine did), which is not superseding."""
    robot = load_robot("kinova_gen3")
    settings = PlannerSettings.from_profile(robot)
    req = replace(rest_request(robot, settings), deadline_s=20.0)
    w = PlanWorkerProcess(robot, settings, CertifierSettings.from_profile(robot))
    try:
        for request_id in (1, 2, 3):
            w.submit(request_id, req)
        # the results one by one (take() keeps only the newest): the first one the worker sends is 3's
        assert w._conn.poll(120.0), "no result from the worker process"
        assert w._conn.recv()[0] == 3
    finally:
        w.close()


def test_a_dead_worker_is_seen_not_raised():
    robot = load_robot("kinova_gen3")
    w = PlanWorkerProcess(robot, PlannerSettings.from_profile(robot), CertifierSettings.from_profile(robot))
    w._process.kill()
    w._process.join(10.0)
    assert not w.alive()
    w.submit(1, None)                 # no exception
    assert w.take() is None
    w.close()
