"""The payload's share taken out of the measured wrench and joint torques (core.payload_wrench): zero
with the true payload, a bound that holds every payload of the box (and is reached by one), the
simulated arm's wrench stream inside its bound, and the Gen3's external joint torques."""
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params
from inertial_id.core.signals.payload_wrench import (EstimateRejected, PayloadBox, PayloadCompensator, box_deviation,
                                                     compensate, compensated_wrench, external_effort,
                                                     robot_torque_columns)
from inertial_id.core.robot.regressor import PayloadRegressor, friction_torque
from inertial_id.core.robot.robot_box import estimator_robot_box
from inertial_id.core.signals.sensors import NoiseModel
from inertial_id.core.sim import Simulator
from inertial_id.core.trajectory import excitation_from_profile


@pytest.fixture(scope="module")
def xarm():
    return robot_model.load_robot("xarm7")


@pytest.fixture(scope="module")
def gen3():
    return robot_model.load_robot("kinova_gen3")


def exact(pi) -> PayloadBox:
    return PayloadBox(np.asarray(pi, float), np.asarray(pi, float), np.asarray(pi, float), True)


def random_state(robot, rng):
    q = rng.uniform(robot.position_lower, robot.position_upper).clip(-3.0, 3.0)
    return q, rng.uniform(-1, 1, robot.nv), rng.uniform(-3, 3, robot.nv)



def assert_inside_bound(samples, speed, label: str, at_least: int) -> None:
    """Every compensated sample, moving and held still (more than ``at_least`` of each), is inside
    its bound; the largest ratio is printed."""
    for moving in (True, False):
        part = [c for c in samples if bool(speed[c.t] > 0.05) is moving]
        assert len(part) > at_least
        ratio = max(np.max(np.abs(c.residual) / c.bound) for c in part)
        print(f"{label}, {'moving' if moving else 'held still'}: max |residual| / bound = {ratio:.3f} "
              f"over {len(part)} samples")
        assert ratio <= 1.0

def test_held_still_the_true_payload_leaves_nothing_of_the_gravity_wrench(xarm, rng):
    """Against gravity worked out by hand: the sensor holds the payload up with ``f = -m g`` and
    ``n = c x f`` (xArm7: the sensor frame is the payload frame)."""
    assert xarm.ft_frame == xarm.payload_frame
    truth = robot_model.payload_params("dumbbell_5lb")
    m, c = truth[0], truth[1:4] / truth[0]
    reg = PayloadRegressor(xarm)
    data = xarm.model.createData()
    for _ in range(10):
        q = random_state(xarm, rng)[0]
        pin.framesForwardKinematics(xarm.model, data, q)
        f = -m * data.oMf[xarm.ft_frame_id].rotation.T @ xarm.model.gravity.linear
        w = np.r_[f, np.cross(c, f)]
        out = compensated_wrench(reg, q, np.zeros(7), np.zeros(7), w, exact(truth), np.zeros(6))
        assert np.max(np.abs(out.residual)) < 1e-9 * np.max(np.abs(w))
        # an offset the sensor adds is taken out when it is known
        offset = rng.normal(size=6)
        shifted = compensated_wrench(reg, q, np.zeros(7), np.zeros(7), w + offset, exact(truth), np.zeros(6), offset)
        assert np.allclose(shifted.residual, out.residual, atol=1e-9)


def test_box_bound_holds_every_payload_of_the_box_and_is_reached(xarm, rng):
    reg = PayloadRegressor(xarm)
    truth = robot_model.payload_params("dumbbell_5lb")
    for _ in range(20):
        A, _ = reg.wrench_rows(*random_state(xarm, rng), np.zeros(6))
        half = rng.uniform(0.0, 0.05, 10)
        centre = truth + rng.uniform(-1, 1, 10) * half
        box = PayloadBox(centre + rng.uniform(-0.5, 0.5, 10) * half, centre - half, centre + half, True)
        bound = box_deviation(A, box.estimate, box.lower, box.upper)
        pis = rng.uniform(box.lower, box.upper, size=(500, 10))
        dev = np.abs((pis - box.estimate) @ A.T)
        assert np.all(dev <= bound * (1 + 1e-12) + 1e-15)
        # exact, not merely safe: the best vertex of each row attains it
        for i in range(6):
            up, down = A[i] * (box.upper - box.estimate), A[i] * (box.lower - box.estimate)
            hi_vertex = np.where(up >= down, box.upper, box.lower)
            lo_vertex = np.where(up >= down, box.lower, box.upper)
            reached = max(abs(A[i] @ (hi_vertex - box.estimate)), abs(A[i] @ (lo_vertex - box.estimate)))
            assert reached == pytest.approx(bound[i], rel=1e-12)
        # around the midpoint it is the half-width sum
        mid = PayloadBox(centre, box.lower, box.upper, True)
        assert np.allclose(box_deviation(A, mid.estimate, mid.lower, mid.upper), np.abs(A) @ half)
        # a measurement within its noise bound of a payload in the box: the residual is inside the bound
        pi_true = rng.uniform(box.lower, box.upper)
        e = rng.uniform(0.0, 0.5, 6)
        out = compensate(0.0, "wrench", A, A @ pi_true + rng.uniform(-1, 1, 6) * e, e, box)
        assert np.all(np.abs(out.residual) <= out.bound)
        assert np.allclose(out.bound, e + bound)


