"""The certifier's enclosures are sound: dense 1 kHz samples of random plans, parameter draws (box
corners included) and tracking-error perturbations, evaluated with pinocchio (RNEA, forward
kinematics) on models built independently of the certifier, never leave the enclosures."""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import params
from inertial_id.core.robot.model import ProfileError, load_robot, payload_params
from inertial_id.core.robot.profile import validate
from inertial_id.core.planning import collision, enclosure
from inertial_id.core.planning.anchor import anchor_from_samples
from inertial_id.core.planning.bezier import BezierPlan
from inertial_id.core.planning.certifier import CertifierSettings, certify, limit_margins

pytestmark = pytest.mark.slow          # dense dynamics samples against the enclosures

N_PLANS = 200
DUMBBELLS = ["dumbbell_4lb", "dumbbell_5lb", "dumbbell_6lb", "dumbbell_7lb", "dumbbell_8lb"]


@pytest.fixture(scope="module")
def gen3():
    robot = load_robot("kinova_gen3")
    settings = CertifierSettings.from_profile(robot)
    return robot, settings, enclosure.TorqueContext.build(robot, settings)


def _random_plan(rng, robot, home):
    n = robot.nv
    lower = np.maximum(robot.position_lower, home - 2.0)
    upper = np.minimum(robot.position_upper, home + 2.0)
    q0 = rng.uniform(lower, upper)
    qd0 = rng.uniform(-0.6, 0.6, n) * robot.velocity_limit
    qdd0 = rng.uniform(-0.6, 0.6, n) * robot.acceleration_limit
    free = q0 + rng.uniform(-0.6, 0.6, (rng.integers(1, 4), n))
    return BezierPlan.from_state(q0, qd0, qdd0, free, rng.uniform(1.5, 3.0))


def _dense(plan, rng, tube, hz=1000.0):
    """Samples at hz of the plan plus a tracking error inside the tube (a quarter of them at the tube's
    corners)."""
    t = np.arange(0.0, plan.duration_s, 1.0 / hz)
    states = list(plan.evaluate(t))
    for k in range(3):
        e = rng.uniform(-1.0, 1.0, states[k].shape)
        corner = rng.random(len(t)) < 0.25
        e[corner] = np.sign(e[corner])
        states[k] = states[k] + e * tube[k]
    return t, states


def _true_model(robot, ctx, rng, payload_centre, payload_radius, corner):
    """A model with robot link parameters and payload drawn inside their boxes (at a corner or inside),
    built with pinocchio: links from dynamic parameters, the payload added with pinocchio's own frame
    transform of inertias (the linear map of params.transform_matrix only when the drawn mass is ~0,
    where pinocchio's centre-of-mass form is undefined)."""
    model = pin.Model(robot.model)
    draw = (lambda shape: rng.choice([-1.0, 1.0], shape)) if corner else (lambda shape: rng.uniform(-1, 1, shape))
    payload = payload_centre + payload_radius * draw(10)
    frame = model.frames[robot.payload_frame_id]
    for i in range(1, model.njoints):
        theta = model.inertias[i].toDynamicParameters() + ctx.theta_radius[i - 1] * draw(10)
        if i == frame.parentJoint and abs(payload[0]) < 1e-3:
            theta = theta + params.transform_matrix(frame.placement) @ payload
        model.inertias[i] = pin.Inertia.FromDynamicParameters(theta)
        if i == frame.parentJoint and abs(payload[0]) >= 1e-3:
            model.inertias[i] = model.inertias[i] + frame.placement.act(pin.Inertia.FromDynamicParameters(payload))
    return model


def _friction(ctx, rng, corner):
    """[Fc, Fv, dIa, beta] per joint (n, 4) drawn inside the certifier's friction box (at a corner or inside)."""
    draw = rng.choice([-1.0, 1.0], ctx.friction_radius.shape) if corner else rng.uniform(-1, 1, ctx.friction_radius.shape)
    return ctx.friction_radius * draw


def _friction_torque(f, qd, qdd):
    return f[:, 0] * np.sign(qd) + f[:, 1] * qd + f[:, 2] * qdd + f[:, 3]


