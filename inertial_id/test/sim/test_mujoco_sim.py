"""The MuJoCo simulator (inertial_id.sim): its model is the project's, its sensors follow the
project's conventions, its controller tracks without knowing the payload, its friction acts like
friction, its sensor errors are what they are said to be; and the harness scores a run."""
import numpy as np
import pinocchio as pin
import pytest

mujoco = pytest.importorskip("mujoco", reason="the MuJoCo simulator needs the mujoco package (requirements.lock)")

from inertial_id.core.signals.driver_streams import DriverEmulator, JointStateOut, WrenchOut  # noqa: E402
from inertial_id.core.robot.model import load_robot, model_with_payload  # noqa: E402
from inertial_id.core.robot.regressor import PayloadRegressor  # noqa: E402
from inertial_id.core.trajectory import excitation_from_profile  # noqa: E402
from inertial_id.sim import harness, mjcf  # noqa: E402
from inertial_id.sim.engine import MujocoSimulator  # noqa: E402
from inertial_id.sim.errors import FirstOrderLag, SensorErrors  # noqa: E402

XARM_DAMPING = (10.0, 10.0, 5.0, 5.0, 2.0, 2.0, 2.0)


@pytest.fixture(scope="module")
def xarm7():
    return load_robot("xarm7")


@pytest.fixture(scope="module")
def gen3():
    return load_robot("kinova_gen3")


@pytest.fixture(scope="module")
def payload():
    """1.5 kg, centre of mass off every axis, principal axes tilted from the payload frame's."""
    return mjcf.payload_from_principal(1.5, [0.02, -0.01, 0.08], [0.004, 0.006, 0.008], [0.3, -0.2, 0.5])


def without_armature(model: pin.Model) -> pin.Model:
    m = pin.Model(model)
    m.armature = np.zeros(model.nv)
    return m


def exact_sim(robot, pi, **kw):
    """Rigid links only (no armature, damping or friction), the controller on the same model."""
    return MujocoSimulator(robot, pi, plant=mjcf.JointPlant.ideal(robot.nv),
                           controller_model=without_armature(robot.model), **kw)


def test_mjcf_is_the_projects_model(xarm7, payload):
    xml = mjcf.build_mjcf(xarm7, payload, mjcf.JointPlant.make(7, 0.1, XARM_DAMPING, 1.0))
    m = mjcf.compile_model(xml)
    assert (m.nv, m.nu, m.nsensor) == (7, 7, 2)
    assert [m.joint(i).name for i in range(m.njnt)] == list(xarm7.joint_names)
    body = m.body(mjcf.PAYLOAD_BODY)
    assert body.mass[0] == pytest.approx(1.5, rel=1e-12)
    assert m.body_parentid[body.id] == m.body("link7").id
    assert np.allclose(m.dof_armature, 0.1) and np.allclose(m.dof_damping, XARM_DAMPING)
    assert np.allclose(m.dof_frictionloss, 1.0)
    assert np.allclose(m.opt.gravity, xarm7.model.gravity.linear)
    # a payload-free arm still carries the (massless) sensor body
    assert mjcf.compile_model(mjcf.build_mjcf(xarm7, np.zeros(10))).body(mjcf.PAYLOAD_BODY).mass[0] == 0.0


