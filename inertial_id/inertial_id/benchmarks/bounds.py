"""Guaranteed payload bounds: time to update with all data of the 7.5 s phase (4 kHz, h = 400),
and with ``--minutes M`` the online cost after M minutes of 4 kHz data (update time, memory).

The long run feeds a :class:`GuaranteedEstimator` the rows of one simulated 12 s stretch (four
exciting trajectories at 4 kHz, windows of h = 400), 1.5 s of rows per update (the planner's
replanning period), cycling through the stretch until M minutes of data went in: forming rows costs 250 us
per sample, so ten unique minutes would take most of an hour to simulate, while the update cost
depends on how many rows the LP holds and keeps, not on whether a row was seen before. Reported:
update and estimate times after the first minute (p50/p95/max), resident memory after the first
minute and at the end, the rows the LP keeps, and whether the final box holds the truth."""
from __future__ import annotations

import time

import numpy as np
import psutil

from ..cli.parsers import non_negative_float, positive_int
from ..studies import bounds as study
from ..core.estimators.guaranteed import MAX_LP_ROWS, GuaranteedEstimator
from ..core.estimators.log_cholesky import LogCholeskyEstimator
from ..core.robot.model import load_robot
from ..core.signals.momentum import MomentumWindows
from ..core.signals.sensors import NoiseModel

PHASE_S = 7.5
PLANNING_CYCLE_S = 1.5


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--trials", type=positive_int, default=5, help="simulated phases (payloads cycle 4lb..8lb)")
    parser.add_argument("--repeats", type=positive_int, default=4, help="timed updates per phase")
    parser.add_argument("--minutes", type=non_negative_float, default=0.0,
                        help="instead, run the estimator online for this many minutes of 4 kHz data")
    parser.add_argument("--max-rows", type=positive_int, default=MAX_LP_ROWS, help="rows the LP keeps between updates")


def _time_update(cls, robot, rows) -> tuple[float, int]:
    """Seconds of one update with ``rows``, and its simplex iterations (0 for an estimator without LPs)."""
    est = cls(robot, study.PAYLOAD_PRIOR_LOWER, study.PAYLOAD_PRIOR_UPPER, window=study.WINDOW)
    est.add_rows(rows)
    t0 = time.perf_counter()
    est.update_bounds()
    return time.perf_counter() - t0, int(getattr(getattr(est, "bounds", None), "lp_iterations", 0))


def long_run(robot, minutes: float, max_rows: int = MAX_LP_ROWS, seed: int = 0) -> dict:
    noise = NoiseModel.from_profile(robot.spec)
    model_error = float(robot.spec.noise.model_error_Nm)
    rng = np.random.default_rng(seed)
    pi = study.grasped_payload(study.PAYLOADS["5lb"], rng)
    t, q, qd, tau = study.simulate(robot, pi, study.perturbed_model(robot.model, rng), seed)
    windows = MomentumWindows(robot, study.WINDOW, noise.torque_relative, noise.torque_absolute_Nm, model_error)
    per_update = int(round(PLANNING_CYCLE_S * study.STEP_HZ / study.WINDOW))   # windows per update
    chunks = []
    chunk = per_update * study.WINDOW
    for k in range(0, t.size - chunk + 1, chunk):
        windows.add_samples(t[k:k + chunk], q[k:k + chunk], qd[k:k + chunk], tau[k:k + chunk])
        chunks.append(windows.take_rows())
    est = GuaranteedEstimator(robot, study.PAYLOAD_PRIOR_LOWER, study.PAYLOAD_PRIOR_UPPER, window=study.WINDOW,
                              max_rows=max_rows)
    updates = int(round(minutes * 60.0 / PLANNING_CYCLE_S))
    warm = int(round(60.0 / PLANNING_CYCLE_S))
    process = psutil.Process()
    update_s, update_cpu_s, result_s, rss_warm = [], [], [], None
    for k in range(updates):
        est.add_rows(chunks[k % len(chunks)])
        t0, c0 = time.perf_counter(), time.process_time()
        est.update_bounds()
        t1, c1 = time.perf_counter(), time.process_time()
        r = est.result()
        t2 = time.perf_counter()
        if k >= warm or updates <= warm:
            update_s.append(t1 - t0)
            update_cpu_s.append(c1 - c0)
            result_s.append(t2 - t1)
        if k == min(warm, updates) - 1:
            rss_warm = process.memory_info().rss
    rss_end = process.memory_info().rss
    u, e = np.array(update_s), np.array(result_s)
    return {
        "long_minutes": minutes, "long_updates": updates, "long_rows_per_update": chunks[0].rows,
        "long_rows_total": int(est.bounds.rows_used), "long_rows_kept": int(est.bounds.kept_rows[1].size),
        "long_update_p50_s": float(np.percentile(u, 50)), "long_update_p95_s": float(np.percentile(u, 95)),
        "long_update_max_s": float(u.max()),
        # CPU time of this process: the cost itself, without what other processes took from the core
        "long_update_cpu_p50_s": float(np.percentile(update_cpu_s, 50)),
        "long_update_cpu_p95_s": float(np.percentile(update_cpu_s, 95)),
        "long_estimate_p95_s": float(np.percentile(e, 95)), "long_max_rows": max_rows,
        # simplex work of all updates: LPs started from their objective's previous basis, and those
        # solved afresh after that start stalled
        "long_lp_iterations": int(est.bounds.lp_iterations), "long_lp_warm_starts": int(est.bounds.lp_warm_starts),
        "long_lp_restarts": int(est.bounds.lp_restarts), "long_lp_failures": int(est.bounds.lp_failures),
        "long_rss_after_first_minute_MB": rss_warm / 2**20, "long_rss_end_MB": rss_end / 2**20,
        "long_rss_growth_pct": 100.0 * (rss_end - rss_warm) / rss_warm,
        "long_final_mass_width_kg": float(r.upper[0] - r.lower[0]),
        "long_truth_in_box": bool(np.all((pi >= r.lower) & (pi <= r.upper))),
        "long_data_consistent": bool(r.data_consistent),
    }


