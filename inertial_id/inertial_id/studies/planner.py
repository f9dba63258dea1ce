"""Closed-loop study of the certified excitation planner (issue 9), ROS-free.

Per trial: a dumbbell (4..8 lb as in the reference's experiments, catalogue in config/payloads.yaml) grasped at a random
offset; a true robot whose link parameters and rotor inertias are drawn inside their ±5 % box
(:func:`~.bounds.perturbed_model`), and joint friction inside the estimator's friction box
(:func:`~.bounds.perturbed_friction`), both inside the certifier's boxes; the simulator at 1 kHz (computed-torque control on the
nominal model, bounded torque noise and encoder quantization); the guaranteed estimator of the nodes
(:func:`~..estimators.factory.make_estimator`, momentum windows at the driver's joint-state rate, or
wrench rows) updated every ``replan_s``; and the receding-horizon planner
(:class:`~..planning.receding.RecedingHorizon`) with the box it gets from that estimator, driving the
simulator through :class:`~..planning.simulated_run.SimulatedRun` (a plan's CPU time charged to
simulated time).

Two methods run on the same truth, noise seed and start: ``ours`` (optimised free points) and
``random`` (random free points, same certifier, same shrinking toward the braking plan: the seed's
"random" baseline). Each ends with the estimator's final LP over every row kept (as the nodes' does at
the motion's end) and the sound floor of those rows (:mod:`~..core.estimators.run_floor`: the mass
width no box sound under the stated bounds beats on them), so that a method's rows are compared by
what they allow, not only by the box one estimator made of them.

On MuJoCo (``engine="mujoco"``, :func:`make_simulator`) the true arm is instead the engine's: the
profile's links with joint armature, damping and Coulomb friction the certifier does not model, its
servos compensating the friction on the commanded velocity; the tracking errors the planner's monitor
measured and every fault that braked the arm are reported, so a profile's tube can be sized from them.
An arm that senses joint torque is calibrated there first, on payload-free runs of the same simulated
arm, as ``demo --engine mujoco`` does (:mod:`inertial_id.sim.calibration`); both methods then run
with that calibration.

Dense checks at every 1 kHz step against the TRUE robot and payload: joint positions and velocities
inside the limits, the applied torque inside the torque limits (the simulator saturates at the limit,
so touching it counts as a violation), and — when obstacles are declared — the exact distance of every
capsule to every obstacle box (true kinematics) positive.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from multiprocessing import get_context

import numpy as np
import pinocchio as pin
import yaml

from .bounds import PAYLOADS, grasped_payload, perturbed_friction, perturbed_model
from .median_interval import median_interval
from ..core.estimators.factory import MomentumEstimator, make_estimator
from ..core.estimators.run_floor import run_floor_kg
from ..core.robot.model import ProfileError, load_robot
from ..share import config_dirs
from ..core.planning.anchor import RecentSamples
from ..core.planning.certifier import CertifierSettings
from ..core.planning.config import PlannerSettings
from ..core.planning.optimizer import PlanOptimizer, PlanRequest, cached_certify
from ..core.planning.receding import RecedingHorizon
from ..core.planning.simulated_run import SimulatedRun, joint_state_steps
from ..core.signals.row_builder import SampleRows
from ..core.signals.sensors import NoiseModel
from ..core.sim import Simulator
from ..sim.calibration import calibrated_profile, calibration_needed
from ..sim.engine import MujocoSimulator
from ..defaults import SIM_ENGINES

METHODS = ("ours", "random")
STEP_HZ = 1000.0


def scenario_path(name_or_path: str) -> str:
    """A scenario by path, or by name in config/scenarios/."""
    if os.path.isfile(name_or_path):
        return name_or_path
    for d in config_dirs():
        candidate = d / "scenarios" / f"{name_or_path}.yaml"
        if candidate.is_file():
            return str(candidate)
    raise ProfileError(f"obstacle scenario '{name_or_path}' is neither a file nor a name in config/scenarios/")


def load_scenario(path: str | None) -> list:
    """Obstacle boxes of a scenario file (``obstacles:`` list, profile schema); [] without one."""
    if path is None:
        return []
    path = scenario_path(path)
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as exc:
        raise ProfileError(f"cannot read obstacle scenario '{path}': {exc.strerror}") from None
    if not isinstance(data, dict) or not isinstance(data.get("obstacles"), list):
        raise ProfileError(f"obstacle scenario '{path}' needs an 'obstacles:' list")
    return data["obstacles"]


def robot_with_obstacles(robot_name: str, obstacles: list):
    """The robot profile ``robot_name`` with extra obstacle boxes."""
    robot = load_robot(robot_name)
    if obstacles:
        robot = robot.with_profile(obstacles=[*robot.spec.obstacles, *obstacles])
    return robot


# --- exact capsule / box distance (dense check, independent of the certifier's enclosures) --------

def _point_box_distance(p, lo, hi):
    """Euclidean distance of points p (..., 3) to the box [lo, hi] (0 inside)."""
    return np.linalg.norm(np.maximum(np.maximum(lo - p, p - hi), 0.0), axis=-1)


def capsule_box_clearance(a, b, radius, lo, hi, iterations: int = 60) -> np.ndarray:
    """Exact (to ~1e-12 of the segment length) clearance of capsules (segments a-b (..., 3), radius)
    to the box [lo, hi]: the point-box distance is convex along the segment, so a golden-section
    search finds its minimum."""
    g = (np.sqrt(5.0) - 1.0) / 2.0
    s0, s1 = np.zeros(a.shape[:-1]), np.ones(a.shape[:-1])
    for _ in range(iterations):
        c = s1 - g * (s1 - s0)
        d = s0 + g * (s1 - s0)
        fc = _point_box_distance(a + c[..., None] * (b - a), lo, hi)
        fd = _point_box_distance(a + d[..., None] * (b - a), lo, hi)
        left = fc < fd
        s1 = np.where(left, d, s1)
        s0 = np.where(left, s0, c)
    s = 0.5 * (s0 + s1)
    ends = np.minimum(_point_box_distance(a, lo, hi), _point_box_distance(b, lo, hi))
    return np.minimum(_point_box_distance(a + s[..., None] * (b - a), lo, hi), ends) - radius


class CollisionChecker:
    """Capsules of the profile against its obstacle boxes at configurations q (true kinematics)."""

    def __init__(self, robot, cert_settings: CertifierSettings):
        self.model = robot.model
        self.data = robot.model.createData()
        self.capsules = cert_settings.capsules
        self.boxes = cert_settings.obstacles
        self.frame_ids = [c.frame_id for c in self.capsules]

    def clearance(self, q) -> float:
        """Smallest distance (m) between a capsule and an obstacle at configuration ``q`` (inf without obstacles)."""
        if not self.boxes:
            return np.inf
        pin.framesForwardKinematics(self.model, self.data, q)
        a, b, r = [], [], []
        for c, fid in zip(self.capsules, self.frame_ids):
            M = self.data.oMf[fid]
            a.append(M.act(np.asarray(c.p0, float)))
            b.append(M.act(np.asarray(c.p1, float)))
            r.append(c.radius)
        a, b, r = np.array(a), np.array(b), np.array(r)
        return float(min(capsule_box_clearance(a, b, r, np.asarray(box.lower, float), np.asarray(box.upper, float)).min()
                         for box in self.boxes))


# --- one closed-loop run ------------------------------------------------------------------------

class _Loop:
    """Simulator + estimator + receding planner for one method on one truth."""

    def __init__(self, robot, settings, cert_settings, certify_fn, pi, true_model, friction, seed, method,
                 engine=SIM_ENGINES[0]):
        self.robot, self.settings, self.method = robot, settings, method
        self.sim = make_simulator(robot, pi, true_model, friction, seed, engine)
        self.estimator = make_estimator(robot, "guaranteed")
        self.momentum = isinstance(self.estimator, MomentumEstimator)
        self.js_every = joint_state_steps(robot, STEP_HZ)
        if not self.momentum:
            # the rows as the builder node sends them (each sample's own message here)
            self.rows = SampleRows(robot, False, True, STEP_HZ / self.js_every, batch_samples=1)
        self.rh = RecedingHorizon(robot, settings, cert_settings, certify_fn)
        self.motion = SimulatedRun(self.sim, self.rh, PlanOptimizer(robot, settings, cert_settings, certify_fn),
                                   STEP_HZ, optimise=(method == "ours"))
        self.pi = pi
        self.pending = []
        # the last samples, for the measured torque the node anchors a run's certificates on
        self.recent = RecentSamples(robot) if self.momentum else None
        self.wrench_rows: list = []     # for the sound floor
        self.first_plan_width_kg: float | None = None     # the mass width the first plan started from

    def feed(self, m) -> None:
        if self.momentum:
            self.pending.append((m.t, m.q, m.qd, m.tau))     # formed in batches, before each update
            self.recent.add(m.t, m.q, m.qd, m.tau)
        else:
            for r in self.rows.push(m.t, m.q, m.qd, m.tau, m.wrench).messages:
                self.wrench_rows.append(r)
                self.estimator.add(r.kind, r.A, r.b, r.noise_bound, r.noise_sigma, r.samples, r.kinematics,
                                   r.acceleration_bound)

    def update_bounds(self):
        if self.pending:
            self.estimator.estimator.add_samples(*(np.array(x) for x in zip(*self.pending)))
            self.pending = []
        self.estimator.update_bounds()
        r = self.estimator.result()
        if self.rh.plans == 0:      # the latest box before any plan: the one the first plan takes
            self.first_plan_width_kg = float(r.upper[0] - r.lower[0])
        if self.recent is not None and self.rh.awaits_anchor:      # as the node's planner, at its ticks
            anchor = self.recent.anchor()
            if anchor is not None:
                self.rh.anchor_on(anchor)
        return r, self.rh.on_estimate(self.sim.t, r.lower, r.upper, r.bounds_guaranteed, r.data_consistent)

    def run(self, checker: CollisionChecker, update_period_s: float, max_time_s: float) -> dict:
        sim, rh, robot = self.sim, self.rh, self.robot
        violations = {"position": 0, "velocity": 0, "torque": 0}
        worst = {"collisions": 0, "min_clearance": np.inf, "min_torque_margin": np.inf}

        def check() -> None:
            q_true, v_true = sim.q, sim.v
            violations["position"] += int(np.any(q_true < robot.position_lower) or np.any(q_true > robot.position_upper))
            violations["velocity"] += int(np.any(np.abs(v_true) > robot.velocity_limit))
            margin = float(np.min(robot.torque_limit - np.abs(sim.tau)))
            worst["min_torque_margin"] = min(worst["min_torque_margin"], margin)
            violations["torque"] += int(margin <= 0.0)
            if checker.boxes:
                c = checker.clearance(q_true)
                worst["min_clearance"] = min(worst["min_clearance"], c)
                worst["collisions"] += int(c <= 0.0)

        self.motion.run(max_time_s, update_period_s, on_sample=self.feed, on_step=check,
                        on_update=lambda: self.update_bounds()[1])
        _, command = self.update_bounds()
        self.motion.send(command)
        self.estimator.final_update_bounds()
        final = self.estimator.result()
        floor = run_floor_kg(robot, self.estimator, self.wrench_rows, self.pi, np.zeros(6))
        motion, min_clearance = self.motion, worst["min_clearance"]
        return {
            "state": rh.state, "message": rh.message, "plans": rh.plans, "cycles": rh.cycles,
            "fallbacks": rh.fallbacks, "violations": violations, "collisions": worst["collisions"],
            "min_clearance_m": min_clearance if np.isfinite(min_clearance) else None,
            "min_torque_margin_Nm": worst["min_torque_margin"], "max_tracking_error": rh.max_tracking_error.tolist(),
            "faults": motion.faults,
            "plan_times_s": motion.plan_times, "plan_cond": motion.conds, "optimisations": motion.optimisations,
            # as the reference's Table V: cond of the stacked rows of the whole phase (momentum Y, or wrench rows)
            "cond_Y": float(final.condition_number) if np.isfinite(final.condition_number) else None,
            "motion_s": float(sim.t), "lower": final.lower, "upper": final.upper,
            "width": final.upper - final.lower, "floor_kg": floor, "first_plan_width_kg": self.first_plan_width_kg,
            "width_over_floor": float((final.upper[0] - final.lower[0]) / floor) if floor else None,
            "contained": bool(np.all((self.pi >= final.lower) & (self.pi <= final.upper))),
            "bounds_guaranteed": bool(final.bounds_guaranteed),
        }


def make_simulator(robot, pi, true_model, friction, seed: int, engine: str):
    """The arm of a trial: on pinocchio, the perturbed robot (``true_model``) with the drawn joint
    ``friction``; on MuJoCo (:mod:`inertial_id.sim`), the profile's links with the joint armature,
    damping and Coulomb friction of the simulated robot node, sensor errors at the profile's bounds."""
    sim = robot.spec.sim
    if engine == "mujoco":
        if float(sim.step_hz) != STEP_HZ:        # the loop's sampling and commands count its steps
            raise ValueError(f"study plan on MuJoCo steps at {STEP_HZ:g} Hz: profile sim.step_hz is {sim.step_hz}")
        return MujocoSimulator.as_simulated_robot(robot, pi, seed)
    return Simulator(robot, pi, STEP_HZ, sim.kp, sim.kd, sim.ki, NoiseModel.from_profile(robot.spec),
                     seed, q0=sim.home, true_model=true_model, friction=friction)


