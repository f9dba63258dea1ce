"""Whole-robot identification speed: 7-DoF arm, 70 inertial + 28 friction parameters, SDP."""
from __future__ import annotations

import os
import time

import numpy as np

from ..core.robot import closed_chain as cc
from ..core.robot import model as robot_model
from ..core.identification import problem as P
from ..core.identification import solvers
from ..core.identification.synthetic import fourier_joint_motion, synthesize
from ..defaults import DEFAULT_SOLVER, SOLVERS


def add_arguments(parser) -> None:
    parser.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    parser.add_argument("--samples", type=int, default=10000, help="samples in the data set")
    parser.add_argument("--method", choices=SOLVERS, default=DEFAULT_SOLVER)


def run(args) -> dict:
    # one core, as the requirement states: BLAS threads then share it
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    robot = robot_model.load_robot(args.robot)
    chain = cc.chain_from_profile(robot.model, robot.spec)
    rotor = robot.spec.rotor_inertia
    layout = P.make_layout(chain, True, rotor)
    rng = np.random.default_rng(0)
    theta = layout.nominal.copy()
    theta[layout.n_inertial:] = np.tile([0.5, 1.0, 0.2, 0.1], chain.na)   # Fc, Fv, Ia, beta
    t = np.arange(args.samples) * 0.01
    center = np.clip(0.5 * (robot.position_lower + robot.position_upper), -1, 1)
    amplitude = np.minimum(1.0, 0.45 * (robot.position_upper - robot.position_lower))
    run_data = synthesize(chain, layout, theta, t, *fourier_joint_motion(t, center, amplitude, rng),
                          noise_rel=0.01, rng=rng)
    t0 = time.perf_counter()
    problem = P.build_problem(chain, layout, [run_data])
    t1 = time.perf_counter()
    estimate = solvers.solve(problem, args.method)
    t2 = time.perf_counter()
    eig = solvers.lmi_min_eigenvalues(layout, estimate.theta)
    return {
        "robot": robot.name,
        "samples": args.samples,
        "inertial_parameters": layout.n_inertial,
        "friction_parameters": layout.size - layout.n_inertial,
        "base_parameters": problem.base.rank,
        "method": args.method,
        "cpus_used": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "build_rows_s": t1 - t0,
        "solve_s": t2 - t1,
        "wall_time_s": t2 - t0,
        "target_wall_time_s": 10.0,
        "min_lmi_eigenvalue": min(eig.values()),
    }
