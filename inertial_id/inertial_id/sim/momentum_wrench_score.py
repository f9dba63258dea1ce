"""A case of ``study sim`` scored on the integrated wrench rows' box (:mod:`~..core.estimators.wrench_momentum_box`),
beside the estimator's: the same recording, one LP over every row, the F/T offset identified along.
Its error-free width is the same LP on the true wrench plus the case's offset: every sensor error
removed (the quadrature and the simulator's own integration left), what no sound box of these rows beats on
those error-free data (noisy data can cut a narrower one: their slabs are not centred on the truth)."""
from __future__ import annotations

import numpy as np

from ..core.estimators.wrench_momentum_box import momentum_wrench_box


def momentum_wrench_score(robot, rec, pi_true, offset) -> dict | None:
    """Box, flags and widths of one recording (None without an F/T sensor); ``offset`` (6,) the case's own."""
    if rec.wrench is None:
        return None
    box = momentum_wrench_box(robot, rec.t, rec.q, rec.qd, rec.wrench)
    error_free = momentum_wrench_box(robot, rec.t, rec.q_true, rec.qd_true, rec.wrench_true + np.asarray(offset))
    inside = bool(np.all((pi_true >= box.lower) & (pi_true <= box.upper)))
    return {"lower": box.lower.tolist(), "upper": box.upper.tolist(), "mass_width_kg": float(box.upper[0] - box.lower[0]),
            "error_free_mass_width_kg": float(error_free.upper[0] - error_free.lower[0]),
            "guaranteed": box.guaranteed, "data_consistent": box.data_consistent, "all_inside": inside,
            "silent_wrong_answer": bool(box.guaranteed and not inside), "offset_freed": box.offset_freed.tolist(),
            "offset_lower": box.offset_lower.tolist(), "offset_upper": box.offset_upper.tolist()}


def summary(results) -> dict:
    """Medians and counts over the cases that have the score."""
    scores = [r["momentum_wrench"] for r in results if r.get("momentum_wrench")]
    if not scores:
        return {}
    widths = [s["mass_width_kg"] for s in scores]
    floors = [s["error_free_mass_width_kg"] for s in scores]
    return {"momentum_wrench_cases": len(scores),
            "momentum_wrench_silent_wrong_answers": sum(s["silent_wrong_answer"] for s in scores),
            "momentum_wrench_guaranteed": sum(s["guaranteed"] for s in scores),
            "momentum_wrench_median_mass_width_kg": float(np.median(widths)),
            "momentum_wrench_median_error_free_mass_width_kg": float(np.median(floors))}
