"""Robot calibration from recordings without payload: friction, rotor inertia, torque sign, the
range of the per-run torque offset, velocity-limit plateaus, and the validated bound of the error
that remains per joint and momentum window length. One YAML file (:mod:`.file`) carries it; the
payload estimators take the robot model, its parameter box and the row bounds from it.

Building a calibration is :func:`.build.calibrate`; it is not imported here, since it runs the
offline pipeline, whose estimators read calibrations through this package."""
from .file import CALIBRATION_VERSION, Calibration, CalibrationError, calibration_of, load_calibration, momentum_window

__all__ = ["CALIBRATION_VERSION", "Calibration", "CalibrationError", "calibration_of",
           "load_calibration", "momentum_window"]
