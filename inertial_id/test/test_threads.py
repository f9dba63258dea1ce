"""The suite's processes run the numerical libraries' thread pools on one thread
(:mod:`inertial_id.threads`): the CLI, every node (through ``run_node``), and what they start; a user's
own ``OPENBLAS_NUM_THREADS`` (etc.) wins. Each case runs in a fresh interpreter, whose environment
and loaded BLAS are its own."""
import json
import os
import subprocess
import sys

import pytest

from inertial_id.threads import THREAD_VARIABLES

REPORT = ("from threadpoolctl import threadpool_info\n"
          "import json, os\n"
          "print(json.dumps({'pools': [p['num_threads'] for p in threadpool_info()], "
          "'env': {k: os.environ.get(k) for k in " + repr(THREAD_VARIABLES) + "}}))")


def run(code: str, **env) -> tuple[int, dict]:
    clean = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    p = subprocess.run([sys.executable, "-c", f"{code}\n{REPORT}"], capture_output=True, text=True, timeout=120,
                       env={**clean, **env})
    assert p.stdout, p.stderr
    return p.returncode, json.loads(p.stdout.strip().splitlines()[-1])


def test_numpy_loaded_first_still_gets_one_thread_and_children_inherit_it():
    # numpy (and its OpenBLAS) is loaded with the default pool, then limited
    rc, out = run("import numpy\nfrom inertial_id.threads import single_threaded_math\n"
                  "assert single_threaded_math()")
    assert rc == 0 and out["pools"] and set(out["pools"]) == {1}
    assert out["env"] == dict.fromkeys(THREAD_VARIABLES, "1")


def test_numpy_loaded_afterwards_reads_the_environment():
    rc, out = run("from inertial_id.threads import single_threaded_math\n"
                  "assert single_threaded_math()\nimport numpy")
    assert rc == 0 and out["pools"] and set(out["pools"]) == {1}


def test_a_users_choice_is_kept():
    rc, out = run("import numpy\nfrom inertial_id.threads import single_threaded_math\n"
                  "assert not single_threaded_math()", OPENBLAS_NUM_THREADS="2")
    assert rc == 0 and out["env"]["OPENBLAS_NUM_THREADS"] == "2" and out["env"]["OMP_NUM_THREADS"] is None
    assert 1 not in out["pools"] or os.cpu_count() == 1      # OpenBLAS kept two threads


def test_the_cli_runs_on_one_thread():
    # a command that ends with a user error, after main() set up the process
    rc, out = run("import numpy\nfrom inertial_id.cli import main\n"
                  "assert main(['export', 'no_such_result.json']) == 2")
    assert rc == 0 and set(out["pools"]) == {1}


@pytest.mark.ros
def test_a_node_runs_on_one_thread():
    # run_node's set-up runs before the node is built; a node whose profile is refused exits with 2
    code = ("import numpy\nfrom inertial_id.nodes.common import run_node\n"
            "from inertial_id.core.robot.profile import ProfileError\n"
            "class Refused:\n    def __init__(self):\n        raise ProfileError('refused')\n"
            "assert run_node(Refused, args=['refused']) == 2")
    rc, out = run(code)
    assert rc == 0 and set(out["pools"]) == {1}
