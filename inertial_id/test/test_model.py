"""Robot profiles, the project's Gen3 model, payload catalogue."""
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