def test_the_simulated_arms_wrench_stream_stays_inside_its_bound(xarm):
    """The simulated xArm7 (noisy sensors within their stated bounds) through the estimator's rows at
    the driver's 100 Hz: with a box around the truth, every compensated sample, moving or held
    still, is inside its bound; with the true payload the residual is the sensor noise."""
    truth = robot_model.payload_params("dumbbell_5lb")
    sim = Simulator.from_profile(xarm, truth, seed=3)
    traj, report = excitation_from_profile(xarm, 4.0)
    assert report.ok
    sim.command(traj)
    rate = xarm.sensing.joint_states_hz
    half = 0.01 * (1 + np.abs(truth))
    boxes = {"exact": exact(truth), "box": PayloadBox(truth + 0.002, truth - half, truth + half, True)}
    streams = {k: PayloadCompensator(xarm, False, True, rate) for k in boxes}
    out = {k: [] for k in boxes}
    speed = {}
    every = int(round(sim.robot.spec.sim.step_hz / rate))
    for k in range(int(5.0 * sim.robot.spec.sim.step_hz)):
        sim.step()
        if k % every == 0:
            m = sim.measure()
            speed[m.t] = np.max(np.abs(m.qd))
            for name, s in streams.items():
                got, pushed = s.push(m.t, m.q, m.qd, None, boxes[name], m.wrench)
                # a window that may hold a velocity reversal gives no row (core.acceleration_bound)
                assert pushed.drops == [] and all(reason == "velocity_reversal" for reason, _ in pushed.events)
                out[name] += got
    for name, samples in out.items():
        assert len(samples) > 150 and all(c.kind == "wrench" for c in samples)
        assert_inside_bound(samples, speed, name, 50)
    # the box's share is what widens the bound; with the true payload only the noise bound is left
    assert all(np.all(c.box_bound == 0) for c in out["exact"])
    assert np.mean([np.max(c.box_bound) for c in out["box"]]) > 0.1


def perturbed_gen3(gen3, rng):
    """The Gen3 as it may really be inside the estimators' robot box: every link's inertia and every
    rotor's scaled by up to +-5 % (physically consistent), friction and torque offsets within the floors."""
    model = pin.Model(gen3.model)
    for j in range(1, model.njoints):
        model.inertias[j] = pin.Inertia.FromDynamicParameters(
            model.inertias[j].toDynamicParameters() * (1 + rng.uniform(-0.05, 0.05)))
    model.armature = model.armature * (1 + rng.uniform(-0.05, 0.05, model.nv))
    friction = np.column_stack([rng.uniform(-0.045, 0.045, model.nv), rng.uniform(-0.018, 0.018, model.nv),
                                np.zeros(model.nv), rng.uniform(-0.045, 0.045, model.nv)])
    return model, friction


