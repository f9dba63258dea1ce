"""Profile files written, each checked to load from where it is written: a typed profile whole
(:func:`write_profile`), and measured figures written into a profile file in place, every other line
and comment kept: the tracking tube (``profile tube``) and the calibration a profile names
(``profile init --runs``).

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
import yaml

from . import strict_yaml
from .model import load_robot
from .profile import ProfileError, RobotProfile

__all__ = ["TUBE_KEYS", "read_profile_text", "tube_yaml", "with_calibration", "with_tracking_tube",
           "write_profile", "write_profile_text"]

TUBE_KEYS = ("position_rad", "velocity_rad_s", "acceleration_rad_s2")
_TUBE_LINE = re.compile(r"^(?P<indent>[ \t]+)tracking_error:[^\n]*$", re.M)
_SECTION = re.compile(r"^identification:[^\n]*\n(?P<body>(?:[ \t#][^\n]*\n|\n)*)", re.M)
_CALIBRATION_LINE = re.compile(r"^  calibration:[^\n]*\n", re.M)


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


def with_calibration(text: str, calibration_ref: str, note: str) -> str:
    """``text`` whose ``identification:`` section names the calibration file ``calibration_ref``
    (relative to the profile), with the comment ``note``: its ``calibration:`` line replaced, or one
    added as the section's first line."""
    section = _SECTION.search(text)
    if section is None:
        raise ProfileError("the profile has no 'identification:' section at the start of a line: name the "
                           "calibration by hand (identification.calibration)")
    line = f"  calibration: {calibration_ref}   # {note}\n"
    body = section["body"]
    body = _CALIBRATION_LINE.sub(lambda _: line, body, count=1) if _CALIBRATION_LINE.search(body) else line + body
    return text[:section.start("body")] + body + text[section.end("body"):]


def read_profile_text(path: str | Path) -> str:
    """The profile file at ``path`` as text; a file that cannot be read is a one-line error."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"cannot read '{path}': {exc.strerror or exc}") from None


def write_profile_text(path: str | Path, text: str) -> None:
    """Write ``text`` as the profile file at ``path``, after checking that it loads from there."""
    path = Path(path)
    raw = strict_yaml.load(text)
    raw["_path"] = str(path.resolve())
    load_robot(raw)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"cannot write '{path}': {exc.strerror or exc}") from None


def write_profile(profile: RobotProfile, path: str | Path) -> None:
    """Write ``profile`` as the profile file at ``path``, every field stated (its defaults too), after
    checking that it loads from there: a section replaced by its ``model_copy(update=...)`` is not
    checked until then."""
    write_profile_text(path, yaml.safe_dump(profile.model_dump(), sort_keys=False))
