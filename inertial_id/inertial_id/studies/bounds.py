"""Monte Carlo study of payload bounds in simulation: guaranteed LP bounds against the log-Cholesky
estimator's Mean Value Form bounds, ROS-free.

Per trial: a dumbbell (4..8 lb, as in the reference's experiments) grasped at a random offset; a true robot whose body
parameters and rotor inertias are each perturbed within ±5 % of nominal (the estimators know only
the nominal model and that box); torque noise uniform within its bound (profile: 2.5 % + 0.05 N m),
or ``overnoise_factor`` times the bound in every ``overnoise_every``-th trial; four random exciting
trajectories of 3 s each tracked at 4 kHz; windows of h = 400 samples; the reference's prior box
(Table I). The bounds are updated every ``update_period_s`` of data (the reference's 1.5 s planning
cycle), each update using all rows so far.

Containment is counted over the trials whose noise stays within its bound; for the over-noise
trials the study counts those where a method's final box misses the truth without the data being
flagged inconsistent (must be none for a guaranteed method).

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pinocchio as pin

from ..core.robot import params
from ..core.estimators.guaranteed import GuaranteedEstimator
from ..core.robot.robot_box import FRICTION_FLOOR, ROBOT_RELATIVE_ERROR
from ..core.estimators.log_cholesky import LogCholeskyEstimator
from ..core.fanout import map_tasks
from ..core.robot.model import load_payloads, load_robot, payload_params
from ..core.robot.params import robot_parameters
from ..core.signals.momentum import MomentumWindows
from ..core.signals.sensors import NoiseModel
from ..core.sim import Simulator
from ..core.trajectory import (SampledTrajectory, check_limits, excitation_amplitude_rad, fourier_excitation,
                               quintic_ramp)

PAYLOADS = {"4lb": "dumbbell_4lb", "5lb": "dumbbell_5lb", "6lb": "dumbbell_6lb", "7lb": "dumbbell_7lb",
            "8lb": "dumbbell_8lb"}
BOUND_METHODS = {"guaranteed": GuaranteedEstimator, "log_cholesky": LogCholeskyEstimator}
# The prior box of the payload's parameters (kg, kg m, kg m^2) in pinocchio order and the payload
# frame: the published dumbbell study's table, with flange z out of the arm, so its mpz range
# [-1.0, -0.1] becomes [0.1, 1.0].
PAYLOAD_PRIOR_LOWER = np.array([1.2, -0.4, -0.4, 0.1, -0.2, -0.2, -0.2, -0.2, -0.2, -0.2])
PAYLOAD_PRIOR_UPPER = np.array([5.2, 0.4, 0.4, 1.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])
GRASP_OFFSET_M = 0.02          # uniform ± per axis around the catalogue's centre of mass
STEP_HZ = 4000.0
WINDOW = 400
TRAJECTORIES = 4
TRAJECTORY_S = 3.0
POSTURE_SPREAD_RAD = np.array([1.0, 0.5, 1.0, 0.5, 1.0, 0.8, 1.0])


def perturbed_model(model: pin.Model, rng, relative: float = ROBOT_RELATIVE_ERROR) -> pin.Model:
    """A copy of ``model`` whose body parameters (joint frames) and armature are each scaled by a
    factor in ``[1 - relative, 1 + relative]``; bodies are redrawn until physically consistent."""
    true = pin.Model(model)
    for j in range(1, model.njoints):
        pi = model.inertias[j].toDynamicParameters()
        while True:
            pi_true = pi * (1.0 + rng.uniform(-relative, relative, 10))
            if np.linalg.eigvalsh(params.pseudo_inertia(pi_true))[0] > 0:
                break
        true.inertias[j] = pin.Inertia.FromDynamicParameters(pi_true)
    true.armature = model.armature * (1.0 + rng.uniform(-relative, relative, model.nv))
    return true


def perturbed_friction(nv: int, rng, floor=FRICTION_FLOOR) -> np.ndarray:
    """Per joint ``[Fc, Fv, Ia, beta]`` inside the estimator's friction box (``+-floor`` around zero;
    Ia is the model's armature, drawn by :func:`perturbed_model`): Coulomb and viscous friction
    non-negative, as physics wants, the torque offset of either sign."""
    Fc, Fv, _, beta = np.asarray(floor, float)
    return np.column_stack([rng.uniform(0, Fc, nv), rng.uniform(0, Fv, nv), np.zeros(nv),
                            rng.uniform(-beta, beta, nv)])


def grasped_payload(name: str, rng, offset_m: float = GRASP_OFFSET_M) -> np.ndarray:
    """Parameters (pinocchio order, payload frame) of catalogue payload ``name`` with its centre of mass moved by a random grasp offset (m, uniform per axis)."""
    spec = dict(load_payloads()[name])
    spec["com_offset_m"] = list(np.asarray(spec["com_offset_m"], float) + rng.uniform(-offset_m, offset_m, 3))
    return payload_params(spec)


def exciting_trajectory(robot, start, end, duration_s: float, seed: int, harmonics: int = 2,
                        ramp_s: float = 0.5) -> SampledTrajectory:
    """Rest at ``start`` to rest at ``end`` (quintic transition) plus a random Fourier excitation
    faded in and out; the excitation, then the transition, shrunk until the samples pass the
    position, velocity and acceleration limits. Changing posture between trajectories is what
    separates the payload from the uncertain link parameters (gravity acts along other directions)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    amp = excitation_amplitude_rad(robot)
    for _ in range(80):
        ex = fourier_excitation(start, amp, duration_s, harmonics, duration_s, 1000.0, seed, ramp_s)
        s, ds, dds = quintic_ramp(ex.t, duration_s)
        traj = SampledTrajectory(ex.t, ex.q + np.outer(s, end - start), ex.qd + np.outer(ds, end - start),
                                 ex.qdd + np.outer(dds, end - start))
        if check_limits(traj, robot.position_lower, robot.position_upper, robot.velocity_limit,
                        robot.acceleration_limit).ok:
            return traj
        amp = 0.9 * amp
        if np.all(amp < 0.05):
            end = start + 0.5 * (end - start)
    raise RuntimeError("no exciting trajectory within the limits")


