"""The Python API of inertial_id: the nodes' pipelines as functions, no ROS needed.

- :func:`payload_bounds`: joint states (and wrenches) as arrays in, payload estimate and bounds out;
- :func:`payload_bounds_from_bag`: the same from a rosbag2 (recorded rows or sensor streams);
- :func:`identify_robot`: recorded runs (folders or bags) in, the whole robot's inertial (and
  friction) parameters out.

Each runs exactly what the nodes and the ``estimate`` / ``identify`` commands run (the builder's
row formation, the estimator's update schedule, the whole-robot identification), so their results are
the same. Conventions (:mod:`inertial_id.core.robot.params`): per-body parameters in pinocchio order
``[m, m*cx, m*cy, m*cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the body frame's origin, SI units.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .core.robot.model import Robot, load_robot
from .core.data.data_io import Pipeline, Run, read_run
from .core.identification import plausible, problem as P, selection, solvers, validation
from .core.robot import closed_chain as cc, model as robot_model
from .core.offline import RowIntake, estimate_from_bag, rows_from_stream
from .defaults import BOUNDS_PERIOD_S, DEFAULT_SOLVER

__all__ = ["PayloadBounds", "RobotIdentification", "identify_robot", "load_robot", "payload_bounds",
           "payload_bounds_from_bag"]


@dataclass
class PayloadBounds:
    """A payload estimate and its interval per parameter, in the robot's payload frame ``frame``.

    ``bounds_guaranteed``: ``lower``/``upper`` contain the truth whenever every sensor error stays
    within the profile's stated bounds; ``data_consistent`` false: the data contradict those bounds
    (the box is frozen and proves nothing). ``history``: data time and interval after each update."""

    parameter_names: list
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    frame: str
    method: str
    bounds_guaranteed: bool
    data_consistent: bool
    physically_consistent: bool
    samples_used: int
    history: dict = field(default_factory=dict)

    def contains(self, params) -> np.ndarray:
        """Per parameter: whether ``params`` (e.g. a known payload) lies inside the interval."""
        params = np.asarray(params, dtype=float)
        return (self.lower <= params) & (params <= self.upper)

    def table(self) -> str:
        """The intervals as text, one parameter a line."""
        lines = [f"{'parameter':>10s} {'estimate':>11s} {'lower':>11s} {'upper':>11s}   "
                 f"({self.method}, frame {self.frame}, guaranteed: {self.bounds_guaranteed}, "
                 f"data consistent: {self.data_consistent})"]
        for name, x, lo, hi in zip(self.parameter_names, self.estimate, self.lower, self.upper):
            lines.append(f"{name.split('.')[-1]:>10s} {x:11.5f} {lo:11.5f} {hi:11.5f}")
        return "\n".join(lines)


def _robot(robot) -> Robot:
    return robot if isinstance(robot, Robot) else load_robot(robot)


def _bounds(robot: Robot, intake: RowIntake, result) -> PayloadBounds:
    h = intake.history
    return PayloadBounds(
        list(result.parameter_names), np.asarray(result.estimate), np.asarray(result.lower),
        np.asarray(result.upper), robot.payload_frame, result.method, bool(result.bounds_guaranteed),
        bool(result.data_consistent), bool(result.physically_consistent), int(result.samples_used),
        {"t_s": np.asarray(h.t), "lower": np.asarray(h.lower), "upper": np.asarray(h.upper),
         "estimate": np.asarray(h.estimate)})


def payload_bounds(robot, t_s, q_rad, qd_rad_s, tau_Nm=None, wrench=None, method: str | None = None,
                   bounds_period_s: float = BOUNDS_PERIOD_S) -> PayloadBounds:
    """Payload bounds from sensor samples as arrays, as the builder and estimator nodes compute them.

    ``robot``: a profile name (``"kinova_gen3"``, ``"xarm7"``), a profile YAML path or a
    :class:`~inertial_id.core.robot.model.Robot`. ``t_s`` (N,) increasing stamps; ``q_rad``, ``qd_rad_s``
    and ``tau_Nm`` (measured joint torques, for torque-sensing profiles) (N, n_joints) in the
    profile's joint order; ``wrench`` ``(t_s (M,), [force; torque] (M, 6))`` in the F/T sensor
    frame, for profiles with a wrist sensor. ``method``: default the profile's
    ``identification.method``."""
    robot = _robot(robot)
    intake = RowIntake(robot, method or robot.spec.identification.method, None, bounds_period_s)
    for message in rows_from_stream(robot, intake.estimator.kinds, t_s, q_rad, qd_rad_s, tau_Nm, wrench):
        intake.add(message)
    if not intake.accepted:
        raise ValueError("no rows could be formed from these samples (too few, or none the profile's checks accept)")
    return _bounds(robot, intake, intake.finish())


def payload_bounds_from_bag(bag, robot, method: str | None = None, source: str = "auto",
                            bounds_period_s: float = BOUNDS_PERIOD_S) -> PayloadBounds:
    """Payload bounds from a rosbag2 folder (MCAP or sqlite3): its recorded rows
    (``/regressor_samples``) or, without them or with ``source="samples"``, its joint states and
    wrenches; what ``inertial-id estimate --bag`` computes."""
    robot = _robot(robot)
    intake, result, _ = estimate_from_bag(bag, robot, method or robot.spec.identification.method,
                                          source, bounds_period_s=bounds_period_s)
    return _bounds(robot, intake, result)


@dataclass
class RobotIdentification:
    """A whole robot's identified parameters: ``parameters`` in ``parameter_names`` order (per body
    the 10 inertial parameters, then per joint ``[Fc, Fv, Ia, beta]`` with friction); ``links``
    per body: mass, what sets it (data, prior or none: not identified), COM, nominal values and, with
    ``lmi``, the plausibility bounds and whether the estimate is on one; torque RMS per joint on the training runs and on the
    held-out runs (empty without)."""

    method: str
    parameter_names: list
    parameters: np.ndarray
    links: dict
    train_rms_Nm: dict
    validation_rms_Nm: dict


def _chain(model: str):
    """(closed chain, rotor inertias) of a profile name, profile YAML or URDF path."""
    if str(model).endswith(".urdf"):
        return cc.ClosedChain(robot_model.build_model_from_urdf(model)), {}
    robot = robot_model.load_robot(model)
    return cc.chain_from_profile(robot.model, robot.spec), robot.spec.rotor_inertia


def identify_robot(model: str, runs, validate=(), method: str = DEFAULT_SOLVER, friction: bool = False,
                   regularization_weight: float | None = 0.0, cutoff_hz: float | None = None) -> RobotIdentification:
    """Identify a whole robot from recorded runs, as ``inertial-id identify`` does.

    ``model``: a built-in model, a profile (``"kinova_gen3"``, ``"digit_leg"``, closed chains too) or a
    URDF path. ``runs`` / ``validate``: run folders (``t.csv``, ``q.csv``, ``qd.csv``, ``tau.csv``),
    rosbag2 folders, or :class:`~inertial_id.core.data.data_io.Run` objects built from arrays.
    ``method``: ``ls``, ``wls``, ``irls`` or ``lmi`` (physically consistent SDP);
    ``regularization_weight`` (lmi): weight of the pull toward the nominal inertials, ``None``
    to choose it on held-out parts of ``runs``; with ``lmi`` each link also stays within its
    plausibility bounds (``plausible.link_bounds``). ``cutoff_hz``: zero-phase low-pass (default none)."""
    chain, rotor = _chain(model)
    pipeline = Pipeline(cutoff_hz)
    train = [pipeline.apply(r if isinstance(r, Run) else read_run(r)) for r in runs]
    held_out = [pipeline.apply(r if isinstance(r, Run) else read_run(r)) for r in validate]
    layout = P.make_layout(chain, friction, rotor)
    problem = P.build_problem(chain, layout, train, [])
    plausibility = None
    if method == "lmi":
        bounds = plausible.link_bounds(chain.model, layout)
        weight = regularization_weight
        if weight is None:
            weight = selection.select_weight(problem, bounds)["weight"]
        plausibility = solvers.Plausibility(weight, bounds)
    estimate = solvers.solve(problem, method, solvers.DEFAULT_LMI_MARGIN, plausibility)
    theta = np.asarray(estimate.theta)
    joints = list(chain.actuated_joints)
    rms = lambda rows: dict(zip(joints, validation.torque_rms(rows, theta, chain.na).tolist()))  # noqa: E731
    return RobotIdentification(
        estimate.method, list(layout.names), theta,
        plausible.link_report(problem, theta, plausibility.bounds if plausibility else None,
                              prior=bool(plausibility and plausibility.weight)),
        rms(problem.rows), rms(P.build_rows(chain, layout, held_out)) if held_out else {})
