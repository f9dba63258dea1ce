"""The inertial_id Python API, end to end, without ROS (run: python examples/python_api.py).

1. A payload on a simulated xArm7 with its wrist F/T sensor: guaranteed bounds from a bag, and the
   same from arrays (what a driver's samples look like in your own code).
2. A whole Kinova Gen3 identified from recorded runs (here synthesized from the nominal model with
   known friction), checked on a held-out run.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

from inertial_id.api import identify_robot, load_robot, payload_bounds, payload_bounds_from_bag
from inertial_id.core.data import bags
from inertial_id.core.robot.model import payload_params


def payload_example(workdir: Path) -> bool:
    from inertial_id.cli.record_sim import record      # what `inertial-id bag record-sim` writes
    robot = load_robot("xarm7")
    bag = workdir / "xarm7_dumbbell"
    record(robot, "dumbbell_5lb", 6.0, bag, "mcap", seed=1)
    truth = payload_params("dumbbell_5lb")

    from_bag = payload_bounds_from_bag(bag, robot)            # recorded sensor streams -> rows -> bounds
    print(from_bag.table())

    sensing = robot.sensing                                    # the same samples as numpy arrays
    js = bags.read_joint_states(bag, robot.joint_names, topic=sensing.joint_states_topic)
    t_w, _, w = bags.read_wrenches(bag, sensing.wrench_topic)
    from_arrays = payload_bounds(robot, js.t, js.q, js.qd, js.tau, wrench=(t_w, w))
    same = np.allclose(from_arrays.lower, from_bag.lower) and np.allclose(from_arrays.upper, from_bag.upper)
    inside = bool(np.all(from_bag.contains(truth)))
    print(f"mass {from_bag.estimate[0]:.3f} kg in [{from_bag.lower[0]:.3f}, {from_bag.upper[0]:.3f}] "
          f"(truth {truth[0]:.3f}); truth inside every interval: {inside}; arrays give the same bounds: {same}")
    return inside and same and from_bag.bounds_guaranteed


def robot_example() -> bool:
    from inertial_id.core.robot import closed_chain as cc
    from inertial_id.core.identification import problem as P
    from inertial_id.core.identification.synthetic import fourier_joint_motion, synthesize
    robot = load_robot("kinova_gen3")
    chain = cc.chain_from_profile(robot.model, robot.spec)
    layout = P.make_layout(chain, True)
    theta_true = layout.nominal.copy()
    theta_true[layout.n_inertial:] = np.tile([0.5, 1.0, 0.3, 0.1], 7)      # [Fc, Fv, Ia, beta] per joint
    t = np.arange(0.0, 10.0, 0.01)
    runs = [synthesize(chain, layout, theta_true, t, *fourier_joint_motion(t, np.zeros(7), np.full(7, 1.0),
                                                                          np.random.default_rng(seed)),
                       noise_rel=0.01, rng=np.random.default_rng(100 + seed), name=f"run{seed}")
            for seed in range(3)]
    model = identify_robot("kinova_gen3", runs[:2], validate=runs[2:], method="lmi", friction=True)
    for body, link in model.links.items():
        print(f"{body:24s} mass {link['mass_kg']:7.3f} kg (nominal {link['nominal_mass_kg']:.3f})")
    worst = max(model.validation_rms_Nm.values())
    print(f"held-out torque RMS: worst joint {worst:.3f} N m")
    return worst < 0.5


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        ok = payload_example(Path(tmp))
    ok = robot_example() and ok
    print("python API example:", "ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)
