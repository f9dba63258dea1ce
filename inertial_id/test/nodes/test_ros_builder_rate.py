"""The regressor_builder under seed 003's 4 kHz JointState stream for 60 s over DDS (issue 11): every
sample the driver sent is either accepted or counted on /diagnostics (missed at the driver's rate,
or dropped with a reason), and the accepted ones become momentum windows of 400 samples. The
fraction accepted depends on the CPU the node gets; it is printed and reported by
``inertial-id bench builder``, not asserted. A minute of DDS load: a benchmark, run with
``pytest -m bench`` (deselected by default)."""
import json
import subprocess
import sys

import pytest


pytestmark = [pytest.mark.ros, pytest.mark.bench]


def test_4khz_joint_states_for_60_s_are_accepted_or_counted(tmp_path):
    out = tmp_path / "builder.json"
    proc = subprocess.run([sys.executable, "-m", "inertial_id.cli", "bench", "builder", "--rate", "4000",
                           "--seconds", "60", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(out.read_text())
    print(f"4 kHz for 60 s: accepted {r['accepted_fraction']:.1%}, missed {r['missed_samples']}, "
          f"drops {r['drops']}, builder CPU {r['builder_cpu_fraction']:.2f} of a core")
    assert r["sent"] == 240_000 + 5
    assert r["unaccounted"] == 0
    assert r["accepted"] > 0.05 * r["sent"]
    # windows close only on unbroken runs of 400 samples; at least those of every 801 accepted
    assert r["momentum_windows"] >= 1 and r["momentum_windows"] <= r["accepted"] // 400
