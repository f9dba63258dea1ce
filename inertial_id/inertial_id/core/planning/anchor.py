"""The torque an arm was measured to apply: an anchor for the certifier's torque enclosures.

Over one momentum window of joint states with measured torques (:mod:`..signals.momentum`: the
estimator's own rows, with its sensor model, calibration and bound), the true parameters theta (links,
payload, friction ``[Fc, Fv, Ia, beta]`` per joint) satisfy

    W theta = U +- b,     W = W_m(t1) - W_m(t0) - sum_j W_c(t_j) dt_j,   U = sum_j tau_j dt_j,

so with R = W / T (T the window's duration: W's offset column) the window's mean torque R theta lies
in [(U - b) / T, (U + b) / T]. Any torque the arm will need is tau(x) theta = (Y(x) - R) theta +
R theta: the certifier bounds the first term over the parameter box and takes the second from the
measurement (:func:`~.enclosure.torque_bounds`). Near the measured state the first term is small
whatever the box: at the start of a run, an arm holding still is certified to hold still by what
holding still was measured to take, even when the box from data at rest is wide (at one pose a
per-joint torque offset and a payload's gravity cannot be told apart; the offset cancels here).

Assumptions: those of the estimator's rows (the sensor model or calibration, and its bound) and of
the certifier (every parameter inside its box), over the same run: the payload and the torque offset
do not change between the window and the plan.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..calibration import calibration_of, momentum_window
from ..signals.row_builder import SampleRows

from .interval import down, up


@dataclass(frozen=True)
class TorqueAnchor:
    """A window's mean torque: ``regressor`` (n, 14 n) R, and R theta within [lower_Nm, upper_Nm] (n,)
    for the true parameters (module docstring); ``time_s``: the window's closing stamp."""

    regressor: np.ndarray
    lower_Nm: np.ndarray
    upper_Nm: np.ndarray
    time_s: float


def anchor_from_samples(robot, t, q, qd, tau) -> TorqueAnchor | None:
    """The anchor of the last window that closes within the samples ``t`` (N,), ``q``, ``qd``, ``tau``
    (N, n; ``tau`` the raw efforts of the joint states), formed as the estimator forms its momentum
    rows for ``robot`` (its calibration, window length, effort delay and excluded samples); None when
    no window closes (too few samples, or every window excluded) or the robot senses no joint torque."""
    if not robot.sensing.joint_torque:
        return None
    windows = SampleRows.from_profile(robot, kinds={"momentum"}).windows
    if windows is None:
        return None
    windows.add_samples(t, q, qd, tau)
    closed = windows.take_windows()
    if not closed:
        return None
    t_close, rows = closed[-1]
    W, U, b = rows.Y_r, rows.U, rows.noise_bound
    n = robot.nv
    T = W[0, 10 * n + 3]            # the offset column of joint 1: sum of dt over the window
    if not (np.isfinite(T) and T > 0 and np.all(np.isfinite(W)) and np.all(np.isfinite(U))
            and np.all(np.isfinite(b))):
        return None
    # R theta = (U +- b) / T exactly for R = W / T: the rounding of the divisions goes outward
    return TorqueAnchor(W / T, down(down(U - b) / T), up(up(U + b) / T), float(t_close))


class RecentSamples:
    """The last samples ``(t, q, qd, effort)`` of an unbroken stream, enough for one momentum window
    of ``robot`` after its effort delay: a sample without effort, or a gap longer than ``max_gap_s``
    (as the row builder's), starts the stream again."""

    def __init__(self, robot, max_gap_s: float = 0.05):
        calibration = calibration_of(robot)
        delay_s = 0.0 if calibration is None else float(np.max(calibration.delays(), initial=0.0))
        rate_hz = float(robot.sensing.joint_states_hz)
        self.robot = robot
        self.max_gap_s = max_gap_s
        self.window = momentum_window(robot, calibration)
        self.samples: deque = deque(maxlen=2 * self.window + int(np.ceil(delay_s * rate_hz)) + 2)

    def add(self, t: float, q, qd, effort) -> None:
        """One sample (``effort`` None: the stream breaks here)."""
        if effort is None or (self.samples and not 0.0 < t - self.samples[-1][0] <= self.max_gap_s):
            self.samples.clear()
        if effort is not None:
            self.samples.append((float(t), np.asarray(q, dtype=float), np.asarray(qd, dtype=float),
                                 np.asarray(effort, dtype=float)))

    def anchor(self) -> TorqueAnchor | None:
        """:func:`anchor_from_samples` of the samples kept (None: not enough of them)."""
        samples = tuple(self.samples)       # one step under the GIL: another thread may be adding
        if len(samples) <= self.window:     # no window can close: not worth the regressors (every tick)
            return None
        t, q, qd, effort = (np.array(x) for x in zip(*samples))
        return anchor_from_samples(self.robot, t, q, qd, effort)