def _payload_box(rng, robot):
    lo, hi = robot.payload_prior()
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return payload_params("box_1kg"), rng.uniform(0.0, 0.3, 10) * np.r_[1.0, [0.05] * 3, [0.02] * 6]
    if rng.random() < 0.3:
        return 0.5 * (lo + hi), 0.5 * (hi - lo)
    centre = payload_params(DUMBBELLS[rng.integers(len(DUMBBELLS))])
    return centre, rng.uniform(0.0, 0.3, 10) * 0.5 * (hi - lo)


def _home(robot):
    return np.asarray(robot.spec.sim.home, dtype=float)


@pytest.mark.parametrize("name, n_plans", [("kinova_gen3", N_PLANS), ("xarm7", 15), ("digit_arm", 15)])
def test_torque_enclosure_contains_dense_rnea_samples(gen3, name, n_plans):
    """Gen3 (200 plans), and fewer on the xArm7 and on the Digit arm (a joint axis that is not a
    coordinate axis: the general rotation path)."""
    if name == "kinova_gen3":
        robot, settings, ctx = gen3
    else:
        robot = load_robot(name)
        settings = CertifierSettings.from_profile(robot)
        ctx = enclosure.TorqueContext.build(robot, settings)
    rng = np.random.default_rng(20261122)
    home = _home(robot)
    tube = ctx.tube
    K = settings.time_intervals
    n_samples = 0
    for trial in range(n_plans):
        plan = _random_plan(rng, robot, home)
        centre, radius = _payload_box(rng, robot)
        h = plan.duration_s / K
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * h
        lo, hi = enclosure.torque_bounds(ctx, plan, bounds, centre, radius)
        assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
        t, (q, qd, qdd) = _dense(plan, rng, tube)
        k = np.minimum((t / h).astype(int), K - 1)
        models = [_true_model(robot, ctx, rng, centre, radius, corner) for corner in (True, False)]
        frictions = [_friction(ctx, rng, corner) for corner in (True, False)]
        datas = [m.createData() for m in models]
        tau = np.empty_like(q)
        for s in range(len(t)):
            tau[s] = pin.rnea(models[s % 2], datas[s % 2], q[s], qd[s], qdd[s]) + \
                _friction_torque(frictions[s % 2], qd[s], qdd[s])
        # pinocchio's own float rounding (the reference is not exact either): 1e-9 N m
        below = tau < lo[k] - 1e-9
        above = tau > hi[k] + 1e-9
        assert not below.any() and not above.any(), (
            f"plan {trial}: {below.sum() + above.sum()} samples outside the enclosure, worst "
            f"{max((lo[k] - tau)[below].max(initial=0), (tau - hi[k])[above].max(initial=0)):.3g} N m")
        n_samples += len(t)
    assert n_samples >= n_plans * 1400


def _creep(q0, amplitude_rad, duration_s=0.25, hz=1000.0):
    """A window of slow motion about q0 (a standing arm's stick-slip): samples t, q, qd, qdd."""
    t = np.arange(0.0, duration_s, 1.0 / hz)
    w = 2.0 * np.pi / duration_s
    q = q0 + np.outer(np.sin(w * t), amplitude_rad)
    qd = np.outer(w * np.cos(w * t), amplitude_rad)
    qdd = np.outer(-w * w * np.sin(w * t), amplitude_rad)
    return t, q, qd, qdd


