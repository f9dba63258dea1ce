"""Where `inertial-id demo` leaves the nodes' logs: in --log-dir if given, else in a temporary folder
that a failure keeps and names and a run that passes, or that a signal stops, removes."""
import os
import subprocess
import sys
import tempfile

import pytest

from inertial_id.cli import demo


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """Temporary folders of this process under ``tmp_path``."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def demo_folders(root) -> list:
    return sorted(p for p in root.iterdir() if p.name.startswith("inertial_id_demo_"))


def run_with(monkeypatch, outcome, log_dir=None):
    """run_demo whose node run ends in ``outcome`` (an exception raised with the logs' folder)."""
    def nodes(profile, payload, duration_s, method, rtf, folder, *rest):
        raise outcome(folder)
    monkeypatch.setattr(demo, "_run_nodes", nodes)
    return demo.run_demo("kinova_gen3", "dumbbell_5lb", 2.0, log_dir=log_dir)


def test_a_failure_keeps_the_temporary_folder_and_names_it(temp_root, monkeypatch):
    with pytest.raises(RuntimeError) as failed:
        run_with(monkeypatch, lambda folder: RuntimeError("planner failed: tracking error"))
    kept, = demo_folders(temp_root)
    assert str(failed.value) == f"planner failed: tracking error; see the logs in {kept}"


def test_a_failure_that_names_the_folder_already_names_it_once(temp_root, monkeypatch):
    with pytest.raises(RuntimeError) as failed:
        run_with(monkeypatch, lambda folder: RuntimeError(f"node(s) estimator exited; see the logs in {folder}"))
    kept, = demo_folders(temp_root)
    assert str(failed.value).count(str(kept)) == 1


def test_a_signal_removes_the_temporary_folder_but_not_the_users(temp_root, monkeypatch):
    with pytest.raises(demo.Interrupted):
        run_with(monkeypatch, lambda folder: demo.Interrupted("SIGINT"))
    assert demo_folders(temp_root) == []
    mine = temp_root / "mine"
    mine.mkdir()
    (mine / "estimator.log").write_text("the user's")
    with pytest.raises(demo.Interrupted):
        run_with(monkeypatch, lambda folder: demo.Interrupted("SIGINT"), log_dir=str(mine))
    assert (mine / "estimator.log").read_text() == "the user's"


@pytest.mark.ros
def test_a_demo_that_passes_leaves_no_folder_behind(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "inertial_id.cli", "demo", "--quiet", "--duration", "2"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "truth inside the bounds: ok" in proc.stdout
    assert demo_folders(tmp_path) == [], "the logs of a run that passed are removed"
