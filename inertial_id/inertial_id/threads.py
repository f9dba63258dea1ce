"""One thread per process for the numerical libraries' thread pools (BLAS, OpenMP).

The suite's numerics are many small products (information matrices of a few hundred rows, LPs of a
few hundred rows, 7x7 dynamics): a BLAS thread pool wakes its threads for each and costs more than it
saves. Measured on this project's 2-core machine with the default pool (two OpenBLAS threads):
``study plan --trials 2`` took 0.57 s CPU per plan (p50) against 0.17 s with one thread, and the
planner's budget is wall time, which the pool's wake-ups also eat. On a robot's computer the
nodes share the cores with the drivers and the controller, where spinning pool threads do harm.
A user who sets one of :data:`THREAD_VARIABLES` keeps that choice.
"""
from __future__ import annotations

import os
import sys

__all__ = ["THREAD_VARIABLES", "single_threaded_math"]

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_math() -> bool:
    """Limit this process's BLAS and OpenMP pools (those loaded now, through threadpoolctl, and
    those loaded later, through the environment, which child processes inherit too) to one
    thread. Nothing changes when the user set any of :data:`THREAD_VARIABLES`; returns whether
    the limit was applied."""
    if any(name in os.environ for name in THREAD_VARIABLES):
        return False
    os.environ.update({name: "1" for name in THREAD_VARIABLES})
    if "numpy" in sys.modules:
        # its BLAS is loaded with its pool sized already; one loaded later reads the environment
        # optional: threadpoolctl, whose import alone costs a command without numpy ~40 ms
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    return True
