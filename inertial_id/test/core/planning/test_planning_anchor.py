"""A measured torque anchors the certificates: holding still where the arm stands is certified by
what standing there was measured to take, whatever the payload box (inertial_id.core.planning.anchor)."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.planning.anchor import RecentSamples, anchor_from_samples
from inertial_id.core.planning.bezier import BezierPlan
from inertial_id.core.planning.certifier import CertifierSettings, certify
from inertial_id.core.planning.config import PlannerSettings
from inertial_id.core.planning.receding import RecedingHorizon
from inertial_id.core.robot.model import load_robot, payload_params

pytestmark = pytest.mark.unit

OFFSET_NM = 0.04        # a constant torque offset inside the profile's box (its floor: 0.05 N m)


@pytest.fixture(scope="module")
def gen3():
    robot = load_robot("kinova_gen3")
    return robot, CertifierSettings.from_profile(robot)


def _carrying(robot, payload):
    """The robot's model with ``payload`` (pinocchio order, payload frame) added to its link."""
    model = pin.Model(robot.model)
    frame = model.frames[robot.payload_frame_id]
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(
        pin.Inertia.FromDynamicParameters(np.asarray(payload, dtype=float)))
    return model


def _standing(robot, q0, payload, seconds=0.3):
    """Joint states of the arm standing at q0 with ``payload``: a few mrad of stick-slip, efforts
    from RNEA plus a constant offset, at the driver's rate."""
    hz = robot.sensing.joint_states_hz
    t = np.arange(0.0, seconds, 1.0 / hz)
    w = 2.0 * np.pi / seconds
    amplitude = np.linspace(-2e-3, 2e-3, robot.nv)
    q = q0 + np.outer(np.sin(w * t), amplitude)
    qd = np.outer(w * np.cos(w * t), amplitude)
    qdd = np.outer(-w * w * np.sin(w * t), amplitude)
    model = _carrying(robot, payload)
    data = model.createData()
    effort = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(len(t))]) + OFFSET_NM
    return t, q, qd, effort


def _hold(robot, q):
    planner = robot.spec.planner
    return BezierPlan.holding(q, planner.bezier_degree, planner.horizon_s)


def test_the_measured_torque_certifies_holding_still_with_the_whole_prior(gen3):
    """At the simulator's home the prior payload box does not certify holding still (the profile says
    so: joint 2); the torque measured while standing there does, and the true payload's own box
    certifies either way."""
    robot, settings = gen3
    home = np.asarray(robot.spec.sim.home, dtype=float)
    truth = payload_params("dumbbell_5lb")
    anchor = anchor_from_samples(robot, *_standing(robot, home, truth))
    assert anchor is not None and np.all(anchor.lower_Nm <= anchor.upper_Nm)
    lower, upper = robot.payload_prior()
    plain = certify(robot, settings, _hold(robot, home), lower, upper)
    anchored = certify(robot, settings, _hold(robot, home), lower, upper, torque_anchor=anchor)
    assert not plain.certified and "torque" in plain.reason
    assert anchored.certified, anchored.reason
    assert anchored.min_torque_margin_Nm > plain.min_torque_margin_Nm
    assert certify(robot, settings, _hold(robot, home), truth, truth).certified


def test_an_anchor_does_not_certify_what_the_arm_cannot_do(gen3):
    """The anchor bounds the torque, it does not excuse it: a payload whose measured gravity already
    exceeds a wrist joint's limit does not hold still, anchored or not."""
    robot, settings = gen3
    home = np.asarray(robot.spec.sim.home, dtype=float)
    heavy = payload_params("dumbbell_5lb") * 4.0
    anchor = anchor_from_samples(robot, *_standing(robot, home, heavy))
    lower, upper = robot.payload_prior()
    cert = certify(robot, settings, _hold(robot, home), np.minimum(lower, heavy), np.maximum(upper, heavy),
                   torque_anchor=anchor)
    assert not cert.certified and "torque" in cert.reason


def test_no_anchor_without_joint_torque_or_a_whole_window(gen3):
    robot, _ = gen3
    home = np.asarray(robot.spec.sim.home, dtype=float)
    t, q, qd, effort = _standing(robot, home, payload_params("dumbbell_5lb"))
    window = robot.momentum_window_samples
    assert anchor_from_samples(robot, t[:window], q[:window], qd[:window], effort[:window]) is None
    assert anchor_from_samples(robot, t[:window + 1], q[:window + 1], qd[:window + 1], effort[:window + 1]) is not None
    xarm = load_robot("xarm7")
    assert anchor_from_samples(xarm, t, q, qd, effort) is None


def test_recent_samples_break_at_a_gap_or_a_missing_effort(gen3):
    robot, _ = gen3
    home = np.asarray(robot.spec.sim.home, dtype=float)
    t, q, qd, effort = _standing(robot, home, payload_params("dumbbell_5lb"))
    recent = RecentSamples(robot)
    for k in range(len(t)):
        recent.add(t[k], q[k], qd[k], effort[k])
    assert len(recent.samples) == recent.samples.maxlen and recent.anchor() is not None
    recent.add(t[-1] + 1.0, q[-1], qd[-1], effort[-1])           # a second later: a new stream
    assert len(recent.samples) == 1 and recent.anchor() is None
    recent.add(t[-1] + 1.001, q[-1], qd[-1], None)
    assert len(recent.samples) == 0


def test_a_start_with_the_prior_holds_still_once_anchored_on_the_measured_torque(gen3):
    """A start whose hold the prior does not certify waits; an anchor taken while it waits certifies
    the hold at the next tick and goes into its plan requests; once a hold is certified, the run's
    anchor stays as it is."""
    robot, cert_settings = gen3
    settings = PlannerSettings.from_profile(robot)
    home = np.asarray(robot.spec.sim.home, dtype=float)
    anchor = anchor_from_samples(robot, *_standing(robot, home, payload_params("dumbbell_5lb")))
    rh = RecedingHorizon(robot, settings, cert_settings)
    assert rh.start(0.0, home) and rh.state == "planning" and rh.pending is None
    assert "not certified" in rh.message and rh.awaits_anchor
    assert rh.anchor_on(anchor)
    rh.tick(0.1, 0.0, [])
    assert rh.pending is not None and rh.pending.request.torque_anchor is anchor
    assert not rh.awaits_anchor and not rh.anchor_on(anchor)