@pytest.mark.parametrize("name", ["xarm7", "kinova_gen3"])
def test_wrench_and_torque_match_pinocchio_rnea_at_rest_and_in_motion(name, payload):
    """Same model, no friction, no armature: MuJoCo's F/T reading is the project's wrench-row
    model ``A(q, qd, qdd) pi`` (sensor on the payload, sensor frame, about its origin) and its
    output-side joint torque the RNEA of links and payload, to 1e-6 relative, at rest and moving."""
    robot = load_robot(name)
    sim = exact_sim(robot, payload)
    reg = PayloadRegressor(robot) if robot.ft_frame_id is not None else None
    plant = without_armature(model_with_payload(robot, payload))
    data = plant.createData()
    traj, _ = excitation_from_profile(robot, 3.0)

    def check(tr):
        tau_rnea = pin.rnea(plant, data, tr.q, tr.qd, tr.qdd)
        scale = max(1.0, np.abs(tau_rnea).max())
        assert np.abs(tr.tau_output_Nm - tau_rnea).max() <= 1e-6 * scale
        assert np.abs(tr.tau_motor_Nm - tau_rnea).max() <= 1e-6 * scale     # no drive losses here
        if reg is not None:
            A, _ = reg.wrench_rows(tr.q, tr.qd, tr.qdd, np.zeros(6))
            w = A @ payload
            assert np.abs(tr.wrench_S - w).max() <= 1e-6 * np.abs(w).max()

    sim.step()                       # from rest: the first step reads the state at rest
    assert np.all(sim.truth.qd == 0.0)
    check(sim.truth)
    if reg is not None:              # at rest the sensor holds the payload up against gravity
        f_S = sim.truth.wrench_S[:3]
        assert np.linalg.norm(f_S) == pytest.approx(1.5 * 9.81, rel=1e-3)
    sim.command(traj)
    moving = 0
    for k in range(2500):
        sim.step()
        if k % 50 == 0:
            check(sim.truth)
            moving += np.abs(sim.truth.qd).max() > 0.1
    assert moving > 20


def test_output_side_torque_is_motor_torque_minus_the_drives_losses(xarm7, payload):
    """Armature, damping and Coulomb friction sit before the torque sensor: the output-side torque
    is still the links' RNEA; the motor torque adds armature qdd + damping qd + friction."""
    plant = mjcf.JointPlant.make(7, 0.1, XARM_DAMPING, 1.0)
    sim = MujocoSimulator(xarm7, payload, plant=plant)
    links = without_armature(model_with_payload(xarm7, payload))
    data = links.createData()
    sim.command(excitation_from_profile(xarm7, 3.0)[0])
    for k in range(2000):
        sim.step()
        if k % 40:
            continue
        tr = sim.truth
        tau_links = pin.rnea(links, data, tr.q, tr.qd, tr.qdd)
        assert np.allclose(tr.tau_output_Nm, tau_links, atol=1e-8)
        losses = tr.tau_motor_Nm - tr.tau_output_Nm
        assert np.allclose(losses, 0.1 * tr.qdd + np.asarray(XARM_DAMPING) * tr.qd - tr.tau_friction_Nm, atol=1e-8)
        assert np.all(np.abs(tr.tau_friction_Nm) <= 1.0 + 1e-9)
    motor = MujocoSimulator(xarm7, payload, plant=plant, torque_sensor="motor")
    motor.step()
    assert np.allclose(motor.measure().tau, motor.truth.tau_motor_Nm)


@pytest.mark.parametrize("name, mass", [("xarm7", 2.5), ("kinova_gen3", 2.0)])
def test_controller_tracks_a_fourier_trajectory_with_a_payload_it_does_not_know(name, mass):
    robot = load_robot(name)
    pi = mjcf.payload_from_principal(mass, [0.01, 0.02, 0.1], [0.01, 0.012, 0.006], [0.4, 0.1, -0.3])
    plant = mjcf.JointPlant.make(robot.nv, 0.1, XARM_DAMPING, 1.0)
    sim = MujocoSimulator.from_profile(robot, pi, noise=False, plant=plant)
    traj, report = excitation_from_profile(robot, 5.0)
    assert report.ok
    sim.command(traj)
    rec = sim.record(6.5, rate_hz=100.0)           # the trajectory, then 1.5 s holding its end
    error = np.abs(rec.q_true - rec.q_desired)
    moved = np.abs(rec.q_desired - rec.q_desired[0]).max(axis=0)
    assert np.all(moved > 0.1)                      # every joint moved
    assert error.max() < 0.08                       # rad: bounded, for all joints and all the run
    assert np.sqrt((error ** 2).mean()) < 0.02
    # holding the end point: the integrator took up the payload's weight; what is left is the
    # stick-slip of an integral controller against Coulomb friction, a few mrad
    assert error[-30:].max() < 0.01
    assert np.all(np.abs(sim.tau) <= robot.torque_limit)


