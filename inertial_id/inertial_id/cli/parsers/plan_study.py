"""``inertial-id study plan``: closed-loop simulation of the certified excitation planner."""
from __future__ import annotations

from ...defaults import SIM_ENGINES
from . import add_json_option


def register(sub) -> None:
    p = sub.add_parser("plan",
                       help="certified excitation planner in closed loop: safety checks, excitation vs random plans")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    p.add_argument("--trials", type=int, default=10, help="Monte Carlo trials (cycling through the 4..8 lb dumbbells)")
    p.add_argument("--obstacles", metavar="SCENARIO", default=None,
                   help="obstacle scenario: a name in config/scenarios/ or a YAML file with an 'obstacles:' list "
                        "(added to the profile's)")
    p.add_argument("--plans", type=int, default=None,
                   help="most exciting plans per trial (default: the profile's planner.max_plans, as the node "
                        "runs; fewer when the bounds stop shrinking; the published safe-excitation experiments: 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="trials run in parallel processes")
    p.add_argument("--engine", choices=SIM_ENGINES, default=SIM_ENGINES[0],
                   help="physics of the simulated arm: pinocchio (the robot perturbed inside the certifier's "
                        "boxes) or mujoco (joint armature, damping and Coulomb friction; an arm that senses joint "
                        "torque is calibrated first on payload-free runs, as the demo does)")
    add_json_option(p)
    p.set_defaults(handler="plan_study.run")
