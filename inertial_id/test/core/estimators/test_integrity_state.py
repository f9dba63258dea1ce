"""Damaged or tampered estimator state files (issue 23): never trusted, never fatal. Whatever the
file holds, loading it gives either the state that was saved or ``None`` with the reason, and a
damaged file is moved aside; names built from a profile cannot leave the state directory."""
import json
import zipfile

import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators.factory import make_estimator
from inertial_id.core.estimators.persistence import FORMAT_VERSION, default_state_path, load_state, save_state
from inertial_id.core.estimators.schedule import UpdateSchedule

TRUTH = np.r_[2.0, 0.02, 0.0, 0.2, 0.03, 0.0, 0.04, 0.0, 0.0, 0.02]


def saved(tmp_path, rng, robot="xarm7", method="guaranteed"):
    """(path, header, state, estimator) of a state saved after 40 exact wrench-like rows."""
    r = robot_model.load_robot(robot)
    est = make_estimator(r, method)
    A = rng.normal(size=(42, 10))
    est.add("wrench", A, A @ TRUTH, np.full(42, 0.4), np.full(42, 0.1), 7)
    est.update_bounds()
    lo, hi = r.payload_prior()
    header = {"method": method, "robot": r.name, "columns": list(est.column_names),
              "prior_lower": lo.tolist(), "prior_upper": hi.tolist()}
    path = tmp_path / "estimator_state.npz"
    state = est.state()
    save_state(path, header, state)
    return path, header, state, est


def test_an_intact_state_loads_as_saved(tmp_path, rng):
    path, header, state, est = saved(tmp_path, rng)
    loaded, why, moved = load_state(path, header, 60.0)
    assert why == "" and moved is None
    r = est.result()
    assert r.upper[0] - r.lower[0] < header["prior_upper"][0] - header["prior_lower"][0]     # a real box
    for k, v in state.items():
        np.testing.assert_array_equal(loaded[k], np.asarray(v))


def truncate(path, header, state):
    data = path.read_bytes()
    path.write_bytes(data[:-1])


def empty(path, header, state):
    path.write_bytes(b"")


def garbage(path, header, state):
    path.write_bytes(bytes(range(256)) * 4)


def tamper(**changes):
    """Re-save with a valid checksum (whoever can write the file can do this) but impossible content."""
    def damage(path, header, state):
        save_state(path, header, {**state, **{k: v(state) for k, v in changes.items()}})
    return damage


