"""SampleRows: the builder node's path from samples to messages gives the same messages however the
stream is cut into batches, gaps and implausible samples included."""
import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.signals.row_builder import SampleRows
from inertial_id.core.sim import Simulator
from inertial_id.core import trajectory


def recorded_stream(name, seconds):
    robot = robot_model.load_robot(name)
    sim = Simulator.from_profile(robot, robot_model.payload_params("dumbbell_5lb"), seed=4)
    traj, _ = trajectory.excitation_from_profile(robot, seconds)
    sim.command(traj.resample(100))
    every = int(round(1.0 / (sim.dt * robot.sensing.joint_states_hz)))
    samples = []
    for k in range(int(round(seconds / sim.dt))):
        sim.step()
        if k % every == 0:
            samples.append(sim.measure())
    t, q, qd, tau = (np.array([getattr(m, f) for m in samples]) for f in ("t", "q", "qd", "tau"))
    wrench = np.array([m.wrench for m in samples]) if robot.sensing.wrench else None
    return robot, t, q, qd, tau, wrench


def faulty(t, qd):
    """A gap of 0.2 s, a stamp stepping back and a velocity spike (absurd acceleration)."""
    t, qd = t.copy(), qd.copy()
    gap, back, spike = (int(f * t.size) for f in (0.3, 0.45, 0.65))
    t[gap:] += 0.2
    t[back] = t[back - 1] - 0.001
    qd[spike] += 50.0
    return t, qd


def messages(stream, t, q, qd, tau, wrench, cuts):
    out, drops, accepted, missed = [], [], 0, 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        pushed = stream.push_many(t[a:b], q[a:b], qd[a:b], tau[a:b], None if wrench is None else wrench[a:b])
        out += pushed.messages
        drops += pushed.drops
        accepted += pushed.accepted
        missed += pushed.missed
    return out, drops, accepted, missed


@pytest.mark.parametrize("name", ["kinova_gen3", "xarm7"])
def test_batched_samples_give_the_messages_of_one_by_one(name, rng):
    robot, t, q, qd, tau, wrench = recorded_stream(name, 2.5)
    t, qd = faulty(t, qd)
    n = t.size
    one = messages(SampleRows.from_profile(robot), t, q, qd, tau, wrench, list(range(n + 1)))
    cuts = [0, *np.sort(rng.choice(np.arange(1, n), 25, replace=False)), n]
    many = messages(SampleRows.from_profile(robot), t, q, qd, tau, wrench, cuts)
    reasons = [r for r, _ in one[1]]
    assert reasons.count("gap") == 2 and "absurd_acceleration" in reasons
    assert one[1] == many[1] and one[2:] == many[2:]
    assert one[2] == n - reasons.count("absurd_acceleration")
    kinds = {m.kind for m in one[0]}
    assert kinds == ({"joint_torque", "momentum"} if name == "kinova_gen3" else {"wrench"})
    key = lambda m: (m.kind, m.t)                           # noqa: E731
    assert sorted(map(key, one[0])) == sorted(map(key, many[0]))
    for a, b in zip(sorted(one[0], key=key), sorted(many[0], key=key)):
        assert a.samples == b.samples
        for x, y in ((a.A, b.A), (a.b, b.b), (a.noise_bound, b.noise_bound)):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-12 * max(1.0, np.abs(x).max()))


def test_only_the_kinds_asked_for_are_formed():
    robot, t, q, qd, tau, _ = recorded_stream("kinova_gen3", 0.5)
    out = SampleRows.from_profile(robot, kinds=("momentum",)).push_many(t, q, qd, tau)
    assert {m.kind for m in out.messages} == {"momentum"} and len(out.messages) == (t.size - 1) // 100
