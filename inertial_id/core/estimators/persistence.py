"""Estimator state on disk, so that a restarted estimator continues from its last box instead of the
prior.

One ``.npz`` file: the estimator's ``state()`` arrays plus a JSON header naming what the state
belongs to (method, robot, parameter columns, prior box) and when it was written. Writes go to a
temporary file in the same directory and are renamed over the old one, so a kill mid-write leaves
the previous state intact. A file is used only if its header matches the running estimator and it
is younger than ``max_age_s`` (older state belongs to another session; ``~/reset`` removes it).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def default_state_path(robot_name: str, method: str) -> Path:
    """``$ROS_HOME/inertial_id/estimator_<robot>_<method>_domain<ROS_DOMAIN_ID>.npz`` (``ROS_HOME``
    defaults to ``~/.ros``): systems running side by side in other DDS domains keep apart."""
    home = Path(os.environ.get("ROS_HOME") or Path.home() / ".ros")
    domain = os.environ.get("ROS_DOMAIN_ID", "0") or "0"
    return home / "inertial_id" / f"estimator_{robot_name}_{method}_domain{domain}.npz"


def save_state(path, header: dict, state: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.asarray(v) for k, v in state.items()}
    arrays["_header"] = np.asarray(json.dumps({**header, "saved_at": time.time()}))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(path, header: dict, max_age_s: float) -> tuple[dict | None, str]:
    """``(state, "")`` or ``(None, why not)``."""
    path = Path(path)
    if not path.exists():
        return None, f"no saved state at {path}"
    try:
        with np.load(path, allow_pickle=False) as f:
            saved = json.loads(str(f["_header"]))
            state = {k: f[k] for k in f.files if k != "_header"}
    except (OSError, ValueError, KeyError) as exc:
        return None, f"unreadable state file {path}: {exc}"
    age = time.time() - float(saved.get("saved_at", 0.0))
    if not 0 <= age <= max_age_s:
        return None, f"saved state {path} is {age:.0f} s old (limit {max_age_s:g} s)"
    mismatch = [k for k in header if saved.get(k) != header[k]]
    if mismatch:
        return None, f"saved state {path} belongs to another configuration ({', '.join(mismatch)} differ)"
    return state, ""


def remove_state(path) -> None:
    Path(path).unlink(missing_ok=True)
