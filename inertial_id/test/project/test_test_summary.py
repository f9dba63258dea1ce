"""scripts/test_summary.py: the verdict of `make test` from the JUnit report. With the shared folder
present, any skip not in the skip list (with its reason) fails the run; without it, skips pass."""
import importlib.util

import pytest

from paths import REPO, TESTS

SCRIPT = REPO / "scripts" / "test_summary.py"
spec = importlib.util.spec_from_file_location("test_summary", SCRIPT)
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

CASES = {
    "passed": '<testcase classname="test.test_a" name="test_ok"/>',
    "failed": '<testcase classname="test.test_a" name="test_bad"><failure message="x"/></testcase>',
    "skipped": '<testcase classname="test.test_b" name="test_real[1]"><skipped type="pytest.skip" '
               'message="real Gen3 recordings absent"/></testcase>',
    "xfailed": '<testcase classname="test.test_c" name="test_target"><skipped type="pytest.xfail" '
               'message="measured 3.3 kg"/></testcase>',
}


def report(tmp_path, *kinds) -> str:
    path = tmp_path / "pytest.xunit.xml"
    path.write_text('<testsuites><testsuite name="pytest">' + "".join(CASES[k] for k in kinds)
                    + "</testsuite></testsuites>")
    return str(path)


@pytest.fixture
def dirs(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    skip_list = tmp_path / "skip_list.txt"
    skip_list.write_text("# nothing allowed\n")
    return ["--shared", str(shared), "--skip-list", str(skip_list)], skip_list


def test_a_skip_fails_the_run_when_shared_is_present(tmp_path, dirs, capsys):
    opts, _ = dirs
    assert summary.main([report(tmp_path, "passed", "skipped"), *opts]) == 1
    err = capsys.readouterr().err
    assert "test.test_b::test_real[1]" in err and "recordings absent" in err


def test_without_shared_a_skip_passes(tmp_path, dirs):
    opts, _ = dirs
    opts[1] = str(tmp_path / "absent")
    assert summary.main([report(tmp_path, "passed", "skipped"), *opts]) == 0


def test_listed_skip_with_reason_passes_and_a_stale_entry_fails(tmp_path, dirs, capsys):
    opts, skip_list = dirs
    skip_list.write_text("test.test_b::test_real[1]  the data cannot be shipped\n")
    assert summary.main([report(tmp_path, "passed", "skipped"), *opts]) == 0
    skip_list.write_text("test.test_a::test_ok  was skipped once\n")
    assert summary.main([report(tmp_path, "passed"), *opts]) == 1
    assert "passes now" in capsys.readouterr().err


def test_an_entry_without_reason_is_refused(tmp_path, dirs):
    opts, skip_list = dirs
    skip_list.write_text("test.test_b::test_real[1]\n")
    assert summary.main([report(tmp_path, "passed", "skipped"), *opts]) == 1


def test_failures_and_empty_runs_fail_strict_xfails_do_not(tmp_path, dirs, capsys):
    opts, _ = dirs
    assert summary.main([report(tmp_path, "passed", "failed"), *opts]) == 1
    assert summary.main([report(tmp_path), *opts]) == 1
    assert summary.main([report(tmp_path, "passed", "xfailed"), *opts]) == 0
    assert "1 passed, 0 failed, 0 skipped, 1 xfailed" in capsys.readouterr().out


def test_the_checked_in_skip_list_is_well_formed():
    summary.read_skip_list(TESTS / "skip_list.txt")
