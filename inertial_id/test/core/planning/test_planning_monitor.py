"""The tube and limits monitor: every sample, acceleration estimated with its own error bound, and
a breach while holding still (planning) is a fault too."""
import numpy as np
import pytest

from inertial_id.core.planning.monitor import TubeMonitor

N = 3
TUBE = (np.full(N, 0.03), np.full(N, 0.15), np.full(N, 0.2))
LIMITS = (np.full(N, -2.0), np.full(N, 2.0), np.full(N, 1.0))


def run(monitor, t, e_q, e_v):
    """Feed samples whose errors are e_q(t), e_v(t) around a zero reference; the first breach."""
    for tk in t:
        why = monitor.check_tube(tk, np.full(N, e_q(tk)), np.full(N, e_v(tk)), (np.zeros(N), np.zeros(N)))
        if why:
            return tk, why
    return None, ""


def test_an_acceleration_error_beyond_the_tube_is_caught_from_velocities():
    t = np.arange(0.0, 1.0, 0.001)
    # velocity error ramps at 0.3 rad/s^2 (beyond 0.2) while staying inside the velocity tube
    at, why = run(TubeMonitor(TUBE, *LIMITS), t, lambda s: 0.0, lambda s: 0.3 * s)
    assert at is not None and at <= 0.06 and "rad/s^2" in why
    at, why = run(TubeMonitor(TUBE, *LIMITS), t, lambda s: 0.0, lambda s: 0.15 * s)     # within: no breach
    assert at is None


def test_velocity_noise_widens_the_acceleration_test_by_its_stated_bound():
    t = np.arange(0.0, 1.0, 0.001)
    noisy = TubeMonitor(TUBE, *LIMITS, velocity_noise_rad_s=0.01, window_s=0.05)
    assert noisy.acceleration_error_bound == pytest.approx(0.4)
    rng = np.random.default_rng(0)
    noise = dict(zip(t, rng.uniform(-0.01, 0.01, t.size)))
    at, _ = run(noisy, t, lambda s: 0.0, lambda s: noise[s])          # noise alone is never a breach
    assert at is None
    at, _ = run(TubeMonitor(TUBE, *LIMITS, velocity_noise_rad_s=0.01), t, lambda s: 0.0, lambda s: 0.7 * s)
    assert at is not None


def test_position_and_velocity_errors_and_limits():
    m = TubeMonitor(TUBE, *LIMITS)
    assert "rad on joint" in m.check_tube(0.0, np.full(N, 0.031), np.zeros(N), (np.zeros(N), np.zeros(N)))
    assert "rad/s on joint" in m.check_tube(0.001, np.zeros(N), np.full(N, 0.16), (np.zeros(N), np.zeros(N)))
    assert "outside its limits" in m.check_limits([0.0, 2.01, 0.0], np.zeros(N))
    assert "velocity limit" in m.check_limits(np.zeros(N), [0.0, 0.0, -1.2])
    assert m.check_limits(np.zeros(N), np.zeros(N)) == ""
    np.testing.assert_allclose(m.max_error[:2], [0.031, 0.16])


def test_the_largest_error_is_kept_per_joint():
    """Per joint and kind, what a tube is sized from; ``max_error`` is its largest over joints."""
    m = TubeMonitor(TUBE, *LIMITS)
    ref = (np.zeros(N), np.zeros(N))
    m.check_tube(0.0, [0.01, -0.02, 0.0], [0.0, 0.0, 0.05], ref)
    m.check_tube(0.001, [-0.015, 0.005, 0.0], [0.0, -0.07, 0.0], ref)
    np.testing.assert_allclose(m.joint_max_error[:2], [[0.015, 0.02, 0.0], [0.0, 0.07, 0.05]])
    np.testing.assert_allclose(m.max_error[:2], [0.02, 0.07])


def test_the_largest_share_of_the_tube_used_is_kept():
    """The share of its tube the worst error used, over joints and kinds (a zero tube: any error is
    infinitely far out, none is not)."""
    m = TubeMonitor(TUBE, *LIMITS)
    ref = (np.zeros(N), np.zeros(N))
    m.check_tube(0.0, [0.0, 0.015, 0.0], [0.03, 0.0, 0.0], ref)           # position 0.5, velocity 0.2
    assert m.max_tube_share == pytest.approx(0.5)
    m.check_tube(0.001, np.zeros(N), [0.0, 0.0, -0.12], ref)              # velocity 0.8
    assert m.max_tube_share == pytest.approx(0.8)
    m.check_tube(0.002, np.zeros(N), np.zeros(N), ref)                    # the largest stays
    assert m.max_tube_share == pytest.approx(0.8)
    zero = TubeMonitor((np.zeros(N), *TUBE[1:]), *LIMITS)
    zero.check_tube(0.0, np.zeros(N), np.zeros(N), ref)
    assert zero.max_tube_share == 0.0
    zero.check_tube(0.001, [1e-9, 0.0, 0.0], np.zeros(N), ref)
    assert zero.max_tube_share == np.inf


def test_a_sag_while_planning_is_a_fault():
    """Holding still before the first plan: a sample beyond the limits ends the start (nothing moves)."""
    from inertial_id.core.robot.model import load_robot
    from inertial_id.core.planning.config import PlannerSettings
    from inertial_id.core.planning.receding import RecedingHorizon
    from test_planning_receding import Certifier, Tube
    robot = load_robot("kinova_gen3")
    settings = PlannerSettings.from_profile(robot)
    rh = RecedingHorizon(robot, settings, Tube(), certify_fn=Certifier(robot))
    assert rh.start(0.0, settings.centre) and rh.state == "planning"
    q = np.array(settings.centre, float)
    assert rh.tick(0.1, 0.0, [(0.05, q, np.zeros(robot.nv))]) is None and rh.state == "planning"
    sagged = q.copy()
    sagged[1] = robot.position_upper[1] + 0.01
    rh.tick(0.2, 0.0, [(0.15, q, np.zeros(robot.nv)), (0.16, sagged, np.zeros(robot.nv))])
    assert rh.state == "failed" and "outside its limits" in rh.message
