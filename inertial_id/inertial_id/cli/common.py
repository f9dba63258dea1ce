"""Helpers shared by subcommands: JSON output, argument parsing of lists and of bounded numbers."""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def _to_builtin(x):
    # numpy is imported here, not with the module: every subcommand module imports this one to build
    # the parser, and numpy would add ~0.2 s CPU to every command; a numpy value means it is loaded.
    import numpy as np
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    raise TypeError(f"not JSON serializable: {type(x)}")


def add_json_option(parser, what: str = "the report") -> None:
    """``--json FILE``: where :func:`write_json` writes ``what`` (``-`` for stdout)."""
    parser.add_argument("--json", metavar="FILE", help=f"write {what} as JSON ('-' for stdout)")


def write_json(path: str | None, payload: dict) -> None:
    """Write ``payload`` to ``path`` (``-`` for stdout); numpy values become plain JSON."""
    if not path:
        return
    text = json.dumps(payload, indent=2, default=_to_builtin, allow_nan=True)
    if path == "-":
        print(text)
    else:
        Path(path).write_text(text + "\n")


def float_list(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def str_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _bounded(kind, low: float, inclusive: bool, name: str):
    """An argparse ``type``: a finite ``kind`` above ``low`` (or equal to it when ``inclusive``);
    anything else (0, NaN, inf, negative) is a one-line usage error."""
    relation = ">=" if inclusive else ">"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {'an integer' if kind is int else 'a number'}") from None
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            raise argparse.ArgumentTypeError(f"{text}: must be a finite number {relation} {low:g}")
        return value
    parse.__name__ = name
    return parse


positive_float = _bounded(float, 0.0, False, "positive_float")
non_negative_float = _bounded(float, 0.0, True, "non_negative_float")
positive_int = _bounded(int, 0, False, "positive_int")
non_negative_int = _bounded(int, 0, True, "non_negative_int")
