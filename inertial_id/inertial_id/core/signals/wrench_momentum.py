"""Wrist F/T rows from the payload's momentum balance: no differentiated acceleration.

Newton–Euler in the world frame about the world origin (a fixed point, so no transport term):
``dh_W/dt = X*_WS f_S + f_g,W``, with ``h_W`` the payload's spatial momentum, ``f_S`` the wrench
the sensor exerts on the payload in the sensor frame ``S`` (what :meth:`~..robot.regressor.PayloadRegressor.wrench_rows`
equates to the reading) and ``f_g,W`` the gravity wrench. Over a window ``[t0, t1]`` of samples::

    (H(t1) - H(t0) - Q[G]) pi_P + Q[X*_WS] o = Q[X*_WS w_meas]

``H = X*_WS I_S(.) v_S`` and ``G = X*_WS I_S(.) [g_S; 0]`` are linear in the payload's 10 parameters
(pinocchio's ``bodyRegressor`` at zero velocity is the map ``u -> I u``), ``o`` is the sensor's zero
offset (``w_meas = f_S + o``) and ``Q[.]`` the trapezoid rule over the samples. Only poses and
velocities enter, so a velocity reversal costs no data.

Each row's bound (per component, ``|.|`` elementwise) is the sum of:

- sensor: ``Q[|X*_WS| e]``, ``e`` the per-sample bound of ``w_meas - f_S - o`` (stated noise bound
  plus ``model_error_N`` / ``model_error_Nm``, plus any interpolation bound of the reading);
- quadrature: the trapezoid rule is exact for an integrand linear between samples; what the true
  integrand does beyond that is taken, as the momentum rows of joint torques take their Euler sum,
  as a wrench within ``model_error_N`` / ``model_error_Nm`` at every sample, so the sensor term
  covers it. ``test_wrench_momentum`` checks this on exact trajectories within the profile's
  limits at its sample rate;
- velocity: the reported joint velocities are within ``velocity_rad_s`` of the truth (the
  profile's stated bound); through the sensor Jacobian this moves ``H`` at both ends of the window
  by at most ``sum_l velocity_rad_s max_pi |X*_WS Reg(J_S[:, l]) pi|`` over the prior box of payloads;
- drift: the offset moves at most ``offset_drift`` per second from the run's first sample (the
  profile's ``offset_drift_N_per_s`` / ``offset_drift_Nm_per_s``), ``Q[|X*_WS| drift (t - t_start)]``;
- acceleration steps (:func:`step_terms`): breakaway from rest, a contact or a controller's step makes
  the integrand jump, which the trapezoid rule pays as ``h / 2`` times the jump on the step that holds
  it. As for the wrench rows (:mod:`.acceleration_bound`, assumption 2), the joint acceleration is
  taken as jerk-limited (``limits.jerk``) plus at most one step of any size inside three sample steps,
  measured from the velocities: a step inside ``[t_j, t_j+1]`` is at most ``s = |d_j+1 - d_j-1| +
  L (h_j-1 / 2 + h_j + h_j+1 / 2) + 2 eps (1 / h_j-1 + 1 / h_j+1)`` (``d`` the steps' mean
  accelerations, ``eps`` the velocity bound), and moves the integrand by at most ``sum_l s_l max_pi
  |X*_WS Reg(J_S[:, l]) pi|`` (taken at both ends of the step, summed: the map moves little over a
  step). Coulomb friction steps twice where a joint reverses, so a step where a moving joint's velocity
  may touch zero (:func:`~.acceleration_bound.reversal_joints` on the samples around it) gives no rows,
  nor does a step without both neighbours. Without stated jerk and acceleration limits the steps are
  unbounded and a box of these rows is not guaranteed.

Joint positions are taken as exact: the encoder resolution's effect on the poses is part of the
per-sample model error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..robot import params
from ..robot.model import relative_placement
from .driver_streams import max_gap_s
from .acceleration_bound import reversal_joints
from .payload_wrench import box_deviation
from .sensors import NoiseModel

LOCAL = pin.ReferenceFrame.LOCAL


@dataclass
class WindowWrenchRows:
    """Six rows per window: ``A pi_P + O o = b`` within ``bound`` (N s, N m s, world frame about its origin)."""

    t: np.ndarray          # (windows,) closing time of each window, s
    A: np.ndarray          # (6 windows, 10) payload columns, payload frame
    O: np.ndarray          # (6 windows, 6) the offset's columns: the integrated wrench transform
    b: np.ndarray          # (6 windows,) integrated measured wrench
    bound: np.ndarray      # (6 windows,)


@dataclass
class SampleTerms:
    """Per sample ``k`` of ``N``: ``X[k]`` (6, 6) the wrench transform ``X*_WS``, ``H[k]`` and ``G[k]``
    (6, 10) momentum and gravity wrench as regressors of ``pi_P``, ``dH[k]`` (nv, 6, 10) the change of
    ``H`` per unit of each joint's velocity."""

    X: np.ndarray
    H: np.ndarray
    G: np.ndarray
    dH: np.ndarray


