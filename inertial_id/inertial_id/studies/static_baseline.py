"""Static-pose baseline against the project's method, in simulation, ROS-free.

The baseline is what robot users run otherwise (xArm's IdenLoad, Kinova's payload estimation): the
arm visits a few wrist orientations, holds still at each, averages what its sensors read over the
hold (the wrist F/T wrench on the xArm7, the joint torques minus the nominal robot's gravity torque
on the Gen3), and solves the gravity-only least squares for mass and first moment ``(m, m c)``
with the project's payload regressor (:class:`~..regressor.PayloadRegressor` at zero velocity and
acceleration: only the mass and first-moment columns remain). It gives no inertia and no bounds.

Ours is the suite's pipeline (:func:`inertial_id.api.payload_bounds`: the builder's rows and the
profile's guaranteed estimator, bounds updated every ``UPDATE_PERIOD_S`` of data) on the bounds
study's excitation: four random exciting trajectories of 3 s between random postures.

Both run on the same case: the same catalogue dumbbell with the same random grasp offset, the same
true robot (body parameters and rotor inertia perturbed within the estimators' ±5 % box), the same
simulated sensors (:meth:`~..sensors.SensorNoise.from_profile`), the same simulator and controller
(:class:`~..sim.Simulator`, the profile's gains and step rate), each sensor read at the rate its
driver publishes it. Seconds of motion count from the first command: for the baseline the
moves between poses (quintic rest-to-rest at the profile's velocity and acceleration limits) plus
the holds, for ours the excitation.

**Usable estimate** (one definition for both methods): mass error below ``MASS_TOLERANCE`` (10 %)
of the true mass and centre-of-mass error (Euclidean) below ``COM_TOLERANCE_M`` (1 cm).
*Time to a usable estimate* is the time from which the estimate stays usable to the end (an early
estimate that passes by chance and is lost again does not count): the baseline's after each hold
(from the poses so far), ours after each bounds update; None when the final estimate is not usable.
Ours also reports when ``~/apply`` would first accept the estimate (:func:`~..payload_apply.refusal`:
guaranteed box from consistent data whose torque error the profile's ``apply.tolerated_torque_Nm`` allows), a check the
baseline cannot pass: it has no box.

In this simulation the F/T sensor has no offset and its noise is zero-mean, so averaging a hold
leaves the xArm7 baseline almost exact; on the Gen3 both methods carry the ±5 % robot model error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..defaults import BASELINE_POSES as POSES
from ..defaults import BASELINE_WRIST_OFFSETS_RAD
from ..core.fanout import map_tasks
from ..core.robot.model import load_robot
from ..core.offline import RowIntake, rows_from_stream
from ..core.payload.payload_apply import ApplyLimits, com_interval, refusal
from ..core.robot.regressor import PayloadRegressor
from ..core.signals.sensors import SensorNoise
from ..core.sim import Simulator
from ..core.trajectory import SampledTrajectory, check_limits, quintic_ramp
from .bounds import (PAYLOADS, TRAJECTORIES, TRAJECTORY_S, exciting_trajectory, grasped_payload, perturbed_model,
                     random_postures)

MASS_TOLERANCE = 0.10          # relative mass error of a usable estimate
COM_TOLERANCE_M = 0.01         # centre-of-mass error of a usable estimate
UPDATE_PERIOD_S = 1.0          # seconds of data between our bounds updates
HOLD_S = 2.0                   # still at each pose, of which the first SETTLE_S are not averaged
SETTLE_S = 0.5
WRIST_OFFSETS_RAD = np.array(BASELINE_WRIST_OFFSETS_RAD)
# peak speed and acceleration of the quintic 0 -> 1 over T = 1: s'(1/2) and s''((3 - sqrt 3) / 6)
QUINTIC_PEAK_VELOCITY = 1.875
QUINTIC_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)


def static_poses(robot, n: int = POSES) -> np.ndarray:
    """(n, nv) postures of the baseline: home with the first ``n`` wrist offsets, inside the
    position limits."""
    if not 2 <= n <= len(WRIST_OFFSETS_RAD):
        raise ValueError(f"the baseline takes 2 to {len(WRIST_OFFSETS_RAD)} poses, not {n}")
    home = np.asarray(robot.spec.sim.home, float)
    q = np.tile(home, (n, 1))
    q[:, -3:] += WRIST_OFFSETS_RAD[:n]
    return np.clip(q, robot.position_lower + 0.05, robot.position_upper - 0.05)


def move(robot, q_from, q_to, rate_hz: float) -> SampledTrajectory:
    """Rest-to-rest quintic from ``q_from`` to ``q_to`` in the shortest time the profile's velocity and
    acceleration limits allow."""
    delta = np.abs(np.asarray(q_to, float) - np.asarray(q_from, float))
    duration = max(float(np.max(QUINTIC_PEAK_VELOCITY * delta / robot.velocity_limit)),
                   float(np.sqrt(np.max(QUINTIC_PEAK_ACCELERATION * delta / robot.acceleration_limit))), 1e-3)
    t = np.arange(int(np.ceil(duration * rate_hz)) + 1) / rate_hz
    s, ds, dds = quintic_ramp(t, duration)
    d = np.asarray(q_to, float) - np.asarray(q_from, float)
    traj = SampledTrajectory(t, q_from + np.outer(s, d), np.outer(ds, d), np.outer(dds, d))
    if not check_limits(traj, robot.position_lower, robot.position_upper, robot.velocity_limit,
                        robot.acceleration_limit).ok:
        raise RuntimeError("a move between the baseline's poses breaks the profile's limits")
    return traj


@dataclass
class Recording:
    """Sensor samples at the driver's publishing rate: stamps (s), joint positions (rad), velocities
    (rad/s), torques (N m) and the wrench ``[f; n]`` in the sensor frame (None without sensor)."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    wrench: np.ndarray | None


