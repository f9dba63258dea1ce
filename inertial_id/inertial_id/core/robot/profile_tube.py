"""A measured tracking tube written into a profile file in place, every other line and comment kept.

The tube is ``planner.tracking_error``: per joint, the position (rad), velocity (rad/s) and windowed
acceleration (rad/s^2) half-widths the certificate covers. It is written as one flow mapping on the
line that holds the key now, with a trailing comment saying where the figures came from; the values
are rounded up (two significant digits), never down, so the file states at least what was measured.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from . import strict_yaml
from .model import load_robot
from .profile import ProfileError

__all__ = ["TUBE_KEYS", "tube_yaml", "with_tracking_tube", "write_tracking_tube"]

TUBE_KEYS = ("position_rad", "velocity_rad_s", "acceleration_rad_s2")
_TUBE_LINE = re.compile(r"^(?P<indent>[ \t]+)tracking_error:[^\n]*$", re.M)


def _round_up(x: float) -> float:
    if x <= 0.0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / scale - 1e-9) * scale, 12)


def tube_yaml(tube) -> str:
    """The tube (3, n) as a YAML flow mapping of per-joint lists, each value rounded up."""
    rows = np.asarray(tube, dtype=float)
    parts = (f"{key}: [" + ", ".join(f"{_round_up(float(v)):g}" for v in row) + "]" for key, row in zip(TUBE_KEYS, rows))
    return "{" + ", ".join(parts) + "}"


def with_tracking_tube(text: str, tube, note: str) -> str:
    """``text`` with its ``tracking_error:`` line replaced by ``tube`` and the comment ``note``."""
    found = list(_TUBE_LINE.finditer(text))
    if len(found) != 1:
        raise ProfileError(f"the profile has {len(found)} 'tracking_error:' lines on a line of their own, "
                           "not one: write planner.tracking_error by hand")
    line = f"{found[0]['indent']}tracking_error: {tube_yaml(tube)}   # {note}"
    return text[:found[0].start()] + line + text[found[0].end():]


def write_tracking_tube(path: str | Path, tube, note: str) -> None:
    """Rewrite the profile file at ``path`` with ``tube``, after checking that it still loads."""
    path = Path(path)
    try:
        text = with_tracking_tube(path.read_text(encoding="utf-8"), tube, note)
    except OSError as exc:
        raise ProfileError(f"cannot read '{path}': {exc.strerror or exc}") from None
    raw = strict_yaml.load(text)
    raw["_path"] = str(path.resolve())
    load_robot(raw)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"cannot write '{path}': {exc.strerror or exc}") from None
