"""Measurements of the certifier: time per call, tightness of the torque enclosure, certification rate.

Used by the planner benchmark (``inertial-id bench planner``) and to produce the figures quoted in the
certifier's documentation. Tightness is measured against a reference that does not share the
certifier's arithmetic: pinocchio's joint-torque regressor at dense samples (1 kHz, tracking errors
drawn inside the tube, corners included), with the exact range over the parameter boxes at each
sample (torque is linear in the parameters: Y theta_c +- |Y| radius).
"""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from ..core.robot import params
from ..core.robot.model import Robot, load_robot, payload_params
from ..core.planning.bezier import BezierPlan
from ..core.planning.certifier import CertifierSettings, certify
from ..core.planning.enclosure import torque_bounds


def modest_plans(robot: Robot, n_plans: int, seed: int = 0, fraction: float = 0.5, free_points: int = 3,
                 duration_s: float = 3.0) -> list[BezierPlan]:
    """Plans from rest at the excitation centre (planner.centre, else sim.home) with free points drawn
    uniformly in centre +- fraction * reach (planner.reach_rad, else 0.3 rad)."""
    rng = np.random.default_rng(seed)
    planner = robot.spec.planner
    centre = np.asarray(robot.spec.sim.home if planner is None else planner.centre, dtype=float)
    reach = np.asarray(np.full(robot.nv, 0.3) if planner is None else planner.reach_rad, dtype=float)
    zero = np.zeros(robot.nv)
    return [BezierPlan.from_state(centre, zero, zero,
                                  centre + fraction * reach * rng.uniform(-1, 1, (free_points, robot.nv)),
                                  duration_s) for _ in range(n_plans)]


