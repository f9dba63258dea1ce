"""Which incoming rows ``A x = b`` (with error bounds ``e`` and sigmas) are physical enough to use.

Rows come over the network from a builder the estimator does not control. Finite is not enough:
one row with entries of 1e300 overflows every Gram matrix and eigen/SVD/conic solver downstream,
and its square is already infinite. A row is refused, with a reason, when any magnitude exceeds
what the robot's profile makes possible:

- measurements ``b`` and error bounds ``e``: ``ABSURD_FACTOR`` times the largest joint torque limit
  (``joint_torque`` rows, N m), the F/T sensor's plausible range (``wrench`` rows, N or N m), or
  the torque limit integrated over the window (``momentum`` rows, N m s: ``samples`` samples at
  most ``MAX_SAMPLE_INTERVAL_S`` apart, the builder's gap limit);
- regressor entries: ``MAX_REGRESSOR`` (SI: accelerations, lever arms times accelerations,
  integrated momenta; nothing a robot does comes near it).

These limits only refuse the impossible; rows that pass still carry their own error bounds.

Two more checks protect the guarantee and the LP solver from a sender the estimator cannot verify:

- **solvable scale** (:func:`unsolvable`): the bounds LPs (HiGHS) get no row with a subnormal
  number (5e-324 crashed HiGHS's basis reading), a nonzero magnitude below ``MIN_MAGNITUDE`` or one
  above ``MAX_MAGNITUDE`` (HiGHS takes 1e15 entries as errors and 1e20 bounds as infinite). The
  estimators themselves refuse such rows too (counted), whoever calls them.
- **error bounds no smaller than the profile states** (:class:`NoiseFloors`): a row's stated bound
  is raised to the smallest bound the profile's ``noise:`` section allows for its kind (what the
  regressor builder itself states, for an error-free sample), so no sender can claim a better
  sensor than the profile's; a bound below ``1 / IMPLAUSIBLE_FACTOR`` of that floor is no builder's
  and the node drops the message (reason ``noise_bound_below_profile``). With a robot calibration
  the builder states the calibrated window bound, which can lie far below the profile's (a sensor
  error that is mostly a constant offset, which the calibration takes as an unknown of the run):
  momentum rows are then implausible only below a tenth of the smaller of the two.
"""
from __future__ import annotations

import numpy as np

from ..calibration import calibration_of
from ..robot.profile import RobotProfile

ABSURD_FACTOR = 10.0
MAX_REGRESSOR = 1e6
MAX_WRENCH = 1e4                 # N (and N m): as the builder's wrench check
MAX_SAMPLE_INTERVAL_S = 0.05     # the builder restarts its windows after a longer gap
MAX_ROWS_PER_MESSAGE = 100_000
# Magnitudes the LP core accepts (nonzero values of A, b, e): far outside anything physical in SI,
# well inside what HiGHS and the Gram matrices (squares) handle without under- or overflow.
MIN_MAGNITUDE = 1e-100
MAX_MAGNITUDE = 1e12
IMPLAUSIBLE_FACTOR = 10.0


def unsolvable(A, b, e) -> tuple[str, str] | None:
    """``(reason, detail)`` if rows ``|A x - b| <= e`` cannot be handed to the LP core safely:
    non-finite, negative bounds, subnormal numbers, or magnitudes outside
    ``[MIN_MAGNITUDE, MAX_MAGNITUDE]``."""
    values = [np.asarray(x, dtype=float).ravel() for x in (A, b, e)]
    if not all(np.all(np.isfinite(v)) for v in values):
        return "non_finite", "NaN/Inf in the rows"
    if np.any(values[2] < 0):
        return "non_positive_noise", "negative error bound"
    magnitudes = np.abs(np.concatenate(values))
    nonzero = magnitudes[magnitudes > 0]
    if nonzero.size and nonzero.min() < np.finfo(float).tiny:
        return "denormal", f"subnormal number {nonzero.min():.3g} in the rows"
    if nonzero.size and nonzero.min() < MIN_MAGNITUDE:
        return "absurd_scale", f"|value| {nonzero.min():.3g} < {MIN_MAGNITUDE:g}"
    if nonzero.size and nonzero.max() > MAX_MAGNITUDE:
        return "absurd_scale", f"|value| {nonzero.max():.3g} > {MAX_MAGNITUDE:g}"
    return None


