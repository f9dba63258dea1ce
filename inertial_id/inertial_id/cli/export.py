"""``inertial-id export RESULT.json|BAG --urdf FILE --yaml FILE``: the identified payload for
integrators. ``--urdf`` writes a URDF fragment, a fixed joint from the payload frame to a new link
carrying the identified ``<inertial>`` (mass kg, COM m, inertia about the COM kg m^2, axes of the
payload frame), to include in ``robot_description`` (``xacro:include`` or pasted before
``</robot>``). ``--yaml`` writes the values with their intervals and the run's flags. The final
estimate of a ``demo``/``estimate`` JSON result is used, or of a bag read with ``--robot``."""
from __future__ import annotations

import sys
from pathlib import Path

from . import UserError


def register(sub) -> None:
    p = sub.add_parser("export", help="URDF fragment and YAML of the identified payload", description=__doc__)
    p.add_argument("run", metavar="RESULT.json|BAG", help="result JSON of demo/estimate, or a rosbag2 folder")
    p.add_argument("--urdf", metavar="FILE", help="write the URDF fragment here")
    p.add_argument("--yaml", metavar="FILE", help="write the values and their intervals here")
    p.add_argument("--link", default="payload", help="name of the payload link (joint: LINK_joint)")
    p.add_argument("--parent", default=None,
                   help="frame the parameters are in, parent of the fixed joint (default: the result's payload frame)")
    p.add_argument("--robot", default="kinova_gen3", help="profile of a bag (estimator, payload frame)")
    p.add_argument("--method", default=None, help="estimator for a bag without recorded estimates")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.data import bags
    from ..core.payload import payload_export
    from ..studies import report
    if not (args.urdf or args.yaml):
        raise UserError("nothing to write: give --urdf FILE and/or --yaml FILE")
    path = Path(args.run)
    try:
        if bags.is_bag(path):
            from ..core.robot.model import load_robot
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
