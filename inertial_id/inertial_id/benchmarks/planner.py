"""Certified excitation planner: time of one plan + certify (receding chains from rest, shrinking
box); per plan, IPOPT's optimisation time, iterations, return status and whether it converged
within its budget (the profile's ``optimize_s``: ``replan_s`` less certification), the excitation
cost reached, and whether plan + certify fit in ``replan_s``. And the torque screen's optimism (its margin less the certifier's) on the
holding plans and the certified plans of the chains, beside the previous screen's on the same plans
(the tracking tube as ``|M| a_tube`` of the robot alone, no friction box)."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pinocchio as pin

from ..cli.parsers import positive_float
from ..studies.bounds import PAYLOADS, grasped_payload
from ..core.robot.model import load_robot
from ..core.planning.certifier import CertifierSettings
from ..core.planning.config import PlannerSettings
from ..core.planning.bezier import BezierPlan
from ..core.planning.optimizer import PRECHECK_SAMPLES, PlanOptimizer, PlanRequest

# box half-widths of the successive plans of a chain, as fractions of the prior box's, shrinking
# around the truth as they do when the estimator runs. A chain starts, as the node does, with the first
# of them that certifies holding still at the centre (at the Gen3's home pose the prior box does not:
# the node waits for bounds from data taken at rest), and its first request carries that certificate.
BOX_FRACTIONS = (0.5, 0.3, 0.2, 0.1)


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--chains", type=int, default=10, help="receding chains of 4 plans each, from rest")
    parser.add_argument("--optimize-s", type=positive_float,
                        help="optimisation budget of a plan, s (default: the profile's planner.optimize_s); the "
                             "certification keeps the profile's time after it")


def previous_screen(opt, plan, lower, upper) -> float:
    """The screen's margin as it was before the tube's first-order terms (the reference)."""
    t = np.linspace(0.0, plan.duration_s, PRECHECK_SAMPLES)
    q, qd, qdd = plan.evaluate(t)
    ex, model = opt.excitation, opt.robot.model
    W = ex.rows(q, qd, qdd).reshape(len(t), opt.n, 10)
    tau = ex.robot_torque(q, qd, qdd)
    M = np.array([pin.crba(model, ex.data, qk) for qk in q])
    M = np.triu(M) + np.swapaxes(np.triu(M, 1), 1, 2)
    c, h = 0.5 * (upper + lower), 0.5 * (upper - lower)
    reach = (np.abs(tau + W @ c) + np.abs(W) @ h + opt.cert_settings.robot_relative_error * np.abs(tau)
             + np.abs(M) @ np.asarray(opt.cert_settings.tracking_acceleration_rad_s2, dtype=float))
    return float(np.min(opt.robot.torque_limit - np.asarray(opt.cert_settings.torque_margin_Nm) - reach))


def _gaps(opt, plan, cert, lower, upper) -> tuple[float, float]:
    """(the screen's, the previous screen's) margin less the certifier's on ``plan``."""
    return (opt.screen(plan, lower, upper) - cert.min_torque_margin_Nm,
            previous_screen(opt, plan, lower, upper) - cert.min_torque_margin_Nm)


