"""The checks every RegressorSample message passes before an estimator folds it in, live (the
estimator node) and offline (:class:`~inertial_id.core.offline.RowIntake`) alike: one function, so
the same messages are taken or dropped, for the same reasons, either way."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .protocol import Estimator
from .row_checks import RowLimits


class CheckedRows(NamedTuple):
    """A message's rows as :meth:`~.protocol.Estimator.add` takes them (``est.add(*rows)``)."""

    kind: str
    A: np.ndarray               # (rows, columns)
    b: np.ndarray
    noise_bound: np.ndarray
    noise_sigma: np.ndarray
    samples: int
    kinematics: np.ndarray | None
    acceleration_bound: np.ndarray | None = None     # wrench rows: (samples, 6)


class Skipped(NamedTuple):
    """Why a message is not folded in; ``ignored``: rows of a kind this estimator does not consume
    (another estimator may), not a fault of the sender."""

    reason: str
    detail: str
    ignored: bool = False


def check_rows(estimator: Estimator, limits: RowLimits, kind: str, parameter_names, rows: int, samples: int,
               A, b, e, sigma, kinematics=None, acceleration_bound=None) -> CheckedRows | Skipped:
    """The rows of one message (``A`` flat or ``(rows, columns)``, ``kinematics`` and
    ``acceleration_bound`` empty or None when absent) checked for ``estimator``: its kind, its
    columns, the profile's limits (:meth:`~.row_checks.RowLimits.rejection`), for a method that
    needs them the sensor kinematics of each sample, and the acceleration bound's shape (6 values a
    sample of wrench rows, finite and non-negative)."""
    if kind not in estimator.kinds:
        return Skipped(f"{kind}_rows", f"{kind} rows are not this estimator's", ignored=True)
    names = list(parameter_names)
    if names != estimator.column_names:
        return Skipped("parameter_names", f"columns {names[:3]}... do not match")
    A, b, e, sigma = (np.asarray(x, dtype=float) for x in (A, b, e, sigma))
    bad = limits.rejection(kind, len(names), rows, samples, A.ravel(), b, e, sigma)
    if bad:
        return Skipped(*bad)
    k = None
    if estimator.needs_kinematics:
        k = np.asarray(() if kinematics is None else kinematics, dtype=float)
        if k.size != 2 * rows or rows % 6 or not np.all(np.isfinite(k)):
            return Skipped("pmd_needs_wrench_kinematics", "wrench rows without valid sensor kinematics")
    da = None
    if kind == "wrench" and estimator.needs_acceleration_bound and \
            (acceleration_bound is None or not len(acceleration_bound)):
        return Skipped("no_acceleration_bound", "wrench rows without the bound of their differentiated "
                       "acceleration's error (the profile states the limits it rests on)")
    if acceleration_bound is not None and len(acceleration_bound):
        da = np.asarray(acceleration_bound, dtype=float)
        if kind != "wrench" or rows % 6 or da.size != rows or not np.all(np.isfinite(da)) or np.any(da < 0):
            return Skipped("acceleration_bound", f"{da.size} acceleration bounds for {rows} {kind} rows, or "
                           "not finite and non-negative")
        da = da.reshape(-1, 6)
    return CheckedRows(kind, A.reshape(rows, len(names)), b, e, sigma, int(samples), k, da)