def random_plan_hit_rate(robot, settings, cert_settings, checker, rng, plans: int = 50) -> float:
    """Fraction of random plans (random free points inside the hull limits, NOT certified) from
    rest at the centre that bring a capsule into an obstacle, densely sampled at 1 kHz."""
    if not checker.boxes:
        return 0.0
    opt = PlanOptimizer(robot, settings, cert_settings, certify_fn=lambda *a, **k: None)
    z = np.zeros(robot.nv)
    lo, hi = robot.payload_prior()
    req = PlanRequest(settings.centre, z, z, lo, hi, opt.excitation.no_information())
    G, glo, ghi = opt._linear(req)
    x_brake = opt.brake_point(req)
    xlo, xhi = np.tile(opt.x_lo, opt.m), np.tile(opt.x_hi, opt.m)
    t = np.arange(0.0, settings.horizon_s, 1.0 / STEP_HZ)
    hits = 0
    for _ in range(plans):
        x = opt._pull_in(G, glo, ghi, rng.uniform(xlo, xhi), x_brake)
        q = opt.plan_from(req, x).evaluate(t)[0]
        hits += int(any(checker.clearance(qk) <= 0.0 for qk in q[::5]))
    return hits / plans


def run_trial(robot_name: str, payload: str, seed: int, obstacles: list, plans: int,
              methods=METHODS, engine: str = SIM_ENGINES[0]) -> dict:
    """Both methods on one truth; at most ``plans`` exciting plans, fewer when the bounds stop shrinking."""
    robot = robot_with_obstacles(robot_name, obstacles)
    settings = replace(PlannerSettings.from_profile(robot), max_plans=plans)
    cert_settings = CertifierSettings.from_profile(robot)
    certify_fn = cached_certify(robot, cert_settings)
    rng = np.random.default_rng(seed)
    pi = grasped_payload(PAYLOADS[payload], rng)
    lo, hi = robot.payload_prior()
    if not np.all((pi >= lo) & (pi <= hi)):
        raise ValueError(f"payload {payload} with this grasp lies outside the profile's prior box")
    true_model = perturbed_model(robot.model, rng)
    friction = perturbed_friction(robot.nv, rng)
    checker = CollisionChecker(robot, cert_settings)
    update_period = settings.replan_s
    # a start may first wait for bounds that certify holding still (data at rest)
    max_time = settings.hold_wait_s + plans * settings.replan_s + settings.horizon_s + 2.0
    out = {"payload": payload, "seed": seed, "truth": pi, "methods": {}}
    for method in methods:
        loop = _Loop(robot, settings, cert_settings, certify_fn, pi, true_model, friction, seed, method, engine)
        out["methods"][method] = loop.run(checker, update_period, max_time)
    if obstacles:
        out["random_uncertified_hit_rate"] = random_plan_hit_rate(robot, settings, cert_settings, checker,
                                                                  np.random.default_rng(seed + 1))
    return out


