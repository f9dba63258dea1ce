"""Simulation study of point-mass discretization (the reference's Table III): the eight test objects on the xArm7 wrist F/T sensor,
moved by sinusoids of the three wrist joints at a given average angular speed, identified from
~1.5 s of data at 100 Hz by OLS, RTLS, GEO and PMD.

Pipeline of one run: joint sinusoids -> sensor-frame pose, velocities and accelerations (pinocchio)
-> exact wrench of the object -> measured pose (encoder-level noise) through the Kalman filter and
its RTS smoother (:func:`.kalman.smooth_poses`), and Table II noise on the wrench (as in Table III)
-> each method on the same samples. The smoothed angular accelerations err by about 0.2 rad/s^2 RMS,
the linear ones by about 0.06 m/s^2, at every speed. (The causal filter alone lags the wrench: at
2 rad/s its errors grow to 0.8 rad/s^2 and 0.2 m/s^2, and every full-model COM estimate shifts by
several millimetres.)

At 2 rad/s (mean dynamism weight w ~ 0.5) PMD keeps a COM offset of about (-6, +3, +3) mm, the same
for every object, with exact kinematics too: the gravity-only rows cannot fit the force ``m a`` of
the motion, and once wrench noise leaves the full-model residual non-zero the sum of the two norms
trades the two models off, pulling the mass and, through the coupling of the mass and first-moment
columns of the full force rows, ``m c``. It is the method's (Problem 1 as published), not the data's:
with w = 1 the offset vanishes, and with exact kinematics and a noise-free wrench Problem 1 is exact.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..defaults import PMD_NOISE_LEVELS as NOISE_LEVELS
from ..core.robot import params
from ..core.fanout import map_tasks
from ..core.robot.model import Robot, load_robot
from ..core.pmd import baselines, metrics
from ..core.pmd.kalman import smooth_poses
from ..core.pmd.objects import BenchObject, bench_objects
from ..core.pmd.samples import WristSamples, stack_rows
from ..core.pmd.shapes import bounding_box_size, sample_points
from ..core.pmd.solver import PmdProblem

COMPARED_METHODS = ("OLS", "RTLS", "GEO", "PMD")
POSE_NOISE = 1e-4                     # m and rad: encoder quantization seen through the kinematics
RATE_HZ = 100.0
WARMUP_S = 0.5                        # Kalman filter settling before the samples are used
WRIST_JOINTS = (4, 5, 6)              # the three joints proximal to the end effector
WRIST_AMPLITUDE_RAD = np.deg2rad(45.0)   # as in the paper; the frequencies set the speed
WRIST_FREQUENCY_RATIOS = np.array([1.0, 1.3, 1.6])   # incommensurate: the pose keeps changing
WRIST_PHASES_RAD = np.array([0.0, 1.0, 2.0])


@dataclass(frozen=True)
class WristMotion:
    """True sensor-frame motion along a trajectory (constant once generated)."""
    X_WS: list                 # pin.SE3 per sample
    samples: WristSamples      # true kinematics; wrench_S left zero


def _wrist_motion(robot: Robot, base_frequency_hz: float, n_samples: int) -> WristMotion:
    model, data = robot.model, robot.model.createData()
    t = np.arange(n_samples) / RATE_HZ
    omega = 2 * np.pi * base_frequency_hz * WRIST_FREQUENCY_RATIOS
    arg = np.outer(t, omega) + WRIST_PHASES_RAD
    amp = WRIST_AMPLITUDE_RAD
    q0 = np.asarray(robot.spec.sim.home, dtype=float)
    X, a, w, al, g = [], [], [], [], []
    for k in range(n_samples):
        q, v, dv = q0.copy(), np.zeros(model.nv), np.zeros(model.nv)
        q[list(WRIST_JOINTS)] += amp * np.sin(arg[k])
        v[list(WRIST_JOINTS)] = amp * omega * np.cos(arg[k])
        dv[list(WRIST_JOINTS)] = -amp * omega**2 * np.sin(arg[k])
        pin.forwardKinematics(model, data, q, v, dv)
        pin.updateFramePlacements(model, data)
        X_WS = data.oMf[robot.ft_frame_id].copy()
        acc = pin.getFrameClassicalAcceleration(model, data, robot.ft_frame_id, pin.LOCAL)
        X.append(X_WS)
        a.append(acc.linear)
        al.append(acc.angular)
        w.append(pin.getFrameVelocity(model, data, robot.ft_frame_id, pin.LOCAL).angular)
        g.append(X_WS.rotation.T @ model.gravity.linear)
    samples = WristSamples(np.array(a), np.array(w), np.array(al), np.array(g), np.zeros((n_samples, 6)))
    return WristMotion(X, samples)


def wrist_motion(robot: Robot, speed_rad_s: float, n_samples: int) -> WristMotion:
    """Wrist sinusoids of 45 degrees whose frequencies are scaled so that the sensor-frame angular
    speed averages ``speed_rad_s`` over the used samples (those after the Kalman warm-up)."""
    warm = int(WARMUP_S * RATE_HZ)
    frequency = 0.2 * speed_rad_s
    for _ in range(6):   # the speed is nearly proportional to the frequency: a few secant steps suffice
        motion = _wrist_motion(robot, frequency, warm + n_samples)
        speed = np.mean(np.linalg.norm(motion.samples.w_S[warm:], axis=1))
        frequency *= speed_rad_s / speed
    return _wrist_motion(robot, frequency, warm + n_samples)


def true_wrench(samples: WristSamples, pi_S: np.ndarray) -> np.ndarray:
    """(K, 6) noise-free wrench of the object ``pi_S`` (sensor frame) at the samples."""
    return samples.full_regressors() @ pi_S


def measured_samples(motion: WristMotion, pi_S: np.ndarray, noise: tuple, rng, n_samples: int) -> WristSamples:
    """Samples as an identification would see them: kinematics smoothed from the noisy poses of the
    whole run (warm-up included; the filter's lag would misalign them with the wrench), noisy wrench."""
    poses = [pin.SE3(X_WS.rotation @ pin.exp3(rng.normal(0.0, POSE_NOISE, 3)),
                     X_WS.translation + rng.normal(0.0, POSE_NOISE, 3)) for X_WS in motion.X_WS]
    a, w, al, g = (x[-n_samples:] for x in smooth_poses(poses, 1.0 / RATE_HZ, sigma_position_m=POSE_NOISE,
                                                         sigma_rotation_rad=POSE_NOISE))
    wrench = true_wrench(motion.samples, pi_S)[-n_samples:]
    wrench = wrench + rng.normal(0.0, 1.0, wrench.shape) * np.repeat(noise, 3)
    return WristSamples(a, w, al, g, wrench)


def homogeneous_prior(samples: WristSamples, p_S: np.ndarray) -> np.ndarray:
    """The initial guess of the paper: uniform density over the shape, mass from the mean force."""
    m0 = np.mean(np.linalg.norm(samples.wrench_S[:, :3], axis=1)) / np.mean(np.linalg.norm(samples.g_S, axis=1))
    zero = np.zeros((3, 3))
    return sum(params.params_from_com(m0 / len(p_S), p, zero) for p in p_S)


def identify(samples: WristSamples, problem: PmdProblem, sigma_wrench=None,
             geo_gamma: float = baselines.GEO_GAMMA) -> dict:
    """``{method: (pi_S, solve_time_s)}`` for all methods on the same rows.

    Without ``sigma_wrench`` the rows are used as measured, as in the paper (no noise knowledge).
    With it, rows are divided by their noise relative to the force noise: residuals stay in newtons
    (the units of lambda, c1 and the GEO weight) while torque rows weigh as their accuracy warrants.
    """
    row_sigma = None if sigma_wrench is None else np.asarray(sigma_wrench) / sigma_wrench[0]
    A, b = stack_rows(samples.full_regressors(), samples.wrench_S, row_sigma)
    prior = homogeneous_prior(samples, problem.p_S)
    runs = {"OLS": lambda: baselines.ols(A, b),
            "RTLS": lambda: baselines.rtls(A, b),
            "GEO": lambda: baselines.geo(A, b, prior, geo_gamma),
            "PMD": lambda: problem.estimate(samples, row_sigma)}
    out = {}
    for name, run in runs.items():
        t0 = time.perf_counter()
        pi = run()
        out[name] = (pi, time.perf_counter() - t0)
    return out


def _mean_errors(errs: list[dict]) -> dict:
    return {f"{k}_err_pct": float(np.mean([e[k] for e in errs])) for k in ("mass", "com", "inertia")}


@dataclass(frozen=True)
class ObjectTask:
    """All runs of one object: a unit of work that any process or Dask worker can run alone."""
    obj: BenchObject
    index: int                 # the object's place in the study: part of each draw's seed
    p_S: np.ndarray            # PMD points, sensor frame
    motions: tuple             # WristMotion per speed
    g_rest_S: np.ndarray       # gravity of the stop-and-go poses, sensor frame
    n_samples: int
    noise: tuple               # (force N, torque Nm) standard deviations
    trials: int
    seed: int
    noise_weighted: bool
    geo_gamma: float


def draw_rng(seed: int, object_index: int, speed_index: int, trial: int) -> np.random.Generator:
    """The generator of one noise draw, fixed by its place in the study alone: the figures do not
    depend on where, or in which order, the draws run."""
    return np.random.default_rng([seed, object_index, speed_index, trial])


def run_object(task: ObjectTask) -> dict:
    """Stop-and-go PMD, then every (speed, trial) draw of the object through every method."""
    obj, n = task.obj, task.n_samples
    # the task's own problem: a cvxpy problem's first solve (which compiles it) rounds differently from
    # its re-solves (~1e-10 kg), so a problem shared across tasks would tie the figures to their order
    problem = PmdProblem(task.p_S)
    box = bounding_box_size(obj.shape)
    # stop-and-go first: its solve also compiles the cvxpy problem, so no timed solve below pays for that
    zero = np.zeros((n, 3))
    static = WristSamples(zero, zero, zero, task.g_rest_S, np.zeros((n, 6)))
    static = WristSamples(zero, zero, zero, task.g_rest_S, true_wrench(static, obj.pi_S))
    out = {"stop_and_go": metrics.errors_pct(problem.estimate(static), obj.pi_S, box), "speeds": []}
    sigma_wrench = np.repeat(task.noise, 3) if task.noise_weighted else None
    for j, motion in enumerate(task.motions):
        draws = []
        for trial in range(task.trials):
            samples = measured_samples(motion, obj.pi_S, task.noise, draw_rng(task.seed, task.index, j, trial), n)
            draws.append({name: (metrics.errors_pct(pi, obj.pi_S, box), params.is_physically_consistent(pi), dt)
                          for name, (pi, dt) in identify(samples, problem, sigma_wrench, task.geo_gamma).items()})
        out["speeds"].append(draws)
    return out


def run_study(speeds=(1.0, 1.5, 2.0), noise: str = "moderate", n_samples: int = 150, trials: int = 1,
              density_per_cm3: float = 0.04, objects: list[BenchObject] | None = None, seed: int = 0,
              noise_weighted: bool = False, geo_gamma: float = baselines.GEO_GAMMA,
              robot: Robot | None = None, workers: int = 1, scheduler: str | None = None) -> dict:
    """The Table III study: per method and speed, errors averaged over objects and trials.

    The objects run as independent tasks (:func:`run_object`) here, in ``workers`` local processes,
    or on the Dask cluster at ``scheduler``; the report is the same whichever way they run.
    """
    robot = robot or load_robot("xarm7")
    objects = objects or bench_objects()
    speeds = list(speeds)
    points = {o.name: sample_points(o.shape, density_per_cm3, o.X_SO) for o in objects}
    motions = tuple(wrist_motion(robot, speed, n_samples) for speed in speeds)
    # the paper's sanity check: data recorded at rest in the poses of the slowest trajectory
    g_rest_S = wrist_motion(robot, 1.0, n_samples).samples.g_S[-n_samples:]
    tasks = [ObjectTask(o, i, points[o.name], motions, g_rest_S, n_samples, NOISE_LEVELS[noise], trials, seed,
                        noise_weighted, geo_gamma) for i, o in enumerate(objects)]
    results = map_tasks(run_object, tasks, workers, scheduler)
    report = {"noise": noise, "noise_weighted": noise_weighted, "geo_gamma": geo_gamma, "samples": n_samples,
              "rate_hz": RATE_HZ, "trials": trials, "seed": seed,
              "points": {o.name: len(points[o.name]) for o in objects}, "speeds": {}}
    for j, (speed, motion) in enumerate(zip(speeds, motions)):
        draws = [d for r in results for d in r["speeds"][j]]     # objects in order, then trials
        report["speeds"][f"{speed:g}"] = {
            "mean_speed_rad_s": float(np.mean(np.linalg.norm(motion.samples.w_S[-n_samples:], axis=1))),
            "methods": {m: {**_mean_errors([d[m][0] for d in draws]),
                            "consistent_rate": float(np.mean([d[m][1] for d in draws])),
                            "solve_time_p50_s": float(np.median([d[m][2] for d in draws]))}
                        for m in COMPARED_METHODS}}
    report["stop_and_go"] = {"method": "PMD", "wrench_noise": "none",
                             **_mean_errors([r["stop_and_go"] for r in results])}
    return report
