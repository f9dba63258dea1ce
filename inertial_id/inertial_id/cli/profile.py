"""``inertial-id profile init --urdf FILE --payload-link LINK --rated-payload-kg KG``: a complete,
commented robot profile for an arm this package does not ship. Joints and their position, velocity
and torque limits come from the URDF; the payload prior from the rated payload; acceleration limits,
planner settings and sensor error bounds from rules stated beside each value in the file (sensor
bounds are placeholders until ``inertial-id calibrate`` has measured them). The profile names the
URDF relative to its own folder and loads as written; an existing file is kept unless ``--force``."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import positive_float


def register(sub) -> None:
    p = sub.add_parser("profile", help="write a robot profile for your own arm from its URDF", description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser("init", help="write a complete, commented profile from a URDF",
                              description=__doc__)
    init.add_argument("--urdf", required=True, metavar="FILE", help="the arm's URDF")
    init.add_argument("--payload-link", required=True, metavar="LINK",
                      help="link the payload is mounted on (its frame holds the payload parameters)")
    init.add_argument("--rated-payload-kg", required=True, type=positive_float, metavar="KG",
                      help="the arm's rated payload (datasheet), kg: the prior's mass bound follows from it")
    init.add_argument("--sensing", choices=("joint_torque", "wrench"), default="joint_torque",
                      help="joint torque sensors (JointState.effort) or a wrist F/T sensor (default joint_torque)")
    init.add_argument("--ft-frame", metavar="FRAME", help="the F/T sensor's link (wrench; default the payload link)")
    init.add_argument("--out", metavar="PATH", help="profile to write (default: the URDF's name with .yaml, in the current folder)")
    init.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    init.set_defaults(func=run_init)


def run_init(args) -> int:
    from ..core.robot.profile_init import init_profile
    out = Path(args.out) if args.out else Path(Path(args.urdf).stem + ".yaml")
    written = init_profile(args.urdf, args.payload_link, args.rated_payload_kg, out, sensing=args.sensing,
                           ft_frame=args.ft_frame, force=args.force)
    print(f"wrote {written}: replace the placeholders its comments name (sensor bounds: inertial-id calibrate)",
          file=sys.stderr)
    return 0