def _run(args):
    return run_trial(*args)


def _optimiser_summary(optimisations: list, replan_s: float) -> dict:
    """IPOPT's record over the optimised plans (converged, iterations, optimisation s): the fraction
    that converged within ``replan_s``, the median iterations and optimisation time."""
    if not optimisations:
        return {}
    converged, iterations, seconds = (np.array(column) for column in zip(*optimisations))
    return {"optimizer_converged_fraction": float(np.mean(converged & (seconds <= replan_s))),
            "optimizer_iterations_p50": float(np.median(iterations)),
            "optimize_p50_s": float(np.median(seconds))}


def _floor_summary(runs: list) -> dict:
    """The median sound floor of a method's final rows and of its width over that floor (none when
    the estimator keeps no rows for one)."""
    floors = [r["floor_kg"] for r in runs if r["floor_kg"]]
    ratios = [r["width_over_floor"] for r in runs if r["width_over_floor"]]
    return {"median_floor_kg": float(np.median(floors)) if floors else None,
            "median_width_over_floor": float(np.median(ratios)) if ratios else None}


def _narrowing_summary(runs: list) -> dict:
    """The median mass width the first plan started from (the data before any motion: the hold's)
    and the median of the final width over it: what the motion bought."""
    first = [r["first_plan_width_kg"] for r in runs if r["first_plan_width_kg"]]
    shares = [r["width"][0] / r["first_plan_width_kg"] for r in runs if r["first_plan_width_kg"]]
    return {"first_plan_mass_width_kg": float(np.median(first)) if first else None,
            "final_over_first_plan_width": float(np.median(shares)) if shares else None}


