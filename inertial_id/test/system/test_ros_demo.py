"""End to end over real DDS: the simulated arm and the three nodes as separate processes identify
the hidden payload; the published InertialEstimate must contain the truth."""
import signal

import numpy as np
import pytest

from inertial_id.cli.demo import run_demo
from inertial_id.core.estimators.run_floor import RECORDED_FLOOR_TOLERANCE

pytestmark = pytest.mark.ros


@pytest.mark.parametrize("robot, method, guaranteed, max_mass_width_kg", [
    # momentum rows, robot known to +-5 %: LP over both. The certified planner moves less freely than
    # the former fixed Fourier trajectory: study plan median 0.65 kg after 4 plans (issue 9 report)
    ("kinova_gen3", "guaranteed", True, 0.7),
    # wrench rows: the robot model does not enter, but the differentiated acceleration's error and the
    # unknown F/T offset do (core.acceleration_bound). The data leave the offset at its stated box, so
    # the final box holds whatever the offset (core.estimators.offset_freeing): this demo 0.41-0.47 kg
    ("xarm7", "guaranteed", True, 1.0),
])
def test_nodes_identify_the_payload_over_dds(robot, method, guaranteed, max_mass_width_kg, tmp_path):
    try:
        r = run_demo(robot, "dumbbell_5lb", duration_s=20.0, method=method, log_dir=str(tmp_path / "1"), progress=False)
    except RuntimeError as exc:
        # a loaded machine can starve the simulated arm until it leaves the certified tube; the planner
        # then brakes, which is its job. Once more. (The 0.406 against 0.400 rad/s^2 once seen here was
        # the tube, not the load: study plan measured the same without load; the profiles now state 0.6.)
        if "tracking error" not in str(exc):
            raise
        print(f"first run stopped by the planner's tracking monitor, run again: {exc}")
        r = run_demo(robot, "dumbbell_5lb", duration_s=20.0, method=method, log_dir=str(tmp_path / "2"), progress=False)
    truth, lo, hi = np.asarray(r["truth"]), np.asarray(r["lower"]), np.asarray(r["upper"])
    assert r["method"] == method
    # the certified planner decides how long the arm moves (it stops when the bounds stop shrinking);
    # the xArm7's 100 Hz wrench samples near a velocity reversal are not used
    assert r["samples"] > 500
    assert r["bounds_guaranteed"] is guaranteed and r["data_consistent"]
    assert np.all((truth >= lo) & (truth <= hi)), f"truth outside bounds: {truth} vs [{lo}, {hi}]"
    assert hi[0] - lo[0] < max_mass_width_kg         # the bounds did shrink from the 5.2 kg prior
    assert r["physically_consistent"]
    assert r["mass_error_pct"] < 1.0
    assert r["com_error_mm"] < 5.0
    # the rows the monitor received beside the estimator are its input; the box against their sound
    # floor. The floor is that of the error-free realization of these rows (core.estimators.sound_floor):
    # the recorded errors shift the rows' bands and can cut the feasible set narrower, so the ratio goes
    # below 1 on a box at its floor (MuJoCo, 20 s: Gen3 0.85-1.08 in 7 runs, xArm7 0.78-1.04 in 5).
    # Half the floor is beyond that spread: a box so narrow would more likely leave out payloads the
    # stated bounds admit than be cut by its errors
    assert r["floor_rows"]["rows_match"], r["floor_rows"]
    assert r["sound_mass_width_floor_kg"] > 0 and r["width_over_floor"] > 0.5, r["width_over_floor"]
    # the demo's box is the estimator's final one after the motion (its F/T offset checked) or a later
    # one still checked, and its message says so. An online box rests on the offset's stated box
    # unchecked and may be narrower than the floor below (a replayed run: 0.2699 kg against 0.2704):
    # CI runs took one twice: 0.972 before the demo waited for the final estimate by its stamp, 0.891
    # while it took any final update's stamp for the motion's (most likely a stream's pause under load,
    # provisional: issue 47's notes)
    assert r["offset_checked"]
    # on wrench rows the floor of the rows as recorded, whose truth is known whole (the payload, no F/T
    # offset in the simulator), is one no sound box beats whatever the errors did: the box holds its
    # witnesses
    if robot == "xarm7":
        assert 0 < r["recorded_floor_kg"], r
        assert r["width_over_recorded_floor"] >= 1.0 - RECORDED_FLOOR_TOLERANCE, \
            (r["width_over_recorded_floor"], r["samples"], r["floor_rows"])
    else:
        assert r["recorded_floor_kg"] is None
    # the gate's verdict takes the final LP's support where the estimator has one LP over its rows
    # (momentum rows), the box alone on wrench rows (their box is checked against the F/T offset)
    assert r["apply"]["final_lp_support"] is (robot == "kinova_gen3")
    assert len(r["apply"]["torque_error_Nm"]) == 7
    # the result carries the run's history (for `inertial-id report`), the final estimate included
    h = r["history"]
    assert len(h["t"]) >= 5 and any(np.array_equal(e, r["estimate"]) for e in h["estimate"])
    assert "executing" in h["status"]["state"]
    # how many of its plans the planner's optimiser made and converged within their time
    o = r["optimizer"]
    assert o["plans"] >= 1 and 0 <= o["converged"] <= o["plans"], o
    # the demo started the arm once the planner's optimiser was compiled (this machine has a compiler)
    assert o["code"] == "compiled", o


def test_planner_does_not_move_on_bounds_that_are_not_guaranteed(tmp_path):
    """``lmi`` on the Gen3's acceleration rows assumes the nominal robot exact: its bounds are not
    guaranteed, so the certified planner never uses them: no estimate it can trust ever arrives, so the
    arm does not move and the planner says why. The simulator at half speed: the planner gives up after
    10 simulated seconds, and beside busy processes the estimator's first estimate once came later
    than that (the planner then said only "no estimate")."""
    with pytest.raises(RuntimeError, match=r"not moving: no estimate .* guaranteed.*estimates not used "
                                           r"\(bounds not guaranteed\)"):
        run_demo("kinova_gen3", "dumbbell_5lb", duration_s=20.0, method="lmi", rtf=0.5, log_dir=str(tmp_path),
                 progress=False)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_stops_the_demo_cleanly(sig, tmp_path):
    """``inertial-id demo`` stopped while the arm moves and estimates arrive (a progress line with a
    sample count): exit code 0 and one line saying so; every node's log ends with its line saying it
    finished, and holds no traceback, FATAL or /rosout failure. (Before: SIGINT was exit code 130,
    SIGTERM exit code 1 on the monitor's context shut down under it.)"""
    from ros_helpers import assert_demo_stopped, signalled_demo
    from test_launch import UNCLEAN
    moving, code, out = signalled_demo(["--duration", "20", "--log-dir", str(tmp_path)], sig,
                                       r"planner: \w+ +samples +\d+", 240.0, 120.0)
    assert moving, out[-3000:]
    assert_demo_stopped(code, out, sig, "every node finished cleanly")
    for node in ("sim_robot", "regressor_builder", "estimator", "excitation_planner"):
        log = (tmp_path / f"{node}.log").read_text()
        for word in UNCLEAN:
            assert word not in log, f"{node}: {log[-3000:]}"
        assert log.strip().splitlines()[-1].endswith(f"[{node}]: finished (SIGINT)"), f"{node}: {log[-3000:]}"