def run(args) -> dict:
    robot = load_robot(args.robot)
    if args.minutes > 0:
        return {"robot": robot.name, **long_run(robot, args.minutes, args.max_rows)}
    noise = NoiseModel.from_profile(robot.spec)
    model_error = float(robot.spec.noise.model_error_Nm)
    n = int(round(PHASE_S * study.STEP_HZ)) + 1          # + the state closing the last window
    payloads = list(study.PAYLOADS)
    lp_times, lp_iterations, nlp_times, row_times, n_rows = [], [], [], [], 0
    for trial in range(args.trials):
        rng = np.random.default_rng(trial)
        pi = study.grasped_payload(study.PAYLOADS[payloads[trial % len(payloads)]], rng)
        t, q, qd, tau = study.simulate(robot, pi, study.perturbed_model(robot.model, rng), trial)
        windows = MomentumWindows(robot, study.WINDOW, noise.torque_relative, noise.torque_absolute_Nm, model_error)
        t0 = time.perf_counter()
        windows.add_samples(t[:n], q[:n], qd[:n], tau[:n])
        row_times.append((time.perf_counter() - t0) / n)
        rows = windows.take_rows()
        n_rows = rows.rows
        for _ in range(args.repeats):
            seconds, iterations = _time_update(GuaranteedEstimator, robot, rows)
            lp_times.append(seconds)
            lp_iterations.append(iterations)
        nlp_times += [_time_update(LogCholeskyEstimator, robot, rows)[0] for _ in range(args.repeats)]
    lp = np.array(lp_times)
    return {
        "robot": robot.name, "phase_s": PHASE_S, "step_hz": study.STEP_HZ, "window": study.WINDOW,
        "rows": n_rows, "updates_timed": int(lp.size),
        "guaranteed_update_p50_s": float(np.percentile(lp, 50)),
        "guaranteed_update_p95_s": float(np.percentile(lp, 95)),
        "guaranteed_update_max_s": float(lp.max()),
        # simplex iterations of one update (the 20 LPs): the work itself, whatever the machine's load
        "guaranteed_lp_iterations_p50": float(np.percentile(lp_iterations, 50)),
        "guaranteed_lp_iterations_max": int(max(lp_iterations)),
        "log_cholesky_update_p50_s": float(np.percentile(nlp_times, 50)),
        "log_cholesky_update_p95_s": float(np.percentile(nlp_times, 95)),
        "row_forming_per_sample_s": float(np.median(row_times)),
        "row_forming_realtime_factor": float(np.median(row_times) * study.STEP_HZ),
        "target_update_p95_s": PLANNING_CYCLE_S / 3,
    }