def test_gen3_external_effort_is_the_contact_inside_its_bound(gen3, rng):
    """Torques of the arm carrying the payload (pinocchio RNEA of the model with the payload lumped in,
    independent of the payload regressor) with and without a contact force on the payload: the
    external effort is ``-J^T F`` (measured minus model), exactly for the nominal robot and inside the
    bound for a robot anywhere in the robot box."""
    truth = robot_model.payload_params("dumbbell_5lb")
    reg = PayloadRegressor(gen3)
    box = PayloadBox(truth, truth - 0.005, truth + 0.005, True)
    robot_box = estimator_robot_box(gen3)
    nominal = robot_model.model_with_payload(gen3, truth)
    for _ in range(10):
        q, v, a = random_state(gen3, rng)
        tau_true = pin.rnea(nominal, nominal.createData(), q, v, a)
        free = external_effort(reg, q, v, a, tau_true, exact(truth), np.zeros(gen3.nv))
        assert np.max(np.abs(free.residual)) < 1e-9 * np.max(np.abs(tau_true))
        F = rng.normal(size=6) * [10, 10, 10, 1, 1, 1]          # on the payload, payload-frame coordinates
        J = pin.computeFrameJacobian(gen3.model, gen3.model.createData(), q, gen3.payload_frame_id,
                                     pin.ReferenceFrame.LOCAL)
        touched = external_effort(reg, q, v, a, tau_true - J.T @ F, exact(truth), np.zeros(gen3.nv))
        assert np.allclose(touched.residual, -J.T @ F, atol=1e-9)
        # a real arm: its links, rotors and friction off the nominal ones within the robot box
        model, friction = perturbed_gen3(gen3, rng)
        plant = robot_model.model_with_payload(replace(gen3, model=model), truth)
        tau_plant = pin.rnea(plant, plant.createData(), q, v, a) + friction_torque(friction.ravel(), v, a)
        real = external_effort(reg, q, v, a, tau_plant - J.T @ F, box, np.full(gen3.nv, 0.05), robot_box)
        assert np.all(np.abs(real.residual + J.T @ F) <= real.bound)
        assert np.max(real.robot_bound) > 0.1          # the robot's share is not negligible
        nominal_only = external_effort(reg, q, v, a, tau_plant - J.T @ F, box, np.full(gen3.nv, 0.05))
        assert np.all(nominal_only.robot_bound == 0)


def test_nominal_robot_is_the_centre_of_the_robot_box_columns(gen3, rng):
    """``tau_robot = Y_r theta_r`` with the box's nominal ``theta_r`` is pinocchio's RNEA (armature included)."""
    nominal, lower, upper = estimator_robot_box(gen3)
    data = gen3.model.createData()
    for _ in range(5):
        q, v, a = random_state(gen3, rng)
        assert np.allclose(robot_torque_columns(gen3.model, data, q, v, a) @ nominal,
                           pin.rnea(gen3.model, gen3.model.createData(), q, v, a), atol=1e-9)


def test_the_simulated_gen3s_external_effort_stays_inside_its_bound(gen3):
    """The simulated Gen3 as a real arm may be (links, rotors, friction inside the robot box), noisy
    torque sensors within their stated bounds, 1 kHz, moving and held still: every sample inside."""
    truth = robot_model.payload_params("dumbbell_5lb")
    model, friction = perturbed_gen3(gen3, np.random.default_rng(5))
    sim = Simulator(gen3, truth, noise=NoiseModel.from_profile(gen3.spec), seed=4, true_model=model,
                    friction=friction, **{k: getattr(gen3.spec.sim, k) for k in ("kp", "kd", "ki")})
    traj, report = excitation_from_profile(gen3, 3.0)
    assert report.ok
    sim.command(traj)
    half = 0.01 * (1 + np.abs(truth))
    stream = PayloadCompensator(gen3, True, False, gen3.sensing.joint_states_hz)
    box = PayloadBox(truth + 0.3 * half, truth - half, truth + half, True)
    out, speed = [], {}
    for _ in range(4000):
        sim.step()
        m = sim.measure()
        speed[m.t] = np.max(np.abs(m.qd))
        got, pushed = stream.push(m.t, m.q, m.qd, m.tau, box)
        assert not pushed.drops
        out += got
    assert len(out) > 3900 and all(c.kind == "joint_torque" for c in out)
    assert_inside_bound(out, speed, "Gen3", 500)


def test_estimates_that_cannot_be_used_are_rejected_with_a_reason():
    pi = robot_model.payload_params("dumbbell_5lb")
    names = params.parameter_names("payload")
    assert PayloadBox.checked(pi, pi - 1, pi + 1, True, names).guaranteed
    for args, reason in [((pi[:9], pi - 1, pi + 1), "estimate_wrong_length"),
                         ((np.r_[np.nan, pi[1:]], pi - 1, pi + 1), "estimate_non_finite"),
                         ((pi, pi + 1, pi - 1), "estimate_empty_box")]:
        with pytest.raises(EstimateRejected) as exc:
            PayloadBox.checked(*args, True)
        assert exc.value.reason == reason
    with pytest.raises(EstimateRejected, match="payload's 10"):
        PayloadBox.checked(pi, pi - 1, pi + 1, True, ["robot." + n for n in names])