def _chains(robot, opt, settings, chains: int) -> dict:
    lo0, hi0 = robot.payload_prior()
    payloads = list(PAYLOADS)
    totals, optimise, certify, attempts, scales, certified = [], [], [], [], [], 0
    converged, iterations, costs, per_plan = [], [], [], []
    gaps = {"rest": [], "moving": []}       # (the screen's, the previous screen's) optimism, N m
    z = np.zeros(robot.nv)
    opt.nlp.native.wait()      # a robot's planner compiles once per machine (the cache): time it compiled
    opt.plan(PlanRequest(settings.centre, z, z, lo0, hi0, opt.excitation.no_information()), deadline_s=0.2)   # warm-up (caches)
    for chain in range(chains):
        rng = np.random.default_rng(chain)
        truth = grasped_payload(PAYLOADS[payloads[chain % len(payloads)]], rng)
        q, qd, qdd = settings.centre.copy(), z.copy(), z.copy()
        F = opt.excitation.no_information()
        boxes = [(np.maximum(lo0, truth - frac * (truth - lo0)), np.minimum(hi0, truth + frac * (hi0 - truth)))
                 for frac in BOX_FRACTIONS]
        hold = BezierPlan.holding(q, settings.degree, settings.horizon_s)
        held = [opt.certify(robot, opt.cert_settings, hold, lo, hi) for lo, hi in boxes]
        gaps["rest"] += [_gaps(opt, hold, cert, lo, hi) for cert, (lo, hi) in zip(held, boxes)]
        first = next((k for k, cert in enumerate(held) if cert.certified), None)
        if first is None:
            continue
        for k, (lo, hi) in enumerate(boxes[first:], start=first):
            req = PlanRequest(q, qd, qdd, lo, hi, F, seed=100 * chain + k,
                              anchor=settings.centre if k == first else None,
                              anchor_certified=(hold, held[k]) if k == first else None)
            t0 = time.process_time()
            res = opt.plan(req)
            totals.append(time.process_time() - t0)
            optimise.append(res.optimize_s)
            certify.append(res.certify_s)
            attempts.append(res.attempts)
            converged.append(res.converged)
            iterations.append(res.iterations)
            per_plan.append({"optimize_s": res.optimize_s, "certify_s": res.certify_s, "iterations": res.iterations,
                             "converged": res.converged, "status": res.status, "certified": res.certified})
            if not res.certified:
                break
            certified += 1
            if res.scale > 0:
                gaps["moving"].append(_gaps(opt, res.plan, res.certificate, lo, hi))
            scales.append(res.scale)
            costs.append(res.cost)
            F = F + opt.excitation.information(res.plan, settings.cost_samples, until_s=settings.replan_s)
            s = np.array([settings.replan_s])
            q, qd, qdd = (x[0] for x in res.plan.evaluate(s))
    t = np.array(totals)
    done = np.array(iterations)[np.array(converged, dtype=bool)]      # what converging took
    per_iteration = [o / i for o, i in zip(optimise, iterations) if i > 0]
    screen = {}
    for kind, pairs in gaps.items():
        g = np.array(pairs).reshape(-1, 2)
        for prefix, col in (("", 0), ("previous_", 1)):
            screen[f"{prefix}screen_gap_{kind}_p50_Nm"] = float(np.median(g[:, col])) if g.size else float("nan")
            screen[f"{prefix}screen_gap_{kind}_max_Nm"] = float(g[:, col].max()) if g.size else float("nan")
        screen[f"screen_gap_{kind}_plans"] = len(g)
    return screen | {
        "plans_timed": int(t.size), "certified": certified,
        "plan_certify_p50_s": float(np.percentile(t, 50)), "plan_certify_p95_s": float(np.percentile(t, 95)),
        "plan_certify_max_s": float(t.max()),
        "optimize_p50_s": float(np.percentile(optimise, 50)), "certify_p50_s": float(np.percentile(certify, 50)),
        "certify_p95_s": float(np.percentile(certify, 95)), "certifier_calls_mean": float(np.mean(attempts)),
        "optimizer_converged_fraction": float(np.mean(converged)),
        "optimizer_statuses": {s: sum(p["status"] == s for p in per_plan) for s in sorted({p["status"] for p in per_plan})},
        "plan_certify_within_replan_fraction": float(np.mean(t <= settings.replan_s)),
        "optimizer_iterations_p50": float(np.percentile(iterations, 50)),
        "optimizer_iterations_when_converged_min": float(done.min()) if done.size else float("nan"),
        "optimizer_iterations_when_converged_p50": float(np.median(done)) if done.size else float("nan"),
        "optimize_s_per_iteration_p50": float(np.median(per_iteration)) if per_iteration else float("nan"),
        "step_kept_median": float(np.median(scales)) if scales else 0.0,
        "cost_median": float(np.median(costs)) if costs else float("nan"),
        "plans": per_plan, "native_code": opt.nlp.native.status,
    }


def run(args) -> dict:
    robot = load_robot(args.robot)
    settings = PlannerSettings.from_profile(robot)
    if args.optimize_s is not None:      # what a budget buys: the search and the deadline move with it
        extra = args.optimize_s - settings.optimize_s
        settings = replace(settings, optimize_s=args.optimize_s, search_s=settings.search_s + extra,
                           deadline_s=settings.deadline_s + extra)
    cert = CertifierSettings.from_profile(robot)
    report = {"robot": robot.name, "bezier_degree": settings.degree, "time_intervals": cert.time_intervals,
              "deadline_s": settings.deadline_s, "optimize_budget_s": settings.optimize_s}
    # plan and certify times are CPU seconds of this process
    return report | _chains(robot, PlanOptimizer(robot, settings, cert), settings, args.chains)
