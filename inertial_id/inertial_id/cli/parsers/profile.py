"""``inertial-id profile``: a robot profile for your own arm.

``profile init --urdf FILE --payload-link LINK --rated-payload-kg KG``: a complete, commented profile
for an arm this package does not ship. Joints and their position, velocity and torque limits come
from the URDF; the payload prior from the rated payload; acceleration limits, planner settings and
sensor error bounds from rules stated beside each value in the file (sensor bounds are placeholders
until ``inertial-id calibrate`` has measured them); the planner's tracking tube measured on the
simulated arm (``profile tube``). The profile names the URDF relative to its own folder and loads as
written; an existing file is kept unless ``--force``.

With ``--runs RUN...`` (recordings of the arm without payload; joint torque sensing), ``profile init``
also calibrates the arm on them (``inertial-id calibrate``, held-out ``--validate`` runs optional),
writes the calibration beside the profile and names it there.

``profile tube --robot PROFILE [--write]``: the tracking tube of the arm's simulated controller,
measured by running the planner on MuJoCo with the profile's simulated payload (round by round until
the errors fit the tube the plans were certified for); ``--write`` puts it into the profile file.

``profile security-policy --robot PROFILE``: the SROS2 policy of the node suite on the profile's
robot (:mod:`.security_policy`)."""
from __future__ import annotations

from . import non_negative_float, positive_float, positive_int
from . import security_policy

TUBE_SECONDS = 20.0


def register(sub) -> None:
    p = sub.add_parser("profile", help="a robot profile for your own arm from its URDF, its tracking tube, its SROS2 policy",
                       description=__doc__)
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
    init.add_argument("--runs", nargs="+", default=[], metavar="RUN",
                      help="recordings without payload to calibrate on (joint torque sensing; run folders or bags)")
    init.add_argument("--validate", nargs="+", default=[], metavar="RUN", help="held-out recordings for the calibration")
    init.add_argument("--tube-seconds", type=non_negative_float, default=TUBE_SECONDS, metavar="S",
                      help=f"simulated motion per round of the tube measurement (default {TUBE_SECONDS:g}; "
                           "0: keep the placeholder tube)")
    init.set_defaults(handler="profile.run_init")
    tube = actions.add_parser("tube", help="measure the simulated arm's tracking tube", description=__doc__)
    tube.add_argument("--robot", required=True, help="robot profile (a shipped name or a YAML path)")
    tube.add_argument("--seconds", type=positive_float, default=TUBE_SECONDS, metavar="S",
                      help=f"simulated motion per round (default {TUBE_SECONDS:g})")
    tube.add_argument("--seed", type=positive_int, default=1, help="noise seed of the first round")
    tube.add_argument("--write", action="store_true", help="write the tube into the profile file (a YAML path)")
    tube.set_defaults(handler="profile.run_tube")
    # the topics and services the policy allows follow from the profile's sensing, as the tube from its controller
    security_policy.register(actions)
