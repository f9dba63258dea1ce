"""``inertial-id study identifiability MODEL``: which inertial parameters any motion can determine."""
from __future__ import annotations

from . import add_json_option


def register(sub) -> None:
    p = sub.add_parser("identifiability", help="base parameters of a model (RPNA or sampled SVD)")
    p.add_argument("model", metavar="MODEL",
                   help="built-in model (planar_2r, planar_2r_perp, puma560, scara, cheetah_leg, "
                        "stanford), a URDF path or a robot profile (xarm7, kinova_gen3, ...)")
    p.add_argument("--floating-base", action="store_true", help="the root body moves freely")
    p.add_argument("--no-gravity", action="store_true", help="ignore gravity")
    p.add_argument("--static", action="store_true", help="static data only (gravity torques)")
    p.add_argument("--motors", action="store_true",
                   help="add an axisymmetric rotor at every 1-DoF joint, on its axis, on the parent")
    p.add_argument("--gear-ratio", type=float, default=50.0, help="rotor gear ratio (default 50)")
    p.add_argument("--method", choices=("rpna", "svd"), default="rpna",
                   help="rpna: exact recursion (Recursive Parameter Nullspace Algorithm); svd: rank of sampled regressors")
    p.add_argument("--samples", type=int, default=None, help="svd: number of random states")
    add_json_option(p)
    p.set_defaults(handler="identifiability.run")
