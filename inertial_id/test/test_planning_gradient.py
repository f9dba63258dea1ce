"""The optimiser's CasADi graph is the planner's objective: its cost and torque screen equal the
numpy ones (pinocchio's regressor, :mod:`inertial_id.core.planning.excitation`) to 1e-10, and its
derivatives with respect to the plan's free control points (CasADi's, which IPOPT uses) agree with
central differences of the numpy functions, for an arm with joint torque sensing (the robot's
parameters marginalised) and one with a wrist F/T sensor, from rest and mid-motion with information
already gathered. The screen's soft minimum is never above the minimum and within its stated gap."""
import casadi as ca
import numpy as np
import pytest

from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.optimizer import PlanOptimizer, PlanRequest
from inertial_id.core.planning.plan_nlp import SOFT_MIN_SHARPNESS, soft_min
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
    objective = opt._objective(req)
    x = np.tile(settings.centre, opt.m) + rng.normal(scale=0.15, size=opt.m * opt.n)
    objective.freeze(x)
    cost, margin = objective.evaluate(x)
    assert np.isfinite(cost) and np.isfinite(margin)
    p = objective.parameters(0.0)
    graph_cost, reach = opt.nlp.evaluate(x, p)
    room = p[-robot.nv:]                                # torque room less the frozen tube terms
    assert graph_cost == pytest.approx(cost, rel=1e-10, abs=1e-10)
    assert np.min(room - reach) == pytest.approx(margin, rel=1e-10, abs=1e-10)
    # the graph's gradients (as IPOPT gets them) against central differences of the numpy functions
    xs = ca.MX.sym("x", x.size)
    c_graph, reach_graph = opt.nlp.graph(xs, p)
    margins = ca.vec(ca.repmat(ca.DM(room), 1, settings.cost_samples) - reach_graph)
    exact = ca.Function("d", [xs], [ca.gradient(c_graph, xs), ca.gradient(ca.mmin(margins), xs)])(x)
    numeric = central_difference(objective.evaluate, x)
    for col in range(2):          # cost, screened margin
        scale = np.abs(numeric[:, col]).max()
        assert scale > 0
        assert np.abs(np.asarray(exact[col]).ravel() - numeric[:, col]).max() <= 1e-6 * scale


def test_soft_min_is_below_the_minimum_within_its_gap():
    rng = np.random.default_rng(5)
    for count in (1, 7, 224):
        v = rng.normal(scale=3.0, size=count)
        s = float(ca.Function("s", [], [soft_min(ca.DM(v))])()["o0"])
        assert s <= v.min() + 1e-12
        assert s >= v.min() - np.log(count) / SOFT_MIN_SHARPNESS - 1e-12
