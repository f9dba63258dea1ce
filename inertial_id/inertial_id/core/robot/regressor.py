"""Linear-in-parameters measurement models (regressors), built on pinocchio.

Functions follow pinocchio's style: ``(model, data, q, v, a)`` in, arrays out; ``data`` is scratch.
Parameter order is pinocchio's (see :mod:`inertial_id.core.robot.params`); gravity is ``model.gravity``.

Sign conventions:
- joint torque rows: ``tau = Y(q, v, a) @ pi`` is the torque the actuators apply (RNEA).
- wrench rows: ``w_S = [f; n] = A @ pi_S`` is the wrench, in the sensor frame S and about its
  origin, that the sensor exerts on the body rigidly attached beyond it (so that body accelerates
  against gravity). ``pi_S`` is the body's parameter vector expressed in S.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from . import params
from .model import relative_placement

LOCAL = pin.ReferenceFrame.LOCAL


def joint_torque_regressor(model: pin.Model, data: pin.Data, q, v, a) -> np.ndarray:
    """Whole-robot regressor ``(nv, 10*(njoints-1))``: ``tau = Y @ concat(pi_1..pi_n)``, each body's
    parameters in its joint frame (pinocchio's ``computeJointTorqueRegressor``). Rotor inertia is
    not in it: it is the ``Ia`` friction column (pinocchio's RNEA adds ``model.armature * a``)."""
    return pin.computeJointTorqueRegressor(model, data, q, v, a).copy()


def friction_regressor(v, a) -> np.ndarray:
    """``(nv, 4*nv)`` block-diagonal friction columns ``[sign(qd), qd, qdd, 1]`` per joint."""
    v = np.asarray(v, dtype=float)
    a = np.asarray(a, dtype=float)
    n = v.size
    Y = np.zeros((n, 4 * n))
    idx = np.arange(n)
    Y[idx, 4 * idx] = np.sign(v)
    Y[idx, 4 * idx + 1] = v
    Y[idx, 4 * idx + 2] = a
    Y[idx, 4 * idx + 3] = 1.0
    return Y


def friction_torque(phi_friction, v, a) -> np.ndarray:
    """Friction torque (N m) of parameters ``[Fc, Fv, Ia, beta]`` per joint at velocity ``v`` and acceleration ``a``."""
    return friction_regressor(v, a) @ np.asarray(phi_friction, dtype=float)


def frame_wrench_regressor(model: pin.Model, data: pin.Data, frame_id: int) -> np.ndarray:
    """6x10 regressor of the wrench ``[f; n]`` (frame coordinates, about its origin) needed to move a
    body rigidly attached to ``frame_id``, gravity included.

    Requires ``pin.rnea(model, data, q, v, a)`` on ``data`` beforehand: its forward pass leaves the
    joint velocities in ``data.v`` and the accelerations with gravity folded in (base accelerating
    upwards at -g) in ``data.a_gf``.
    """
    frame = model.frames[frame_id]
    v_F = frame.placement.actInv(data.v[frame.parentJoint])
    a_F = frame.placement.actInv(data.a_gf[frame.parentJoint])
    return pin.bodyRegressor(v_F, a_F)


def wrench_regressor(a_bar, w, alpha) -> np.ndarray:
    """6x10 wrench regressor from sensor-frame kinematics, pinocchio parameter order.

    ``a_bar = a - g`` is the classical linear acceleration of the frame origin minus gravity, ``w`` the
    angular velocity and ``alpha`` the angular acceleration, all in the sensor frame (the form used
    with a Kalman-filtered F/T pose by point-mass discretization, :mod:`.pmd`). Equal to :func:`frame_wrench_regressor`.
    """
    w = np.asarray(w, dtype=float)
    # pinocchio's spatial acceleration is a_classical - w x v; with v = 0 at the frame origin the
    # classical and spatial linear accelerations coincide, so use v_F = (0, w).
    return pin.bodyRegressor(pin.Motion(np.zeros(3), w),
                             pin.Motion(np.asarray(a_bar, dtype=float), np.asarray(alpha, dtype=float)))


class PayloadRegressor:
    """Rows of the payload measurement models at one state, sharing one kinematics pass.

    Holds the constant pieces (frame ids, 10x10 parameter transforms) and its own ``Data``.
    Payload parameters ``pi_P`` are in the payload frame P.
    """

    def __init__(self, robot):
        self.robot = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self.frame_P = robot.payload_frame_id
        self.frame_S = robot.ft_frame_id
        if self.frame_S is not None:
            # pi_S = T_SP pi_P
            self.T_SP = params.transform_matrix(relative_placement(self.model, self.frame_S, self.frame_P))

    def torque_rows(self, q, v, a, tau_measured_Nm):
        """(Y_P, b): ``Y_P @ pi_P = tau_measured - tau_robot(q, v, a)`` with the known robot model on
        the right side (``(nv, 10)`` and ``(nv,)``)."""
        model, data = self.model, self.data
        tau_robot = pin.rnea(model, data, q, v, a)
        J = pin.computeFrameJacobian(model, data, q, self.frame_P, LOCAL)
        A = frame_wrench_regressor(model, data, self.frame_P)
        return J.T @ A, np.asarray(tau_measured_Nm, dtype=float) - tau_robot

    def wrench_rows(self, q, v, a, wrench_S):
        """(A, w): ``A @ pi_P = w_S``, the 6 rows of the wrist sensor in its own frame."""
        pin.rnea(self.model, self.data, q, v, a)
        A_S = frame_wrench_regressor(self.model, self.data, self.frame_S)
        return A_S @ self.T_SP, np.asarray(wrench_S, dtype=float)

    def sensor_jacobian(self, q) -> np.ndarray:
        """``(6, nv)`` Jacobian of the sensor frame's spatial velocity ``[v; w]`` in its own coordinates:
        an error ``da`` of the joint accelerations moves the frame acceleration the wrench rows use
        by ``J @ da``."""
        return pin.computeFrameJacobian(self.model, self.data, q, self.frame_S, LOCAL)

    def wrench_acceleration_sensitivity(self) -> np.ndarray:
        """``(6, 6, 10)``: ``C[l] @ pi_P`` is the change of the 6 wrench rows per unit of the sensor
        frame's spatial acceleration along axis ``l`` (``[linear xyz, angular xyz]``). Constant: the
        rows are affine in that acceleration (``I a + v x* I v``)."""
        zero = pin.Motion.Zero()
        return np.stack([pin.bodyRegressor(zero, pin.Motion(np.eye(6)[l])) @ self.T_SP for l in range(6)])

    def sensor_kinematics(self) -> np.ndarray:
        """``[a(3), w(3), alpha(3), g(3)]`` of the sensor frame, in its coordinates, for the state of
        the last :meth:`wrench_rows` call: classical linear acceleration without gravity, angular
        velocity, angular acceleration, and gravity."""
        frame = self.model.frames[self.frame_S]
        j = frame.parentJoint
        v_S = frame.placement.actInv(self.data.v[j])
        a_gf_S = frame.placement.actInv(self.data.a_gf[j])     # spatial acceleration of a base at -g
        pin.updateGlobalPlacements(self.model, self.data)        # RNEA leaves only the local placements
        R_WS = self.data.oMi[j].rotation @ frame.placement.rotation
        g_S = R_WS.T @ self.model.gravity.linear
        a_S = a_gf_S.linear + np.cross(v_S.angular, v_S.linear) + g_S
        return np.concatenate([a_S, v_S.angular, a_gf_S.angular, g_S])