def test_coulomb_friction_makes_the_acceleration_jump_at_a_velocity_reversal(xarm7, payload):
    """At a reversal the friction torque flips from +Fc to -Fc within a few ms (the joint sticks,
    then breaks away): the acceleration jumps; without friction it changes smoothly."""
    traj, _ = excitation_from_profile(xarm7, 4.0)
    runs = {}
    for fc in (0.0, 1.0):
        sim = MujocoSimulator(xarm7, payload, plant=mjcf.JointPlant.make(7, 0.1, XARM_DAMPING, fc))
        sim.command(traj)
        runs[fc] = sim.record(4.0, rate_hz=1000.0)
    fric, free = runs[1.0], runs[0.0]
    jumps = []
    for j in range(7):
        v = fric.qd_true[:, j]
        for k in np.flatnonzero(v[1:] * v[:-1] < 0):
            if k < 200 or k > v.size - 200 or abs(free.qdd_true[k, j]) < 1.0:
                continue                         # a reversal with a clear acceleration through it
            span = slice(k - 100, k + 100)
            d_fric = np.abs(fric.qdd_true[span.start + 10:span.stop, j] - fric.qdd_true[span.start:span.stop - 10, j])
            d_free = np.abs(free.qdd_true[span.start + 10:span.stop, j] - free.qdd_true[span.start:span.stop - 10, j])
            jumps.append((j, k, d_fric.max(), d_free.max()))
    assert jumps, "no reversal with a clear acceleration through it"
    for j, k, d_fric, d_free in jumps:
        # within 10 ms the acceleration changes by more than 0.5 rad/s^2 (1 N m on the rotor's and
        # links' inertia), 5x what the same motion does without friction (measured: 0.8 to 2.5
        # rad/s^2 against 0.003 to 0.2)
        assert d_fric > 0.5 and d_fric > 5 * d_free, (j, k, d_fric, d_free)


def _tube_breaches(robot, sim, traj, duration_s: float) -> list[str]:
    """The planner's tube monitor (the profile's certified tube) over the true state at the
    driver's rate, around the commanded trajectory."""
    from inertial_id.core.planning.certifier import CertifierSettings
    from inertial_id.core.planning.monitor import TubeMonitor
    from inertial_id.core.planning.optimizer import tube_margins
    monitor = TubeMonitor(tube_margins(CertifierSettings.from_profile(robot), robot.nv), robot.position_lower,
                          robot.position_upper, robot.velocity_limit)
    sim.command(traj)
    rec = sim.record(duration_s)
    return [why for t, q, qd in zip(rec.t, rec.q_true, rec.qd_true)
            if (why := monitor.check_tube(t, q, qd, sim.desired(t)[:2]))]


def test_a_servo_that_compensates_its_own_friction_holds_the_certified_tube(xarm7, payload):
    """Coulomb friction the controller does not compensate drives the wrist out of the xArm7's
    certified acceleration tube at reversals; compensating the friction it was calibrated with
    (not the payload) keeps it in."""
    traj, _ = excitation_from_profile(xarm7, 4.0)
    plant = mjcf.JointPlant.from_profile(xarm7, damping=2.0, frictionloss=1.0)
    bare = _tube_breaches(xarm7, MujocoSimulator(xarm7, payload, plant=plant), traj, 4.0)
    assert bare and "rad/s^2" in bare[0]
    servo = MujocoSimulator(xarm7, payload, plant=plant, friction_compensation=1.0)
    assert _tube_breaches(xarm7, servo, traj, 4.0) == []
    with pytest.raises(ValueError, match="friction_compensation"):
        MujocoSimulator(xarm7, payload, plant=plant, friction_compensation=1.5)


