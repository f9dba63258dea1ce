"""How far a sample's differentiated joint acceleration can be from the true one, and which samples
cannot be bounded at all (a velocity reversal inside the differentiation window).

The row builder takes joint j's acceleration at ``t1`` as the central difference
``a_est = (v2 - v0) / (t2 - t0)`` of three velocity samples. Wrench rows use it, so a guaranteed
wrench row needs a bound on ``|a_est - a(t1)|`` that follows from stated, checked assumptions:

1. The reported velocities err by at most ``eps`` (profile ``noise.velocity_rad_s``).
2. Inside one window the acceleration is a function whose jerk is at most ``L`` (profile
   ``limits.jerk``) plus **at most one step** of any size at any time: breakaway from rest, a
   contact, a controller's step. The step is measured, not assumed: with the two half-window means
   ``d- = (v1 - v0) / h-`` and ``d+ = (v2 - v1) / h+``, a step adds to ``D = d+ - d-``. Writing
   ``w = max(h-, h+) / (h- + h+)``::

       |a_est - a(t1)| <= w (|D| + 2 eps (1/h- + 1/h+) + L (h- + h+) / 2) + L max(h-, h+) / 2
                          + 2 eps / (h- + h+)

   (the smooth part moves a half-window mean at most ``L h / 2`` from ``a(t1)``; the step's share
   of ``a_est`` is at most ``w`` times its share of ``D``, which the smooth part shifts by at most
   ``L (h- + h+) / 2``; ``eps`` enters ``a_est`` and ``D`` through the differences).
3. Coulomb friction changes sign where a joint's velocity does, and a joint that sticks there on its
   way can step twice inside one window, which (2) does not cover. So a sample is **not used** when
   a moving joint's velocity may touch zero inside the window: the three measured velocities must
   share their sign, each beyond ``eps``, and each half must satisfy ``|v_i| + |v_i+1| - 2 eps >
   a_max h`` (``a_max``: profile ``limits.acceleration``; to touch zero and come back within ``h``
   a joint needs ``|v_i| + |v_i+1| <= a_max h``). A joint whose true velocity is within
   ``HELD_VELOCITY_RAD_S`` of zero at the three samples (measured ``|v| + eps`` at most that) is held
   still and keeps (2).

Without a stated jerk or acceleration limit the bound is infinite: the rows are then not guaranteed.
"""
from __future__ import annotations

import numpy as np

# a joint whose velocity stays this close to zero over the window is held still: stuck in its
# friction, at most one acceleration step (breakaway)
HELD_VELOCITY_RAD_S = 1e-3


def reversal_joints(t, v, eps_rad_s: float, acceleration_limit) -> np.ndarray:
    """Joints (indices) whose velocity may touch zero inside the window ``t = (t0, t1, t2)``,
    ``v = (v0, v1, v2)`` (each ``(nv,)``) while they are not held still (module docstring, 3)."""
    v = np.asarray(v, dtype=float)
    h = np.diff(np.asarray(t, dtype=float))
    held = np.all(np.abs(v) + eps_rad_s <= HELD_VELOCITY_RAD_S, axis=0)
    same_sign = np.all(np.sign(v) == np.sign(v[1]), axis=0) & np.all(np.abs(v) > eps_rad_s, axis=0)
    a_max = np.asarray(acceleration_limit, dtype=float)
    with np.errstate(invalid="ignore"):
        clear = np.all(np.abs(v[:-1]) + np.abs(v[1:]) - 2.0 * eps_rad_s > a_max * h[:, None], axis=0)
    return np.flatnonzero(~held & ~(same_sign & clear))


def acceleration_error_bound(t, v, eps_rad_s: float, jerk_limit) -> np.ndarray:
    """(nv,) bound on ``|a_est - a(t1)|`` (rad/s^2) of the central difference over the window
    ``t = (t0, t1, t2)``, ``v = (v0, v1, v2)`` (module docstring, 2)."""
    v = np.asarray(v, dtype=float)
    h_minus, h_plus = np.diff(np.asarray(t, dtype=float))
    span = h_minus + h_plus
    w = max(h_minus, h_plus) / span
    D = (v[2] - v[1]) / h_plus - (v[1] - v[0]) / h_minus
    L = np.asarray(jerk_limit, dtype=float)
    return (w * (np.abs(D) + 2.0 * eps_rad_s * (1.0 / h_minus + 1.0 / h_plus) + L * span / 2.0)
            + L * max(h_minus, h_plus) / 2.0 + 2.0 * eps_rad_s / span)


def acceleration_share(sensitivity, lower, upper, acceleration_bound) -> np.ndarray:
    """Per wrench row (6 a sample), the largest error an acceleration error within
    ``acceleration_bound`` ``(samples, 6)`` (sensor frame, ``[linear, angular]``) causes for any
    payload of the box ``[lower, upper]``; ``sensitivity`` ``(6, 6, 10)``:
    :meth:`~.regressor.PayloadRegressor.wrench_acceleration_sensitivity`."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    mid, rad = 0.5 * (lower + upper), 0.5 * (upper - lower)
    C = np.asarray(sensitivity, dtype=float)
    K = np.abs(C @ mid) + np.abs(C) @ rad            # K[l, i]: row i per unit of error along axis l
    return (np.asarray(acceleration_bound, dtype=float).reshape(-1, 6) @ K).ravel()


def acceleration_share_affine(sensitivity, lower, upper, acceleration_bound) -> tuple[np.ndarray, np.ndarray]:
    """``(S, s0)``, ``S`` (rows, 10) and ``s0`` (rows,): per wrench row, ``s0 + S pi`` bounds the
    error an acceleration error within ``acceleration_bound`` causes for the payload ``pi`` itself,
    for every ``pi`` of the box ``[lower, upper]`` (arguments as :func:`acceleration_share`).

    That error is at most ``sum_l bound_l |C_l pi|`` per row. Each ``|x|``, ``x = (C_l pi)_i`` linear
    in ``pi``, is convex, so over the range ``[a, c]`` the box gives ``x`` it stays below its chord:
    ``|x| <= ((c + a) x - 2 a c) / (c - a)``, equal to ``|x|`` where the range keeps one sign (the
    force rows' ``m da``, the mass positive), and nowhere above :func:`acceleration_share`'s ``max(|a|,
    |c|)``. Rows whose bound is this affine function hold the payload that explains them with its own
    share, not with the box's worst (on the xArm7's first ``study sim`` case the box's worst is 0.88 N
    median, the truth's own 0.25 N), so the bound is valid only inside the box it was taken over."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    mid, rad = 0.5 * (lower + upper), 0.5 * (upper - lower)
    C = np.asarray(sensitivity, dtype=float)
    low, high = C @ mid - np.abs(C) @ rad, C @ mid + np.abs(C) @ rad          # (l, i): the range of x
    span = high - low
    straddles = (low < 0) & (high > 0)
    slope = np.where(straddles, (high + low) / np.where(straddles, span, 1.0), np.sign(high + low))
    offset = np.where(straddles, -2.0 * low * high / np.where(straddles, span, 1.0), 0.0)
    bound = np.asarray(acceleration_bound, dtype=float).reshape(-1, 6)
    S = np.einsum("kl,lip->kip", bound, slope[:, :, None] * C).reshape(-1, C.shape[-1])
    return S, (bound @ offset).ravel()
