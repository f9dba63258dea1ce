"""The plan optimiser in its own process: results come back under their request id, the newest
request supersedes one not yet started, the worker says which code its optimiser evaluates as it
changes, and a dead worker is seen, never an exception."""
import os
import time
from dataclasses import replace

import pytest

from inertial_id.core.robot.model import load_robot
from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.worker import CODE, PLAN, PlanWorkerProcess
from test_planning_optimizer import rest_request


@pytest.fixture(scope="module")
def worker():
    robot = load_robot("kinova_gen3")
    settings = PlannerSettings.from_profile(robot)
    w = PlanWorkerProcess(robot, settings, CertifierSettings.from_profile(robot))
    yield w, robot, settings
    w.close()


def wait_for(worker, timeout_s=120.0):
    """The worker's next result, waiting on its pipe (what it sends before, its code, is read too)."""
    deadline = time.monotonic() + timeout_s
    while worker._conn.poll(max(0.0, deadline - time.monotonic())):
        done = worker.take()
        if done is not None:
            return done
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
        # the messages one by one (take() keeps only the newest): the first result the worker sends is 3's
        while True:
            assert w._conn.poll(120.0), "no result from the worker process"
            kind, *said = w._conn.recv()
            if kind == PLAN:
                break
            assert kind == CODE
        assert said[0] == 3
    finally:
        w.close()


def test_the_worker_says_which_code_serves_as_it_changes(tmp_path, monkeypatch):
    """A machine's first run compiles (an empty cache): the worker says ``compiling``, then, once the
    compiler has ended, without any request, what serves. Here the compiler waits on a pipe the test
    writes to, then fails: the virtual machine serves, and the worker says why."""
    gate = tmp_path / "go"
    os.mkfifo(gate)
    compiler = tmp_path / "cc"
    compiler.write_text(f"#!/bin/sh\nread line < '{gate}'\nexit 1\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(compiler))
    robot = load_robot("kinova_gen3")
    w = PlanWorkerProcess(robot, PlannerSettings.from_profile(robot), CertifierSettings.from_profile(robot))
    try:
        assert w._conn.poll(120.0) and w.code() == "compiling"
        with open(gate, "w") as go:
            go.write("\n")
        assert w._conn.poll(120.0)
        assert w.code() == "virtual machine: the C compiler failed (exit code 1)"
        assert w.take() is None           # what it said was no plan
    finally:
        try:                              # a compiler still waiting would wait for its timeout
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
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