def test_ft_offset_drift_and_bias_appear_in_the_reading(xarm7, payload):
    offset = np.array([0.5, -0.3, 0.2, 0.01, -0.02, 0.005])
    drift = np.array([0.01, 0.0, -0.02, 0.0, 0.001, 0.0])
    errors = SensorErrors(wrench_offset=tuple(offset), wrench_drift_per_s=tuple(drift))
    sim = MujocoSimulator(xarm7, payload, errors=errors)
    for _ in range(1500):
        sim.step()
    m = sim.measure()
    assert np.allclose(m.wrench - sim.truth.wrench_S, offset + drift * m.t, atol=1e-12)
    # the worst constant bias the stated bounds allow: exactly at the bound, the same sign every sample
    errors = SensorErrors.at_profile_bounds(xarm7, "bias")
    bound = np.asarray(errors.wrench_bound)
    assert np.allclose(bound, [0.3, 0.3, 0.3, 0.015, 0.015, 0.015])
    sim = MujocoSimulator(xarm7, payload, errors=errors, seed=3)
    seen = []
    for _ in range(20):
        sim.step()
        seen.append(sim.measure().wrench - sim.truth.wrench_S)
    seen = np.array(seen)
    assert np.allclose(np.abs(seen), bound) and np.all(seen == seen[0])
    for kind in ("uniform", "gaussian_clipped"):
        sim = MujocoSimulator(xarm7, payload, errors=SensorErrors.at_profile_bounds(xarm7, kind), seed=1)
        e = []
        for _ in range(300):
            sim.step()
            m = sim.measure()
            e.append(np.r_[m.wrench - sim.truth.wrench_S, (m.tau - sim.truth.tau_output_Nm)
                           / (0.025 * np.abs(sim.truth.tau_output_Nm) + 0.05)])
        e = np.abs(np.array(e))
        assert np.all(e[:, :6] <= bound + 1e-12) and np.all(e[:, 6:] <= 1 + 1e-12)
        assert np.all(e[:, :6].max(axis=0) > 0.5 * bound)       # spread over the bound, not collapsed


def test_filter_lag_delays_the_reading():
    lag = FirstOrderLag(0.02, 0.001)
    lag(np.zeros(1))
    y = [lag(np.ones(1))[0] for _ in range(20)]
    assert y[19] == pytest.approx(1 - np.exp(-1), rel=1e-12)        # one time constant: 63 %
    assert FirstOrderLag(0.0, 0.001)(np.array([3.0]))[0] == 3.0


def test_driver_rates_and_the_record_sim_interface(xarm7, gen3, payload):
    sim = MujocoSimulator.from_profile(xarm7, payload)
    rec = sim.record(0.5)
    assert np.allclose(np.diff(rec.t), 0.01) and rec.wrench.shape == (rec.t.size, 6)     # the xArm driver: 100 Hz
    rec = MujocoSimulator.from_profile(gen3, payload).record(0.05)
    assert np.allclose(np.diff(rec.t), 0.001) and rec.wrench is None                      # ros2_kortex: 1 kHz
    # driven as record-sim drives the pinocchio simulator
    sim = MujocoSimulator.from_profile(xarm7, payload)
    driver = DriverEmulator(xarm7, 1.0 / sim.dt)
    out = []
    for _ in range(200):
        sim.step()
        if driver.due(sim.t - sim.dt):
            out += driver.outputs(sim.measure())
    topics = {o.topic for o in out}
    assert {"/xarm/joint_states", "/joint_states", "/xarm/uf_ftsensor_ext_states"} <= topics
    assert sum(isinstance(o, WrenchOut) for o in out) == 20
    assert all(np.all(np.isfinite(o.position)) for o in out if isinstance(o, JointStateOut))


def test_harness_scores_an_exact_frictionless_run():
    """Exact sensors, no friction: the box must hold the truth, and the scoring must say so."""
    case = harness.Case("exact", distribution="none", frictionloss_Nm=0.0, duration_s=4.0)
    r = harness.run_case(case)
    assert r["samples_used"] >= 100           # of 450: the row builder may leave samples out (counted)
    assert r["bounds_guaranteed"] and r["data_consistent"] and r["all_inside"] and not r["silent_wrong_answer"]
    assert r["rows"]["beyond_bound"] == 0 and r["rows"]["rows"] == 6 * r["samples_used"]
    # kg; the prior is 5.2 wide. 4 s of motion leave the F/T offset at its stated box: the box holds
    # whatever it is there (core.estimators.offset_freeing), 2.5 kg
    assert abs(r["point_error"][0]) < 0.02 and r["width"][0] < 3.5
    assert r["central_difference"]["elsewhere"]["max_force_error_N"] < 0.05