def version_1(path, header, state):
    """The previous format: header, no checksum."""
    arrays = {k: np.asarray(v) for k, v in state.items()}
    arrays["_header"] = np.asarray(json.dumps({**header, "saved_at": 1e12}))
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def unchecked_edit(path, header, state):
    """The box narrowed inside the zip without updating the checksum."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    import io
    lower = np.load(io.BytesIO(members["lower.npy"]))
    lower[0] = 3.577
    buf = io.BytesIO()
    np.save(buf, lower)
    members["lower.npy"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)


DAMAGE = {
    "truncated-by-one-byte": truncate,
    "empty": empty,
    "not-a-zip": garbage,
    "format-version-1": version_1,
    "edited-without-checksum": unchecked_edit,
    "inverted-box": tamper(lower=lambda s: s["upper"] + 1.0),
    "nan-bound": tamper(upper=lambda s: np.where(np.arange(10) == 3, np.nan, s["upper"])),
    "outside-the-prior": tamper(upper=lambda s: s["upper"] + 1e3),
    "negative-samples": tamper(samples_used=lambda s: -5),
    "inf-information": tamper(information=lambda s: s["information"] * np.inf),
}


@pytest.mark.parametrize("name", DAMAGE)
def test_a_damaged_state_is_refused_and_moved_aside(tmp_path, rng, name):
    path, header, state, _ = saved(tmp_path, rng)
    DAMAGE[name](path, header, state)
    loaded, why, moved = load_state(path, header, 60.0)
    assert loaded is None and why.startswith("damaged"), why
    assert moved is not None and moved.exists() and ".corrupt-" in moved.name and not path.exists()
    assert load_state(path, header, 60.0)[0] is None          # nothing left to trust


def test_every_flipped_bit_is_detected_or_harmless(tmp_path, rng):
    """300 single-bit flips anywhere in the file: each either loads exactly the saved state (a bit
    nothing reads) or is refused as damaged; none raises."""
    path, header, state, _ = saved(tmp_path, rng)
    original = path.read_bytes()
    refused = 0
    for k in rng.choice(len(original) * 8, 300, replace=False):
        data = bytearray(original)
        data[k // 8] ^= 1 << (k % 8)
        path.write_bytes(bytes(data))
        loaded, why, moved = load_state(path, header, 1e9)
        if loaded is None:
            assert why.startswith("damaged"), why
            refused += 1
            continue
        for key, v in state.items():
            np.testing.assert_array_equal(loaded[key], np.asarray(v))
    assert refused > 150


def test_a_state_of_another_configuration_is_left_in_place(tmp_path, rng):
    path, header, _, _ = saved(tmp_path, rng)
    loaded, why, moved = load_state(path, {**header, "robot": "kinova_gen3"}, 60.0)
    assert loaded is None and "another configuration" in why and moved is None and path.exists()
    assert load_state(path, header, -1.0)[0] is None and path.exists()      # too old


def test_the_restored_estimator_refuses_rows_it_cannot_use(tmp_path, rng):
    """Content the file checks cannot know (pending rows of another width) fails the estimator's
    restore with ValueError, which the node treats as damage."""
    path, header, state, _ = saved(tmp_path, rng)
    fresh = make_estimator(robot_model.load_robot("xarm7"), "guaranteed")
    with pytest.raises(ValueError):
        fresh.restore({**state, "pending_A": np.ones((2, 3)), "pending_b": np.ones(2), "pending_e": np.ones(2)})


@pytest.mark.parametrize("name", ["../../../tmp/evil", "/etc/passwd", "a b\\c", "..", ""])
def test_state_file_names_cannot_leave_the_state_directory(tmp_path, monkeypatch, name):
    monkeypatch.setenv("ROS_HOME", str(tmp_path))
    monkeypatch.setenv("ROS_DOMAIN_ID", "../7")
    path = default_state_path(name, "../guaranteed")
    assert path.parent == tmp_path / "inertial_id"
    assert path.resolve().parent == (tmp_path / "inertial_id").resolve()
    assert "/" not in path.name and ".." not in path.name.replace(".npz", "")


def test_pending_rows_and_samples_survive_a_restart(tmp_path, rng):
    """The state holds the rows not yet in the box: a restart between two bounds updates loses none
    and ``samples_used`` does not go back."""
    path, header, _, est = saved(tmp_path, rng)
    A = rng.normal(size=(12, 10))
    est.add("wrench", A, A @ TRUTH, np.full(12, 0.4), np.full(12, 0.1), 2)     # not in the box yet
    save_state(path, header, est.state())
    fresh = make_estimator(robot_model.load_robot("xarm7"), "guaranteed")
    fresh.restore(load_state(path, header, 60.0)[0])
    assert fresh.result().samples_used == est.result().samples_used == 9
    est.update_bounds()
    fresh.update_bounds()
    np.testing.assert_array_equal(fresh.result().lower, est.result().lower)
    np.testing.assert_array_equal(fresh.result().upper, est.result().upper)


def test_a_large_backward_stamp_jump_restarts_the_schedule_and_is_counted():
    """A -100 s jump used to stop the updates for 100 s of data time."""
    s = UpdateSchedule(2.0)
    stamps = list(np.arange(1000.0, 1010.0, 0.5)) + list(np.arange(900.0, 910.0, 0.5))
    due = [t for t in stamps if s.due(t)]
    assert s.backward_jumps == 1
    assert len([t for t in due if t < 950]) >= 4
    assert FORMAT_VERSION == 2