def trapezoid_weights(t) -> np.ndarray:
    """Weights ``c`` with ``sum_k c_k f(t_k)`` the trapezoid rule over the samples ``t``."""
    dt = np.diff(np.asarray(t, dtype=float))
    c = np.zeros(dt.size + 1)
    c[:-1] += 0.5 * dt
    c[1:] += 0.5 * dt
    return c


class WrenchMomentumRegressor:
    """The per-sample terms of the rows above for one robot's sensor frame (own pinocchio data)."""

    def __init__(self, robot):
        if robot.ft_frame_id is None:
            raise ValueError(f"profile '{robot.name}' declares no F/T sensor frame")
        self.model = robot.model
        self.data = robot.model.createData()
        self.frame_S = robot.ft_frame_id
        self.T_SP = params.transform_matrix(relative_placement(self.model, self.frame_S, robot.payload_frame_id))
        # I u = bodyRegressor(0, u) pi is linear in u: one (6, 60) matrix gives it for any motion u
        self._unit = np.stack([pin.bodyRegressor(pin.Motion.Zero(), pin.Motion(e)) for e in np.eye(6)]).reshape(6, 60)
        self.g_W = self.model.gravity.linear.copy()

    def inertia_times(self, u) -> np.ndarray:
        """``(..., 6, 10)``: ``I_S u`` as a regressor of ``pi_P``, for motions ``u`` ``(..., 6)`` in frame S."""
        u = np.asarray(u, dtype=float)
        return (u.reshape(-1, 6) @ self._unit).reshape(*u.shape[:-1], 6, 10) @ self.T_SP

    def terms(self, Q, QD) -> SampleTerms:
        """The terms of ``N`` states ``Q, QD`` ``(N, nv)`` (rad, rad/s)."""
        Q, QD = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(QD, dtype=float))
        N, nv = QD.shape
        X, v_S, g_S, J = np.empty((N, 6, 6)), np.empty((N, 6)), np.zeros((N, 6)), np.empty((N, 6, nv))
        model, data = self.model, self.data
        for k in range(N):
            pin.computeJointJacobians(model, data, Q[k])       # places the joints too
            oMs = pin.updateFramePlacement(model, data, self.frame_S)
            J[k] = pin.getFrameJacobian(model, data, self.frame_S, LOCAL)
            X[k] = oMs.toDualActionMatrix()
            g_S[k, :3] = oMs.rotation.T @ self.g_W
            v_S[k] = J[k] @ QD[k]
        dH = np.einsum("nij,nljk->nlik", X, self.inertia_times(J.transpose(0, 2, 1)))
        return SampleTerms(X, X @ self.inertia_times(v_S), X @ self.inertia_times(g_S), dH)


def velocity_share(dH, velocity_rad_s, prior_lower, prior_upper) -> np.ndarray:
    """``(6,)``: the largest change of ``H pi`` that joint velocity errors within ``velocity_rad_s``
    (a scalar, or one per joint) cause for any payload ``pi`` of the prior box (exact per joint: a
    linear function's extreme over a box). ``dH`` is also the integrand's change per unit of joint
    acceleration (:func:`step_terms`)."""
    rate = np.broadcast_to(np.asarray(velocity_rad_s, dtype=float), (dH.shape[0],))
    if not rate.any():
        return np.zeros(6)
    nv = dH.shape[0]
    per_joint = box_deviation(dH.reshape(nv * 6, 10), 0.0, prior_lower, prior_upper).reshape(nv, 6)
    return rate @ per_joint


@dataclass
class StepLimits:
    """What :func:`step_terms` rests on: the velocity bound (rad/s) and the profile's acceleration and
    jerk limits (nv,) (rad/s^2, rad/s^3), and the longest step of an unbroken stream (s)."""

    velocity_rad_s: float
    acceleration: np.ndarray
    jerk: np.ndarray
    max_step_s: float

    @classmethod
    def from_robot(cls, robot) -> StepLimits | None:
        """The robot's, None when it states no finite jerk or acceleration limit."""
        a, L = np.asarray(robot.acceleration_limit, dtype=float), np.asarray(robot.jerk_limit, dtype=float)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(L))):
            return None
        return cls(NoiseModel.from_profile(robot.spec).velocity_rad_s, a, L,
                   max_gap_s(robot.sensing.joint_states_hz))


