"""A box left at the prior says why in one line: the parameters, the samples used, the exclusions."""
import numpy as np

from inertial_id.cli.estimate import guarantee_notes
from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators.explain import prior_explanation
from inertial_id.core.estimators.factory import make_estimator


def test_no_line_when_every_parameter_left_the_prior():
    assert prior_explanation(["a", "b"], [0.1, -1.0], [0.2, 1.0], [0.0, -2.0], [1.0, 2.0], 10) is None


def test_the_line_names_the_parameters_and_the_exclusions():
    line = prior_explanation(["a", "b", "c"], [0.0, -1.0, 0.5], [1.0, 1.0, 0.6], [0.0, -1.0, 0.0], [1.0, 1.0, 1.0],
                             400, {"velocity_reversal": 1108, "gap": 0, "absurd_acceleration": 2})
    assert line == ("box at the prior for a, b: the 400 samples used do not determine them; "
                    "excluded: absurd_acceleration 2, velocity_reversal 1108")
    assert "\n" not in line


def test_estimate_explains_a_box_at_the_prior_in_one_line(rng):
    """Wrench rows taken at rest determine mass and first moment, never the rotational inertia: the
    console says so, with what the pipeline excluded."""
    robot = robot_model.load_robot("xarm7")
    est = make_estimator(robot, "guaranteed")
    x = np.r_[1.5, 0.02, -0.01, 0.15, 0.01, 0.0, 0.01, 0.0, 0.0, 0.005]
    A = np.zeros((60, 10))
    g = rng.normal(size=(10, 3))
    g = 9.81 * g / np.linalg.norm(g, axis=1, keepdims=True)
    for s in range(10):            # f = m g_S, n = mc x g_S: no inertia column is touched at rest
        A[6 * s:6 * s + 3, 0] = g[s]
        mc = np.eye(3)
        A[6 * s + 3:6 * s + 6, 1:4] = -np.cross(g[s][None, :], mc)
    est.add("wrench", A, A @ x, np.full(60, 0.05), np.full(60, 0.05), 10, acceleration_bound=np.zeros((10, 6)))
    est.update_bounds()
    r = est.result()
    assert r.bounds_guaranteed and r.upper[0] - r.lower[0] < 1.0
    info = {"sample_counts": {"paired": 12, "accepted": 12, "velocity_reversal": 2}}
    lines = [n for n in guarantee_notes(r, robot, est, info) if n.startswith("box at the prior")]
    assert len(lines) == 1
    assert "payload.Ixx" in lines[0] and "payload.m," not in lines[0] and "velocity_reversal 2" in lines[0]