def sensor_rate_hz(robot) -> float:
    """The rate the rows are read at: the wrench's for F/T arms, the joint states' otherwise."""
    s = robot.sensing
    return float(s.wrench_hz if s.wrench else s.joint_states_hz)


def new_simulator(robot, pi_payload, true_model, seed: int) -> Simulator:
    """The simulated arm of a case: the profile's gains and step rate, the profile's sensors."""
    cfg = robot.spec.sim
    return Simulator(robot, pi_payload, float(cfg.step_hz), cfg.kp, cfg.kd, cfg.ki,
                     SensorNoise.from_profile(robot.spec), seed, true_model=true_model)


def record(sim: Simulator, segments) -> Recording:
    """Run ``segments`` in order, each a trajectory to track or a number of seconds to hold the
    current command, sampling the sensors at :func:`sensor_rate_hz`."""
    every = max(1, int(round(1.0 / (sim.dt * sensor_rate_hz(sim.robot)))))
    out, k = [], 0
    for seg in segments:
        if isinstance(seg, SampledTrajectory):
            sim.command(seg)
            steps = int(round(seg.duration / sim.dt))
        else:
            steps = int(round(float(seg) / sim.dt))
        for _ in range(steps):
            sim.step()
            if k % every == 0:
                out.append(sim.measure())
            k += 1
    wrench = np.array([m.wrench for m in out]) if out[0].wrench is not None else None
    return Recording(*(np.array([getattr(m, f) for m in out]) for f in ("t", "q", "qd", "tau")), wrench)


