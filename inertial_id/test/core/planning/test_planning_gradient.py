"""The optimiser's CasADi graph is the planner's objective: its cost and torque screen equal the
numpy ones (pinocchio's regressor, :mod:`inertial_id.core.planning.excitation`) to 1e-10, and its
derivatives with respect to the plan's free control points (CasADi's, which IPOPT uses) agree with
central differences of the numpy functions, for an arm with joint torque sensing (the robot's
parameters marginalised), the same with a robot calibration (its row bounds, its offsets the only
free robot parameters) and one with a wrist F/T sensor, from rest and mid-motion with information
already gathered. The screen's soft minimum is never above the minimum and within its stated gap."""
from dataclasses import replace

import casadi as ca
import numpy as np
import pytest

from inertial_id.core.planning.certifier import CertifierSettings
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.optimizer import PlanOptimizer, PlanRequest
from inertial_id.core.planning.excitation import MASS_WEIGHT, scaled_cost
from inertial_id.core.planning.plan_nlp import SOFT_MIN_SHARPNESS, _scaled_cost_function, cost_and_gradient, soft_min
from inertial_id.core.robot.model import load_robot, payload_params


def central_difference(f, x, h=1e-6):
    out = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        out.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.array(out)          # (x.size, outputs)


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7", "calibrated kinova_gen3"])
@pytest.mark.parametrize("moving", [False, True])
def test_cost_and_screen_gradients_match_central_differences(name, moving, request):
    robot = request.getfixturevalue("calibrated_gen3") if name.startswith("calibrated") else load_robot(name)
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


@pytest.mark.parametrize("marginalise", [False, True])
def test_hand_derived_cost_gradient_matches_the_numpy_cost_and_casadi(marginalise):
    """:func:`cost_and_gradient` (IPOPT's cost) is :func:`scaled_cost` of the marginalised information,
    and its hand-derived gradient with respect to the rows is CasADi's of the same cost to 1e-10."""
    rng = np.random.default_rng(11)
    size = 16 if marginalise else 10
    R = rng.normal(size=(40, size))
    F_prev = 0.1 * np.eye(size)
    half, dt = rng.uniform(0.05, 0.5, 10), 0.1
    prior = np.diag(rng.uniform(1.0, 4.0, size - 10)) if marginalise else None
    cost, dR = cost_and_gradient(R, F_prev, half, dt, prior)
    F = F_prev + dt * R.T @ R
    P = F if prior is None else F[:10, :10] - F[:10, 10:] @ np.linalg.solve(F[10:, 10:] + prior, F[10:, :10])
    assert cost == pytest.approx(scaled_cost(P, half, MASS_WEIGHT), rel=1e-12, abs=1e-12)
    Rs = ca.SX.sym("R", *R.shape)
    Fs = F_prev + dt * Rs.T @ Rs
    Ps = Fs if prior is None else Fs[:10, :10] - Fs[:10, 10:] @ ca.solve(Fs[10:, 10:] + prior, Fs[10:, :10])
    M = ca.diag(half) @ Ps @ ca.diag(half) + ca.DM.eye(10)
    c = _scaled_cost_function()(M)             # the graph's: symbolic Cholesky, MASS_WEIGHT
    value, grad = ca.Function("c", [Rs], [c, ca.gradient(c, Rs)])(R)
    assert float(value) == pytest.approx(cost, rel=1e-10)
    assert np.abs(np.asarray(grad) - dR).max() <= 1e-10 * np.abs(dR).max()


def test_ipopt_converges_on_a_plan_request_within_the_budget():
    """IPOPT (its own status, not a stop for time) on the Gen3's first plan from rest with a box around
    the 5 lb dumbbell, from a feasible start, converges (87 iterations measured, 49 with IPOPT's default
    limited-memory history, whose slowest bench requests took 124; 500 without the smoothing did not),
    and its cost and gradient (numpy, hand-derived) equal the all-CasADi graph's."""
    from inertial_id.core.planning.optimizer import SCREEN_MARGIN_NM
    robot = load_robot("kinova_gen3")
    # IPOPT's wall-time cap out of the way: the iterations are counted (the machine may be loaded)
    settings = replace(PlannerSettings.from_profile(robot), optimize_s=60.0)
    opt = PlanOptimizer(robot, settings, CertifierSettings.from_profile(robot))
    lo, hi = robot.payload_prior()
    truth = payload_params("dumbbell_5lb")
    lo, hi = np.maximum(lo, truth - 0.3 * (truth - lo)), np.minimum(hi, truth + 0.3 * (hi - truth))
    z = np.zeros(robot.nv)
    req = PlanRequest(settings.centre, z, z, lo, hi, opt.excitation.no_information(), seed=1)
    objective = opt._objective(req)
    G, glo, ghi = opt._linear(req)
    x_brake = opt.brake_point(req, G, glo, ghi)
    xlo, xhi = np.tile(opt.x_lo, opt.m), np.tile(opt.x_hi, opt.m)
    rng = np.random.default_rng(1)
    candidates = [opt._pull_in(G, glo, ghi, rng.uniform(xlo, xhi), x_brake) for _ in range(6)]
    need = 2.0 + SCREEN_MARGIN_NM
    x0, _ = opt._start(objective.evaluate, need, candidates, x_brake)
    objective.freeze(x0)
    need = min(need, objective.evaluate(x0)[1] - np.log(settings.cost_samples) / SOFT_MIN_SHARPNESS)
    p = objective.parameters(need)
    xs = ca.MX.sym("x", x0.size)
    graph = ca.Function("g", [xs], [ca.gradient(opt.nlp.graph(xs, p)[0], xs)])
    opt.nlp.cost_callback.fix(*opt.nlp._request(p))
    cost, grad = opt.nlp.cost_callback.value(x0, gradient=True)
    assert cost == pytest.approx(objective.evaluate(x0)[0], rel=1e-10)
    exact = np.asarray(graph(x0)).ravel()
    assert np.abs(grad - exact).max() <= 1e-10 * np.abs(exact).max()
    solution = opt._optimise(req, objective, need, x0, xlo, xhi, False, float("inf"))
    assert solution.converged, solution.status
    assert solution.iterations <= 110, solution.iterations
    assert objective.evaluate(solution.x)[0] < objective.evaluate(x0)[0]
