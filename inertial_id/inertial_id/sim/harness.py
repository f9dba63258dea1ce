"""The guarantee tested on MuJoCo: a payload carried along an exciting trajectory by an arm with
friction, its sensor samples through the offline estimation path, the box scored against the truth.

One case (:class:`Case`): the robot on :class:`~.engine.MujocoSimulator` with a payload (mass,
centre of mass, principal moments along tilted axes), the joint physics of a real arm (armature,
viscous damping, Coulomb friction), sensor errors within the profile's stated bounds (uniform,
Gaussian clipped at 3 sigma, or the worst constant bias), tracking a seeded Fourier excitation
about the profile's home. The samples, at the driver's rate, go where ``estimate --bag`` sends
recorded samples: :func:`~inertial_id.core.offline.rows_from_stream` (pairing, differentiation,
rows with their stated bounds) into :class:`~inertial_id.core.offline.RowIntake` (the estimator
node's checks, schedule and estimator). Only the samples cross over: the estimator reads nothing of
the engine.

Scored per case: per parameter containment of the truth, width, point error; the guaranteed and
consistent flags; a **silent wrong answer** is a box labelled guaranteed and consistent that misses
the truth on some parameter. And the rows themselves: the true payload's residual ``A pi - b``
against each row's stated bound, split into the sensor's part (reading minus true wrench) and the
model part (the rest: differentiated acceleration, encoder quantization, interpolation), near a
joint velocity reversal and away from one. And what the stated bounds allow at best: the same rows
with every error zero, through the estimator (:func:`error_free_box`) and as the width no sound box
beats (:func:`~..core.estimators.run_floor.run_floor_kg`). On wrench rows, whose whole truth a case
knows (the payload, the F/T offset), also the floor of the rows as recorded: every sound box on
them holds its two witnesses, so a box narrower than it is wrong for the errors the case had even
where it holds the truth (``boxes_below_recorded_floor``).

An arm that senses joint torque (the Gen3) is estimated as a user would: calibrated first
(:func:`with_calibrations`: ``calibrate`` on payload-free runs of the same engine and the same
sensor), then the case's estimator names that calibration. The calibrated guarantee assumes that
the run's torque sensor errs as it did in the calibration runs (a constant bias the calibration
never saw is an error its bound does not cover), so the calibration runs carry the cases' sensor
errors, the worst bias with the same signs (one sensor per study).

``inertial-id study sim`` runs :func:`study_cases` (or the fixed :func:`default_cases`,
:func:`stress_cases`, :func:`sweep_cases`) and prints :func:`table` and :func:`summary`.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..core.calibration.apply import robot_naming_calibration
from ..core.calibration.build import calibrate
from ..core.data.data_io import Run
from ..core.estimators.run_floor import RECORDED_FLOOR_TOLERANCE, has_wrench_rows, run_floor_kg, wrench_floor_kg
from ..core.fanout import map_tasks
from ..core.offline import RowIntake, rows_from_stream
from ..core.robot import params
from ..core.robot.model import load_robot
from ..core.robot.regressor import PayloadRegressor
from ..core.signals.acceleration_bound import acceleration_share
from ..core.signals.sensors import NoiseModel
from ..core.trajectory import check_limits, excitation_amplitude_rad, fourier_excitation
from .engine import MujocoSimulator
from .errors import SensorErrors
from .mjcf import JointPlant, payload_from_principal
from .momentum_wrench_score import momentum_wrench_score, summary as momentum_wrench_summary

# a row is "at a reversal" when a joint's true velocity changes sign within this time of its sample
REVERSAL_WINDOW_S = 0.05
XARM7_DAMPING = (10.0, 10.0, 5.0, 5.0, 2.0, 2.0, 2.0)     # N m s/rad, the public xArm description's
CALIBRATION_SEED = 90_000          # trajectory and noise seeds of the payload-free calibration runs


@dataclass(frozen=True)
class Case:
    """One simulated run (module docstring). Payload parameters in the profile's payload frame."""

    name: str
    robot: str = "xarm7"
    mass_kg: float = 1.5
    com_m: tuple = (0.02, -0.01, 0.08)
    principal_kgm2: tuple = (0.004, 0.006, 0.008)
    principal_rpy_rad: tuple = (0.3, -0.2, 0.5)
    distribution: str = "gaussian_clipped"        # none | uniform | gaussian_clipped | bias
    armature_kgm2: float | tuple = 0.1
    damping_Nms_rad: float | tuple = XARM7_DAMPING
    frictionloss_Nm: float | tuple = 1.0
    duration_s: float = 20.0
    trajectory_seed: int = 0
    noise_seed: int = 0
    wrench_offset: tuple = (0.0,) * 6
    wrench_drift_per_s: tuple = (0.0,) * 6
    wrench_lag_s: float = 0.0
    bias_signs: tuple | None = None              # the worst bias's signs (6 wrench axes, then joints); None: drawn
    calibration: str | None = None               # a calibration file the estimator's robot names
    method: str | None = None                    # default: the profile's identification.method
    rate_hz: float | None = None                 # joint states and wrench sampled at this rate (None: the driver's)
    extra: dict = field(default_factory=dict)    # free notes carried into the result


