"""Estimator state on disk, so that a restarted estimator continues from its last box instead of the
prior.

One ``.npz`` file: the estimator's ``state()`` arrays, a JSON header naming what the state belongs
to (format version, method, robot, parameter columns, prior box) and when it was written, and a
SHA-256 of both. Writes go to a temporary file in the same directory, flushed to disk, then
renamed over the old one, so a kill mid-write leaves the previous state intact.

On load, a file is used only if all of this holds; otherwise the estimator starts from the prior:

- **damaged** (unreadable, truncated, a flipped bit, another format version, no or a wrong
  checksum, or contents no estimator writes: NaN or infinite numbers, a box with lower > upper or
  outside the prior, negative counts): the file is moved aside to ``<name>.corrupt-<UTC time>``
  (kept for inspection, never read again) and the caller is told where;
- **another session's** (its header names another robot, method, columns or prior, or it is older
  than ``max_age_s``): left in place, the next save replaces it; ``~/reset`` removes it.

The checksum detects damage, not forgery: whoever can write ``$ROS_HOME`` can write a consistent
file. The content checks still refuse any box that is not a sub-box of the prior.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

FORMAT_VERSION = 2
_HEADER, _DIGEST = "_header", "_sha256"
# Arrays holding the box: may be infinite where the prior is (an unbounded prior), never NaN.
_BOX = ("lower", "upper")
_COUNTS = ("samples_used", "rows_used", "wls_rows", "rows", "pending_samples")


def safe_name(text: str) -> str:
    """``text`` reduced to letters, digits, ``_`` and ``-`` (anything else becomes ``_``), at most
    64 characters: a profile name such as ``../../x`` cannot leave the state directory."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(text))[:64] or "_"


def default_state_path(robot_name: str, method: str) -> Path:
    """``$ROS_HOME/inertial_id/estimator_<robot>_<method>_domain<ROS_DOMAIN_ID>.npz`` (``ROS_HOME``
    defaults to ``~/.ros``; every part through :func:`safe_name`): systems running side by side in
    other DDS domains keep apart."""
    home = Path(os.environ.get("ROS_HOME") or Path.home() / ".ros")
    domain = os.environ.get("ROS_DOMAIN_ID", "0") or "0"
    return home / "inertial_id" / f"estimator_{safe_name(robot_name)}_{safe_name(method)}_domain{safe_name(domain)}.npz"


def _digest(header_json: str, arrays: dict) -> str:
    h = hashlib.sha256(header_json.encode())
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_state(path, header: dict, state: dict) -> None:
    """Write ``state`` (arrays and scalars) with ``header`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {k: np.asarray(v) for k, v in state.items()}
    if any(k.startswith("_") for k in arrays):
        raise ValueError("state keys starting with '_' are reserved")
    header_json = json.dumps({**header, "format_version": FORMAT_VERSION, "saved_at": time.time()})
    arrays[_HEADER] = np.asarray(header_json)
    arrays[_DIGEST] = np.asarray(_digest(header_json, {k: v for k, v in arrays.items() if k != _HEADER}))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def move_aside(path) -> Path | None:
    """Rename a damaged state file to ``<name>.corrupt-<UTC time>``; its new path (None if it could
    not be moved, e.g. already gone)."""
    path = Path(path)
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    try:
        os.replace(path, target)
    except OSError:
        return None
    return target


def _read(path: Path) -> tuple[dict, dict]:
    """(header, arrays), or ValueError saying what is wrong with the file."""
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except Exception as exc:        # noqa: BLE001 - a damaged zip raises anything (BadZipFile, EOFError, zlib.error, ...)
        raise ValueError(f"unreadable ({type(exc).__name__}: {exc})") from None
    if _HEADER not in arrays or _DIGEST not in arrays:
        raise ValueError("no header or checksum (not written by this version)")
    header_json, digest = str(arrays.pop(_HEADER)), str(arrays.pop(_DIGEST))
    if _digest(header_json, arrays) != digest:
        raise ValueError("checksum mismatch")
    try:
        header = json.loads(header_json)
    except ValueError as exc:
        raise ValueError(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"format version {header.get('format_version') if isinstance(header, dict) else '?'} "
                         f"(this estimator reads {FORMAT_VERSION})")
    return header, arrays


def check_contents(state: dict, prior_lower, prior_upper) -> str:
    """What makes ``state`` impossible for an estimator with this prior box ('' if nothing): a box
    with NaN, lower > upper or outside the prior (None: unbounded); other numbers not finite;
    negative counts."""
    if any(k not in state for k in _BOX):
        return "no box in the state"
    try:
        lower, upper = (np.asarray(state[k], dtype=float) for k in _BOX)
    except (TypeError, ValueError):
        return "the box is not numeric"
    lo = np.full(lower.shape, -np.inf) if prior_lower is None else np.asarray(prior_lower, dtype=float)
    hi = np.full(upper.shape, np.inf) if prior_upper is None else np.asarray(prior_upper, dtype=float)
    if lower.shape != lo.shape or upper.shape != hi.shape:
        return f"box of {lower.size} parameters, the prior has {lo.size}"
    if np.any(np.isnan(lower)) or np.any(np.isnan(upper)):
        return "NaN in the box"
    if np.any(lower > upper):
        return f"box not ordered (lower > upper on {int(np.sum(lower > upper))} parameters)"
    if np.any(lower < lo) or np.any(upper > hi):
        return "box outside the prior"
    for key, value in state.items():
        if key in _BOX or value.dtype.kind not in "fiub":
            continue
        if not np.all(np.isfinite(value)):
            return f"non-finite numbers in '{key}'"
        if key in _COUNTS and (value.size != 1 or float(value) < 0):
            return f"'{key}' is not a non-negative count"
    return ""


def load_state(path, header: dict, max_age_s: float) -> tuple[dict | None, str, Path | None]:
    """``(state, "", None)``, or ``(None, why not, where a damaged file was moved or None)``.
    The box is checked against ``header``'s ``prior_lower`` and ``prior_upper`` when it has them."""
    path = Path(path)
    if not path.exists():
        return None, f"no saved state at {path}", None
    try:
        saved, state = _read(path)
        bad = check_contents(state, header.get("prior_lower"), header.get("prior_upper"))
        if bad:
            raise ValueError(bad)
    except ValueError as exc:
        moved = move_aside(path)
        return None, f"damaged state file {path}: {exc}; " + \
            (f"moved to {moved.name}" if moved else "could not move it aside"), moved
    age = time.time() - float(saved.get("saved_at", 0.0))
    if not 0 <= age <= max_age_s:
        return None, f"saved state {path} is {age:.0f} s old (limit {max_age_s:g} s)", None
    mismatch = [k for k in header if saved.get(k) != header[k]]
    if mismatch:
        return None, f"saved state {path} belongs to another configuration ({', '.join(mismatch)} differ)", None
    return state, "", None


def remove_state(path) -> None:
    """Delete a saved estimator state (nothing when there is none)."""
    Path(path).unlink(missing_ok=True)
