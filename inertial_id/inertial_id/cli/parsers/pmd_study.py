"""``inertial-id study pmd``: the point-mass-discretization simulation study (Table III of the
reference) on the eight test objects.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
from __future__ import annotations

from ...defaults import PMD_NOISE_LEVELS
from . import add_json_option, float_list


def register(sub) -> None:
    p = sub.add_parser("pmd", help="fast object identification at low SNR: OLS, RTLS, GEO, PMD in simulation")
    p.add_argument("--speeds", type=float_list, default=[1.0, 1.5, 2.0],
                   help="average angular speeds of the wrist, rad/s (comma separated)")
    p.add_argument("--noise", choices=sorted(PMD_NOISE_LEVELS), default="moderate", help="noise level of Table II")
    p.add_argument("--samples", type=int, default=150, help="samples used, at 100 Hz")
    p.add_argument("--trials", type=int, default=3, help="noise draws per object and speed")
    p.add_argument("--density", type=float, default=0.04, help="PMD points per cm^3")
    p.add_argument("--noise-weighted", action="store_true",
                   help="balance torque against force rows by their noise (the paper weighs rows as measured)")
    p.add_argument("--geo-gamma", type=float, default=None,
                   help="weight of GEO's entropic divergence (default: the force noise variance, 1e-2 N^2)")
    p.add_argument("--workers", type=int, default=1, help="objects run in parallel processes")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the objects on a Dask cluster (dask.distributed scheduler address); "
                        "default: local processes (--workers)")
    p.add_argument("--seed", type=int, default=0, help="non-negative; each noise draw's generator derives "
                                                        "from it and the draw's object, speed and trial")
    add_json_option(p)
    p.set_defaults(handler="pmd_study.run")