def default_cases() -> list[Case]:
    """Ten xArm7 cases with a 1.5 kg payload (COM offset, tilted principal axes), Coulomb friction
    1 N m, damping, armature 0.1: three each of uniform, clipped-Gaussian and worst-bias errors at the
    stated bounds over other trajectories, and one without friction for reference."""
    cases = []
    for dist in ("uniform", "gaussian_clipped", "bias"):
        for k in range(3):
            cases.append(Case(f"{dist}-{k}", distribution=dist, trajectory_seed=k, noise_seed=100 + k))
    cases.append(Case("no-friction", distribution="gaussian_clipped", frictionloss_Nm=0.0, trajectory_seed=0,
                      noise_seed=100))
    return cases


def sweep_cases(n: int, first_seed: int = 10) -> list[Case]:
    """``n`` more cases like :func:`default_cases` (friction, 1.5 kg), the error distribution cycling
    uniform / clipped Gaussian / worst bias, each over its own trajectory and noise seed."""
    kinds = ("uniform", "gaussian_clipped", "bias")
    return [Case(f"sweep-{kinds[k % 3]}-{first_seed + k}", distribution=kinds[k % 3], trajectory_seed=first_seed + k,
                 noise_seed=1000 + first_seed + k) for k in range(n)]


def stress_cases() -> list[Case]:
    """Cases whose sensors break the stated assumptions (the honest outcome is a flag, or the truth
    inside anyway): an untared F/T offset beyond the bound, a drifting one, the driver's filter lag;
    and a heavier payload with worst-bias errors."""
    return [
        Case("offset-1N", wrench_offset=(1.0, -0.6, 0.4, 0.03, -0.02, 0.01), noise_seed=200),
        Case("drift", wrench_drift_per_s=(0.02, 0.01, -0.02, 0.0005, 0.0, -0.0005), noise_seed=201),
        Case("lag-10ms", wrench_lag_s=0.01, noise_seed=202),
        Case("2.5kg-bias", mass_kg=2.5, com_m=(0.03, 0.02, 0.12), principal_kgm2=(0.012, 0.018, 0.01),
             distribution="bias", trajectory_seed=3, noise_seed=203),
    ]


def study_cases(robot_name: str, n: int, seed: int = 0, duration_s: float = 20.0) -> list[Case]:
    """``n`` cases across the robot's payload range: mass uniform over 0.3 kg .. 60 % of the prior's
    largest, the centre of mass up to 6 cm off the flange axis and 2..14 cm out, the principal moments of
    a solid ellipsoid of that mass (semi-axes 2..8 cm) with axes tilted at random, the error distribution cycling uniform / clipped
    Gaussian / worst bias (one sensor: the bias signs drawn once), a constant F/T offset drawn within
    the profile's stated box (the estimator does not know it), each over its own Fourier trajectory."""
    robot = load_robot(robot_name)
    rng = np.random.default_rng(seed)
    signs = tuple(float(x) for x in rng.choice([-1.0, 1.0], 6 + robot.nv))
    offset_box = NoiseModel.from_profile(robot.spec).wrench_offset_bound()
    top = 0.6 * float(robot.payload_prior()[1][0])
    kinds = ("uniform", "gaussian_clipped", "bias")
    cases = []
    for k in range(n):
        m = float(rng.uniform(0.3, top))
        a, b, c = rng.uniform(0.02, 0.08, 3)                    # semi-axes of a solid ellipsoid, m
        principal = tuple(float(x) for x in m / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b]))
        com = (*rng.uniform(-0.06, 0.06, 2), rng.uniform(0.02, 0.14))
        cases.append(Case(f"{robot_name}-{k}", robot=robot_name, mass_kg=m, com_m=tuple(float(c) for c in com),
                          principal_kgm2=principal, principal_rpy_rad=tuple(float(a) for a in rng.uniform(-np.pi, np.pi, 3)),
                          distribution=kinds[k % 3], duration_s=duration_s, trajectory_seed=seed * 1000 + k,
                          noise_seed=seed * 1000 + 500 + k, bias_signs=signs,
                          wrench_offset=tuple(float(o) for o in rng.uniform(-1.0, 1.0, 6) * offset_box)))
    return cases


