"""The tracking tube measured on the simulated arm (``profile tube``): the planner run as the demo
runs it, on MuJoCo, with a monitor that records. The tube it proposes bounds every round's errors
with its margin, and a run it did not measure (another noise seed, the planner's own monitor
braking outside the tube) stays inside it."""
import numpy as np
import pytest

from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.optimizer import tube_margins
from inertial_id.core.robot.model import ProfileError, load_robot
from inertial_id.sim.tube import TUBE_FLOOR, TUBE_MARGIN, measure_round, measure_tube


@pytest.fixture(scope="module")
def digit_arm():
    return load_robot("digit_arm")


@pytest.fixture(scope="module")
def measured(digit_arm):
    return measure_tube(digit_arm, duration_s=8.0, seed=3, rounds=2)


def test_the_first_round_plans_with_the_profiles_tube_and_moves(digit_arm, measured):
    _, rounds = measured
    np.testing.assert_array_equal(rounds[0].planned_tube,
                                  np.stack(tube_margins(CertifierSettings.from_profile(digit_arm), digit_arm.nv)))
    for r in rounds:
        assert r.plans >= 3 and not r.faults
        assert np.all(r.max_error > 0.0)


def test_the_tube_bounds_every_rounds_errors_by_its_margin(measured):
    tube, rounds = measured
    assert tube.shape == (3, 4)
    assert np.all(tube >= TUBE_FLOOR[:, None])
    for r in rounds:
        assert np.all(tube >= TUBE_MARGIN * r.max_error - 1e-12)


def test_a_run_it_did_not_measure_stays_in_the_measured_tube(digit_arm, measured):
    tube, _ = measured
    check = measure_round(digit_arm, tube, duration_s=8.0, seed=11, brakes=True)
    assert check.faults == () and check.plans >= 3, check.ended
    assert np.all(check.max_error <= tube)


def test_a_tube_too_narrow_for_the_controller_brakes_the_planner(digit_arm):
    """The check above could fail: a tenth of the profile's tube is left at once."""
    tube = np.stack(tube_margins(CertifierSettings.from_profile(digit_arm), digit_arm.nv)) / 10.0
    check = measure_round(digit_arm, tube, duration_s=8.0, seed=11, brakes=True)
    assert check.faults and "tracking error" in check.faults[0]


def test_a_tube_that_leaves_no_certified_plan_is_an_error(digit_arm):
    tube = np.stack(tube_margins(CertifierSettings.from_profile(digit_arm), digit_arm.nv))
    tube[0] = 0.5          # rad: the plans' hull leaves the position limits
    with pytest.raises(ProfileError, match="no plan was made"):
        measure_round(digit_arm, tube, duration_s=4.0)
