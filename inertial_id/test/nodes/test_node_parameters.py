"""Node parameters are declared with types and ranges (ParameterDescriptor with FloatingPointRange /
IntegerRange, read over the parameter services of a running node), and a value of the wrong type,
out of range or not among the allowed strings ends a real node process with one line on stderr
and exit code 2."""
import subprocess
import sys

import pytest

from ros_helpers import spin_until

pytestmark = pytest.mark.ros


def run_node(node: str, env: dict, *parameters: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "inertial_id.nodes.entry", node, "--ros-args", "-p", "robot_profile:=kinova_gen3"]
    for p in parameters:
        args += ["-p", p]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("node, parameter, expected", [
    ("estimator", "bounds_period_s:=abc", "expected a floating-point number (e.g. 2.0) in [0.001, 3600], got 'abc'"),
    ("estimator", "bounds_period_s:=-1.0", "got -1.0"),
    ("estimator", "bounds_period_s:=3", "got 3 (an integer: write 3.0)"),
    ("estimator", "method:=bogus", "expected one of '', 'rls', 'lmi', 'pmd', 'guaranteed', 'log_cholesky'"),
    ("regressor_builder", "batch_samples:=0", "parameter batch_samples: expected an integer in [1, 1000000], got 0"),
    ("excitation_planner", "point_hz:=0.0", "parameter point_hz: expected a floating-point number (e.g. 2.0) in [1, 10000]"),
    ("sim_robot", "real_time_factor:=fast", "parameter real_time_factor:"),
    ("payload_compensator", "process_batch:=0", "parameter process_batch: expected an integer in [1, 100000], got 0"),
    ("payload_compensator", "wrench_offset:=[1.0,2.0]", "parameter wrench_offset: expected 6 finite numbers"),
])
def test_a_bad_parameter_is_one_line_and_exit_2(ros_env, node, parameter, expected):
    proc = run_node(node, ros_env, parameter, "state_file:=none")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-3000:]
    assert expected in lines[0] and "Traceback" not in proc.stdout + proc.stderr


def test_running_node_describes_types_and_ranges(ros_env):
    """What ``ros2 param describe /estimator bounds_period_s`` shows, over the node's own service."""
    import rclpy
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import DescribeParameters
    proc = subprocess.Popen([sys.executable, "-m", "inertial_id.nodes.entry", "estimator", "--ros-args",
                             "-p", "robot_profile:=kinova_gen3", "-p", "state_file:=none"],
                            env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    node = rclpy.create_node("describe_client")
    client = node.create_client(DescribeParameters, "/estimator/describe_parameters")
    try:
        assert spin_until(node, lambda: client.service_is_ready() or proc.poll() is not None, 60.0)
        assert proc.poll() is None
        future = client.call_async(DescribeParameters.Request(names=["bounds_period_s", "max_bound_rows", "method"]))
        assert spin_until(node, future.done, 20.0)
        period, rows, method = future.result().descriptors
    finally:
        node.destroy_node()
        proc.terminate()
        out = proc.communicate(timeout=30)[0]
    assert period.type == ParameterType.PARAMETER_DOUBLE and period.read_only
    assert (period.floating_point_range[0].from_value, period.floating_point_range[0].to_value) == (1e-3, 3600.0)
    assert rows.type == ParameterType.PARAMETER_INTEGER
    assert (rows.integer_range[0].from_value, rows.integer_range[0].to_value) == (0, 10**7)
    assert method.type == ParameterType.PARAMETER_STRING and "'guaranteed'" in method.additional_constraints
    assert "Traceback" not in out


def test_a_crash_in_native_code_leaves_the_stack(ros_env):
    """A node that dies of a signal (here a null read through ctypes, as a native library's bug would)
    says where: every thread's Python stack on stderr, not only the exit code -11."""
    code = ("import ctypes\nfrom inertial_id.nodes.common import run_node\n"
            "class Crashes:\n    def __init__(self):\n        ctypes.string_at(0)\n"
            "run_node(Crashes, args=['crashes'])")
    proc = subprocess.run([sys.executable, "-c", code], env=ros_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode < 0, proc.stderr[-2000:]
    assert "Fatal Python error" in proc.stderr and "__init__" in proc.stderr, proc.stderr[-2000:]