def payload_free(case: Case, k: int) -> Case:
    """Calibration run ``k`` for ``case``'s arm and sensor: no payload (a 1 mg point), another
    trajectory and noise seed."""
    return replace(case, name=f"{case.robot}-calibration-{case.distribution}-{k}", mass_kg=1e-6, com_m=(0.0, 0.0, 0.01),
                   principal_kgm2=(1e-10,) * 3, principal_rpy_rad=(0.0,) * 3, wrench_offset=(0.0,) * 6,
                   trajectory_seed=CALIBRATION_SEED + 2 * k, noise_seed=CALIBRATION_SEED + 2 * k + 1, calibration=None)


def with_calibrations(cases, folder, runs: int = 2) -> list[Case]:
    """``cases`` whose arm senses joint torque, each naming a calibration from ``runs`` payload-free
    runs of its own arm and sensor (:func:`payload_free`; one per distinct arm and sensor), written
    into ``folder``; other cases as they are."""
    out, made = [], {}
    senses_torque = {name: load_robot(name).sensing.joint_torque for name in {c.robot for c in cases}}
    for case in cases:
        if not senses_torque[case.robot]:
            out.append(case)
            continue
        key = asdict(payload_free(case, 0))
        key = tuple(sorted((k, str(v)) for k, v in key.items()))
        if key not in made:
            recorded = [simulate(payload_free(case, k)) for k in range(runs)]
            robot = recorded[0][0]
            cal = calibrate(robot, [Run(f"calibration-{k}", r.t, r.q, r.qd, r.tau)
                                    for k, (_, _, r, _) in enumerate(recorded)])
            path = Path(folder) / f"calibration-{len(made)}.yaml"
            cal.write(path)
            made[key] = str(path)
        out.append(replace(case, calibration=made[key]))
    return out


def summary(results) -> dict:
    """The study's figures: silent wrong answers, guaranteed and consistent cases, median mass width
    and median relative point mass error; with every error zero, the median mass width of the
    estimator's box (:func:`error_free_box`) and of what no sound box beats
    (:func:`~..core.estimators.run_floor.run_floor_kg`), and the median of each case's width over
    its floor; what the force rows' bound is made of (medians over the cases of
    :func:`row_errors`' ``force_bound_N``)."""
    widths = [r["width"][0] for r in results]
    mass_errors = [abs(r["point_error"][0]) / r["truth"][0] for r in results]
    error_free = [r["error_free_width"][0] for r in results if r.get("error_free_width")]
    floors = [r["sound_mass_width_floor_kg"] for r in results if r.get("sound_mass_width_floor_kg") is not None]
    ratios = [r["width_over_floor"] for r in results if r.get("width_over_floor") is not None]
    trusted = [r["sound_mass_width_floor_offset_box_trusted_kg"] for r in results
               if r.get("sound_mass_width_floor_offset_box_trusted_kg") is not None]
    recorded = [r["width_over_recorded_floor"] for r in results if r.get("width_over_recorded_floor") is not None]
    return {"cases": len(results), "silent_wrong_answers": sum(r["silent_wrong_answer"] for r in results),
            "guaranteed_and_consistent": sum(r["bounds_guaranteed"] and r["data_consistent"] for r in results),
            "contain_truth": sum(r["all_inside"] for r in results),
            "median_mass_width_kg": float(np.median(widths)) if widths else float("nan"),
            "median_relative_mass_error": float(np.median(mass_errors)) if mass_errors else float("nan"),
            # the same rows with every error zero (wrench rows): the estimator's box, and what no sound box beats
            "median_error_free_mass_width_kg": float(np.median(error_free)) if error_free else float("nan"),
            "median_sound_mass_width_floor_kg": float(np.median(floors)) if floors else float("nan"),
            # the figure of merit: how far above what the stated bounds allow each case's box is
            "median_width_over_floor": float(np.median(ratios)) if ratios else float("nan"),
            # the floor were the F/T offset's stated box trusted, not checked: what the check costs
            "median_sound_mass_width_floor_offset_box_trusted_kg": float(np.median(trusted)) if trusted else float("nan"),
            # the floor of the rows as recorded, which every sound box on them is at least: a box
            # below it leaves out a payload that explains them, whether or not it holds the truth
            "cases_with_recorded_floor": len(recorded),
            "boxes_below_recorded_floor": sum(x < 1.0 - RECORDED_FLOOR_TOLERANCE for x in recorded),
            "min_width_over_recorded_floor": float(min(recorded)) if recorded else float("nan"),
            **{f"median_force_row_{k}_N": float(np.median([r["rows"]["force_bound_N"][k] for r in results]))
               if results else float("nan") for k in ("noise", "acceleration_share")},
            **momentum_wrench_summary(results)}


