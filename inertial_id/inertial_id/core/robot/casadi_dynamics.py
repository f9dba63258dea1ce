"""Inverse dynamics and the joint-torque regressor of a pinocchio model as CasADi SX graphs.

The pinocchio wheels carry no CasADi bindings, and IPOPT needs the planner's cost as a graph to get
exact derivatives. This is the recursive Newton-Euler algorithm in pinocchio's conventions (each
body's velocity, acceleration and force in its joint frame, motions ``[linear; angular]``, gravity
as the base accelerating by ``-model.gravity``, dynamic parameters ``[m, m c, I_xx, I_xy, I_yy,
I_xz, I_yz, I_zz]`` about the joint frame's origin), read from the model's kinematic tree: joint
placements, joint axes, inertias, armature. One-degree-of-freedom revolute and prismatic joints
(every shipped arm). Checked against ``pin.rnea`` and ``pin.computeJointTorqueRegressor`` by
``test/core/robot/test_casadi_dynamics.py``.
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin


def _skew(u):
    return ca.vertcat(ca.horzcat(0, -u[2], u[1]), ca.horzcat(u[2], 0, -u[0]), ca.horzcat(-u[1], u[0], 0))


def _joint_kind(joint) -> tuple[str, np.ndarray]:
    """('R' or 'P', unit axis in the joint frame) of a one-dof joint, from its motion subspace."""
    if joint.nq != 1 or joint.nv != 1:
        raise ValueError(f"{joint.shortname()}: only one-coordinate joints are supported")
    jdata = joint.createData()
    joint.calc(jdata, np.zeros(1))
    S = np.asarray(jdata.S).reshape(6)
    linear, angular = S[:3], S[3:]
    if np.linalg.norm(linear) < 1e-12 and abs(np.linalg.norm(angular) - 1.0) < 1e-12:
        return "R", angular
    if np.linalg.norm(angular) < 1e-12 and abs(np.linalg.norm(linear) - 1.0) < 1e-12:
        return "P", linear
    raise ValueError(f"{joint.shortname()}: neither a revolute nor a prismatic joint")


class CasadiDynamics:
    """The kinematic tree of a ``pinocchio.Model``, constant; SX expressions of its dynamics."""

    def __init__(self, model: pin.Model):
        self.nv = model.nv
        self.bodies = model.njoints - 1
        self.parents = [model.parents[j] for j in range(1, model.njoints)]
        self.placements = [(np.array(model.jointPlacements[j].rotation), np.array(model.jointPlacements[j].translation))
                           for j in range(1, model.njoints)]
        self.kinds = [_joint_kind(model.joints[j]) for j in range(1, model.njoints)]
        self.parameters = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
        self.armature = np.array(model.armature, dtype=float)
        self.gravity = np.array(model.gravity.linear, dtype=float)

    def _joint_transform(self, k, q):
        """(R, p): pose of body k's joint frame in its parent's joint frame at joint coordinate q."""
        R0, p0 = self.placements[k]
        kind, u = self.kinds[k]
        if kind == "R":
            K = _skew(u)
            return ca.mtimes(R0, ca.DM.eye(3) + ca.sin(q) * K + (1 - ca.cos(q)) * ca.mtimes(K, K)), ca.DM(p0)
        return ca.DM(R0), ca.DM(p0) + ca.mtimes(R0, ca.DM(u)) * q

    def rnea_parameters(self, q, v, a, pi):
        """Joint torques (nv,) of bodies with dynamic parameters ``pi`` (10 * bodies,), without armature."""
        vel: list[tuple] = []
        acc: list[tuple] = []
        force: list[tuple] = []
        for k in range(self.bodies):
            R, p = self._joint_transform(k, q[k])
            kind, u = self.kinds[k]
            S_lin, S_ang = (ca.DM.zeros(3), ca.DM(u)) if kind == "R" else (ca.DM(u), ca.DM.zeros(3))
            parent = self.parents[k] - 1
            if parent < 0:
                v_lin, v_ang = ca.DM.zeros(3), ca.DM.zeros(3)
                a_lin, a_ang = ca.DM(-self.gravity), ca.DM.zeros(3)
            else:
                (v_lin, v_ang), (a_lin, a_ang) = vel[parent], acc[parent]
            # the parent's motion seen in this joint's frame (SE3 inverse action)
            v_lin, v_ang = ca.mtimes(R.T, v_lin - ca.cross(p, v_ang)), ca.mtimes(R.T, v_ang)
            a_lin, a_ang = ca.mtimes(R.T, a_lin - ca.cross(p, a_ang)), ca.mtimes(R.T, a_ang)
            vj_lin, vj_ang = S_lin * v[k], S_ang * v[k]
            v_lin, v_ang = v_lin + vj_lin, v_ang + vj_ang
            # v x (S qd) (motion cross product) + S qdd
            a_lin = a_lin + ca.cross(v_ang, vj_lin) + ca.cross(v_lin, vj_ang) + S_lin * a[k]
            a_ang = a_ang + ca.cross(v_ang, vj_ang) + S_ang * a[k]
            vel.append((v_lin, v_ang))
            acc.append((a_lin, a_ang))
            force.append(self._body_force(pi[10 * k:10 * k + 10], (v_lin, v_ang), (a_lin, a_ang)))
        tau: list = [None] * self.bodies      # every entry set by the backward pass
        for k in reversed(range(self.bodies)):
            f, n = force[k]
            kind, u = self.kinds[k]
            tau[k] = ca.dot(ca.DM(u), n if kind == "R" else f)
            parent = self.parents[k] - 1
            if parent >= 0:
                R, p = self._joint_transform(k, q[k])
                f_p = ca.mtimes(R, f)
                force[parent] = (force[parent][0] + f_p, force[parent][1] + ca.mtimes(R, n) + ca.cross(p, f_p))
        return ca.vertcat(*tau)

    @staticmethod
    def _body_force(pi, velocity, acceleration):
        """(f, n) = I a + v x* (I v), I the spatial inertia of parameters ``pi`` about the frame origin."""
        m, h = pi[0], pi[1:4]
        inertia = ca.vertcat(ca.horzcat(pi[4], pi[5], pi[7]), ca.horzcat(pi[5], pi[6], pi[8]),
                             ca.horzcat(pi[7], pi[8], pi[9]))

        def apply(lin, ang):
            return m * lin - ca.cross(h, ang), ca.mtimes(inertia, ang) + ca.cross(h, lin)
        (v_lin, v_ang), (a_lin, a_ang) = velocity, acceleration
        f_a, n_a = apply(a_lin, a_ang)
        f_v, n_v = apply(v_lin, v_ang)
        return f_a + ca.cross(v_ang, f_v), n_a + ca.cross(v_ang, n_v) + ca.cross(v_lin, f_v)

    def rnea(self, q, v, a):
        """Joint torques (nv,) of the model's own inertias and armature (``pin.rnea``)."""
        return self.rnea_parameters(q, v, a, ca.DM(self.parameters)) + ca.DM(self.armature) * a

    def regressor(self, q, v, a):
        """(nv, 10 * bodies) ``pin.computeJointTorqueRegressor``: torques are linear in the parameters,
        so the Jacobian of :meth:`rnea_parameters` with respect to them is the regressor, exactly."""
        pi = ca.SX.sym("pi", 10 * self.bodies)
        Y = ca.jacobian(self.rnea_parameters(q, v, a, pi), pi)
        return ca.substitute(Y, pi, ca.DM.zeros(10 * self.bodies))

    def functions(self) -> tuple[ca.Function, ca.Function]:
        """``(rnea(q, v, a), regressor(q, v, a))`` as CasADi Functions of SX graphs."""
        q, v, a = (ca.SX.sym(name, self.nv) for name in ("q", "v", "a"))
        return (ca.Function("rnea", [q, v, a], [self.rnea(q, v, a)]),
                ca.Function("regressor", [q, v, a], [self.regressor(q, v, a)]))
