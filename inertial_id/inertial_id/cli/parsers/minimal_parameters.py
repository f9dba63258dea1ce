"""``inertial-id study minimal-parameters stanford``: Lin's minimal inertia constants, identified one
joint at a time in simulation (Algorithm 2), with Table I and an optional noise study.

References: Lin, "An Identification Method for Estimating the Inertia Parameters of a Manipulator" (seed 002).
"""
from __future__ import annotations

from . import add_json_option, float_list


def register(sub) -> None:
    p = sub.add_parser("minimal-parameters",
                       help="Lin's minimal inertia constants identified one joint at a time")
    p.add_argument("model", metavar="MODEL", choices=("stanford",), help="stanford (the Stanford arm of Lin's paper, Fig. 2)")
    p.add_argument("--noise", type=float, default=0.0, metavar="SIGMA",
                   help="relative torque noise (0.01 = 1%%); adds a noise study")
    p.add_argument("--rate-noise", type=float, default=0.0, help="relative noise on qd and qdd")
    p.add_argument("--trials", type=int, default=50, help="noise study trials")
    p.add_argument("--q-base", type=float_list, default=None,
                   help="base configuration, comma separated (default: Lin's eq. (62))")
    p.add_argument("--own-joint-time", type=float, default=0.2,
                   help="time of the single sample of (58) (default 0.2 s)")
    p.add_argument("--seed", type=int, default=0)
    add_json_option(p)
    p.set_defaults(handler="minimal_parameters.run")