def exciting_trajectory(robot, duration_s: float, seed: int):
    """The profile's Fourier excitation (period, harmonics, amplitudes about ``sim.home``) with
    coefficients drawn from ``seed``, shrunk until its samples pass the joint limits."""
    ex = robot.spec.excitation
    home = np.asarray(robot.spec.sim.home, dtype=float)
    amp = excitation_amplitude_rad(robot)
    for _ in range(40):
        traj = fourier_excitation(home, amp, ex.period_s, ex.harmonics, duration_s, ex.sample_hz, seed)
        if check_limits(traj, robot.position_lower, robot.position_upper, robot.velocity_limit,
                        robot.acceleration_limit).ok:
            return traj
        amp = 0.9 * amp
    raise RuntimeError("no excitation within the joint limits")


def sampled_at(robot, rate_hz: float | None):
    """``robot`` whose joint states and wrench come at ``rate_hz`` instead of the driver's rate (None:
    unchanged): what the rows' bounds would be with a faster stream. The rate must divide the
    simulator's step rate."""
    if rate_hz is None:
        return robot
    step_hz = float(robot.spec.sim.step_hz)
    if not (rate_hz > 0 and abs(step_hz / rate_hz - round(step_hz / rate_hz)) < 1e-9):
        raise ValueError(f"a sample rate of {rate_hz:g} Hz does not divide the simulator's {step_hz:g} Hz steps")
    rates = {"joint_states_hz": float(rate_hz)}
    if robot.sensing.wrench:
        rates["wrench_hz"] = float(rate_hz)
    return robot.with_profile(sensing=robot.sensing.model_copy(update=rates))


def simulate(case: Case):
    """``(robot, pi_true, recording, simulator)`` of one case."""
    robot = sampled_at(load_robot(case.robot), case.rate_hz)
    pi_true = payload_from_principal(case.mass_kg, case.com_m, case.principal_kgm2, case.principal_rpy_rad)
    plant = JointPlant.make(robot.nv, case.armature_kgm2, case.damping_Nms_rad, case.frictionloss_Nm)
    errors = SensorErrors.at_profile_bounds(robot, case.distribution, wrench_offset=tuple(case.wrench_offset),
                                            wrench_drift_per_s=tuple(case.wrench_drift_per_s),
                                            wrench_lag_s=case.wrench_lag_s, bias_signs=case.bias_signs)
    cfg = robot.spec.sim
    sim = MujocoSimulator(robot, pi_true, float(cfg.step_hz), cfg.kp, cfg.kd, cfg.ki, errors,
                          case.noise_seed, plant=plant)
    traj = exciting_trajectory(robot, case.duration_s, case.trajectory_seed)
    sim.command(traj)
    rec = sim.record(case.duration_s + 0.5)
    return robot, pi_true, rec, sim


def estimate(robot, rec, method: str | None = None):
    """``(result, intake, rows, counts)``: the recording's samples through ``rows_from_stream`` into
    ``RowIntake``, as ``estimate --bag`` takes recorded samples (the wrench stamped like the joint
    states, as the xArm's driver does)."""
    method = method or robot.spec.identification.method
    intake = RowIntake(robot, method)
    counts: dict = {}
    tau = rec.tau if robot.sensing.joint_torque else None
    wrenches = (rec.t, rec.wrench) if robot.sensing.wrench else None
    rows = []
    for m in rows_from_stream(robot, intake.estimator.kinds, rec.t, rec.q, rec.qd, tau, wrenches, counts=counts):
        intake.add(m)
        rows.append(m)
    return intake.finish(), intake, rows, counts


