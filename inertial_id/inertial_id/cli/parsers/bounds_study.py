"""``inertial-id study bounds``: Monte Carlo of guaranteed payload bounds against the log-Cholesky
estimator's Mean Value Form bounds.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
from __future__ import annotations

from . import add_json_option, str_list


def register(sub) -> None:
    p = sub.add_parser("bounds",
                       help="payload bounds in simulation: guaranteed LP bounds vs the log-Cholesky Mean Value Form")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path (joint torque sensing)")
    p.add_argument("--payloads", type=str_list, default=["4lb", "5lb", "6lb", "7lb", "8lb"],
                   help="dumbbells, comma separated (4lb..8lb); trials cycle through them")
    p.add_argument("--trials", type=int, default=10, help="Monte Carlo trials")
    p.add_argument("--overnoise-every", type=int, default=0,
                   help="every K-th trial has torque noise --overnoise-factor times its bound (0: none)")
    p.add_argument("--overnoise-factor", type=float, default=3.0)
    p.add_argument("--update-period", type=float, default=1.5, help="seconds of data between bound updates")
    p.add_argument("--workers", type=int, default=1, help="trials run in parallel processes")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the trials on a Dask cluster (dask.distributed scheduler address); "
                        "default: local processes (--workers)")
    p.add_argument("--seed", type=int, default=0)
    add_json_option(p)
    p.set_defaults(handler="bounds_study.run")
