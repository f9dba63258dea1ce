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


def test_the_newest_request_supersedes_one_not_started(worker):
    w, robot, settings = worker
    req = replace(rest_request(robot, settings), deadline_s=20.0)
    for request_id in (1, 2, 3):      # sent together: the worker takes only the newest
        w.submit(request_id, req)
    seen = [wait_for(w)[0]]
    time.sleep(1.0)
    while (done := w.take()) is not None:
        seen.append(done[0])
    assert seen[-1] == 3 and 2 not in seen


def test_a_dead_worker_is_seen_not_raised():
    robot = load_robot("kinova_gen3")
    w = PlanWorkerProcess(robot, PlannerSettings.from_profile(robot), CertifierSettings.from_profile(robot))
    w._process.kill()
    w._process.join(10.0)
    assert not w.alive()
    w.submit(1, None)                 # no exception
    assert w.take() is None
    w.close()
