"""The ROS-install route of docs/install.rst, its commands run in their order as far as this machine can.
The test environment's wheels stand in for the apt ROS install: what sourcing /opt/ros/<distro>/setup.bash
gives (its Python packages on PYTHONPATH, its prefix on AMENT_PREFIX_PATH and CMAKE_PREFIX_PATH, its
commands on PATH), and their base interpreter for /usr/bin/python3. A documented line this test does
not know fails it: the page and the test change together."""
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from paths import REPO

pytestmark = [pytest.mark.ros, pytest.mark.slow]

INSTALL = REPO / "docs" / "install.rst"
ROUTE_MARK = ".. checked-by-test: ros-install-route"
# what the wheels need that apt's packages do not: cmake/drop_stale_include_dirs.cmake
WHEEL_FIX = (f"-DCMAKE_PROJECT_INCLUDE={REPO / 'cmake' / 'drop_stale_include_dirs.cmake'} "
             "-DINERTIAL_ID_DEFER_INCLUDE_FIX=ON")


def route_lines() -> list[str]:
    """The lines of the code block that follows the route's mark."""
    lines = INSTALL.read_text().splitlines()
    start = lines.index(ROUTE_MARK)
    block = next(k for k in range(start, len(lines)) if lines[k].strip().startswith(".. code-block::"))
    out = []
    for line in lines[block + 1:]:
        if line.strip() and not line.startswith("   "):
            break
        if line.strip():
            out.append(line.strip())
    return out


def here(line: str) -> tuple[str | None, str]:
    """``(shell line to run here or None, why)`` for one documented line."""
    if re.fullmatch(r"source /opt/ros/(humble|jazzy)/setup\.bash", line):
        return None, "the wheels' environment is the sourced ROS install"
    if line == "git clone <this repository> src/inertial_id":
        return (f"mkdir src/inertial_id && ln -s {REPO / 'inertial_id_msgs'} {REPO / 'inertial_id'} src/inertial_id/",
                "this checkout's two packages as the clone's")
    if line.startswith("rosdep install "):
        return None, "make check-rosdep simulates it against the rosdistro snapshot"
    if line == "python3 -m venv --system-site-packages venv":
        return f"{sys._base_executable} -m venv --system-site-packages venv", "the base interpreter as the system's"
    match = re.fullmatch(r"venv/bin/pip install -r src/inertial_id/(requirements-[\w-]+\.lock)", line)
    if match:
        assert (REPO / match.group(1)).is_file(), f"{INSTALL.name}: no {match.group(1)}"
        return None, "make check-locks resolves the lock, make ci-humble installs Humble's"
    if line == "colcon build":
        return f"colcon build --event-handlers console_cohesion- --cmake-args {WHEEL_FIX}", "with the wheels' fix"
    if line in ("mkdir -p ~/ws/src && cd ~/ws", "touch venv/COLCON_IGNORE", "source venv/bin/activate",
                "source install/setup.bash"):
        return line, "as documented"
    raise AssertionError(f"{INSTALL.name}: a step this test does not know: {line!r}; teach {Path(__file__).name}")


def test_the_ros_install_route_builds_nodes_that_run_in_the_venv(tmp_path):
    """Both packages build with colcon in ``~/ws``; the node executables name the workspace venv's
    interpreter; the system interpreter, with the workspace sourced, imports the library and the
    messages from the install space."""
    steps = [here(line) for line in route_lines()]
    assert sum(run is not None for run, _ in steps) >= 6, steps
    venv = sysconfig.get_paths()["purelib"]
    env = {"HOME": str(tmp_path), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": venv,
           "AMENT_PREFIX_PATH": sys.prefix, "CMAKE_PREFIX_PATH": sys.prefix, "LANG": "C.UTF-8"}
    checks = f"""
head -1 install/inertial_id/lib/inertial_id/estimator
{sys._base_executable} -c 'import inertial_id, inertial_id_msgs.msg, inertial_id.nodes.entry; print(inertial_id.__file__)'
"""
    script = "set -e\n" + "\n".join(run for run, _ in steps if run is not None) + checks
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shebang, library = done.stdout.strip().splitlines()[-2:]
    ws = tmp_path / "ws"
    assert shebang.startswith(f"#!{ws / 'venv' / 'bin'}/python"), shebang
    assert library.startswith(str(ws / "install" / "inertial_id")), library
