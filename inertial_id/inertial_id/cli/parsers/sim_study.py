"""``inertial-id study sim``: the guarantee tested on MuJoCo, a simulator whose model is not the
estimator's (armature, damping, Coulomb friction, a controller that does not know the payload,
sensor errors at the stated bounds and an unknown F/T offset). Each case's samples go through the
offline estimation path (as ``estimate --bag``); per case: containment of each parameter, the
guaranteed and consistent flags, widths and point errors; a **silent wrong answer** is a box labelled
guaranteed and consistent that misses the truth. An arm with joint torque sensing is calibrated
first, as a user would: ``calibrate`` on two payload-free runs of the same arm and sensor."""
from __future__ import annotations

from . import add_json_option, positive_int


def register(sub) -> None:
    p = sub.add_parser("sim", help="the guarantee on MuJoCo: payloads, friction, sensor errors, offsets",
                       description=__doc__)
    p.add_argument("--robot", default="xarm7", help="robot profile (name)")
    p.add_argument("--cases", type=positive_int, default=30, help="cases across the payload range")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of exciting motion per case")
    p.add_argument("--seed", type=int, default=0, help="seed of the cases")
    p.add_argument("--rate-hz", type=float, default=None,
                   help="sample the joint states and the wrench at this rate instead of the driver's (Hz; it "
                        "must divide the simulator's step rate): how the bounds would tighten with a faster stream")
    p.add_argument("--workers", type=positive_int, default=1, help="cases run in parallel processes")
    p.add_argument("--fixed", action="store_true",
                   help="instead: the fixed xArm7 cases (three error distributions, no friction) and the "
                        "cases that break the stated assumptions (untared offset, drift, filter lag)")
    add_json_option(p)
    p.set_defaults(handler="sim_study.run")