def test_anchored_torque_enclosure_contains_dense_rnea_samples(gen3):
    """A torque anchor measured on the true arm (a momentum window while it creeps about q0: efforts
    from RNEA, friction and a constant offset of a model drawn inside the boxes) narrows the
    enclosure of plans from q0 (never widens it) and every dense sample of the true torque stays
    inside, for payload boxes up to the whole prior."""
    robot, settings, ctx = gen3
    rng = np.random.default_rng(20261126)
    home = _home(robot)
    n = robot.nv
    K = settings.time_intervals
    narrower = []
    for trial in range(12):
        q0 = home + rng.uniform(-0.3, 0.3, n)
        centre, radius = _payload_box(rng, robot)
        if trial % 3 == 0:
            lo_p, hi_p = robot.payload_prior()
            centre, radius = 0.5 * (lo_p + hi_p), 0.5 * (hi_p - lo_p)
        corner = bool(trial % 2)
        model, friction = _true_model(robot, ctx, rng, centre, radius, corner), _friction(ctx, rng, corner)
        data = model.createData()
        t, q, qd, qdd = _creep(q0, rng.uniform(-2e-3, 2e-3, n))
        effort = np.array([pin.rnea(model, data, q[s], qd[s], qdd[s]) + _friction_torque(friction, qd[s], qdd[s])
                           for s in range(len(t))])
        anchor = anchor_from_samples(robot, t, q, qd, effort)
        assert anchor is not None
        plan = BezierPlan.from_state(q0, np.zeros(n), np.zeros(n), q0 + rng.uniform(-0.3, 0.3, (2, n)), 3.0)
        h = plan.duration_s / K
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * h
        lo, hi = enclosure.torque_bounds(ctx, plan, bounds, centre, radius, anchor)
        lo0, hi0 = enclosure.torque_bounds(ctx, plan, bounds, centre, radius)
        assert np.all(lo >= lo0) and np.all(hi <= hi0)
        narrower.append(float(np.median((hi - lo)[0] / (hi0 - lo0)[0])))
        ts, (qs, qds, qdds) = _dense(plan, rng, ctx.tube)
        k = np.minimum((ts / h).astype(int), K - 1)
        tau = np.array([pin.rnea(model, data, qs[s], qds[s], qdds[s]) + _friction_torque(friction, qds[s], qdds[s])
                        for s in range(len(ts))])
        below, above = tau < lo[k] - 1e-9, tau > hi[k] + 1e-9
        assert not below.any() and not above.any(), (
            f"plan {trial}: {below.sum() + above.sum()} samples outside the anchored enclosure, worst "
            f"{max((lo[k] - tau)[below].max(initial=0), (tau - hi[k])[above].max(initial=0)):.3g} N m")
    # at the start of a plan, the measured torque decides: the median joint's enclosure shrinks (to
    # 0.681 of its width with the Gen3's 0.6 rad/s^2 acceleration tube, 0.709 with its 0.8: the
    # tube's share is the same with and without the anchor)
    assert np.median(narrower) < 0.75, narrower


def test_torque_enclosure_is_tight_without_uncertainty(gen3):
    """With no tube and point parameters, the sub-interval enclosure is within a small factor of the
    sampled torque range (wrapping would make it many times wider)."""
    robot, settings, ctx = gen3
    zero = np.zeros(robot.nv)
    ctx0 = dataclasses.replace(ctx, tube=np.zeros((3, robot.nv)), theta_radius=np.zeros_like(ctx.theta_radius),
                               friction_radius=np.zeros_like(ctx.friction_radius))
    rng = np.random.default_rng(7)
    home = np.asarray(robot.spec.sim.home, dtype=float)
    payload = payload_params("dumbbell_6lb")
    model = _true_model(robot, ctx0, rng, payload, np.zeros(10), corner=False)
    data = model.createData()
    ratios = []
    for _ in range(10):
        plan = BezierPlan.from_state(home, zero, zero, home + rng.uniform(-0.5, 0.5, (2, robot.nv)), 3.0)
        K = settings.time_intervals
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * (3.0 / K)
        lo, hi = enclosure.torque_bounds(ctx0, plan, bounds, payload, np.zeros(10))
        t = np.arange(0.0, 3.0, 1e-3)
        q, qd, qdd = plan.evaluate(t)
        tau = np.array([pin.rnea(model, data, q[s], qd[s], qdd[s]) for s in range(len(t))])
        k = np.minimum((t / (3.0 / K)).astype(int), K - 1)
        assert np.all(tau >= lo[k] - 1e-9) and np.all(tau <= hi[k] + 1e-9)
        sampled = np.array([np.ptp(tau[k == s], axis=0) for s in range(K)])
        ratios.append(np.median((hi - lo) / np.maximum(sampled, 1e-3)))
    assert np.median(ratios) < 2.0


