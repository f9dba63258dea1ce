"""Robot profiles, the project's Gen3 and xArm7 models, model references, payload catalogue."""
import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.robot import params


def test_profiles_load_with_their_frames_and_limits():
    gen3 = robot_model.load_robot("kinova_gen3")
    assert gen3.nv == 7 and gen3.ft_frame_id is None
    assert gen3.model.frames[gen3.payload_frame_id].name == "end_effector_link"
    xarm = robot_model.load_robot("xarm7")
    assert xarm.ft_frame == "link_eef" and xarm.joint_names[0] == "joint1"
    for r in (gen3, xarm):
        assert np.all(r.position_lower < r.position_upper) and np.all(r.velocity_limit > 0)


def test_gen3_model_has_the_published_masses():
    gen3 = robot_model.load_robot("kinova_gen3")
    assert pin.computeTotalMass(gen3.model) == pytest.approx(6.4909, abs=1e-4)   # moving links
    assert sum(I.mass for I in gen3.model.inertias) == pytest.approx(8.1879, abs=1e-4)


@pytest.mark.shared_data
def test_gen3_model_agrees_with_the_reference_description(shared_dir):
    """Same dynamics as the public description in ../shared (read at test time, not copied)."""
    ref = pin.buildModelFromUrdf(str(shared_dir / "robots" / "kinova_gen3.urdf"))
    ours = robot_model.load_robot("kinova_gen3").model
    ours.armature = np.zeros(7)   # the reference has no rotor inertia (it is in our profile)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q, v, a = rng.uniform(-2, 2, 7), rng.normal(size=7), rng.normal(size=7)
        tau_ref = pin.rnea(ref, ref.createData(), q, v, a)
        # joint origins are exact quarter turns here, 4-digit roundings of them in the reference
        np.testing.assert_allclose(pin.rnea(ours, ours.createData(), q, v, a), tau_ref, atol=5e-3 * (1 + abs(tau_ref).max()))


# uFactory, "Kinematic and Dynamic Parameters of xArm 7" (docs.ufactory.cc, xArm series): its
# modified D-H table, one row per joint: a_(i-1) m, alpha_(i-1) in quarter turns, d_i m (theta offsets
# all 0); and its "xArm 7 - Model 3" mass table of links 1..7: mass kg (to the gram), centre of mass
# mm in the D-H frame of the link.
XARM7_MDH = ((0.0, 0, 0.267), (0.0, -1, 0.0), (0.0, 1, 0.293), (0.0525, 1, 0.0),
             (0.0775, 1, 0.3425), (0.0, 1, 0.0), (0.076, -1, 0.097))
XARM7_MASSES = ((2.382, (0.13, 29.4, -12.4)), (1.869, (0.2, -128.56, 17.35)), (1.638, (46.6, -24.63, -7.68)),
                (1.727, (70.5, -115.75, 12.0)), (1.32, (-0.32, 16.04, -26.0)), (1.325, (64.7, 32.8, 21.4)),
                (0.17, (0.0, -6.77, -10.98)))
# uFactory's own description (xarm_ros2 xarm7_default_kinematics.yaml, the driver's frames) rotates
# each frame by this rounded quarter turn but places the origins with the exact one; the model keeps it
XARM7_ROUNDED_QUARTER_TURN = 1.5708


def mdh_flange_pose(q, rotation_quarter_turn=np.pi / 2):
    """Pose of the flange in the base frame from the D-H table, Craig's convention: per joint
    RotX(alpha) TransX(a) RotZ(q) TransZ(d), i.e. the fixed placement (origin a x + RotX(alpha) d z,
    rotation RotX(alpha)) then RotZ(q) (TransZ commutes with it); the rotation's twist may be rounded."""
    T = np.eye(4)
    for (a, turns, d), q_i in zip(XARM7_MDH, q):
        alpha, alpha_rotation = turns * np.pi / 2, turns * rotation_quarter_turn
        c, s = np.cos(alpha_rotation), np.sin(alpha_rotation)
        placement = np.array([[1.0, 0.0, 0.0, a],
                              [0.0, c, -s, -np.sin(alpha) * d],
                              [0.0, s, c, np.cos(alpha) * d],
                              [0.0, 0.0, 0.0, 1.0]])
        joint = np.eye(4)
        joint[:2, :2] = [[np.cos(q_i), -np.sin(q_i)], [np.sin(q_i), np.cos(q_i)]]
        T = T @ placement @ joint
    return T


def test_xarm7_model_has_the_published_dh_kinematics(rng):
    xarm = robot_model.load_robot("xarm7")
    model, data = xarm.model, xarm.model.createData()
    base = model.getFrameId(xarm.spec.frames.base)
    # six rotations, each 3.7e-6 rad off the quarter turn, moving points at most 1 m from their axes
    rounding = 6 * abs(XARM7_ROUNDED_QUARTER_TURN - np.pi / 2)
    for _ in range(50):
        q = rng.uniform(xarm.position_lower, xarm.position_upper)
        pin.framesForwardKinematics(model, data, q)
        T = data.oMf[base].actInv(data.oMf[xarm.payload_frame_id]).homogeneous
        np.testing.assert_allclose(T, mdh_flange_pose(q, XARM7_ROUNDED_QUARTER_TURN), rtol=0, atol=1e-9)
        np.testing.assert_allclose(T, mdh_flange_pose(q), rtol=0, atol=rounding)


