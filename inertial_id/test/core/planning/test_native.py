"""The planner's compiled functions (:mod:`inertial_id.core.planning.native`) compute what CasADi's
virtual machine computes, IPOPT evaluates them once they are there, and without a working C compiler the
virtual machine serves and says why."""
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import casadi as ca
import numpy as np

from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.native import BufferedCall, NativeFunctions, dense
from inertial_id.core.planning.optimizer import PlanOptimizer, PlanRequest
from inertial_id.core.robot.model import load_robot


def test_compiled_functions_equal_the_virtual_machine():
    """To 1e-12 (not to the bit: C and the virtual machine order some sums differently, and IPOPT's
    path from the same start then parts after some tens of iterations)."""
    robot = load_robot("kinova_gen3")
    settings = replace(PlannerSettings.from_profile(robot), optimize_s=30.0)
    compiled = PlanOptimizer(robot, settings, CertifierSettings.from_profile(robot))
    assert compiled.nlp.native.wait(300), "the compiler did not finish"
    assert compiled.nlp.native.status == "compiled"
    functions = compiled.nlp.native.load()
    rng = np.random.default_rng(3)
    for name, function in functions.items():
        args = [rng.uniform(-1.0, 1.0, function.size_in(i)) for i in range(function.n_in())]
        vm_function = {f.name(): f for f in compiled.nlp.hot_functions}[name]
        for got, want in zip(function.call(args), vm_function.call(args)):
            want = np.asarray(want)
            assert np.abs(np.asarray(got) - want).max() <= 1e-12 * max(1.0, np.abs(want).max()), name
    z = np.zeros(robot.nv)
    lo, hi = robot.payload_prior()
    result = compiled.plan(PlanRequest(settings.centre, z, z, lo, hi, compiled.excitation.no_information(), seed=5))
    assert result.iterations > 0 and compiled.nlp._native_loaded     # the plan was optimised on them


def test_without_a_working_compiler_the_virtual_machine_serves_and_says_why(tmp_path):
    x = ca.SX.sym("x", 2)
    square = ca.Function("square", [x], [x * x])
    failing = NativeFunctions([square], folder=tmp_path, cc="false")
    assert failing.wait(60)
    assert failing.load() is None
    assert failing.status.startswith("virtual machine: the C compiler failed"), failing.status
    assert not list(tmp_path.glob("*.so"))


def test_a_compile_outlives_the_process_that_started_it(tmp_path):
    """A process that ends before its compiler does (a short demo on a loaded machine) leaves the
    library in the cache for the next one: the compiler, held back here until its process has exited,
    then puts it in place."""
    go = tmp_path / "go"
    held_cc = tmp_path / "held_cc"
    held_cc.write_text(f'#!/bin/sh\nwhile [ ! -e "{go}" ]; do sleep 0.05; done\nexec cc "$@"\n')
    held_cc.chmod(0o755)
    cache = tmp_path / "cache"
    starter = (
        "import sys, casadi as ca\n"
        "from pathlib import Path\n"
        "from inertial_id.core.planning.native import NativeFunctions\n"
        "x = ca.SX.sym('x', 2)\n"
        "native = NativeFunctions([ca.Function('square', [x], [x * x])], folder=Path(sys.argv[1]), cc=sys.argv[2])\n"
        "assert native.status == 'compiling', native.status\n"
        "print(native.path, flush=True)\n")
    # it exits while its compiler waits
    started = subprocess.run([sys.executable, "-c", starter, str(cache), str(held_cc)], capture_output=True,
                             text=True, timeout=120, check=True)
    library = Path(started.stdout.strip())
    assert not library.exists()
    go.touch()
    deadline = time.monotonic() + 120.0
    while not library.exists() and time.monotonic() < deadline:      # the detached compiler's event: its file
        time.sleep(0.05)
    assert library.exists(), sorted(os.listdir(cache))
    x = ca.SX.sym("x", 2)
    again = NativeFunctions([ca.Function("square", [x], [x * x])], folder=cache, cc="false")
    assert again.status == "compiled" and again.path == library
    assert np.array_equal(np.asarray(again.load()["square"]([2.0, 3.0])).ravel(), [4.0, 9.0])
    assert [p.name for p in cache.iterdir()] == [library.name]        # the work folder is gone


def test_a_buffered_call_computes_what_the_function_does_and_refuses_sparse_outputs():
    q = ca.SX.sym("q", 3)
    sparse = ca.Function("rows", [q], [ca.vertcat(q[0] * q[1], ca.SX(1, 1), q[2])])     # a structural zero
    assert not sparse.sparsity_out(0).is_dense()
    try:
        BufferedCall(sparse)
    except ValueError as error:
        assert "sparse" in str(error)
    else:
        raise AssertionError("a sparse output was accepted")
    mapped = dense(sparse.map(4))
    call = BufferedCall(mapped)
    rng = np.random.default_rng(1)
    for _ in range(3):          # the buffers are reused from call to call
        x = rng.uniform(-1.0, 1.0, (3, 4))
        assert np.array_equal(call(x)[0], np.asarray(mapped(x)))
