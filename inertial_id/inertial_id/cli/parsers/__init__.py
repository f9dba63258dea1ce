"""The parsers of the ``inertial-id`` commands, one module per command module of :mod:`inertial_id.cli`,
and the argument types they share. Building every parser is what ``inertial-id --help`` costs: these
modules import the standard library, :mod:`inertial_id.defaults` and each other, nothing heavier."""
from __future__ import annotations

import argparse
import math


def add_json_option(parser, what: str = "the report") -> None:
    """``--json FILE``: where :func:`~inertial_id.cli.output.write_json` writes ``what`` (``-`` for stdout)."""
    parser.add_argument("--json", metavar="FILE", help=f"write {what} as JSON ('-' for stdout)")


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