def random_postures(robot, n: int, rng, spread_rad: float = POSTURE_SPREAD_RAD) -> np.ndarray:
    """``n`` postures around home, inside the position limits."""
    home = np.asarray(robot.spec.sim.home, float)
    q = home + rng.uniform(-1.0, 1.0, (n, home.size)) * spread_rad
    return np.clip(q, robot.position_lower + 0.2, robot.position_upper - 0.2)


def simulate(robot, pi_payload, true_model, seed: int, noise_factor: float = 1.0):
    """Samples ``(t, q, qd, tau)`` of the four trajectories tracked back to back at 4 kHz."""
    nominal = NoiseModel.from_profile(robot.spec)
    noise = replace(nominal, torque_relative=noise_factor * nominal.torque_relative,
                    torque_absolute_Nm=noise_factor * nominal.torque_absolute_Nm)
    sim_cfg = robot.spec.sim
    sim = Simulator(robot, pi_payload, STEP_HZ, sim_cfg.kp, sim_cfg.kd, sim_cfg.ki, noise, seed,
                    true_model=true_model)
    postures = np.vstack([sim.q, random_postures(robot, TRAJECTORIES, np.random.default_rng(seed + 7919))])
    out = []
    for k in range(TRAJECTORIES):
        traj = exciting_trajectory(robot, postures[k], postures[k + 1], TRAJECTORY_S, seed=1000 * seed + k)
        sim.command(traj)
        for _ in range(int(round(TRAJECTORY_S * STEP_HZ))):
            sim.step()
            m = sim.measure()
            out.append((m.t, m.q, m.qd, m.tau))
    return tuple(np.array(x) for x in zip(*out))


def run_trial(robot_name: str, payload: str, seed: int, noise_factor: float = 1.0,
              update_period_s: float = 1.5, methods=tuple(BOUND_METHODS)) -> dict:
    """One Monte Carlo trial (module docstring): the final boxes of each method, containment and timings."""
    robot = load_robot(robot_name)
    rng = np.random.default_rng(seed)
    pi = grasped_payload(PAYLOADS[payload], rng)
    if not np.all((pi >= PAYLOAD_PRIOR_LOWER) & (pi <= PAYLOAD_PRIOR_UPPER)):
        raise ValueError(f"payload {payload} with this grasp lies outside the payload prior box")
    true_model = perturbed_model(robot.model, rng)
    t, q, qd, tau = simulate(robot, pi, true_model, seed, noise_factor)
    noise = NoiseModel.from_profile(robot.spec)
    model_error = float(robot.spec.noise.model_error_Nm)
    estimators = {m: BOUND_METHODS[m](robot, PAYLOAD_PRIOR_LOWER, PAYLOAD_PRIOR_UPPER, window=WINDOW) for m in methods}
    windows = MomentumWindows(robot, WINDOW, noise.torque_relative, noise.torque_absolute_Nm, model_error)
    per_update = int(round(update_period_s * STEP_HZ))
    times = {m: [] for m in methods}
    row_time, row_error_ratio = 0.0, 0.0
    theta_r_true = robot_parameters(true_model)
    for start in range(0, t.size, per_update):
        stop = min(start + per_update, t.size)
        t0 = time.perf_counter()
        windows.add_samples(t[start:stop], q[start:stop], qd[start:stop], tau[start:stop])
        rows = windows.take_rows()
        row_time += time.perf_counter() - t0
        if rows.rows:
            # how much of the stated row error bound the actual error uses (> 1: assumption broken)
            error = np.abs(rows.Y @ pi + rows.Y_r @ theta_r_true - rows.U)
            row_error_ratio = max(row_error_ratio, float(np.max(error / rows.noise_bound)))
        for m, est in estimators.items():
            est.add_rows(rows)
            t0 = time.perf_counter()
            est.update_bounds()
            times[m].append(time.perf_counter() - t0)
    out = {"payload": payload, "seed": seed, "noise_factor": noise_factor, "truth": pi,
           "row_time_per_sample_s": row_time / t.size, "row_error_ratio": row_error_ratio, "methods": {}}
    for m, est in estimators.items():
        r = est.result()
        inside = (pi >= r.lower) & (pi <= r.upper)
        out["methods"][m] = {"contained": bool(inside.all()), "inside": inside, "lower": r.lower, "upper": r.upper,
                             "width": r.upper - r.lower, "estimate": r.estimate,
                             "physically_consistent": r.physically_consistent, "data_consistent": r.data_consistent,
                             "bounds_guaranteed": r.bounds_guaranteed, "update_times_s": times[m],
                             "message": r.message}
    return out


