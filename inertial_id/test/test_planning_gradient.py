"""The planner's gradients are exact: the excitation cost's and the torque screen's derivatives with
respect to the plan's free control points (pinocchio's inverse-dynamics derivatives, chained by hand)
agree with central differences of the functions themselves, for an arm with joint torque sensing
(the robot's parameters marginalised) and one with a wrist F/T sensor, from rest and mid-motion with
information already gathered."""
import numpy as np
import pytest

from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.optimizer import PlanOptimizer, PlanRequest
from inertial_id.core.robot.model import load_robot, payload_params


def central_difference(f, x, h=1e-6):
    out = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        out.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.array(out)          # (x.size, outputs)


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7"])
@pytest.mark.parametrize("moving", [False, True])
def test_cost_and_screen_gradients_match_central_differences(name, moving):
    robot = load_robot(name)
    settings, cert = PlannerSettings.from_profile(robot), CertifierSettings.from_profile(robot)
    opt = PlanOptimizer(robot, settings, cert)
    rng = np.random.default_rng(3)
    lo, hi = robot.payload_prior()
    truth = payload_params("dumbbell_5lb")
    lo, hi = np.maximum(lo, truth - 0.3 * (truth - lo)), np.minimum(hi, truth + 0.3 * (hi - truth))
    q = settings.centre + (rng.uniform(-0.1, 0.1, robot.nv) if moving else 0.0)
    qd = rng.uniform(-0.2, 0.2, robot.nv) if moving else np.zeros(robot.nv)
    F_prev = opt.excitation.no_information()
    if moving:       # information of an earlier plan
        earlier = opt.plan_from(PlanRequest(settings.centre, np.zeros(robot.nv), np.zeros(robot.nv), lo, hi, F_prev),
                                np.tile(settings.centre, opt.m) + rng.normal(scale=0.1, size=opt.m * opt.n))
        F_prev = opt.excitation.information(earlier, settings.cost_samples)
    req = PlanRequest(q, qd, np.zeros(robot.nv), lo, hi, F_prev)
    evaluate, gradient, _ = opt._objective(req)
    x = np.tile(settings.centre, opt.m) + rng.normal(scale=0.15, size=opt.m * opt.n)
    numeric = central_difference(evaluate, x)
    exact = np.column_stack(gradient(x))
    assert np.all(np.isfinite(evaluate(x)))
    for col in range(2):          # cost, screened margin
        scale = np.abs(numeric[:, col]).max()
        assert scale > 0
        assert np.abs(exact[:, col] - numeric[:, col]).max() <= 1e-6 * scale