def test_point_enclosure_matches_pinocchio_rnea_and_regressor(gen3):
    """On tiny sub-intervals with no tube: the centre is pinocchio's RNEA, and the spread caused by one
    parameter's radius is |regressor entry| (pinocchio.computeJointTorqueRegressor)."""
    robot, settings, ctx = gen3
    n = robot.nv
    rng = np.random.default_rng(3)
    home = np.asarray(robot.spec.sim.home, dtype=float)
    plan = _random_plan(rng, robot, home)
    payload = payload_params("dumbbell_5lb")
    times = rng.uniform(0.0, plan.duration_s - 1e-6, 5)
    bounds = np.stack([times, times + 1e-9], axis=1)
    ctx0 = dataclasses.replace(ctx, tube=np.zeros((3, n)), theta_radius=np.zeros_like(ctx.theta_radius),
                               friction_radius=np.zeros_like(ctx.friction_radius))
    lo, hi = enclosure.torque_bounds(ctx0, plan, bounds, payload, np.zeros(10))
    model = _true_model(robot, ctx0, rng, payload, np.zeros(10), corner=False)
    data = model.createData()
    q, qd, qdd = plan.evaluate(times)
    for s in range(len(times)):
        tau = pin.rnea(model, data, q[s], qd[s], qdd[s])
        np.testing.assert_allclose(0.5 * (lo[s] + hi[s]), tau, atol=1e-6)
        assert np.all(hi[s] - lo[s] < 1e-5)
    data_r = robot.model.createData()
    for _ in range(6):
        b, p = rng.integers(n), rng.integers(10)
        radius = np.zeros_like(ctx.theta_radius)
        radius[b, p] = 1.0
        lo, hi = enclosure.torque_bounds(dataclasses.replace(ctx0, theta_radius=radius), plan, bounds,
                                         payload, np.zeros(10))
        for s in range(len(times)):
            Y = pin.computeJointTorqueRegressor(robot.model, data_r, q[s], qd[s], qdd[s])
            np.testing.assert_allclose(0.5 * (hi[s] - lo[s]), np.abs(Y[:, 10 * b + p]), atol=1e-5)


def _segment_box_distance(p0, p1, box_lo, box_hi, iters=60):
    """Exact distance (to ~1e-12) between segments p0-p1 (N, 3) and a box: golden-section search of the
    convex point-to-box distance along the segment."""
    def dist(lam):
        p = p0 + lam[:, None] * (p1 - p0)
        gap = np.maximum(np.maximum(box_lo - p, p - box_hi), 0.0)
        return np.sqrt((gap * gap).sum(-1))
    a, b = np.zeros(len(p0)), np.ones(len(p0))
    g = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iters):
        c, d = b - g * (b - a), a + g * (b - a)
        left = dist(c) < dist(d)
        b = np.where(left, d, b)
        a = np.where(left, a, c)
    return np.minimum(np.minimum(dist(a), dist(0.5 * (a + b))), np.minimum(dist(np.zeros(len(p0))),
                                                                          dist(np.ones(len(p0)))))


def test_collision_enclosure_sound_against_dense_forward_kinematics(gen3):
    robot, settings, ctx = gen3
    rng = np.random.default_rng(11)
    home = np.asarray(robot.spec.sim.home, dtype=float)
    model, data = robot.model, robot.model.createData()
    K = settings.time_intervals
    for trial in range(15):
        boxes = tuple(collision.Box(f"b{i}", rng.uniform([-0.6, -0.6, 0.0], [0.6, 0.6, 1.0]),
                                    rng.uniform(0.05, 0.3, 3)) for i in range(3))
        st = dataclasses.replace(settings, obstacles=boxes)
        plan = _random_plan(rng, robot, home)
        h = plan.duration_s / K
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * h
        pts_lo, pts_hi = collision.capsule_point_boxes(ctx, plan, bounds)
        clearance, _ = collision.clearance_bounds(ctx, st, plan, bounds)
        t, (q, _, _) = _dense(plan, rng, ctx.tube, hz=500.0)
        k = np.minimum((t / h).astype(int), K - 1)
        ends = np.empty((len(t), len(st.capsules), 2, 3))
        for s in range(len(t)):
            pin.framesForwardKinematics(model, data, q[s])
            for c, cap in enumerate(st.capsules):
                M = data.oMf[cap.frame_id]
                ends[s, c] = M.act(cap.p0), M.act(cap.p1)
        assert np.all(ends >= pts_lo[k] - 1e-12) and np.all(ends <= pts_hi[k] + 1e-12)
        true = np.full(len(t), np.inf)
        for c, cap in enumerate(st.capsules):
            for box in boxes:
                d = _segment_box_distance(ends[:, c, 0], ends[:, c, 1], box.lower, box.upper) - cap.radius
                true = np.minimum(true, d)
        assert np.all(clearance[k] <= true + 1e-9), f"plan {trial}: clearance bound above the true distance"