def test_xarm7_model_has_the_published_masses():
    xarm = robot_model.load_robot("xarm7")
    bodies = xarm.model.inertias[1:]          # joint i moves link i, whose frame is the D-H frame i
    assert [xarm.model.frames[xarm.model.getFrameId(f"link{i}")].parentJoint for i in range(1, 8)] == \
        list(range(1, 8))
    for (mass, com_mm), body in zip(XARM7_MASSES, bodies):
        assert body.mass == pytest.approx(mass, abs=5e-4)
        # the table's link 1 is 0.35 mm off uFactory's URDF numbers; the others within 0.03 mm
        np.testing.assert_allclose(body.lever * 1e3, com_mm, rtol=0, atol=0.5)
    assert pin.computeTotalMass(xarm.model) == pytest.approx(sum(m for m, _ in XARM7_MASSES), abs=7 * 5e-4)


def example_robot_data_at(monkeypatch, purelib):
    """Where resolve_model_path looks for example-robot-data: this site-packages folder only."""
    monkeypatch.setattr(robot_model.sysconfig, "get_paths", lambda: {"purelib": str(purelib)})
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(purelib))        # a ROS install's index: nothing there


def test_example_robot_data_models_resolve_when_that_package_is_installed(tmp_path, monkeypatch):
    robots = tmp_path / "cmeel.prefix/share/example-robot-data/robots"
    (robots / "arm/urdf").mkdir(parents=True)
    (robots / "arm/urdf/arm.urdf").write_text("<robot name='arm'/>")
    example_robot_data_at(monkeypatch, tmp_path)
    assert robot_model.resolve_model_path("example-robot-data://arm/urdf/arm.urdf") == robots / "arm/urdf/arm.urdf"
    with pytest.raises(robot_model.ProfileError, match="is not in the example-robot-data package"):
        robot_model.resolve_model_path("example-robot-data://arm/urdf/other.urdf")


def test_example_robot_data_models_without_that_package_are_a_one_line_error(tmp_path, monkeypatch):
    example_robot_data_at(monkeypatch, tmp_path)
    prof = robot_model.load_profile("xarm7")
    prof["model"]["urdf"] = "example-robot-data://xarm_description/urdf/xarm7.urdf"
    with pytest.raises(robot_model.ProfileError) as error:
        robot_model.load_robot(prof)
    assert "\n" not in str(error.value) and "needs the example-robot-data package" in str(error.value)


def test_unknown_profile_and_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(robot_model.ProfileError, match="unknown robot profile 'nope'"):
        robot_model.load_robot("nope")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot><link></robot>")
    with pytest.raises(robot_model.ProfileError, match="cannot parse URDF"):
        robot_model.build_model_from_urdf(bad)
    prof = robot_model.load_profile("kinova_gen3")
    prof["joints"] = list(reversed(prof["joints"]))
    with pytest.raises(robot_model.ProfileError, match="order matters"):
        robot_model.load_robot(prof)


@pytest.mark.parametrize("name, mass", [("dumbbell_4lb", 1.81), ("dumbbell_5lb", 2.27), ("dumbbell_8lb", 3.63)])
def test_payloads_are_consistent_with_their_mass_and_offset(name, mass):
    pi = robot_model.payload_params(name)
    spec = robot_model.load_payloads()[name]
    m, c, I_C = params.com_from_params(pi)
    assert m == pytest.approx(mass)
    np.testing.assert_allclose(c, spec["com_offset_m"], atol=1e-12)
    assert params.is_physically_consistent(pi)
    assert I_C[1, 1] > I_C[0, 0]   # long axis along x: smallest moment about x


def test_payload_is_lumped_into_the_flange_body():
    robot = robot_model.load_robot("kinova_gen3")
    pi = robot_model.payload_params("dumbbell_5lb")
    m = robot_model.model_with_payload(robot, pi)
    assert pin.computeTotalMass(m) == pytest.approx(pin.computeTotalMass(robot.model) + 2.27)
    assert pin.computeTotalMass(robot.model) == pytest.approx(6.4909, abs=1e-4)   # original untouched


def test_a_source_checkout_reads_its_own_config_and_messages(monkeypatch):
    """Run from the source tree, the profiles, launch files and messages are the tree's own (an edit
    takes effect without a reinstall), looked up before the copies an install put in its share
    directory."""
    from pathlib import Path

    import inertial_id
    from inertial_id import share
    from inertial_id.core.data.bags import msg_dirs
    monkeypatch.delenv("INERTIAL_ID_CONFIG", raising=False)
    root = Path(inertial_id.__file__).resolve().parent.parent
    assert (root / "config" / "robots" / "kinova_gen3.yaml").is_file()        # this suite runs in a checkout
    assert share.config_dirs()[0] == root / "config"
    assert share.share_dirs()[0] == root and (root / "launch").is_dir()
    assert msg_dirs()[0] == root.parent / "inertial_id_msgs" / "msg"