def summarize(results: list, methods=METHODS, replan_s: float = float("inf")) -> dict:
    """Violations, planning times and excitation of each method over the trials; plans that took
    longer than ``replan_s`` (the profile's t_p) could not have been ready in time."""
    report = {"trials": len(results)}
    for m in methods:
        runs = [r["methods"][m] for r in results]
        times = np.concatenate([r["plan_times_s"] for r in runs]) if runs else np.zeros(0)
        cycles = sum(r["cycles"] for r in runs)
        report[m] = {
            "violations": {k: int(sum(r["violations"][k] for r in runs)) for k in ("position", "velocity", "torque")},
            "collisions": int(sum(r["collisions"] for r in runs)),
            "fallback_rate": float(sum(r["fallbacks"] for r in runs) / cycles) if cycles else 0.0,
            "plans_per_trial": float(np.mean([r["plans"] for r in runs])),
            "plan_time_p50_s": float(np.percentile(times, 50)) if times.size else float("nan"),
            "plan_time_p95_s": float(np.percentile(times, 95)) if times.size else float("nan"),
            "plans_within_replan_fraction": float(np.mean(times <= replan_s)) if times.size else float("nan"),
            **_optimiser_summary([o for r in runs for o in r["optimisations"]], replan_s),
            "final_mass_width_kg": float(np.median([r["width"][0] for r in runs])),
            **_narrowing_summary(runs),
            **_floor_summary(runs),
            "median_width": np.median([r["width"] for r in runs], axis=0),
            "containment_rate": float(np.mean([r["contained"] for r in runs])),
            "median_plan_cond": float(np.median(np.concatenate([r["plan_cond"] for r in runs]))) if runs else float("nan"),
            "median_cond_Y": float(np.median([r["cond_Y"] for r in runs if r["cond_Y"] is not None]))
            if any(r["cond_Y"] is not None for r in runs) else None,
            "min_torque_margin_Nm": float(min(r["min_torque_margin_Nm"] for r in runs)),
            "max_tracking_error": np.max([r["max_tracking_error"] for r in runs], axis=0),
            "runs_with_faults": int(sum(bool(r["faults"]) for r in runs)),
            "faults": [f for r in runs for f in r["faults"]],
            "min_clearance_m": min((r["min_clearance_m"] for r in runs if r["min_clearance_m"] is not None), default=None),
            "end_states": {s: sum(r["state"] == s for r in runs) for s in ("done", "failed", "braking", "executing")},
        }
    ours, rnd = report.get("ours"), report.get("random")
    report["violations"] = int(sum(sum(report[m]["violations"].values()) for m in methods))
    report["collisions"] = int(sum(report[m]["collisions"] for m in methods))
    if ours is not None:
        report["fallback_rate"] = ours["fallback_rate"]
        report["plan_time_p50_s"] = ours["plan_time_p50_s"]
        report["plan_time_p95_s"] = ours["plan_time_p95_s"]
        report["final_mass_width_kg"] = ours["final_mass_width_kg"]
        for key in ("optimizer_converged_fraction", "optimizer_iterations_p50", "plans_within_replan_fraction"):
            report[key] = ours.get(key)
    if ours is not None and rnd is not None:
        pairs = [(r["methods"]["ours"], r["methods"]["random"]) for r in results]
        ratio = [a["cond_Y"] / b["cond_Y"] for a, b in pairs if a["cond_Y"] and b["cond_Y"]]
        plan_ratio = [np.median(a["plan_cond"]) / np.median(b["plan_cond"]) for a, b in pairs
                      if a["plan_cond"] and b["plan_cond"]]
        # the seed's Table V compares cond of the momentum regressor Y over the whole phase; without
        # momentum rows (F/T sensor), the planned cond(W_e) is compared instead
        report["cond_ratio_vs_random"] = float(np.median(ratio if ratio else plan_ratio))
        report["plan_cond_ratio_vs_random"] = float(np.median(plan_ratio)) if plan_ratio else None
        report["mass_width_no_wider_than_random"] = float(np.mean([a["width"][0] <= b["width"][0] for a, b in pairs]))
        widths = [a["width"][0] / b["width"][0] for a, b in pairs]
        report["mass_width_ratio_vs_random"] = float(np.median(widths))
        # where the median over many trials lies, at 95 % confidence (None with fewer than 6 trials)
        report["mass_width_ratio_interval"] = median_interval(widths)
        # boxes never widen, so random's final width is at most the width its first plan started
        # from: the ratio is at least ours' final width over that, whatever random's motion did
        rest = [a["width"][0] / b["first_plan_width_kg"] for a, b in pairs if b["first_plan_width_kg"]]
        report["mass_width_ratio_at_least"] = float(np.median(rest)) if rest else None
        floors = [a["floor_kg"] / b["floor_kg"] for a, b in pairs if a["floor_kg"] and b["floor_kg"]]
        report["floor_ratio_vs_random"] = float(np.median(floors)) if floors else None
    if any("random_uncertified_hit_rate" in r for r in results):
        report["random_uncertified_hit_rate"] = float(np.mean([r.get("random_uncertified_hit_rate", 0.0) for r in results]))
    return report