def error_free_box(robot, rows, pi_true, offset, method: str | None = None):
    """``(lower, upper)`` the estimator gives on the same wrench rows with each observation replaced
    by the true payload's wrench plus the true F/T offset ``offset`` (6,): every error zero, a
    realization the stated bounds admit; the box is then the stated bounds', not the errors'. None
    without wrench rows."""
    wrench = [m for m in rows if m.kind == "wrench"]
    if not wrench:
        return None
    intake = RowIntake(robot, method or robot.spec.identification.method)
    for m in wrench:
        intake.add(replace(m, b=((m.A @ pi_true).reshape(m.samples, 6) + np.asarray(offset)).ravel()))
    r = intake.finish()
    return np.asarray(r.lower), np.asarray(r.upper)


def reversal_times(rec) -> np.ndarray:
    """Times (s) at which some joint's true velocity changes sign between two samples."""
    v = rec.qd_true
    k = np.flatnonzero(np.any(v[1:] * v[:-1] < 0, axis=1))
    return 0.5 * (rec.t[k] + rec.t[k + 1])


def _sample_index(rec, rows_b: np.ndarray, t_guess: np.ndarray) -> np.ndarray:
    """Index in ``rec`` of each sample whose measured wrench is ``rows_b`` (samples, 6): the wrench
    is stamped like the joint states, so the row's right side is the recorded reading itself;
    where it is not found (a builder that changed it), the nearest stamp to ``t_guess``."""
    lookup: dict[bytes, list] = {}
    for k, w in enumerate(np.ascontiguousarray(rec.wrench)):
        lookup.setdefault(w.tobytes(), []).append(k)
    near = np.clip(np.searchsorted(rec.t, t_guess - 1e-9), 0, rec.t.size - 1)
    found = [lookup.get(np.ascontiguousarray(b).tobytes(), [n]) for b, n in zip(rows_b, near)]
    return np.array([min(ks, key=lambda k: abs(k - n)) for ks, n in zip(found, near)])


def row_errors(robot, rec, rows, pi_true) -> dict:
    """The true payload's wrench-row residuals against the rows' stated bounds (``noise_bound`` as
    the builder sends it, before any share the estimator adds): per row ``|A pi_true - b| / bound``;
    the model part ``|A pi_true - w_true|`` (N, N m: what the differentiated acceleration, encoder
    quantization and interpolation cost), at a reversal and elsewhere; the rows beyond their bound.

    ``force_bound_N``: what the force rows' guaranteed bound is made of, medians over the rows: the
    stated sensor and model part (``noise``) and the share the differentiated acceleration's error
    bound adds for the true payload (``acceleration_share``: the least the estimator can add, its box
    holding the truth), beside the largest model error actually met (``model_error_max``)."""
    rate = float(robot.sensing.joint_states_hz)
    reversals = reversal_times(rec)
    sensitivity = PayloadRegressor(robot).wrench_acceleration_sensitivity() if robot.sensing.wrench else None
    out = {"rows": 0, "beyond_bound": 0, "beyond_bound_at_reversal": 0, "max_ratio": 0.0,
           "max_model_error_force_N": {"at_reversal": 0.0, "elsewhere": 0.0},
           "max_model_error_torque_Nm": {"at_reversal": 0.0, "elsewhere": 0.0},
           "worst": None}
    noise_N, share_N = [], []
    for m in rows:
        if m.kind != "wrench":
            continue
        noise_N.append(m.noise_bound.reshape(m.samples, 6)[:, :3])
        if m.acceleration_bound is not None:
            share = acceleration_share(sensitivity, pi_true, pi_true, m.acceleration_bound)
            share_N.append(share.reshape(m.samples, 6)[:, :3])
        b = m.b.reshape(m.samples, 6)
        idx = _sample_index(rec, b, m.t - (m.samples - 1 - np.arange(m.samples)) / rate)
        t_samples = rec.t[idx]
        r = (m.A @ pi_true - m.b).reshape(m.samples, 6)
        bound = m.noise_bound.reshape(m.samples, 6)
        model = (m.A @ pi_true).reshape(m.samples, 6) - rec.wrench_true[idx]
        ratio = np.abs(r) / bound
        near = (np.min(np.abs(t_samples[:, None] - reversals[None, :]), axis=1) <= REVERSAL_WINDOW_S
                if reversals.size else np.zeros(m.samples, dtype=bool))
        out["rows"] += r.size
        out["beyond_bound"] += int((ratio > 1.0).sum())
        out["beyond_bound_at_reversal"] += int((ratio[near] > 1.0).sum())
        for key, cols in (("max_model_error_force_N", slice(0, 3)), ("max_model_error_torque_Nm", slice(3, 6))):
            for label, sel in (("at_reversal", near), ("elsewhere", ~near)):
                if sel.any():
                    out[key][label] = max(out[key][label], float(np.abs(model[sel, cols]).max()))
        i = int(np.argmax(ratio.max(axis=1)))
        if ratio[i].max() > out["max_ratio"]:
            out["max_ratio"] = float(ratio[i].max())
            dt = float(np.min(np.abs(reversals - t_samples[i]))) if reversals.size else float("inf")
            out["worst"] = {"t_s": float(t_samples[i]), "residual": r[i].tolist(), "bound": bound[i].tolist(),
                            "model_error": model[i].tolist(), "to_nearest_reversal_s": dt}
    out["force_bound_N"] = {
        "noise": float(np.median(np.concatenate(noise_N))) if noise_N else float("nan"),
        "acceleration_share": float(np.median(np.concatenate(share_N))) if share_N else float("nan"),
        "model_error_max": max(out["max_model_error_force_N"].values())}
    return out