def test_limit_margins_sound_against_dense_samples(gen3):
    robot, settings, ctx = gen3
    rng = np.random.default_rng(5)
    home = np.asarray(robot.spec.sim.home, dtype=float)
    limits = ((robot.position_lower, robot.position_upper), (-robot.velocity_limit, robot.velocity_limit),
              (-robot.acceleration_limit, robot.acceleration_limit))
    for _ in range(50):
        plan = _random_plan(rng, robot, home)
        margins = limit_margins(robot, settings, plan, settings.time_intervals)
        t = np.linspace(0.0, plan.duration_s, 3001)
        for (lower, upper), values, tube, (margin, _) in zip(limits, plan.evaluate(t), ctx.tube, margins):
            sampled = np.minimum(upper - (values.max(0) + tube), (values.min(0) - tube) - lower)
            assert np.all(margin <= sampled + 1e-12)
            assert np.all(margin >= sampled - 0.05 * (upper - lower))      # and not vacuous


def test_certify_reports_finite_margins_and_reasons(gen3):
    robot, settings, ctx = gen3
    n = robot.nv
    home = np.asarray(robot.spec.sim.home, dtype=float)
    truth = payload_params("dumbbell_5lb")
    hold = BezierPlan.from_state(home, np.zeros(n), np.zeros(n), home[None, :], 3.0)
    small = certify(robot, settings, hold, truth - 0.01, truth + 0.01, ctx)
    assert small.certified and small.reason == ""
    for value in dataclasses.astuple(small)[1:6]:
        assert np.isfinite(value)
    assert small.min_obstacle_clearance_m == 1.0e3
    # a plan through the position limit of joint 2 is rejected and the reason names it
    far = home.copy()
    far[1] = robot.position_upper[1] + 0.2
    bad = certify(robot, settings, BezierPlan.from_state(home, np.zeros(n), np.zeros(n), far[None, :], 3.0),
                  truth - 0.01, truth + 0.01, ctx)
    assert not bad.certified and "position" in bad.reason and robot.joint_names[1] in bad.reason
    assert bad.min_joint_margin_rad < 0.0
    # an obstacle on the arm's path: not certified, clearance negative, reason names the obstacle
    pin.framesForwardKinematics(robot.model, robot.model.createData(), home)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, home)
    wrist = data.oMf[settings.capsules[-2].frame_id].translation
    st = dataclasses.replace(settings, obstacles=(collision.Box("block", wrist, np.full(3, 0.05)),))
    hit = certify(robot, st, hold, truth - 0.01, truth + 0.01, ctx)
    assert not hit.certified and hit.min_obstacle_clearance_m < 0.0 and "block" in hit.reason


@pytest.mark.parametrize("path, value, field", [
    (("planner", "time_intervals"), 0, "planner.time_intervals"),
    (("planner", "torque_margin_Nm"), -1.0, "planner.torque_margin_Nm"),
    (("planner", "tracking_error", "velocity_rad_s"), "fast", "planner.tracking_error.velocity_rad_s"),
    (("planner", "robot_absolute_floor", "inertia_kg_m2"), None, "planner.robot_absolute_floor.inertia_kg_m2"),
    (("planner", "capsules"), [{"frame": "nope", "p0": [0, 0, 0], "p1": [0, 0, 0], "radius": 0.1}],
     "planner.capsules[0].frame"),
    (("obstacles",), [{"name": "a", "center": [0, 0], "size": [1, 1, 1]}], "obstacles[0].center"),
    (("identification", "robot_relative_error"), float("nan"), "identification.robot_relative_error"),
])
def test_settings_errors_name_the_field(gen3, path, value, field):
    robot = gen3[0]
    section = validate(robot.spec, robot.name)[path[0]]     # the mapping a YAML edit would change
    if len(path) == 1:                                      # a whole section replaced
        section = value
    else:
        node = section
        for key in path[1:-1]:
            node = node[key]
        node[path[-1]] = value
    with pytest.raises(ProfileError, match=field.replace("[", r"\[").replace("]", r"\]")):
        CertifierSettings.from_profile(robot.with_profile(**{path[0]: section}))


