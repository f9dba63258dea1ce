"""Throughput of the regressor-builder core against bare pinocchio, in the same run."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..core.robot import model as robot_model
from ..core.robot.regressor import PayloadRegressor
from .timing import time_calls


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--samples", type=int, default=2000, help="samples per timing repeat")


def run(args) -> dict:
    robot = robot_model.load_robot(args.robot)
    rng = np.random.default_rng(0)
    n = robot.nv
    states = [(rng.uniform(robot.position_lower.clip(-3, 3), robot.position_upper.clip(-3, 3)),
               rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)) for _ in range(256)]
    core = PayloadRegressor(robot)
    data = robot.model.createData()
    has_wrench = core.frame_S is not None
    counter = iter(range(10**12))

    def builder_step():
        q, v, a, tau = states[next(counter) % 256]
        core.torque_rows(q, v, a, tau)
        if has_wrench:
            core.wrench_rows(q, v, a, tau[:6])

    def bare_step():
        q, v, a, _ = states[next(counter) % 256]
        pin.computeJointTorqueRegressor(robot.model, data, q, v, a)

    core_t = time_calls(builder_step, args.samples)
    bare_t = time_calls(bare_step, args.samples)
    return {
        "robot": robot.name,
        "rows_per_sample": n + (6 if has_wrench else 0),
        "builder_core_samples_per_s": core_t["calls_per_s_median"],
        "builder_core_samples_per_s_best": core_t["calls_per_s_best"],
        "pinocchio_joint_torque_regressor_samples_per_s": bare_t["calls_per_s_median"],
        "pinocchio_joint_torque_regressor_samples_per_s_best": bare_t["calls_per_s_best"],
        "ratio_builder_to_bare": core_t["calls_per_s_median"] / bare_t["calls_per_s_median"],
        "target_samples_per_s": 4000,
    }