def differentiation_errors(robot, rec, pi_true) -> dict:
    """What a central difference of the recorded velocities at the driver's rate costs, independent
    of the row builder: per sample the acceleration error ``|a_cd - qdd_true|`` (rad/s^2) and the
    true payload's wrench-row error ``|A(q, qd, a_cd) pi - w_true|`` (N, N m) with the measured
    positions and velocities, at a reversal (within ``REVERSAL_WINDOW_S``) and elsewhere."""
    if rec.wrench_true is None:
        return {}
    reg = PayloadRegressor(robot)
    reversals = reversal_times(rec)
    h = rec.t[2:] - rec.t[:-2]
    a_cd = (rec.qd[2:] - rec.qd[:-2]) / h[:, None]
    k = np.arange(1, rec.t.size - 1)
    err = np.empty((k.size, 6))
    for n, i in enumerate(k):
        A, _ = reg.wrench_rows(rec.q[i], rec.qd[i], a_cd[n], np.zeros(6))
        err[n] = A @ pi_true - rec.wrench_true[i]
    acc = np.abs(a_cd - rec.qdd_true[k]).max(axis=1)
    near = (np.min(np.abs(rec.t[k][:, None] - reversals[None, :]), axis=1) <= REVERSAL_WINDOW_S
            if reversals.size else np.zeros(k.size, dtype=bool))
    out = {}
    for label, sel in (("at_reversal", near), ("elsewhere", ~near)):
        out[label] = {"samples": int(sel.sum()),
                      "max_acceleration_error_rad_s2": float(acc[sel].max()) if sel.any() else 0.0,
                      "max_force_error_N": float(np.abs(err[sel, :3]).max()) if sel.any() else 0.0,
                      "max_torque_error_Nm": float(np.abs(err[sel, 3:]).max()) if sel.any() else 0.0}
    return out


