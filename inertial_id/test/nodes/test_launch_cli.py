"""``inertial-id launch`` as a user meets it: ``--help`` lists the launch arguments, arguments the
nodes would refuse are refused before any node starts, each node's output is shown prefixed like
``ros2 launch`` and a node that exits is named with its reason; ``inertial-id planner start|stop|status``
drive the planner of a running launch."""
import re
import signal
import subprocess
import sys
import time

import pytest

from inertial_id.nodes.launch import LAUNCH_ARGUMENTS, SIM_ARGUMENTS

from ros_helpers import require_launch_ros, spin_until

pytestmark = pytest.mark.slow          # each case starts processes


def cli(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inertial_id.cli", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_help_lists_the_launch_arguments():
    out = cli("launch", "--help").stdout
    for name, _, description in LAUNCH_ARGUMENTS + SIM_ARGUMENTS:
        assert re.search(rf"^  {name} +{re.escape(description)}", out, re.M), name
    assert "inertial-id planner start" in out
    shown = cli("launch", "xarm7.launch.py", "--show-args").stdout
    assert "'robot_profile':" in shown and "(default: 'xarm7')" in shown and "'payload'" not in shown


@pytest.mark.parametrize("argument, expected", [
    ("robot_profile:=nonexistent", "unknown robot profile 'nonexistent'"),
    ("method:=bogus", "unknown estimation method 'bogus'"),
    ("payload:=anvil", "unknown payload 'anvil'"),
    ("engine:=bullet", "unknown engine 'bullet'"),
    ("bounds_period_s:=abc", "sim.launch.py has no launch argument 'bounds_period_s'"),
])
def test_arguments_the_nodes_would_refuse_are_one_line_and_exit_2(argument, expected):
    started = time.monotonic()
    proc = cli("launch", "sim.launch.py", "--processes", argument)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and expected in lines[0], proc.stderr
    assert "started with pid" not in proc.stdout and time.monotonic() - started < 30


# A launch file of another package: valid, and harmless should it run (it only logs).
FOREIGN_LAUNCH_FILE = """from launch import LaunchDescription
from launch.actions import LogInfo


def generate_launch_description():
    return LaunchDescription([LogInfo(msg="a launch file of another package ran")])
"""
NOT_OURS = {
    # what /etc/hostname holds (issue 30: a traceback from run_launch_service)
    "hostname": (b"build-host-7\n", "is not a launch file: it defines no generate_launch_description()"),
    "binary": (bytes(range(256)), "is not a launch file: not Python source"),
    "python_syntax_error": (b"def generate_launch_description(:\n", "is not a launch file: not Python source"),
    "foreign_launch_file": (FOREIGN_LAUNCH_FILE.encode(), "is not one of this package's launch files"),
    "literal_free_call": (b"from inertial_id.nodes.launch_description import launch_description\nPROFILE = 'xarm7'\n\n\n"
                          b"def generate_launch_description():\n    return launch_description(PROFILE, with_sim=True)\n",
                          "is not one of this package's launch files"),
}


@pytest.mark.parametrize("mode", ["launch_service", "processes"])
@pytest.mark.parametrize("kind", sorted(NOT_OURS))
def test_a_file_that_is_not_one_of_this_packages_launch_files_is_one_line_and_exit_2(kind, mode, tmp_path):
    """In either mode (a LaunchService where launch_ros is installed, node processes otherwise): one
    line on stderr naming the file and what it is, exit code 2, nothing started."""
    if mode == "launch_service":
        require_launch_ros()        # without it `inertial-id launch FILE` is the process mode
    content, expected = NOT_OURS[kind]
    path = tmp_path / f"{kind}.launch.py"
    path.write_bytes(content)
    proc = cli("launch", str(path), *(["--processes"] if mode == "processes" else []))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"inertial-id launch: error: {path} ") and expected in lines[0], lines[0]
    assert "started" not in proc.stdout and "another package ran" not in proc.stdout, proc.stdout


@pytest.mark.ros
def test_a_node_that_exits_is_named_with_its_reason(ros_env):
    """A topic name no node can use: the first node to reach it exits; the launch shows its output
    prefixed, stops the others and ends with one line naming the node and the exception."""
    proc = cli("launch", "sim.launch.py", "--processes", "joint_states_topic:=bad topic!", env=ros_env)
    last = proc.stderr.strip().splitlines()[-1]
    print(last)
    assert proc.returncode == 1
    takers = "sim_robot|regressor_builder|excitation_planner|payload_compensator"    # nodes that take the topic
    assert re.match(rf"inertial-id launch: failed: node ({takers}) exited "
                    r"with code 1: \S*InvalidTopicNameException: Invalid topic name", last), last
    assert re.search(rf"^\[({takers})-\d\] Traceback", proc.stdout, re.M)


class StatusWatch:
    """The test's own subscription to the planner's status (the CLI is what is under test)."""

    def __init__(self):
        import rclpy
        from inertial_id_msgs.msg import ExcitationStatus
        self.node = rclpy.create_node("status_watch")
        self.states = []
        self.node.create_subscription(ExcitationStatus, "/excitation_status",
                                      lambda m: self.states.append(m.state), 10)

    def wait_for(self, states, timeout_s: float) -> bool:
        return spin_until(self.node, lambda: bool(self.states) and self.states[-1] in states, timeout_s)


@pytest.mark.ros
def test_start_status_stop_drive_a_launched_planner(ros_env):
    # on the simulator's clock: a loaded machine slows the simulation down instead of faulting the planner
    launch = subprocess.Popen([sys.executable, "-m", "inertial_id.cli", "launch", "sim.launch.py", "--processes",
                               "use_sim_time:=true"],
                              env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watch = StatusWatch()
    try:
        assert watch.wait_for(("idle",), 90.0), watch.states[-5:]
        status = cli("planner", "status", env=ros_env)
        assert status.returncode == 0 and status.stdout.startswith("state: idle"), status.stdout + status.stderr
        for _ in range(5):                    # the planner refuses until it has joint states
            started = cli("planner", "start", env=ros_env)
            if started.returncode == 0:
                break
            assert "joint states" in started.stderr, started.stderr
            time.sleep(1.0)
        assert started.returncode == 0 and started.stdout.startswith("start: "), started.stderr
        assert watch.wait_for(("planning", "executing"), 30.0), watch.states[-5:]
        stopped = cli("planner", "stop", env=ros_env)
        assert stopped.returncode == 0 and stopped.stdout.startswith("stop: "), stopped.stderr
        assert watch.wait_for(("braking", "done"), 30.0), watch.states[-5:]
        status = cli("planner", "status", env=ros_env)
        print(status.stdout)
        assert status.returncode == 0 and re.match(r"state: (braking|done) .*stop requested", status.stdout), \
            status.stdout
    finally:
        watch.node.destroy_node()
        launch.send_signal(signal.SIGINT)
        out = launch.communicate(timeout=60)[0]
    assert launch.returncode == 0, out[-3000:]
    for node in ("sim_robot", "regressor_builder", "estimator", "excitation_planner"):
        assert re.search(rf"^\[INFO\] \[launch\]: {node}-\d started with pid", out, re.M), node
    assert re.search(r"^\[excitation_planner-4\] ", out, re.M), out[-3000:]
