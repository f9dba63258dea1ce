"""A box that holds whatever the F/T offset: the stated offset box is checked, not assumed.

Rows ``|A pi + O o - b| <= e`` with the sensor's zero offset ``o`` a nuisance unknown within a stated
box. The feasible set of ``(pi, o)`` without that box is convex and holds the truth (the other stated
bounds holding); if it meets the box while the true offset is outside, the segment from the truth to a
point of the box leaves the box through a face of an axis on which the truth is outside, so some such
axis's offset range reaches its box's edge. :func:`free_offsets` therefore frees every axis whose range
reaches its edge (its box widened ``FREED_FACTOR`` times, beyond any offset a working sensor reads) and
solves again, until no bounded axis reaches its edge: the box then holds the truth whatever its
offset within the widened boxes; a freed axis that reaches its widened edge leaves it not guaranteed.

The argument needs rows that hold without the offset's box. Per-sample wrench rows carry the share of
the differentiated acceleration's error (:mod:`~..signals.acceleration_bound`), and the online updates
take it over their own box, which rests on the offset's box. So :func:`offset_sound_box` bounds the
shares over the prior first, then over the box it found, round after round (each box holds the truth,
so the next round's bounds are valid), and solves each round within that round's box: the share as
an affine function of the payload (:func:`~..signals.acceleration_bound.acceleration_share_affine`),
so that a payload explains the rows with its own share rather than with the box's worst, and every
payload physically consistent (:func:`~.physical_cuts.pseudo_inertia_cuts`). The argument holds on
this feasible set too: it is convex, and holds the truth whatever its offset.
"""
from __future__ import annotations

from typing import NamedTuple
from collections.abc import Callable

import numpy as np

from ..signals.acceleration_bound import acceleration_share_affine
from .bounds import IntervalBounds
from .physical_cuts import pseudo_inertia_cuts

# The offset's range within this fraction of its stated box's edge counts as reaching it.
EDGE_FRACTION = 1e-6
# A freed axis's box, in multiples of the stated one (the LP takes finite boxes only).
FREED_FACTOR = 1e3
# The offset's axes, as messages name them: force (N), then moment (N m), sensor frame.
OFFSET_AXES = ("fx", "fy", "fz", "nx", "ny", "nz")
# Rounds of shares over the last box, at most; they stop once one narrows the mass by less than
# ROUND_GAIN of its width. The xArm7's first case of study sim: 0.579, 0.402, 0.336, 0.326, 0.324 kg.
SHARE_ROUNDS = 6
ROUND_GAIN = 0.01


class Freed(NamedTuple):
    """The bounds solved with the offset boxes of the ``freed`` axes widened."""

    bounds: IntervalBounds
    consistent: bool
    freed: np.ndarray          # (6,) bool
    guaranteed: bool           # consistent, and no offset axis at the edge of its (widened) box


def at_edge(bounds: IntervalBounds, box) -> np.ndarray:
    """(6,) bool: the offset's range reaches the edge of ``box`` (a zero box is a tared axis: the
    stated assumption itself, never at an edge to free)."""
    box = np.asarray(box, dtype=float)
    near = box * (1.0 - EDGE_FRACTION)
    return (box > 0) & ((bounds.r_upper >= near) | (bounds.r_lower <= -near))


def free_offsets(solve: Callable[[np.ndarray], tuple[IntervalBounds, bool]], box) -> Freed:
    """``solve(offset_box)`` -> ``(bounds, consistent)`` with the offset within ``+-offset_box``,
    from the stated ``box`` (6,), freeing axes as the module docstring says (at most six rounds)."""
    box = np.asarray(box, dtype=float)
    free = np.zeros(box.size, dtype=bool)
    while True:
        r_box = np.where(free, FREED_FACTOR * box, box)
        bounds, consistent = solve(r_box)
        edge = at_edge(bounds, r_box)
        reached = ~free & edge
        if not consistent or not reached.any():
            return Freed(bounds, bool(consistent), free, bool(consistent) and not edge.any())
        free |= reached


def rows_box(lower, upper, M, b, e, slope=None) -> Callable[[np.ndarray], tuple[IntervalBounds, bool]]:
    """The ``solve`` of :func:`free_offsets` for rows ``M = [A, O]`` (the payload's 10 columns, then
    the offset's six) with bounds ``e`` (``+ slope pi``: :meth:`~.bounds.IntervalBounds.update`),
    within the payload box ``[lower, upper]``, the payload physically consistent: one LP over every row."""
    n = np.size(lower)
    cuts = pseudo_inertia_cuts()

    def solve(r_box):
        bounds = IntervalBounds(lower, upper, nuisance_lower=-r_box, nuisance_upper=r_box, cuts=cuts,
                                bound_nuisance=True)
        return bounds, bounds.update(M[:, :n], b, e, A_nuisance=M[:, n:], slope=slope).consistent
    return solve


class SoundBox(NamedTuple):
    """The payload's box and the offset's range of :func:`offset_sound_box`."""

    lower: np.ndarray
    upper: np.ndarray
    offset_lower: np.ndarray
    offset_upper: np.ndarray
    consistent: bool
    freed: np.ndarray          # (6,) bool: axes the last round freed
    guaranteed: bool           # every round's
    stated_offset_held: bool   # the first round (shares over the prior) reached no stated edge


def offset_sound_box(M, b, e_sensor, acceleration_bound, sensitivity, prior_lower, prior_upper, offset_box) -> SoundBox:
    """Per-sample wrench rows ``M = [A, O]``, ``b``, their bounds without the acceleration's share
    ``e_sensor`` and the acceleration error bounds ``(samples, 6)``: the box of the module docstring."""
    lo, hi = np.asarray(prior_lower, dtype=float).copy(), np.asarray(prior_upper, dtype=float).copy()
    stated_held, guaranteed = False, True
    for k in range(SHARE_ROUNDS):
        slope, share = acceleration_share_affine(sensitivity, lo, hi, acceleration_bound)
        freed = free_offsets(rows_box(lo, hi, M, b, e_sensor + share, slope=slope), offset_box)
        guaranteed &= freed.guaranteed
        if not freed.consistent:
            break
        stated_held |= k == 0 and not freed.freed.any()
        width = hi[0] - lo[0]
        lo, hi = np.maximum(lo, freed.bounds.lower), np.minimum(hi, freed.bounds.upper)
        if hi[0] - lo[0] > (1.0 - ROUND_GAIN) * width:
            break
    return SoundBox(lo, hi, freed.bounds.r_lower.copy(), freed.bounds.r_upper.copy(), freed.consistent,
                    freed.freed, guaranteed and freed.consistent, stated_held)
