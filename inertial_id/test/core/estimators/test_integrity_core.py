"""Hostile or damaged rows through the core API (issue 23): no row crashes the process (HiGHS never
sees what it cannot solve), no row's stated bound is trusted below the profile's floor, and a
single row cannot move a box labelled guaranteed."""
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators.bounds import HOLD_MIN_ROWS_PER_PARAMETER, IntervalBounds
from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.estimators.row_checks import NoiseFloors, RowLimits, unsolvable
from inertial_id.core.signals.row_builder import RowBuilder
from inertial_id.core.sim import Simulator
from inertial_id.core.trajectory import excitation_from_profile

HERE = Path(__file__).parent
TRUTH_PAYLOAD = "dumbbell_5lb"


def run_python(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter: a native crash is a return code, not a dead test session."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          cwd=HERE, env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                                         "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("robot", ["xarm7", "kinova_gen3"])
def test_denormal_row_no_longer_kills_the_process(robot):
    """The issue's reproduction (SIGSEGV in 4 runs out of 4): one row of 5e-324 entries into a fresh
    ``guaranteed`` estimator, then update_bounds. Now refused (counted), the box stays the prior."""
    code = f"""
import numpy as np
from inertial_id.core.robot.model import load_robot
from inertial_id.core.estimators.factory import make_estimator
robot = load_robot("{robot}")
est = make_estimator(robot, "guaranteed")
rows = robot.nv if est.kinds[0] == "momentum" else 6
A = np.full((rows, len(est.column_names)), 5e-324)
est.add(est.kinds[0], A, np.full(rows, 5e-324), np.full(rows, 5e-324), np.ones(rows), 400)
est.update_bounds()
r = est.result()
lo, hi = robot.payload_prior()
assert np.array_equal(r.lower, lo) and np.array_equal(r.upper, hi), (r.lower, r.upper)
print(est.estimator.refused)
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "denormal" in proc.stdout


def test_an_lp_highs_sees_without_any_entry_does_not_crash():
    """Entries up to HiGHS's small_matrix_value (1e-9) are dropped by HiGHS; with none left it has no
    basis factorization and reading its basic variables crashed the process. Rows of 1e-20 are
    within the accepted scale: the LP is solved, the box is the prior (the rows say nothing)."""
    code = """
import numpy as np
from inertial_id.core.estimators.bounds import IntervalBounds
box = IntervalBounds(-np.ones(3), np.ones(3))
for _ in range(3):                       # the second and third start from the saved bases
    assert box.update(np.full((1, 3), 1e-20), [1e-20], [1e-20]).consistent
assert np.array_equal(box.lower, -np.ones(3)) and np.array_equal(box.upper, np.ones(3)), (box.lower, box.upper)
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("value, reason", [(5e-324, "denormal"), (1e-310, "denormal"), (1e-200, "absurd_scale"),
                                           (1e13, "absurd_scale"), (np.nan, "non_finite"), (-np.inf, "non_finite")])
def test_rows_the_lp_cannot_solve_safely_are_refused_before_highs(value, reason):
    A = np.ones((2, 3))
    A[1, 2] = value
    assert unsolvable(A, np.ones(2), np.ones(2))[0] == reason
    assert unsolvable(np.ones((2, 3)), np.ones(2), np.ones(2)) is None
    box = IntervalBounds(-np.ones(3), np.ones(3))
    with pytest.raises(ValueError):
        box.update(A, np.ones(2), np.ones(2))
    limits = RowLimits.from_robot(robot_model.load_robot("xarm7"))
    e = np.full(2, 1.0)
    got = limits.rejection("wrench", 3, 2, 1, A.ravel(), np.ones(2), e, e)
    assert got is not None and got[0] in (reason, "absurd_regressor", "absurd_measurement"), got


CASES = [("xarm7", "rls"), ("xarm7", "lmi"), ("xarm7", "pmd"), ("xarm7", "guaranteed"),
         ("kinova_gen3", "guaranteed"), ("kinova_gen3", "log_cholesky")]


@pytest.mark.parametrize("robot, method", CASES, ids=[f"{r}-{m}" for r, m in CASES])
def test_random_extreme_rows_through_the_core_api(robot, method):
    """Property test: >= 1,000 random rows mixing ordinary values with denormals, zeros, 1e-310 ..
    1e300, NaN and Inf, fed through the estimator's API with bounds updates in between, in a
    subprocess (a crash fails the test). Only the numerical failures the node counts may be raised;
    the box stays ordered and NaN-free, and a guaranteed box never widens."""
    proc = subprocess.run([sys.executable, str(HERE / "integrity_fuzz_core.py"), robot, method, "1000", "7"],
                          capture_output=True, text=True, timeout=120,
                          env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["rows"] >= 1000 and report["updates"] >= 5
    assert report["refused_messages"] > 0          # the extreme ones are refused, counted
    assert report["violations"] == [], report


def test_noise_floors_follow_the_profile():
    robot = robot_model.load_robot("xarm7")
    floors = NoiseFloors(robot.spec)
    # xarm7: force 3 * 0.1 N + 0.05 N, torque 3 * 0.005 N m + 0.02 N m
    np.testing.assert_allclose(floors.floor("wrench", 12, 2), [0.35] * 3 + [0.035] * 3 + [0.35] * 3 + [0.035] * 3)
    e, raised = floors.raise_to_floor("wrench", np.r_[1e-9, 1.0, 0.4, 0.0, 0.1, 0.05], 1)
    np.testing.assert_allclose(e, [0.35, 1.0, 0.4, 0.035, 0.1, 0.05])
    assert raised == 2
    gen3 = robot_model.load_robot("kinova_gen3")
    # 0.05 N m absolute + 0.02 N m model error over a 0.1 s window
    window = gen3.momentum_window_samples
    np.testing.assert_allclose(NoiseFloors(gen3.spec).floor("momentum", 7, window), np.full(7, 0.007))


def test_a_calibrated_bound_below_the_profile_is_not_taken_for_a_forgery():
    """A calibration can state a momentum window far below the profile's floor (a sensor error that is
    mostly a constant offset); the builder states that bound, so the intake takes such rows (raised to
    the floor later, as any row), and still drops a bound ten times below the calibrated one."""
    gen3 = robot_model.load_robot("kinova_gen3")
    window = gen3.momentum_window_samples
    calibrated = np.full(7, 1e-4)
    calibrated[6] = 1e-5
    cal = SimpleNamespace(windows={window: {"bound_Nm_s": calibrated}})
    plain, with_cal = RowLimits(gen3.torque_limit, NoiseFloors(gen3.spec)), \
        RowLimits(gen3.torque_limit, NoiseFloors(gen3.spec, cal))
    A, b, sigma = np.full((7, 10), 0.1), np.zeros(7), np.ones(7)
    assert plain.rejection("momentum", 10, 7, window, A.ravel(), b, calibrated, sigma)[0] == "noise_bound_below_profile"
    assert with_cal.rejection("momentum", 10, 7, window, A.ravel(), b, calibrated, sigma) is None
    reason = with_cal.rejection("momentum", 10, 7, window, A.ravel(), b, calibrated / 20, sigma)
    assert reason[0] == "noise_bound_below_profile" and "calibration" in reason[1]
    # the floor the rows are raised to stays the profile's
    np.testing.assert_allclose(NoiseFloors(gen3.spec, cal).floor("momentum", 7, window), np.full(7, 0.007))


def test_a_stated_bound_far_below_the_profile_is_dropped_by_the_intake():
    robot = robot_model.load_robot("xarm7")
    limits = RowLimits.from_robot(robot)
    A = np.zeros((6, 10))
    A[:3, 0] = 9.81
    b, sigma = A[:, 0] * 2.0, np.full(6, 0.1)
    assert limits.rejection("wrench", 10, 6, 1, A.ravel(), b, np.full(6, 0.4), sigma) is None
    reason = limits.rejection("wrench", 10, 6, 1, A.ravel(), b, np.full(6, 1e-9), sigma)
    assert reason[0] == "noise_bound_below_profile"


def test_the_box_leaves_the_prior_only_once_enough_rows_have_arrived(rng):
    """The rule (IntervalBounds ``hold_until_determined``): no parameter's bound moves off the prior
    until HOLD_MIN_ROWS_PER_PARAMETER rows per parameter have arrived, however small their stated
    bounds; then every held row is used, and rows that do not determine every parameter (as at rest)
    still tighten what they determine."""
    n = 10
    x = rng.normal(size=n)
    box = IntervalBounds(x - 3, x + 3, hold_until_determined=True)
    needed = HOLD_MIN_ROWS_PER_PARAMETER * n
    assert needed > 1
    a = rng.normal(size=(1, n))
    for _ in range(needed - 1):                   # one row short: nothing moves
        box.update(a, a @ x, [1e-6])
    np.testing.assert_array_equal(box.lower, x - 3)
    np.testing.assert_array_equal(box.upper, x + 3)
    assert not box.determined
    e0 = np.eye(n)[:1]                            # the last row needed determines parameter 0 only
    box.update(e0, e0 @ x, [1e-6])
    assert box.determined and box.contains(x).all()
    assert box.width[0] < 1e-5 and np.all(box.width[1:] > 1e-3)


def wrench_row_batches(robot, seconds: float, seed: int = 0):
    """Wrench rows of a simulated xArm7 moving the dumbbell, in messages of 20 samples (lists of
    the builder's rows; a sample every 2 ms)."""
    sim = Simulator.from_profile(robot, robot_model.payload_params(TRUTH_PAYLOAD), seed=seed)
    sim.command(excitation_from_profile(robot, seconds)[0])
    builder = RowBuilder(robot, False, True, 500.0)
    batch, out = [], []
    for k in range(int(seconds * 1000)):
        sim.step()
        if k % 2 == 0:
            m = sim.measure()
            batch += builder.push(m.t, m.q, m.qd, m.tau, m.wrench)
            if len(batch) == 20:
                out.append(batch)
                batch = []
    return out


def honest_wrench_rows(robot, seconds: float, seed: int = 0):
    """(A, b, e, sigma, acceleration_bound) of 20-sample messages of a simulated xArm7 moving the dumbbell."""
    return [(np.vstack([r.A for r in batch]), *(np.concatenate([getattr(r, f) for r in batch])
                                                for f in ("b", "noise_bound", "noise_sigma")),
             np.stack([r.acceleration_bound for r in batch]))
            for batch in wrench_row_batches(robot, seconds, seed)]


@pytest.fixture(scope="module")
def xarm_rows():
    robot = robot_model.load_robot("xarm7")
    return robot, honest_wrench_rows(robot, 3.0)


def forged(mass_kg: float):
    """The issue's forged message: one row ``[9.81, 0, ...]`` with the weight of ``mass_kg`` and a
    stated bound of 1e-9 (plus the five other rows of a wrench sample, zero), claiming an exact acceleration."""
    A = np.zeros((6, 10))
    A[0, 0] = 9.81
    b = np.zeros(6)
    b[0] = 9.81 * mass_kg
    return A, b, np.full(6, 1e-9), np.full(6, 1e-9), np.zeros((1, 6))


@pytest.mark.parametrize("mass_kg", [2.28, 2.6, 5.0, 0.5])
@pytest.mark.parametrize("when", ["first", "middle", "alone"])
def test_a_forged_row_leaves_the_truth_in_the_box_or_the_box_not_guaranteed(xarm_rows, mass_kg, when):
    robot, rows = xarm_rows
    truth = robot_model.payload_params(TRUTH_PAYLOAD)
    est = make_estimator(robot, "guaranteed")
    stream = list(rows) if when != "alone" else []
    stream.insert(0 if when == "first" else len(stream) // 2, forged(mass_kg))
    for k, (A, b, e, sigma, da) in enumerate(stream):
        est.add("wrench", A, b, e, sigma, len(b) // 6, None, da)
        if k % 10 == 9:
            est.update_bounds()
    est.update_bounds()
    r = est.result()
    inside = np.all((truth >= r.lower) & (truth <= r.upper))
    assert inside or not r.bounds_guaranteed, (r.lower, r.upper, truth)
    assert est.bounds_raised >= 6
    if when == "alone":                   # one row never moves the box
        np.testing.assert_array_equal(r.lower, robot.payload_prior()[0])
    else:                                 # and the honest data still identify the mass
        assert not r.bounds_guaranteed or r.upper[0] - r.lower[0] < 0.2
