"""Guaranteed payload bounds: time to update with all data of the 7.5 s phase (4 kHz, h = 400)."""
from __future__ import annotations

import time

import numpy as np

from ..core import bounds_study as study
from ..core.estimators.guaranteed import GuaranteedEstimator
from ..core.estimators.seed003 import Seed003Estimator
from ..core.model import load_robot
from ..core.momentum import MomentumWindows
from ..core.sim import NoiseModel

PHASE_S = 7.5
PLANNING_CYCLE_S = 1.5


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--trials", type=int, default=5, help="simulated phases (payloads cycle 4lb..8lb)")
    parser.add_argument("--repeats", type=int, default=4, help="timed updates per phase")


def _time_update(cls, robot, rows) -> float:
    est = cls(robot, study.TABLE_I_LOWER, study.TABLE_I_UPPER, window=study.WINDOW)
    est.add_rows(rows)
    t0 = time.perf_counter()
    est.update_bounds()
    return time.perf_counter() - t0


def run(args) -> dict:
    robot = load_robot(args.robot)
    noise = NoiseModel.from_profile(robot.profile)
    model_error = float(robot.profile.get("noise", {}).get("model_error_Nm", 0.0))
    n = int(round(PHASE_S * study.STEP_HZ)) + 1          # + the state closing the last window
    payloads = list(study.PAYLOADS)
    lp_times, nlp_times, row_times, n_rows = [], [], [], 0
    for trial in range(args.trials):
        rng = np.random.default_rng(trial)
        pi = study.grasped_payload(study.PAYLOADS[payloads[trial % len(payloads)]], rng)
        t, q, qd, tau = study.simulate(robot, pi, study.perturbed_model(robot.model, rng), trial)
        windows = MomentumWindows(robot, study.WINDOW, noise.torque_relative, noise.torque_absolute_Nm, model_error)
        t0 = time.perf_counter()
        for k in range(n):
            windows.add_sample(t[k], q[k], qd[k], tau[k])
        row_times.append((time.perf_counter() - t0) / n)
        rows = windows.take_rows()
        n_rows = rows.rows
        lp_times += [_time_update(GuaranteedEstimator, robot, rows) for _ in range(args.repeats)]
        nlp_times += [_time_update(Seed003Estimator, robot, rows) for _ in range(args.repeats)]
    lp = np.array(lp_times)
    return {
        "robot": robot.name, "phase_s": PHASE_S, "step_hz": study.STEP_HZ, "window": study.WINDOW,
        "rows": n_rows, "updates_timed": int(lp.size),
        "guaranteed_update_p50_s": float(np.percentile(lp, 50)),
        "guaranteed_update_p95_s": float(np.percentile(lp, 95)),
        "guaranteed_update_max_s": float(lp.max()),
        "seed003_update_p50_s": float(np.percentile(nlp_times, 50)),
        "seed003_update_p95_s": float(np.percentile(nlp_times, 95)),
        "row_forming_per_sample_s": float(np.median(row_times)),
        "row_forming_realtime_factor": float(np.median(row_times) * study.STEP_HZ),
        "target_update_p95_s": PLANNING_CYCLE_S / 3,
    }
