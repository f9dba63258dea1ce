"""Capsules on the arm versus axis-aligned obstacle boxes: certified lower bounds of the clearance.

Per time sub-interval the capsule end points are enclosed by affine forward kinematics (shared with
the torque enclosure, :func:`.enclosure.placements`) and turned into boxes B0, B1. Every point of the
capsule axis is (1 - l) p0 + l p1 with l in [0, 1], so on a slice [la, lb] of l it lies in the box hull
of (1 - l) B0 + l B1 at both slice ends; the distance from that box to the obstacle, minus the radius,
is a lower bound of the clearance (computed with downward rounding).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..robot.model import ProfileError, Robot
from . import enclosure
from .affine import lincomb
from .interval import down, up

AXIS_SLICES = 8      # slices of each capsule axis; more is tighter and slower


@dataclass(frozen=True)
class Capsule:
    """A segment ``p0``-``p1`` (m, in the link frame ``frame``) swept by a sphere of ``radius`` (m)."""
    frame: str
    frame_id: int
    p0: np.ndarray       # in the frame, m
    p1: np.ndarray
    radius: float


@dataclass(frozen=True)
class Box:
    """An axis-aligned obstacle box in the base frame (centre and full edge lengths, m)."""
    name: str
    center: np.ndarray   # base frame, m
    size: np.ndarray     # full edge lengths, m

    @property
    def lower(self) -> np.ndarray:
        """Lowest corner (m, base frame)."""
        return self.center - 0.5 * self.size

    @property
    def upper(self) -> np.ndarray:
        """Highest corner (m, base frame)."""
        return self.center + 0.5 * self.size


def capsules_from_profile(robot: Robot, capsules) -> tuple[Capsule, ...]:
    """The profile's ``planner.capsules`` (typed and checked by :class:`inertial_id.core.robot.profile.Capsule`)
    on the model's frames."""
    out = []
    for k, item in enumerate(capsules):
        field = f"planner.capsules[{k}]"
        ids = [i for i, f in enumerate(robot.model.frames) if f.name == item.frame]
        if not ids:
            raise ProfileError(f"{field}.frame '{item.frame}' is not a frame of the model")
        # a link and its joint may share a name: the link (body frame) is meant
        bodies = [i for i in ids if robot.model.frames[i].type == pin.FrameType.BODY]
        frame_id = (bodies or ids)[0]
        if robot.model.frames[frame_id].parentJoint == 0:
            raise ProfileError(f"{field}.frame '{item.frame}' does not move; only moving links need capsules")
        out.append(Capsule(item.frame, frame_id, np.array(item.p0), np.array(item.p1), item.radius))
    return tuple(out)


def boxes_from_profile(obstacles) -> tuple[Box, ...]:
    """The profile's ``obstacles`` (typed and checked by :class:`inertial_id.core.robot.profile.Obstacle`)."""
    return tuple(Box(o.name, np.array(o.center), np.array(o.size)) for o in obstacles)


def capsule_point_boxes(ctx, plan, bounds):
    """Interval boxes (lo, hi), each (S, C, 2, 3), of the capsule end points over the sub-intervals."""
    (q,) = enclosure.state_forms(ctx, plan, np.asarray(bounds, dtype=float), orders=(0,))
    R, p = enclosure.placements(ctx, q)
    lo = np.empty((len(bounds), len(ctx.capsule_body), 2, 3))
    hi = np.empty_like(lo)
    for c, body in enumerate(ctx.capsule_body):
        for e in range(2):
            x = lincomb(ctx.capsule_points[c, e][None, :], R[body]).comp(0) + p[body]
            box = x.to_interval()
            lo[:, c, e], hi[:, c, e] = box.lo, box.hi
    return lo, hi


def clearance_bounds(ctx, settings, plan, bounds):
    """Lower bound of the clearance (S,) over each sub-interval and, per sub-interval, the
    (capsule, obstacle) pair attaining it."""
    lo, hi = capsule_point_boxes(ctx, plan, bounds)                  # (S, C, 2, 3)
    lam = np.linspace(0.0, 1.0, AXIS_SLICES + 1)[:, None]            # (L+1, 1)
    lo0, lo1 = lo[:, :, None, 0], lo[:, :, None, 1]                  # (S, C, 1, 3)
    hi0, hi1 = hi[:, :, None, 0], hi[:, :, None, 1]
    # bounds of (1 - l) B0 + l B1 at the slice ends, rounded outwards
    low = down(down((1.0 - lam) * lo0) + down(lam * lo1))            # (S, C, L+1, 3)
    high = up(up((1.0 - lam) * hi0) + up(lam * hi1))
    slice_lo = np.minimum(low[:, :, :-1], low[:, :, 1:])              # (S, C, L, 3)
    slice_hi = np.maximum(high[:, :, :-1], high[:, :, 1:])
    obs_lo = np.array([b.lower for b in settings.obstacles])          # (B, 3)
    obs_hi = np.array([b.upper for b in settings.obstacles])
    obs_lo, obs_hi = down(obs_lo), up(obs_hi)                         # grown by their own rounding
    gap = np.maximum(np.maximum(down(obs_lo - slice_hi[..., None, :]), down(slice_lo[..., None, :] - obs_hi)),
                     0.0)                                             # (S, C, L, B, 3)
    squared = np.maximum(down(down(gap * gap).sum(-1) * (1.0 - 4.0 * 2.0 ** -52)), 0.0)
    dist = np.maximum(down(np.sqrt(squared)), 0.0)                   # (S, C, L, B)
    clearance = down(dist.min(axis=2) - ctx.capsule_radius[None, :, None])         # (S, C, B)
    flat = clearance.reshape(len(bounds), -1)
    k = flat.argmin(axis=1)
    n_boxes = len(settings.obstacles)
    details = [(int(i) // n_boxes, int(i) % n_boxes) for i in k]
    return flat[np.arange(len(bounds)), k], details
