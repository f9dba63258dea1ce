"""``inertial-id demo``: a simulated arm and the three nodes identify a hidden payload over DDS."""
from __future__ import annotations

from ...defaults import SIM_ENGINES
from . import positive_float


def register(sub) -> None:
    p = sub.add_parser("demo", help="identify a payload on a simulated arm with the ROS 2 nodes")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile (kinova_gen3, xarm7, or a YAML path)")
    p.add_argument("--payload", default=None, help="payload carried by the simulated arm (default: the profile's)")
    p.add_argument("--duration", type=float, default=30.0, help="seconds of exciting motion (at most 60)")
    p.add_argument("--method", default=None,
                   help="estimator method: rls, lmi, pmd, guaranteed, log_cholesky (default: the profile's)")
    p.add_argument("--real-time-factor", type=positive_float, default=1.0,
                   help="simulated seconds per wall second at most (the nodes run on the simulation's /clock: "
                        "a machine too slow for it slows the simulation down)")
    p.add_argument("--log-dir", default=None, help="keep the nodes' logs here (default: a temporary folder, "
                   "removed when the run passes, kept and named when it fails)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON ('-' for stdout)")
    p.add_argument("--record", metavar="BAG", default=None,
                   help="record the suite's topics into this rosbag2 folder (the final estimate then "
                        "waits for the bounds over everything recorded)")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="bag storage of --record")
    p.add_argument("--engine", choices=SIM_ENGINES, default=SIM_ENGINES[0],
                   help="physics of the simulated arm: pinocchio (the estimator's own model, exact) or mujoco "
                        "(joint friction, damping and armature the estimator does not model; an arm that senses "
                        "joint torque is calibrated first)")
    p.add_argument("--calibrate", action="store_true",
                   help="calibrate an arm that senses joint torque on payload-free runs first, on the pinocchio "
                        "engine too (on mujoco always), as `inertial-id calibrate` does with a real arm's "
                        "recordings: the box then rests on the measured sensor error and robot, not the "
                        "profile's stated bounds")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(handler="demo.run")
