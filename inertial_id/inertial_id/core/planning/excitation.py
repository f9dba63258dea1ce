"""How much a plan teaches about the payload: information of the payload parameters, accumulated
over plans.

``W_e(q, qd, qdd)`` is the payload block of the joint-torque regressor (pinocchio's
``computeJointTorqueRegressor``: the columns of the payload's body, mapped to the payload frame), so
``tau_payload = W_e theta_e``. Each row is divided by the bound the guaranteed estimator puts on
that joint's torque error there (:meth:`PayloadExcitation.row_bound`, at the torque of the nominal
robot carrying the prior-centre payload): the profile's ``noise:``, ``relative |tau| + absolute``
plus the model error; with a robot calibration, the calibrated window bound as a mean torque plus
the relative error on the torque beyond the calibrated range (what :class:`~..signals.momentum.MomentumWindows`
charges). The LP bounds are set by how far a payload change moves a row compared with that row's
bound, so a newton metre on a lightly loaded joint says more than one on a joint that already
carries the robot's own weight, or one beyond the torques the calibration measured.

With torque sensing the estimator's momentum rows also carry the robot's own parameters as unknowns
inside their box (one unknown shared by every row; the payload's columns are those of the last link;
:func:`~..robot.robot_box.estimator_robot_box`, whose parameters a calibration fixes but for the
joints' torque offsets): the rows then hold the columns of the robot's free parameters too, and the payload's information is what remains once those
are marginalised with the box as their prior information (Schur complement). A motion whose payload
torques the robot's own uncertain parameters could equally explain teaches little.

Objective (minimised): ``-log det(S F S + I) + MASS_WEIGHT * log [(S F S + I)^-1]_mm`` with ``F``
the payload information of ``F_prev + sum_k A(t_k)^T A(t_k) dt`` over samples of the plan and ``S =
diag(half-widths of the current payload box)``. In those units the box is the unit cube, and ``I`` is
what the box itself already says (each parameter known to within its half-width): information along
a direction the box has pinned down adds little to it, along the box's widest directions it adds
most. (Without the box's own term, ``S`` would only shift the cost by ``-2 sum log s``: every plan
would rank as if the box were not there.) The second term is the (scaled) variance of the mass. Why the mass
term: the guaranteed mass interval comes from gravity torques on the wrist-side joints at a few
poses (LP duals of the plan study), and when the estimator's LP was re-solved offline for 100
candidate poses added to the home pose, the mass width did not follow the log det (Spearman -0.05
and +0.16) but did follow the mass variance (+0.31 and +0.44, 4 lb and 8 lb). The seed's own measure, ``cond(W_e)`` of the
stacked rows at N_s samples (unscaled, no weights), is reported beside it.

The planner's optimiser evaluates the same cost, with its derivatives, as a CasADi graph
(:mod:`.plan_nlp`); ``test_planning_gradient.py`` checks the two agree.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robot import params
from ..calibration import calibration_of, momentum_window
from ..robot.robot_box import estimator_robot_box
from ..signals.momentum import torque_error_bound
from ..signals.sensors import NoiseModel

# the current box as information, in scaled units (rows / their error bound, columns * box
# half-width): one unit per parameter (module docstring); it also keeps log det finite while the
# plans' information is still rank deficient
BOX_INFORMATION = 1.0
# weight of the log mass variance beside the log det (see the module docstring); plan study, seed
# 100, 20 trials: 10 and 30 both give mass no wider than random in 60 % and cond ratio 0.63
MASS_WEIGHT = 10.0
# N m: the row weights take |tau| as sqrt(tau^2 + WEIGHT_SMOOTHING_NM^2) (at most this much above it):
# |tau| has a kink wherever a joint torque crosses zero, and a cost with kinks at some of its 224
# samples kept IPOPT from converging (Gen3 rest requests: 300 iterations without, about 30 with)
WEIGHT_SMOOTHING_NM = 1.0


class PayloadExcitation:
    """Payload regressor rows along a plan, with scratch data of its own (not thread-shared)."""

    def __init__(self, robot):
        self.model = robot.model
        self.data = robot.model.createData()
        frame = robot.model.frames[robot.payload_frame_id]
        j = frame.parentJoint
        self.cols = slice(10 * (j - 1), 10 * j)
        self.T_JP = params.transform_matrix(frame.placement)          # pi_joint = T_JP pi_payload
        noise = NoiseModel.from_profile(robot.spec)
        self.torque_relative, self.torque_absolute_Nm = noise.torque_relative, noise.torque_absolute_Nm
        self.model_error_Nm = float(robot.spec.noise.model_error_Nm)
        lower, upper = robot.payload_prior()
        self.payload_guess = 0.5 * (np.asarray(lower, float) + np.asarray(upper, float))
        # a joint without a stated error still has one: never divide by zero
        self.floor_Nm = 1e-3 * float(np.min(robot.torque_limit))
        momentum = robot.sensing.joint_torque and robot.momentum_window_samples > 0
        # with a calibration (momentum rows): its window bound as a mean torque (N m), and the
        # torque up to which it was measured (N m), per joint
        self.calibrated_Nm: np.ndarray | None = None
        self.torque_range_Nm: np.ndarray | None = None
        calibration = calibration_of(robot)
        if momentum and calibration is not None:
            window = calibration.window(momentum_window(robot, calibration))
            self.calibrated_Nm = np.asarray(window["bound_Nm_s"], dtype=float) / float(window["duration_s"])
            self.torque_range_Nm = calibration.torque_range()
        # momentum rows keep the robot's own parameters as unknowns inside their box (shared by
        # every row): the columns of those the box leaves free join the information, with the box
        # as prior information
        self.robot_prior = None
        self.robot_free = np.zeros(0, dtype=int)
        if momentum:
            _, lo_r, hi_r = estimator_robot_box(robot)
            half = 0.5 * (hi_r - lo_r)
            self.robot_free = np.flatnonzero(half > 0)
            self.robot_prior = np.diag(half[self.robot_free] ** -2.0)
        self.size = 10 + self.robot_free.size
        self.bodies = robot.model.njoints - 1
        # a scratch model for the payload columns' derivatives (its bodies get any parameters)
        self._scratch = pin.Model(self.model)
        self._scratch_data = self._scratch.createData()

    def row_bound(self, tau, per_joint=np.asarray):
        """The estimator's error bound (N m) on the joint torques ``tau`` (N m): numpy (N, nv), or a
        CasADi column (nv, 1) with ``per_joint=casadi.DM``, which makes the per-joint constants a
        column. Its kinks smoothed by WEIGHT_SMOOTHING_NM: ``|tau|`` as ``sqrt(tau^2 + e^2)``, and
        with a calibration the excess beyond its range, ``max(0, x)``, as ``(x + sqrt(x^2 + e^2)) / 2``."""
        e2 = WEIGHT_SMOOTHING_NM ** 2
        magnitude = (tau * tau + e2) ** 0.5
        if self.calibrated_Nm is None:
            return torque_error_bound(magnitude, self.torque_relative, self.torque_absolute_Nm) + self.model_error_Nm
        excess = magnitude - per_joint(self.torque_range_Nm)
        return per_joint(self.calibrated_Nm) + self.torque_relative * 0.5 * (excess + (excess * excess + e2) ** 0.5)

    def row_weights(self, tau_robot, W) -> np.ndarray:
        """(N, nv) 1 / the error bound of each joint torque row (:meth:`row_bound`), from the
        nominal robot's torque ``tau_robot`` (N, nv) plus the prior-centre payload's (rows ``W``
        (N, nv, 10))."""
        return 1.0 / np.maximum(self.row_bound(tau_robot + W @ self.payload_guess), self.floor_Nm)

    def column_derivatives(self, q, qd, qdd) -> np.ndarray:
        """(10, 3, nv, nv): ``d W_e[:, c] / d(q, qd, qdd)`` at one state for each payload column ``c``
        (payload frame), every joint row: a robot whose payload body carries the parameters of column
        ``c`` less the same robot without them (every body shifted by a mass large enough to stay a
        valid inertia); torques being linear in the parameters, the difference is exact."""
        model, data = self._scratch, self._scratch_data
        from_parameters = pin.Inertia.FromDynamicParameters
        shift = np.zeros(10)
        shift[0] = 1.0 + 2.0 * np.abs(self.T_JP).max()
        for b in range(self.bodies):
            model.inertias[b + 1] = from_parameters(shift)
        base = np.stack(pin.computeRNEADerivatives(model, data, q, qd, qdd))     # stack: a copy of data's
        out = np.empty((10, 3, self.model.nv, self.model.nv))
        payload_body = self.cols.start // 10 + 1
        for c in range(10):
            model.inertias[payload_body] = from_parameters(shift + self.T_JP[:, c])
            out[c] = np.stack(pin.computeRNEADerivatives(model, data, q, qd, qdd)) - base
        return out

    def robot_torque(self, q, qd, qdd) -> np.ndarray:
        """(N, nv) inverse dynamics of the nominal robot without payload."""
        return np.array([pin.rnea(self.model, self.data, q[k], qd[k], qdd[k]) for k in range(len(q))])

    def weighted_information(self, A, w, dt) -> np.ndarray:
        """``sum (w A)^T (w A) dt`` of rows ``A`` (N, nv, p) with weights ``w`` (N, nv)."""
        Aw = (A * w[:, :, None]).reshape(-1, A.shape[-1])
        return Aw.T @ Aw * dt

    def _regressor(self, q, qd, qdd) -> np.ndarray:
        """(N, nv, 10 * bodies) joint torque regressor of the robot's bodies at N states."""
        model, data = self.model, self.data
        return np.array([pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k]) for k in range(len(q))])

    def _payload_rows(self, Y) -> np.ndarray:
        """(N, nv, 10) ``W_e`` (payload frame) of a :meth:`_regressor` ``Y``."""
        return Y[:, :, self.cols] @ self.T_JP

    def rows(self, q, qd, qdd) -> np.ndarray:
        """Stacked ``W_e`` (len(q) * nv, 10), unweighted, payload frame."""
        return self._payload_rows(self._regressor(q, qd, qdd)).reshape(-1, 10)

    def weighted_rows(self, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows ``A`` (N, nv, size): ``W_e`` then, with momentum rows, the columns of the robot's
        free parameters (``robot_free`` of: bodies, then ``Fc sign(qd) + Fv qd + Ia qdd + beta`` per
        joint, the order of :func:`~..params.robot_parameters`); the payload-free torque (N, nv); row
        weights (N, nv)."""
        Y = self._regressor(q, qd, qdd)
        W = self._payload_rows(Y)
        tau = self.robot_torque(q, qd, qdd)
        w = self.row_weights(tau, W)
        if self.robot_prior is None:
            return W, tau, w
        N, n = qd.shape
        friction = np.zeros((N, n, n, 4))
        joints = np.arange(n)
        friction[:, joints, joints] = np.stack([np.sign(qd), qd, qdd, np.ones_like(qd)], axis=-1)
        return np.concatenate([W, np.concatenate([Y, friction.reshape(N, n, 4 * n)], axis=-1)[..., self.robot_free]],
                              axis=-1), tau, w

    def no_information(self) -> np.ndarray:
        """The information before any plan (``size`` square zeros)."""
        return np.zeros((self.size, self.size))

    def payload_information(self, F_total) -> np.ndarray:
        """The (10, 10) information about the payload alone, the robot's parameters marginalised
        (Schur complement, with the robot's box as their prior information)."""
        if self.robot_prior is None:
            return F_total
        F_ee, F_er = F_total[:10, :10], F_total[:10, 10:]
        F_rr = F_total[10:, 10:] + self.robot_prior
        return F_ee - F_er @ np.linalg.solve(F_rr, F_er.T)

    def cost(self, F_total, half_width, mass_weight: float | None = None) -> float:
        """:func:`scaled_cost` of the payload information in ``F_total`` (``size`` square)."""
        return scaled_cost(self.payload_information(F_total), half_width,
                           MASS_WEIGHT if mass_weight is None else mass_weight)

    def information(self, plan, samples: int, until_s: float | None = None) -> np.ndarray:
        """``sum A^T A dt`` (weighted :meth:`weighted_rows`, ``size`` square) over ``samples``
        midpoints of [0, until_s] (default: T)."""
        T = plan.duration_s if until_s is None else min(until_s, plan.duration_s)
        dt = T / samples
        t = (np.arange(samples) + 0.5) * dt
        A, _, w = self.weighted_rows(*plan.evaluate(t))
        return self.weighted_information(A, w, dt)

    def condition_number(self, plan, samples: int) -> float:
        """The safe-identification paper's excitation cost: cond of the stacked ``W_e`` at ``samples`` uniform samples of [0, T]."""
        t = np.linspace(0.0, plan.duration_s, samples)
        return float(np.linalg.cond(self.rows(*plan.evaluate(t))))


def scaled_cost(F_total, half_width, mass_weight: float = MASS_WEIGHT) -> float:
    """``-log det(S F S + I) + mass_weight * log [(S F S + I)^-1]_mm``, ``S = diag(half_width)``
    (module docstring)."""
    s = np.asarray(half_width, dtype=float)
    M = F_total * np.outer(s, s) + BOX_INFORMATION * np.eye(len(s))
    sign, logdet = np.linalg.slogdet(M)
    if sign <= 0:
        return float("inf")
    if not mass_weight:
        return float(-logdet)
    e0 = np.zeros(len(s))
    e0[0] = 1.0
    mass_variance = float(np.linalg.solve(M, e0)[0])
    return float(-logdet + mass_weight * np.log(mass_variance)) if mass_variance > 0 else float("inf")