def test_profiles_have_certifier_settings():
    for name in ("kinova_gen3", "xarm7"):
        robot = load_robot(name)
        settings = CertifierSettings.from_profile(robot)
        assert settings.capsules and settings.time_intervals >= 1


def test_capsule_points_enclosed_on_digit_arm():
    """Forward kinematics with a joint axis that is not a coordinate axis (general rotation path)."""
    robot = load_robot("digit_arm")
    settings = CertifierSettings.from_profile(robot)
    ctx = enclosure.TorqueContext.build(robot, settings)
    rng = np.random.default_rng(13)
    model, data = robot.model, robot.model.createData()
    K = settings.time_intervals
    for _ in range(10):
        plan = _random_plan(rng, robot, _home(robot))
        h = plan.duration_s / K
        bounds = np.stack([np.arange(K), np.arange(1, K + 1)], axis=1) * h
        lo, hi = collision.capsule_point_boxes(ctx, plan, bounds)
        t, (q, _, _) = _dense(plan, rng, ctx.tube, hz=500.0)
        k = np.minimum((t / h).astype(int), K - 1)
        for s in range(len(t)):
            pin.framesForwardKinematics(model, data, q[s])
            for c, cap in enumerate(settings.capsules):
                M = data.oMf[cap.frame_id]
                for e, p in enumerate((cap.p0, cap.p1)):
                    x = M.act(p)
                    assert np.all(x >= lo[k[s], c, e] - 1e-12) and np.all(x <= hi[k[s], c, e] + 1e-12)


def test_a_tilted_base_is_one_profile_entry_the_certifier_and_the_regressors_follow():
    """dynamics.gravity_m_s2 (a wall-mounted Gen3: gravity along -x of its base) sets the model's
    gravity; the certifier's point enclosure at rest is pinocchio's RNEA with it, which differs from
    the upright arm's by far more than the enclosure's width, and the payload rows at rest predict the
    measured torques with it."""
    from inertial_id.core.robot.model import load_profile
    from inertial_id.core.robot.regressor import PayloadRegressor
    raw = {k: v for k, v in load_profile("kinova_gen3").items() if k != "_path"}
    raw["dynamics"] = {**raw["dynamics"], "gravity_m_s2": [-9.81, 0.0, 0.0]}
    robot = load_robot(raw)
    np.testing.assert_array_equal(robot.model.gravity.linear, [-9.81, 0.0, 0.0])
    settings = CertifierSettings.from_profile(robot)
    n = robot.nv
    ctx = enclosure.TorqueContext.build(robot, settings)
    ctx0 = dataclasses.replace(ctx, tube=np.zeros((3, n)), theta_radius=np.zeros_like(ctx.theta_radius),
                               friction_radius=np.zeros_like(ctx.friction_radius))
    home = np.asarray(robot.spec.sim.home, dtype=float)
    payload = payload_params("dumbbell_5lb")
    hold = BezierPlan(np.tile(home, (6, 1)), 3.0)
    lo, hi = enclosure.torque_bounds(ctx0, hold, np.array([[1.0, 1.0 + 1e-9]]), payload, np.zeros(10))
    model = _true_model(robot, ctx0, np.random.default_rng(0), payload, np.zeros(10), corner=False)
    tau_tilted = pin.rnea(model, model.createData(), home, np.zeros(n), np.zeros(n))
    np.testing.assert_allclose(0.5 * (lo[0] + hi[0]), tau_tilted, atol=1e-6)
    upright = pin.Model(model)
    upright.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.zeros(3))
    tau_upright = pin.rnea(upright, upright.createData(), home, np.zeros(n), np.zeros(n))
    assert np.max(np.abs(tau_upright - tau_tilted)) > 1e3 * np.max(hi[0] - lo[0])
    Y, b = PayloadRegressor(robot).torque_rows(home, np.zeros(n), np.zeros(n), tau_tilted)
    np.testing.assert_allclose(Y @ payload, b, atol=1e-6)
    with pytest.raises(ProfileError, match="gravity_m_s2"):
        load_robot({**raw, "dynamics": {**raw["dynamics"], "gravity_m_s2": [0.0, 0.0, 0.0]}})
