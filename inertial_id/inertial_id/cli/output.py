"""What the commands write besides their tables: JSON reports, numpy values as plain JSON."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def _to_builtin(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    raise TypeError(f"not JSON serializable: {type(x)}")


def write_json(path: str | None, payload: dict) -> None:
    """Write ``payload`` to ``path`` (``-`` for stdout); numpy values become plain JSON."""
    if not path:
        return
    text = json.dumps(payload, indent=2, default=_to_builtin, allow_nan=True)
    if path == "-":
        print(text)
    else:
        Path(path).write_text(text + "\n")