def run_case(case: Case) -> dict:
    """Simulate, estimate and score one case (module docstring)."""
    t0 = time.perf_counter()
    robot, pi_true, rec, sim = simulate(case)
    t_sim = time.perf_counter() - t0
    if case.calibration:
        robot = robot_naming_calibration(robot, case.calibration)
    r, intake, rows, counts = estimate(robot, rec, case.method)
    t_est = time.perf_counter() - t0 - t_sim
    lower, upper, x = np.asarray(r.lower), np.asarray(r.upper), np.asarray(r.estimate)
    inside = (pi_true >= lower) & (pi_true <= upper)
    silent = bool(r.bounds_guaranteed and r.data_consistent and not inside.all())
    tracking = np.abs(rec.q_true - rec.q_desired).max(axis=0)
    error_free = error_free_box(robot, rows, pi_true, case.wrench_offset, case.method)
    floor = run_floor_kg(robot, intake.estimator, rows, pi_true, case.wrench_offset)
    trusted = run_floor_kg(robot, intake.estimator, rows, pi_true, case.wrench_offset, trust_offset_box=True) \
        if has_wrench_rows(rows) else floor
    recorded = wrench_floor_kg(robot, rows, pi_true, case.wrench_offset, recorded=True) if floor else None
    return {
        "case": case.name, "settings": asdict(case), "parameter_names": params.parameter_names("payload"),
        "truth": pi_true.tolist(), "estimate": x.tolist(), "lower": lower.tolist(), "upper": upper.tolist(),
        "inside": inside.tolist(), "all_inside": bool(inside.all()), "width": (upper - lower).tolist(),
        "point_error": (x - pi_true).tolist(), "bounds_guaranteed": bool(r.bounds_guaranteed),
        "error_free_width": None if error_free is None else (error_free[1] - error_free[0]).tolist(),
        "sound_mass_width_floor_kg": floor,
        "width_over_floor": None if not floor else float((upper[0] - lower[0]) / floor),
        "sound_mass_width_floor_offset_box_trusted_kg": trusted,
        "recorded_floor_kg": recorded,
        "width_over_recorded_floor": None if not recorded else float((upper[0] - lower[0]) / recorded),
        "data_consistent": bool(r.data_consistent), "silent_wrong_answer": silent, "message": r.message,
        "samples_used": int(r.samples_used), "messages_dropped": dict(intake.dropped), "sample_counts": counts,
        "rows": row_errors(robot, rec, rows, pi_true), "reversals": int(reversal_times(rec).size),
        "central_difference": differentiation_errors(robot, rec, pi_true),
        "max_tracking_error_rad": tracking.tolist(), "wall_simulate_s": t_sim, "wall_estimate_s": t_est,
        "momentum_wrench": momentum_wrench_score(robot, rec, pi_true, case.wrench_offset),
    }


def run_cases(cases, workers: int = 1) -> list[dict]:
    """:func:`run_case` of each case (``workers`` > 1: in parallel processes)."""
    if workers <= 1:
        return [run_case(c) for c in cases]
    return map_tasks(run_case, list(cases), workers=workers)


def table(results) -> str:
    """One line per case: flags, mass interval and width, mass and COM errors, containment, rows."""
    lines = [f"{'case':18s} {'guar':>4s} {'cons':>4s} {'in':>3s} {'silent':>6s} {'mass [kg] lower..upper':>24s} "
             f"{'width':>7s} {'floor':>7s} {'w/f':>5s} {'m err':>8s} {'miss':>14s} {'used':>5s} {'rows>bd':>7s} {'@rev':>5s} "
             f"{'rows modelF rev/else N':>22s} {'cd modelF rev/else N':>21s}"]
    for res in results:
        lo, hi, names = res["lower"][0], res["upper"][0], res["parameter_names"]
        missed = ",".join(n.split(".")[1] for n, ok in zip(names, res["inside"]) if not ok) or "-"
        rw = res["rows"]
        mf = rw["max_model_error_force_N"]
        cd = res.get("central_difference") or {}
        cd_rev, cd_else = (cd.get(k, {}).get("max_force_error_N", float("nan")) for k in ("at_reversal", "elsewhere"))
        lines.append(f"{res['case']:18s} {'y' if res['bounds_guaranteed'] else 'N':>4s} "
                     f"{'y' if res['data_consistent'] else 'N':>4s} {'y' if res['all_inside'] else 'N':>3s} "
                     f"{'YES' if res['silent_wrong_answer'] else '-':>6s} {lo:11.4f}..{hi:<11.4f} "
                     f"{hi - lo:7.4f} {res['sound_mass_width_floor_kg'] or float('nan'):7.4f} "
                     f"{res['width_over_floor'] or float('nan'):5.2f} {res['point_error'][0]:+8.4f} {missed:>14s} {res['samples_used']:5d} "
                     f"{rw['beyond_bound']:7d} {rw['beyond_bound_at_reversal']:5d} "
                     f"{mf['at_reversal']:11.3f}/{mf['elsewhere']:<10.3f} {cd_rev:10.3f}/{cd_else:<10.3f}")
    s = summary(results)
    lines.append(f"{s['silent_wrong_answers']} silent wrong answers in {s['cases']} cases; "
                 f"{s['guaranteed_and_consistent']} guaranteed and consistent; {s['contain_truth']} contain the truth")
    if s["cases_with_recorded_floor"]:
        lines.append(f"{s['boxes_below_recorded_floor']} boxes narrower than the floor of their rows as recorded, in "
                     f"{s['cases_with_recorded_floor']} cases with one (width over it: {s['min_width_over_recorded_floor']:.3f} at least)")
    return "\n".join(lines)