class NoiseFloors:
    """The smallest error bound the profile allows for each row kind (the builder's bound for an
    error-free sample): ``wrench`` rows ``bound_sigmas * sigma + model_error`` per axis (force rows,
    then torque rows, six per sample); ``joint_torque`` rows ``absolute_Nm + model_error_Nm``;
    ``momentum`` rows that torque integrated over the window, ``samples / joint_states_hz`` s."""

    def __init__(self, profile: RobotProfile, calibration=None):
        """``calibration``: the robot's :class:`~..calibration.Calibration`, if its profile names one
        (it lowers only the implausibility threshold of momentum rows, never the floor)."""
        self.wrench = profile.noise.wrench_row_floor()
        self.torque_Nm = profile.noise.torque_row_floor_Nm
        self.rate_hz = float(profile.sensing.joint_states_hz)
        self.calibration = calibration

    @classmethod
    def of_robot(cls, robot) -> NoiseFloors:
        """The floors of ``robot``'s profile, with the calibration it names."""
        return cls(robot.spec, calibration_of(robot))

    def implausible_below(self, kind: str, rows: int, samples: int) -> np.ndarray:
        """Per-row bound no honest builder states less than ``IMPLAUSIBLE_FACTOR`` times below."""
        floor = self.floor(kind, rows, samples)
        windows = {} if self.calibration is None else self.calibration.windows
        if kind == "momentum" and int(samples) in windows:
            calibrated = np.asarray(windows[int(samples)]["bound_Nm_s"], dtype=float)
            if rows % calibrated.size == 0:
                floor = np.minimum(floor, np.tile(calibrated, rows // calibrated.size))
        return floor

    def floor(self, kind: str, rows: int, samples: int) -> np.ndarray:
        """Per-row floor of ``rows`` rows of ``kind`` (zeros for a kind the profile says nothing of)."""
        if kind == "wrench":
            return np.resize(self.wrench, rows) if rows % 6 == 0 else np.full(rows, self.wrench.min())
        if kind == "momentum":
            seconds = max(int(samples), 1) / self.rate_hz if self.rate_hz > 0 else 0.0
            return np.full(rows, self.torque_Nm * seconds)
        if kind == "joint_torque":
            return np.full(rows, self.torque_Nm)
        return np.zeros(rows)

    def raise_to_floor(self, kind: str, e, samples: int) -> tuple[np.ndarray, int]:
        """``(bounds no smaller than the floor, how many were raised)``; raising a bound only
        relaxes its row, so the guarantee holds whatever the sender claimed."""
        e = np.asarray(e, dtype=float)
        floor = self.floor(kind, e.size, samples)
        return np.maximum(e, floor), int(np.count_nonzero(e < floor))


class RowLimits:
    """Magnitude ceilings of the rows of one robot (profile limits)."""

    def __init__(self, torque_limit_Nm, floors: NoiseFloors | None = None):
        self.max_torque_Nm = ABSURD_FACTOR * float(np.max(torque_limit_Nm))
        self.joints = int(np.size(torque_limit_Nm))
        self.floors = floors

    @classmethod
    def from_robot(cls, robot) -> RowLimits:
        """The robot's torque limits and its profile's noise floors."""
        return cls(robot.torque_limit, NoiseFloors.of_robot(robot))

    def max_measurement(self, kind: str, samples: int) -> float:
        """Largest plausible measurement magnitude of a row of ``kind`` (N, N m, or N m s for a momentum window of ``samples``)."""
        if kind == "wrench":
            return MAX_WRENCH
        if kind == "momentum":
            return self.max_torque_Nm * MAX_SAMPLE_INTERVAL_S * max(int(samples), 1)
        return self.max_torque_Nm

    def rejection(self, kind: str, cols: int, rows: int, samples: int, A, b, e, sigma) -> tuple[str, str] | None:
        """``(reason, detail)`` if the rows are unusable, else ``None``. ``A`` flat (rows * cols)."""
        if rows == 0 or rows > MAX_ROWS_PER_MESSAGE:
            return "row_count", f"{rows} rows (1..{MAX_ROWS_PER_MESSAGE})"
        if A.size != rows * cols or b.size != rows or e.size != rows or sigma.size != rows:
            return "wrong_length", f"{rows} rows x {cols} columns but {A.size} regressor entries, " \
                                   f"{b.size} measurements, {e.size} bounds, {sigma.size} sigmas"
        if kind == "momentum" and rows % self.joints:
            return "wrong_length", f"{rows} momentum rows: whole windows have one row per joint ({self.joints})"
        if not all(np.all(np.isfinite(x)) for x in (A, b, e, sigma)):
            return "non_finite", "NaN/Inf in the rows"
        if np.any(e < 0) or np.any(sigma <= 0):
            return "non_positive_noise", "negative error bound or non-positive sigma"
        limit = self.max_measurement(kind, samples)
        if np.max(np.abs(A)) > MAX_REGRESSOR:
            return "absurd_regressor", f"|regressor entry| {np.max(np.abs(A)):.3g} > {MAX_REGRESSOR:g}"
        worst = max(np.max(np.abs(b)), np.max(e), np.max(sigma))
        if worst > limit:
            return "absurd_measurement", f"|measurement or error bound| {worst:.3g} > {limit:.3g} (profile limits)"
        bad = unsolvable(A, b, e)
        if bad:
            return bad
        if self.floors is not None:
            floor = self.floors.implausible_below(kind, rows, samples)
            low = e * IMPLAUSIBLE_FACTOR < floor
            if np.any(low):
                i = int(np.argmax(low))
                return "noise_bound_below_profile", f"stated error bound {e[i]:.3g} < {floor[i]:.3g} / " \
                                                    f"{IMPLAUSIBLE_FACTOR:g} (noise floor of the profile" + \
                    (" or its calibration)" if self.floors.calibration is not None else ")")
        return None