def gravity_rows(regressor: PayloadRegressor, q, measured) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) with ``A @ [m, m cx, m cy, m cz] = b`` at rest in posture ``q``: the wrench rows of an
    F/T arm (``measured``: the wrench), the torque rows otherwise (``measured``: joint torques; the
    nominal robot's gravity torque moved to ``b``). At zero velocity and acceleration the rotational
    inertia columns are zero."""
    zero = np.zeros(regressor.model.nv)
    if regressor.frame_S is not None:
        A, b = regressor.wrench_rows(q, zero, zero, measured)
    else:
        A, b = regressor.torque_rows(q, zero, zero, measured)
    return A[:, :4], b


def solve_mass_com(A, b) -> tuple[float, np.ndarray] | None:
    """Least-squares mass (kg) and centre of mass (m) of the stacked gravity rows; None while the rows
    do not determine all four (rank < 4) or the mass is not positive."""
    x, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
    if rank < 4 or not x[0] > 0:
        return None
    return float(x[0]), x[1:4] / x[0]


def errors(mass_kg: float, com_m, pi_true) -> tuple[float, float]:
    """(relative mass error, COM error in m) of an estimate against the true parameters."""
    return abs(mass_kg - pi_true[0]) / pi_true[0], float(np.linalg.norm(np.asarray(com_m) - pi_true[1:4] / pi_true[0]))


def usable(mass_error_rel: float, com_error_m: float) -> bool:
    """The module docstring's usable estimate."""
    return mass_error_rel < MASS_TOLERANCE and com_error_m < COM_TOLERANCE_M


def usable_since(times, flags) -> float | None:
    """The first of ``times`` from which every flag is true (None when the last is false)."""
    since = None
    for t, ok in zip(times, flags):
        since = (since if since is not None else round(float(t), 3)) if ok else None
    return since


def run_baseline(robot, sim: Simulator, pi_true, poses: np.ndarray) -> dict:
    """Visit ``poses``, hold, average, solve; the estimate after every pose and the seconds of motion."""
    regressor = PayloadRegressor(robot)
    rate = 1.0 / sim.dt
    A_rows, b_rows, per_pose = [], [], []
    elapsed, q_now = 0.0, sim.q.copy()
    for q_pose in poses:
        traj = move(robot, q_now, q_pose, rate)
        rec = record(sim, [traj, HOLD_S])
        elapsed += traj.duration + HOLD_S
        q_now = q_pose
        still = rec.t >= rec.t[-1] - (HOLD_S - SETTLE_S)
        measured = (rec.wrench if rec.wrench is not None else rec.tau)[still].mean(axis=0)
        A, b = gravity_rows(regressor, rec.q[still].mean(axis=0), measured)
        A_rows.append(A)
        b_rows.append(b)
        entry = {"seconds_of_motion": round(elapsed, 3), "residual_speed_rad_s": float(np.abs(rec.qd[still]).max())}
        solved = solve_mass_com(np.vstack(A_rows), np.concatenate(b_rows))
        if solved is not None:
            e_m, e_c = errors(*solved, pi_true)
            entry.update(mass_kg=solved[0], com_m=solved[1], mass_error_rel=e_m, com_error_m=e_c,
                         usable=usable(e_m, e_c))
        per_pose.append(entry)
    final = per_pose[-1]
    if "mass_kg" not in final:
        raise RuntimeError("the baseline's poses do not determine mass and centre of mass")
    first = usable_since([p["seconds_of_motion"] for p in per_pose], [p.get("usable", False) for p in per_pose])
    return {"poses": len(poses), "hold_s": HOLD_S, "averaged_s": HOLD_S - SETTLE_S,
            "mass_kg": final["mass_kg"], "com_m": final["com_m"], "mass_error_rel": final["mass_error_rel"],
            "com_error_m": final["com_error_m"], "seconds_of_motion": final["seconds_of_motion"],
            "seconds_to_usable": first, "per_pose": per_pose}


def run_ours(robot, sim: Simulator, pi_true, seed: int) -> dict:
    """The bounds study's excitation tracked by ``sim``, then the suite's pipeline on the samples."""
    postures = np.vstack([sim.q, random_postures(robot, TRAJECTORIES, np.random.default_rng(seed + 7919))])
    trajs = [exciting_trajectory(robot, postures[k], postures[k + 1], TRAJECTORY_S, seed=1000 * seed + k)
             for k in range(TRAJECTORIES)]
    rec = record(sim, trajs)
    # what the builder and estimator nodes do with these samples (inertial_id.api.payload_bounds)
    intake = RowIntake(robot, robot.spec.identification.method, None, UPDATE_PERIOD_S)
    wrench = None if rec.wrench is None else (rec.t, rec.wrench)
    tau = rec.tau if robot.sensing.joint_torque else None
    for message in rows_from_stream(robot, intake.estimator.kinds, rec.t, rec.q, rec.qd, tau, wrench):
        intake.add(message)
    return ours_entry(robot, intake.history, intake.finish(), pi_true, rec.t[0], TRAJECTORIES * TRAJECTORY_S)


def ours_entry(robot, history, result, pi_true, t0: float, seconds_of_motion: float) -> dict:
    """Our final errors, box and the times (from ``t0``, data time) from which the estimate stayed
    usable and at which ``~/apply`` would first have accepted it. ``history``: the
    :class:`~..offline.History` of the bounds updates; ``result``: the final estimate, box and flags."""
    limits = ApplyLimits.from_robot(robot)
    usable_flags, first_apply = [], None
    for t, est, lo, hi, checked in zip(history.t, history.estimate, history.lower, history.upper,
                                       history.offset_checked):
        usable_flags.append(bool(est[0] > 0)
                            and usable(*errors(est[0], est[1:4] / est[0], pi_true)))
        # the flags are the final result's: data found inconsistent freezes the box from then on
        ready = refusal(est, lo, hi, result.bounds_guaranteed, result.data_consistent, limits,
                        offset_checked=checked) is None
        if first_apply is None and ready:
            first_apply = round(float(t - t0), 3)
    first_usable = usable_since(np.asarray(history.t) - t0, usable_flags)
    est, lo, hi = (np.asarray(x, float) for x in (result.estimate, result.lower, result.upper))
    c_lo, c_hi = com_interval(lo, hi)
    e_m, e_c = errors(est[0], est[1:4] / est[0], pi_true) if est[0] > 0 else (np.inf, np.inf)
    return {"method": result.method, "mass_kg": float(est[0]), "com_m": est[1:4] / est[0] if est[0] > 0 else None,
            "mass_error_rel": e_m, "com_error_m": e_c, "seconds_of_motion": round(float(seconds_of_motion), 3),
            "seconds_to_usable": first_usable, "seconds_to_apply_ready": first_apply,
            "apply_refusal": refusal(est, lo, hi, result.bounds_guaranteed, result.data_consistent, limits,
                                     offset_checked=result.offset_checked),
            "bounds_guaranteed": bool(result.bounds_guaranteed), "data_consistent": bool(result.data_consistent),
            "box_contains_truth": bool(np.all((lo <= pi_true) & (pi_true <= hi))),
            "mass_width_kg": float(hi[0] - lo[0]), "com_width_m": float(np.max(c_hi - c_lo)),
            "updates": len(history.t)}


def run_case(robot_name: str, payload: str, seed: int, poses: int = POSES) -> dict:
    """One case: the payload and true robot drawn as the bounds study draws them (``seed``), then the
    baseline and ours each on its own simulated arm started at home."""
    robot = load_robot(robot_name)
    rng = np.random.default_rng(seed)
    pi = grasped_payload(PAYLOADS[payload], rng)
    true_model = perturbed_model(robot.model, rng)
    baseline = run_baseline(robot, new_simulator(robot, pi, true_model, seed), pi, static_poses(robot, poses))
    ours = run_ours(robot, new_simulator(robot, pi, true_model, seed + 104729), pi, seed)
    return {"payload": payload, "seed": seed, "mass_kg": float(pi[0]), "com_m": pi[1:4] / pi[0],
            "static_poses": baseline, "ours": ours}


def _run_case_args(a):
    return run_case(*a)


def _median(values) -> float | None:
    """Median of the values that exist (None: the event never happened in that case)."""
    v = [x for x in values if x is not None]
    return float(np.median(v)) if v else None


def summarize(cases: list[dict]) -> dict:
    """Per method the medians over the cases, and how many cases reached a usable estimate."""
    out = {}
    for m in ("static_poses", "ours"):
        e = [c[m] for c in cases]
        out[m] = {"median_mass_error_rel": _median([x["mass_error_rel"] for x in e]),
                  "median_com_error_m": _median([x["com_error_m"] for x in e]),
                  "median_seconds_of_motion": _median([x["seconds_of_motion"] for x in e]),
                  "median_seconds_to_usable": _median([x["seconds_to_usable"] for x in e]),
                  "cases_usable": sum(x["seconds_to_usable"] is not None for x in e)}
    o = [c["ours"] for c in cases]
    out["ours"].update(median_seconds_to_apply_ready=_median([x["seconds_to_apply_ready"] for x in o]),
                       cases_apply_ready=sum(x["seconds_to_apply_ready"] is not None for x in o),
                       box_contains_truth_rate=float(np.mean([x["box_contains_truth"] for x in o])),
                       median_mass_width_kg=_median([x["mass_width_kg"] for x in o]),
                       median_com_width_m=_median([x["com_width_m"] for x in o]))
    return out


def table(cases: list[dict]) -> list[dict]:
    """The comparison table: one row per case, the two methods side by side."""
    rows = []
    for c in cases:
        row = {"payload": c["payload"], "seed": c["seed"]}
        for m in ("static_poses", "ours"):
            for k in ("mass_error_rel", "com_error_m", "seconds_of_motion", "seconds_to_usable"):
                row[f"{m}.{k}"] = c[m][k]
        row["ours.seconds_to_apply_ready"] = c["ours"]["seconds_to_apply_ready"]
        rows.append(row)
    return rows


def run_study(robot: str = "kinova_gen3", cases: int = 5, payloads=tuple(PAYLOADS), seed: int = 0,
              poses: int = POSES, workers: int = 1) -> dict:
    """``cases`` cases cycling through ``payloads`` (seeds ``seed``, ``seed + 1``, ...): the table,
    the medians and the settings."""
    payloads = list(payloads)
    unknown = [p for p in payloads if p not in PAYLOADS]
    if unknown or not payloads:
        raise ValueError(f"unknown payloads {unknown} (choose from {', '.join(PAYLOADS)})")
    args = [(robot, payloads[i % len(payloads)], seed + i, poses) for i in range(cases)]
    results = map_tasks(_run_case_args, args, workers)
    r = load_robot(robot)
    return {"robot": r.name, "sensing": "wrench" if r.sensing.wrench else "joint_torque",
            "usable_definition": {"mass_error_rel_below": MASS_TOLERANCE,
                                  "com_error_m_below": COM_TOLERANCE_M},
            "settings": {"poses": poses, "hold_s": HOLD_S, "settle_s": SETTLE_S, "update_period_s": UPDATE_PERIOD_S,
                         "trajectories": TRAJECTORIES, "trajectory_s": TRAJECTORY_S, "sensor_rate_hz": sensor_rate_hz(r),
                         "seed": seed, "payloads": payloads},
            "table": table(results), "summary": summarize(results), "cases": results}
