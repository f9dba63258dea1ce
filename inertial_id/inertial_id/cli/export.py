"""``inertial-id export``: the final estimate of a JSON result or a bag as a URDF fragment and a YAML
of the values and their intervals (the options: :mod:`.parsers.export`)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..core.data import bags
from ..core.payload import payload_export
from ..core.robot.model import load_robot
from ..studies import report
from . import UserError


def run(args) -> int:
    if not (args.urdf or args.yaml):
        raise UserError("nothing to write: give --urdf FILE and/or --yaml FILE")
    path = Path(args.run)
    try:
        if bags.is_bag(path):
            data = report.from_bag(path, load_robot(args.robot), args.method)
        elif path.is_file():
            data = report.from_json(path)
        else:
            raise UserError(f"'{path}' is neither a JSON result nor a rosbag2 folder")
    except (bags.BagError, ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    try:
        identified = payload_export.Identified.from_run(data, args.parent, source=str(path))
        identified.payload()            # a mass of zero or less has no centre of mass: nothing to export
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if not identified.flags.get("bounds_guaranteed", False):
        print(f"inertial-id export: note: the bounds of '{path}' are not guaranteed (see the YAML's flags)",
              file=sys.stderr)
    for out, text in ((args.urdf, lambda: payload_export.urdf_fragment(identified, args.link)),
                      (args.yaml, lambda: payload_export.yaml_text(identified))):
        if out:
            try:
                Path(out).write_text(text())
            except OSError as exc:
                raise UserError(f"cannot write '{out}': {exc.strerror or exc}") from None
            print(f"wrote {out}", file=sys.stderr)
    return 0
