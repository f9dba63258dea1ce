"""PMD solve time (the point-mass-discretization cone program) for K samples and n points, one core.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

import time

import numpy as np

from ..core.robot.model import load_robot
from ..studies import pmd as study
from ..core.pmd.objects import bench_object
from ..core.pmd.shapes import Box, sample_points
from ..core.pmd.solver import PmdProblem


def add_arguments(parser) -> None:
    parser.add_argument("--samples", type=int, default=150, help="K, samples per solve")
    parser.add_argument("--repeats", type=int, default=30, help="solves timed")


def run(args) -> dict:
    # a 20 x 10 x 5 cm box at 0.04 points/cm^3: the paper's n = 56
    p_S = sample_points(Box((0.20, 0.10, 0.05)), 0.04)
    obj = bench_object("Hammer")
    motion = study.wrist_motion(load_robot("xarm7"), 1.0, args.samples)
    rng = np.random.default_rng(0)
    samples = study.measured_samples(motion, obj.pi_S, study.NOISE_LEVELS["moderate"], rng, args.samples)
    problem = PmdProblem(p_S)
    problem.estimate(samples)   # first solve compiles the cvxpy problem; solves after it reuse it
    total, solve = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        static, full = problem.normal_equations(samples)
        t1 = time.perf_counter()
        problem.solve(static, full)
        t2 = time.perf_counter()
        total.append(t2 - t0)
        solve.append(t2 - t1)
    return {"samples": args.samples, "points": len(p_S),
            "pmd_total_p50_s": float(np.median(total)), "pmd_socp_p50_s": float(np.median(solve)),
            "pmd_total_max_s": float(np.max(total)), "target_p50_s": 0.100}