def run_study(robot: str = "kinova_gen3", trials: int = 10, seed: int = 0, obstacles_file: str | None = None,
              plans: int | None = None, workers: int = 1, payloads=tuple(PAYLOADS), keep_trials: bool = False,
              engine: str = SIM_ENGINES[0]) -> dict:
    """``plans``: most exciting plans per trial (None: the profile's ``planner.max_plans``, as the node runs).
    ``engine``: :data:`~inertial_id.defaults.SIM_ENGINES` (:func:`make_simulator`; on MuJoCo an arm
    that senses joint torque is calibrated first, as the demo does; the report's ``calibrated`` says
    so)."""
    with tempfile.TemporaryDirectory(prefix="inertial_id_plan_study_") as folder:
        calibrated = None
        if calibration_needed(load_robot(robot), engine):
            calibrated = calibrated_profile(robot, folder, engine)
        report = _run_trials(calibrated or robot, trials, seed, obstacles_file, plans, workers, payloads, keep_trials,
                             engine)
    report.update(robot=robot, calibrated=calibrated is not None)
    return report


def _run_trials(robot: str, trials: int, seed: int, obstacles_file: str | None, plans: int | None, workers: int,
                payloads, keep_trials: bool, engine: str) -> dict:
    obstacles = load_scenario(obstacles_file)
    if plans is None:
        plans = PlannerSettings.from_profile(load_robot(robot)).max_plans
    payloads = list(payloads)
    args = [(robot, payloads[i % len(payloads)], seed + i, obstacles, plans, METHODS, engine) for i in range(trials)]
    if workers > 1:
        with get_context("spawn").Pool(workers) as pool:
            results = pool.map(_run, args, chunksize=1)
    else:
        results = [_run(a) for a in args]
    report = summarize(results, replan_s=PlannerSettings.from_profile(load_robot(robot)).replan_s)
    report.update(robot=robot, engine=engine, seed=seed, max_plans=plans, step_hz=STEP_HZ, payloads=payloads,
                  obstacles=obstacles_file, obstacle_count=len(obstacles))
    if keep_trials:
        report["trial_results"] = results
    return report
