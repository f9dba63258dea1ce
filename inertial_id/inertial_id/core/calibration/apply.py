"""A calibration put to use: the robot whose profile names it, and one run through the estimator
pipeline the ``estimate`` command runs (builder rows with the calibration, guaranteed bounds)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...defaults import BOUNDS_PERIOD_S
from .file import Calibration
from ..offline import RowIntake, rows_from_stream

if TYPE_CHECKING:
    from ..robot.model import Robot


def robot_with_calibration(robot: Robot, calibration: Calibration, path) -> Robot:
    """A copy of ``robot`` whose profile names ``calibration``, written to ``path``."""
    calibration.write(path)
    return robot_naming_calibration(robot, path)


def robot_naming_calibration(robot: Robot, path) -> Robot:
    """A copy of ``robot`` whose profile names the calibration file ``path``."""
    identification = robot.spec.identification.model_copy(update={"calibration": str(Path(path).resolve())})
    return robot.with_profile(identification=identification)


def run_pipeline(robot, run, tau=None, bounds_period_s: float = BOUNDS_PERIOD_S):
    """``(intake, result, messages)``: the run (its torques, or ``tau``) through the builder's rows and
    the guaranteed estimator of ``robot`` (:class:`~..offline.RowIntake`)."""
    intake = RowIntake(robot, "guaranteed", bounds_period_s=bounds_period_s)
    messages = list(rows_from_stream(robot, intake.estimator.kinds, run.t, run.q, run.qd,
                                     run.tau if tau is None else tau))
    for m in messages:
        intake.add(m)
    return intake, intake.finish(), messages
