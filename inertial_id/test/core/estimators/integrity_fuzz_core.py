"""Random extreme rows through the core estimator API (run in a subprocess by
test_integrity_core.py, so that a crash of a native solver fails the test instead of pytest).

``python integrity_fuzz_core.py ROBOT METHOD ROWS SEED`` prints one JSON line: rows fed, rows the
estimator refused, bounds updates, exceptions by type, and the invariant violations found (box
not ordered, NaN bounds, a guaranteed box that widened)."""
import json
import sys
from collections import Counter

import numpy as np

from inertial_id.core.estimators.consistent import SolverFailure
from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.robot.model import load_robot

# what the estimator node catches and counts (nodes/estimator.py NUMERICAL_FAILURES)
NUMERICAL = (np.linalg.LinAlgError, FloatingPointError, ArithmeticError, SolverFailure)
EXTREMES = np.array([0.0, 5e-324, -5e-324, 1e-310, 1e-300, -1e-200, 1e-120, 1e-60, 1e-20, 1e-9, 1.0, -1.0,
                     1e6, 1e9, 1e12, -1e13, 1e15, 1e20, 1e300, -1e300, np.nan, np.inf, -np.inf])


def extreme(rng, shape, p: float):
    """Ordinary values over six decades, each replaced by an extreme one with probability ``p``."""
    x = rng.normal(size=shape) * 10.0 ** rng.uniform(-3, 3, size=shape)
    mask = rng.random(shape) < p
    x[mask] = rng.choice(EXTREMES, size=int(mask.sum()))
    return x


def main(robot_name: str, method: str, rows: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    robot = load_robot(robot_name)
    est = make_estimator(robot, method)
    kind = est.kinds[0]
    cols = len(est.column_names)
    fed = updates = 0
    errors: Counter = Counter()
    violations: list[str] = []
    guaranteed_box = None
    while fed < rows:
        # whole samples (6 wrench rows, one torque row per joint) or windows (one row per joint),
        # now and then not
        per = 6 if kind == "wrench" else robot.nv
        n = per * int(rng.integers(1, 3)) if rng.random() < 0.95 else int(rng.integers(1, 2 * per))
        p = rng.choice([0.0, 0.02, 0.2, 1.0])
        A, b = extreme(rng, (n, cols), p), extreme(rng, n, p)
        e = np.abs(extreme(rng, n, p)) * rng.choice([1.0, -1.0], p=[0.95, 0.05])
        sigma = np.abs(extreme(rng, n, p))
        kinematics = extreme(rng, 2 * n, p) if est.needs_kinematics else None
        try:
            est.add(kind, A, b, e, sigma, int(rng.integers(0, 500)), kinematics)
        except NUMERICAL as exc:
            errors[f"add:{type(exc).__name__}"] += 1
        fed += n
        if rng.random() < 0.15 or fed >= rows:
            updates += 1
            try:
                est.update_bounds()
                r = est.result()
            except NUMERICAL as exc:
                errors[f"update:{type(exc).__name__}"] += 1
                continue
            lo, hi = np.asarray(r.lower), np.asarray(r.upper)
            if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
                violations.append(f"box not ordered or NaN after {fed} rows")
            if r.bounds_guaranteed:
                if guaranteed_box is not None and (np.any(lo < guaranteed_box[0]) or np.any(hi > guaranteed_box[1])):
                    violations.append(f"guaranteed box widened after {fed} rows")
                guaranteed_box = (lo, hi)
    refused = getattr(est.estimator, "refused", {})
    return {"robot": robot_name, "method": method, "rows": fed, "updates": updates,
            "refused_messages": int(sum(refused.values())), "refused": refused, "errors": dict(errors),
            "violations": violations}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