def _trial_args(robot, payloads, trials, seed, overnoise_every, overnoise_factor, update_period_s):
    for i in range(trials):
        over = overnoise_every > 0 and (i + 1) % overnoise_every == 0
        yield (robot, payloads[i % len(payloads)], seed + i, overnoise_factor if over else 1.0, update_period_s)


def _run_trial_args(a):
    return run_trial(*a)


def summarize(results: list, methods=tuple(BOUND_METHODS)) -> dict:
    """Containment, widths and timings of each method over the trials."""
    nominal = [r for r in results if r["noise_factor"] == 1.0]
    over = [r for r in results if r["noise_factor"] != 1.0]
    report = {"trials": len(results), "trials_within_noise_bounds": len(nominal), "trials_overnoise": len(over),
              "parameter_names": params.parameter_names("payload"),
              "initial_width": PAYLOAD_PRIOR_UPPER - PAYLOAD_PRIOR_LOWER,
              "max_row_error_ratio": max((r["row_error_ratio"] for r in nominal), default=float("nan")),
              "row_time_per_sample_s": float(np.median([r["row_time_per_sample_s"] for r in results]))}
    for m in methods:
        entries = [r["methods"][m] for r in nominal]
        times = np.concatenate([e["update_times_s"] for e in entries]) if entries else np.zeros(0)
        widths = np.array([e["width"] for e in entries]) if entries else np.zeros((0, 10))
        over_entries = [r["methods"][m] for r in over]
        report[m] = {
            "containment_rate": float(np.mean([e["contained"] for e in entries])) if entries else float("nan"),
            "per_parameter_containment": np.mean([e["inside"] for e in entries], axis=0) if entries else [],
            "median_width": np.median(widths, axis=0) if entries else [],
            "final_mass_width": float(np.median(widths[:, 0])) if entries else float("nan"),
            "update_time_p50_s": float(np.percentile(times, 50)) if times.size else float("nan"),
            "update_time_p95_s": float(np.percentile(times, 95)) if times.size else float("nan"),
            "physically_consistent_rate": float(np.mean([e["physically_consistent"] for e in entries + over_entries]))
            if results else float("nan"),
            "bounds_guaranteed_rate": float(np.mean([e["bounds_guaranteed"] for e in entries])) if entries else float("nan"),
            "data_inconsistent_flagged_within_bounds": int(sum(not e["data_consistent"] for e in entries)),
            "overnoise_flagged": int(sum(not e["data_consistent"] for e in over_entries)),
            "overnoise_excluded": int(sum(not e["contained"] for e in over_entries)),
            "overnoise_excluded_unflagged": int(sum(e["data_consistent"] and not e["contained"] for e in over_entries)),
        }
    if all(m in report for m in ("guaranteed", "log_cholesky")) and nominal:
        report["guaranteed_narrower_than_mvf"] = int(np.sum(np.asarray(report["guaranteed"]["median_width"])
                                                            < np.asarray(report["log_cholesky"]["median_width"])))
    return report


def run_study(robot: str = "kinova_gen3", payloads=tuple(PAYLOADS), trials: int = 10, seed: int = 0,
              overnoise_every: int = 0, overnoise_factor: float = 3.0, update_period_s: float = 1.5,
              workers: int = 1, keep_trials: bool = False, scheduler: str | None = None) -> dict:
    """``trials`` trials per payload (in parallel over ``workers`` or a Dask scheduler), summarized."""
    payloads = list(payloads)
    unknown = [p for p in payloads if p not in PAYLOADS]
    if unknown:
        raise ValueError(f"unknown payloads {unknown} (choose from {', '.join(PAYLOADS)})")
    args = list(_trial_args(robot, payloads, trials, seed, overnoise_every, overnoise_factor, update_period_s))
    results = map_tasks(_run_trial_args, args, workers, scheduler)   # each trial carries its seed
    report = summarize(results)
    report.update(robot=robot, payloads=payloads, seed=seed, window=WINDOW, step_hz=STEP_HZ,
                  trajectories=TRAJECTORIES, trajectory_s=TRAJECTORY_S, update_period_s=update_period_s,
                  overnoise_every=overnoise_every, overnoise_factor=overnoise_factor)
    if keep_trials:
        report["trial_results"] = results
    return report