def step_terms(terms: SampleTerms, t, qd, limits: StepLimits, prior_lower, prior_upper) -> tuple[np.ndarray, np.ndarray]:
    """``(usable, bound)`` per sample step ``[t_j, t_j+1]`` (``N - 1``): whether it may be integrated
    and the bound (6,) of the trapezoid's error from an acceleration step inside it (module
    docstring)."""
    t, qd = np.asarray(t, dtype=float), np.asarray(qd, dtype=float)
    h = np.diff(t)
    usable = np.zeros(h.size, dtype=bool)
    bound = np.zeros((h.size, 6))
    if h.size < 3:
        return usable, bound
    d = np.diff(qd, axis=0) / h[:, None]
    eps = limits.velocity_rad_s
    for j in range(1, h.size - 1):
        if np.any(h[j - 1:j + 2] > limits.max_step_s) or np.any(h[j - 1:j + 2] <= 0) or \
                reversal_joints(t[j - 1:j + 2], qd[j - 1:j + 2], eps, limits.acceleration).size or \
                reversal_joints(t[j:j + 3], qd[j:j + 3], eps, limits.acceleration).size:
            continue
        step = np.abs(d[j + 1] - d[j - 1]) + limits.jerk * (0.5 * h[j - 1] + h[j] + 0.5 * h[j + 1]) + \
            2.0 * eps * (1.0 / h[j - 1] + 1.0 / h[j + 1])
        jump = velocity_share(terms.dH[j], step, prior_lower, prior_upper) + \
            velocity_share(terms.dH[j + 1], step, prior_lower, prior_upper)
        bound[j] = 0.5 * h[j] * jump
        usable[j] = True
    return usable, bound


def window_rows(terms: SampleTerms, t, wrench, sample_bound, window: int, prior_lower, prior_upper,
                velocity_rad_s: float = 0.0, drift_per_s=None, max_step_s: float = np.inf,
                steps: tuple[np.ndarray, np.ndarray] | None = None) -> WindowWrenchRows:
    """Rows of consecutive windows of ``window`` steps (``window + 1`` samples; each window's last
    sample opens the next) from the samples' terms, times ``t`` (N,) s, readings ``wrench`` (N, 6)
    and their per-sample bounds ``sample_bound`` (N, 6) or (6,); see the module docstring. A window
    with a step longer than ``max_step_s`` (samples lost) gives no rows: the trapezoid's stated error
    holds at the stream's rate only. ``steps``: :func:`step_terms` of the samples; a window with a
    step not usable gives no rows, the others carry their steps' bounds (None: no acceleration step
    is taken to occur)."""
    t = np.asarray(t, dtype=float)
    w = np.asarray(wrench, dtype=float)
    e = np.broadcast_to(np.asarray(sample_bound, dtype=float), w.shape)
    if drift_per_s is not None:
        e = e + np.outer(t - t[0], np.asarray(drift_per_s, dtype=float))
    Xabs = np.abs(terms.X)
    ends = np.arange(window, t.size, window)
    long_step = np.concatenate([[False], np.diff(t) > max_step_s])
    step_bound = np.zeros((t.size, 6))          # row k: the step closing at sample k
    if steps is not None:
        long_step[1:] |= ~steps[0]
        step_bound[1:] = steps[1]
    closes = np.array([end for end in ends if not long_step[end - window + 1:end + 1].any()], dtype=int)
    A, O, b, bound = [], [], [], []
    for end in closes:
        k = slice(end - window, end + 1)
        c = trapezoid_weights(t[k])
        A.append(terms.H[end] - terms.H[end - window] - np.tensordot(c, terms.G[k], axes=1))
        O.append(np.tensordot(c, terms.X[k], axes=1))
        b.append(np.einsum("n,nij,nj->i", c, terms.X[k], w[k]))
        bound.append(np.einsum("n,nij,nj->i", c, Xabs[k], e[k]) + step_bound[end - window + 1:end + 1].sum(axis=0) +
                     velocity_share(terms.dH[end], velocity_rad_s, prior_lower, prior_upper) +
                     velocity_share(terms.dH[end - window], velocity_rad_s, prior_lower, prior_upper))
    if not closes.size:
        return WindowWrenchRows(np.zeros(0), np.zeros((0, 10)), np.zeros((0, 6)), np.zeros(0), np.zeros(0))
    return WindowWrenchRows(t[closes], np.vstack(A), np.vstack(O), np.concatenate(b), np.concatenate(bound))

