"""The F/T offset's stated box checked, not assumed (core.estimators.offset_freeing): with the data
unable to tell the offset from the payload, an offset beyond its box gives a box without the truth
if the box is taken on trust; freed, the box holds it. The estimator's final box does the same."""
import numpy as np
import pinocchio as pin

from inertial_id.core.estimators.offset_freeing import FREED_FACTOR, free_offsets, rows_box
from inertial_id.core.estimators.payload import offset_columns
from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.robot.regressor import PayloadRegressor
from inertial_id.core.signals.sensors import NoiseModel
from inertial_id.sim import harness


def static_rows(robot, pi, offset, samples: int = 20):
    """Wrench rows of the arm held at one pose: gravity along one axis of the sensor, so the mass and
    the force offset along it are one unknown."""
    reg = PayloadRegressor(robot)
    q = pin.neutral(robot.model)
    zero = np.zeros(robot.nv)
    A = np.vstack([reg.wrench_rows(q, zero, zero, np.zeros(6))[0] for _ in range(samples)])
    M = np.hstack([A, offset_columns(A.shape[0])])
    b = M @ np.concatenate([pi, offset])
    return M, b, np.full(b.size, 0.05)


def test_an_offset_beyond_its_box_is_freed_and_the_truth_stays_inside():
    robot = robot_model.load_robot("xarm7")
    lo, hi = robot.payload_prior()
    pi = params.params_from_com(1.5, np.array([0.0, 0.0, 0.1]), np.diag([0.004, 0.005, 0.003]))
    stated = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
    offset = 3.0 * stated * np.array([0, 0, 1, 0, 0, 0])            # along gravity, in the sensor frame
    M, b, e = static_rows(robot, pi, offset)
    assert np.count_nonzero(M[2, :10]) == 1                         # that row sees the mass only
    trusted, consistent = rows_box(lo, hi, M, b, e)(stated)
    assert consistent and not (trusted.lower[0] <= pi[0] <= trusted.upper[0])     # on trust: wrong
    freed = free_offsets(rows_box(lo, hi, M, b, e), stated)
    assert freed.consistent and freed.guaranteed and freed.freed[2]
    assert np.all((freed.bounds.lower <= pi) & (pi <= freed.bounds.upper))
    assert np.all(freed.bounds.r_upper <= FREED_FACTOR * stated + 1e-9)


def test_the_estimators_final_box_holds_the_truth_with_an_offset_beyond_its_box():
    """MuJoCo, 6 s: a moment offset three times its stated box is never a silent wrong answer, and
    an offset inside its box leaves a guaranteed box with the truth that says what it rests on."""
    robot = robot_model.load_robot("xarm7")
    stated = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
    for offset, beyond in ((0.5 * stated * np.array([1, -1, 1, -1, 1, -1]), False),
                           (3.0 * stated * np.array([0, 0, 0, 1, -1, 0]), True)):
        case = harness.Case("offset", duration_s=6.0, wrench_offset=tuple(float(o) for o in offset))
        r = harness.run_case(case)
        assert not r["silent_wrong_answer"] and r["data_consistent"]
        if not beyond:
            assert r["bounds_guaranteed"] and r["all_inside"]
        if r["bounds_guaranteed"]:
            assert r["all_inside"] and "F/T offset" in r["message"]
