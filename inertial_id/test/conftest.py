import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

# The project's shared folder beside the repository (recordings, reference models, vendored launch
# packages). `make test` fails on any skip while it is present (scripts/test_summary.py).
from paths import SHARED, TESTS    # test/, this file's folder, is on sys.path: pytest puts it there

# test/ mirrors the package (docs/development.rst): a test module imports the helpers of another by its
# basename (``from test_integrity_core import forged``), whatever folder either is in, so every folder of
# tests is on sys.path, not only the one pytest puts there when it collects the importing module. The
# basenames are unique: pytest's default import mode (prepend) refuses two test modules of one name.
for _folder in sorted({TESTS} | {p.parent for p in TESTS.rglob("test_*.py")}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))


# The tiers: a test is ``unit`` (pytest -m unit, minutes) unless it runs nodes (ros), reads recordings
# (shared_data), is a benchmark (bench) or is marked slow (a study, an optimisation, a long simulation).
NOT_UNIT = ("ros", "shared_data", "bench", "slow")
# What the caller's environment may say about DDS discovery; the suite decides it (ros_env, isolated_ros_env)
CALLERS_DISCOVERY = ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS", "ROS_LOCALHOST_ONLY")


def pytest_configure(config):
    """The tests compute as the suite's processes do (one BLAS thread: inertial_id.threads), so what a
    test computes offline and what a node computes agree to the bit. Parallel workers (pytest -n N)
    pick their DDS domains from disjoint ranges: nodes of a test on one worker never meet those of a
    test on another."""
    from inertial_id.threads import single_threaded_math
    single_threaded_math()
    # A ROS user's shell names a domain (and may widen discovery); kept, every DDS test of every worker
    # would share that one domain and read the others' messages. Each test takes a domain of its own.
    for name in CALLERS_DISCOVERY:
        os.environ.pop(name, None)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw"):
        from inertial_id.nodes.launch import DOMAINS_ENV
        n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        size = 100 // max(n, 1)
        first = 1 + int(worker[2:]) * size
        os.environ[DOMAINS_ENV] = f"{first}-{first + size - 1}"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``shared_data`` skip when ../shared is absent, tests marked ``ros`` when rclpy is
    not importable; each says why. Every other test without a ``slow`` or ``bench`` mark is ``unit``."""
    no_shared = pytest.mark.skip(reason=f"needs {SHARED}, which is absent")
    no_rclpy = pytest.mark.skip(reason="needs rclpy (the ROS 2 wheels or a ROS install)")
    has_rclpy = importlib.util.find_spec("rclpy") is not None
    for item in items:
        if not any(item.get_closest_marker(name) for name in NOT_UNIT):
            item.add_marker(pytest.mark.unit)
        if item.get_closest_marker("shared_data") and not SHARED.is_dir():
            item.add_marker(no_shared)
        if item.get_closest_marker("ros") and not has_rclpy:
            item.add_marker(no_rclpy)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared (tests that use it are marked ``shared_data``)."""
    return SHARED


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def random_params(rng, consistent=True):
    """A random parameter vector (pinocchio order) of a physically consistent rigid body."""
    from inertial_id.core.robot import params
    m = rng.uniform(0.2, 5.0)
    c = rng.normal(scale=0.2, size=3)
    B = rng.normal(scale=0.1, size=(3, 3))
    Sigma_C = B @ B.T + 1e-4 * np.eye(3)          # second moment of the mass about the COM
    I_C = m * (np.trace(Sigma_C) * np.eye(3) - Sigma_C)
    if not consistent:
        I_C = np.diag([1.0, 0.01, 0.01])   # violates the triangle inequality
    return params.params_from_com(m, c, I_C)


@pytest.fixture(scope="module")
def gen3():
    """(chain, layout, theta) of the Kinova Gen3 for whole-robot identification: nominal inertials,
    friction [Fc, Fv, Ia, beta] = [0.5, 1.0, 0.3, 0.1] on every joint."""
    from inertial_id.core.robot import closed_chain as cc
    from inertial_id.core.identification import problem as P
    from inertial_id.core.robot.model import load_robot
    robot = load_robot("kinova_gen3")
    chain = cc.chain_from_profile(robot.model, robot.spec)
    layout = P.make_layout(chain, True)
    theta = layout.nominal.copy()
    theta[layout.n_inertial:] = np.tile([0.5, 1.0, 0.3, 0.1], 7)
    return chain, layout, theta


@pytest.fixture(scope="session")
def calibrated_gen3(tmp_path_factory):
    """The Gen3 whose profile names a robot calibration (the planner's cost then models the rows as the
    calibrated estimator bounds them): 0.1 s windows at 1 kHz (the profile's), bounds that differ per
    joint, measured up to 6 N m of torque; every joint's offset free within ±1 N m."""
    from inertial_id.core.calibration import Calibration
    from inertial_id.core.calibration.apply import robot_with_calibration
    from inertial_id.core.calibration.plateaus import PlateauDetector
    from inertial_id.core.robot.model import load_robot
    robot = load_robot("kinova_gen3")
    n = robot.nv
    windows = {100: {"duration_s": 0.1, "max_error_Nm_s": np.linspace(0.01, 0.04, n),
                     "bound_Nm_s": np.linspace(0.02, 0.08, n)}}
    calibration = Calibration("kinova_gen3", list(robot.joint_names), 1000.0, np.ones(n),
                              np.tile([0.3, 0.5, 0.2], (n, 1)), np.zeros(n), np.ones(n), windows, 2.0,
                              PlateauDetector(np.full(n, 3.0), np.full(n, 5.0), guard_s=0.0),
                              torque_range_Nm=np.full(n, 6.0))
    return robot_with_calibration(robot, calibration, tmp_path_factory.mktemp("calibration") / "gen3.yaml")


@pytest.fixture
def ros_env():
    """A private DDS domain for this test's processes and for rclpy in the test process."""
    from inertial_id.nodes.launch import isolated_ros_env
    env = isolated_ros_env()
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    os.environ.update({k: env[k] for k in saved})
    import rclpy
    rclpy.init()
    yield env
    rclpy.try_shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