def shrunk_box(truth: np.ndarray, mass_kg: float = 0.3, first_moment_kg_m: float = 0.03,
               inertia_kg_m2: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    """A payload box (pinocchio order) around ``truth`` with the given half-widths for mass (kg), first moments (kg m) and inertias (kg m^2)."""
    radius = np.array([mass_kg] + [first_moment_kg_m] * 3 + [inertia_kg_m2] * 6)
    return truth - radius, truth + radius


def time_certify(robot: Robot, settings: CertifierSettings, plans, lower, upper) -> dict:
    """CPU and wall time per certify() call (the first call, which builds the cached context, excluded)."""
    certify(robot, settings, plans[0], lower, upper)
    cpu, wall, certified = [], [], 0
    for plan in plans:
        c0, w0 = time.process_time(), time.perf_counter()
        cert = certify(robot, settings, plan, lower, upper)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        certified += cert.certified
    return {"cpu_p50_s": float(np.median(cpu)), "cpu_p95_s": float(np.percentile(cpu, 95)),
            "wall_p50_s": float(np.median(wall)), "wall_p95_s": float(np.percentile(wall, 95)),
            "certified": int(certified), "calls": len(plans)}


def sampled_torque_range(robot: Robot, settings: CertifierSettings, plan: BezierPlan, lower, upper,
                         rng, hz: float = 1000.0, adversarial: bool = False):
    """Per sub-interval (K, n): min and max over dense samples of the exact torque range over the
    payload and robot parameter boxes, at states in the tracking tube.

    Tube states: random draws (a quarter at its corners); or, ``adversarial``, for each joint the two
    corners of the tube that push its torque up and down to first order (signs of pinocchio's RNEA
    derivatives for the box centre), which comes much closer to the true extremes."""
    ctx = settings.context(robot)
    model, data = robot.model, robot.model.createData()
    frame = model.frames[robot.payload_frame_id]
    T = params.transform_matrix(frame.placement)
    b = frame.parentJoint - 1
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    theta_c = ctx.theta_nominal.copy()
    theta_c[b] += T @ (0.5 * (lower + upper))
    radius = ctx.theta_radius.reshape(-1)
    pay_radius = 0.5 * (upper - lower)
    K = settings.time_intervals
    n = robot.nv
    t = np.arange(0.0, plan.duration_s, 1.0 / hz)
    seg = np.minimum((t / (plan.duration_s / K)).astype(int), K - 1)
    desired = plan.evaluate(t)
    if adversarial:
        centre_model = pin.Model(model)
        for i in range(1, model.njoints):
            centre_model.inertias[i] = pin.Inertia.FromDynamicParameters(theta_c[i - 1])
        centre_data = centre_model.createData()
    lo = np.full((K, n), np.inf)
    hi = np.full((K, n), -np.inf)

    def exact(q, v, a):
        Y = pin.computeJointTorqueRegressor(model, data, q, v, a)
        centre = Y @ theta_c.reshape(-1) + model.armature * a
        spread = np.abs(Y) @ radius + np.abs(Y[:, 10 * b:10 * b + 10] @ T) @ pay_radius
        return centre - spread, centre + spread

    for s in range(len(t)):
        x = [d[s] for d in desired]
        if not adversarial:
            e = rng.uniform(-1.0, 1.0, (3, n))
            if rng.random() < 0.25:
                e = np.sign(e)
            t_lo, t_hi = exact(*(x[k] + e[k] * ctx.tube[k] for k in range(3)))
            lo[seg[s]] = np.minimum(lo[seg[s]], t_lo)
            hi[seg[s]] = np.maximum(hi[seg[s]], t_hi)
            continue
        dq, dv, Mj = pin.computeRNEADerivatives(centre_model, centre_data, *x)
        Mj = Mj + np.diag(model.armature)
        for j in range(n):
            for sign in (1.0, -1.0):
                corner = [x[0] + sign * np.sign(dq[j]) * ctx.tube[0], x[1] + sign * np.sign(dv[j]) * ctx.tube[1],
                          x[2] + sign * np.sign(Mj[j]) * ctx.tube[2]]
                t_lo, t_hi = exact(*corner)
                lo[seg[s]] = np.minimum(lo[seg[s]], t_lo)
                hi[seg[s]] = np.maximum(hi[seg[s]], t_hi)
    return lo, hi


def tightness(robot: Robot, settings: CertifierSettings, plans, lower, upper, seed: int = 0,
              adversarial: bool = True, hz: float = 250.0) -> dict:
    """Enclosure width over the dense-sampled range, per (sub-interval, joint): median and p95 of the
    ratio and of the excess width (N m); and the certified versus sampled worst torque margin."""
    rng = np.random.default_rng(seed)
    K = settings.time_intervals
    ratios, excess, margin_gap = [], [], []
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    limit = robot.torque_limit - settings.torque_margin_Nm
    for plan in plans:
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * (plan.duration_s / K)
        e_lo, e_hi = torque_bounds(settings.context(robot), plan, bounds, 0.5 * (lower + upper),
                                   0.5 * (upper - lower))
        s_lo, s_hi = sampled_torque_range(robot, settings, plan, lower, upper, rng, hz, adversarial)
        if np.any(s_lo < e_lo - 1e-9) or np.any(s_hi > e_hi + 1e-9):
            raise AssertionError("a sampled torque left the enclosure")
        ratios.append(((e_hi - e_lo) / np.maximum(s_hi - s_lo, 1e-6)).ravel())
        excess.append(((e_hi - e_lo) - (s_hi - s_lo)).ravel())
        certified_margin = np.min(np.minimum(limit - e_hi, e_lo + limit))
        sampled_margin = np.min(np.minimum(limit - s_hi, s_lo + limit))
        margin_gap.append(sampled_margin - certified_margin)
    ratios, excess = np.concatenate(ratios), np.concatenate(excess)
    return {"width_ratio_median": float(np.median(ratios)), "width_ratio_p95": float(np.percentile(ratios, 95)),
            "excess_Nm_median": float(np.median(excess)), "excess_Nm_p95": float(np.percentile(excess, 95)),
            "margin_gap_Nm_median": float(np.median(margin_gap)), "margin_gap_Nm_max": float(np.max(margin_gap)),
            "plans": len(plans)}


def certification_rate(robot: Robot, settings: CertifierSettings, plans, lower, upper, seed: int = 0) -> dict:
    """How many plans certify, and how many are feasible under the dense-sampled reference (an upper
    bound of what any sound certifier could accept)."""
    rng = np.random.default_rng(seed)
    limit = robot.torque_limit - settings.torque_margin_Nm
    certified = feasible = 0
    for plan in plans:
        cert = certify(robot, settings, plan, lower, upper)
        certified += cert.certified
        lo, hi = sampled_torque_range(robot, settings, plan, lower, upper, rng, hz=250.0)
        limits_ok = min(cert.min_joint_margin_rad, cert.min_velocity_margin_rad_s,
                        cert.min_acceleration_margin_rad_s2) >= 0.0
        feasible += bool(limits_ok and np.all(hi <= limit) and np.all(lo >= -limit))
    return {"certified": int(certified), "sampled_feasible": int(feasible), "plans": len(plans)}


def measure(robot_name: str = "kinova_gen3", n_plans: int = 20, seed: int = 0, payload: str | None = None,
            fraction: float = 0.5) -> dict:
    """All figures for one robot: timing, tightness and certification rate with the profile's prior
    payload box and with a box shrunk around the true payload (default: the profile's simulated one)."""
    robot = load_robot(robot_name)
    payload = payload or robot.spec.payload.sim
    settings = CertifierSettings.from_profile(robot)
    plans = modest_plans(robot, n_plans, seed, fraction)
    prior = robot.payload_prior()
    shrunk = shrunk_box(payload_params(payload))
    out = {"robot": robot_name, "time_intervals": settings.time_intervals, "n_plans": n_plans,
           "fraction_of_reach": fraction}
    for name, (lo, hi) in (("prior", prior), ("shrunk", shrunk)):
        out[name] = {"timing": time_certify(robot, settings, plans, lo, hi),
                     "rate": certification_rate(robot, settings, plans, lo, hi, seed),
                     "tightness": tightness(robot, settings, plans[:min(5, n_plans)], lo, hi, seed)}
    return out
