"""Summary line of pytest JUnit reports (what `colcon test` leaves; several count as one run), and
the verdict as exit code: non-zero when a test failed or errored, when no test ran, or when a test
was skipped while the shared folder (../shared: recordings, reference models, launch packages) is
present, unless the skip list (inertial_id/test/skip_list.txt, one ``module::test  reason`` a line) names it
with its reason. Strict expected failures (xfail) are counted apart: they fail the run the day
they pass.

Usage: test_summary.py REPORT.xml [REPORT.xml ...] [--shared DIR] [--skip-list FILE]
"""
import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_skip_list(path: Path) -> dict:
    """{test id: reason}; '#' starts a comment; an entry without a reason is an error."""
    allowed = {}
    if not path.exists():
        return allowed
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        test, _, reason = line.partition(" ")
        if not reason.strip():
            raise ValueError(f"{path}:{number}: '{test}' has no reason")
        allowed[test] = reason.strip()
    return allowed


def outcomes(root) -> dict:
    """({test id ('module::name'): 'passed' | 'failed' | 'skipped' | 'xfailed'}, {test id: skip message})."""
    out, messages = {}, {}
    for case in root.iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            out[test] = "failed"
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            out[test] = "xfailed"
        elif skipped is not None:
            out[test] = "skipped"
            messages[test] = skipped.get("message", "")
        else:
            out[test] = "passed"
    return out, messages


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", metavar="report")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--skip-list", default=str(ROOT / "inertial_id" / "test" / "skip_list.txt"))
    args = parser.parse_args(argv)
    result, messages = {}, {}
    try:
        for report in args.reports:
            found, skips = outcomes(ET.parse(report).getroot())
            result.update(found)
            messages.update(skips)
        allowed = read_skip_list(Path(args.skip_list))
    except (OSError, ET.ParseError, ValueError) as exc:
        print(f"test summary: {exc}", file=sys.stderr)
        return 1
    count = {k: sum(v == k for v in result.values()) for k in ("passed", "failed", "skipped", "xfailed")}
    print(f"pytest: {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped, "
          f"{count['xfailed']} xfailed (expected)")
    verdict = 1 if count["failed"] or count["passed"] == 0 else 0
    if Path(args.shared).is_dir():
        hidden = sorted(t for t, v in result.items() if v == "skipped" and t not in allowed)
        for test in hidden:
            print(f"test summary: skipped with {args.shared} present: {test}: {messages[test]}", file=sys.stderr)
        stale = sorted(t for t in allowed if result.get(t) == "passed")
        for test in stale:
            print(f"test summary: {test} passes now: remove it from {args.skip_list}", file=sys.stderr)
        if hidden or stale:
            verdict = 1
    return verdict


if __name__ == "__main__":
    sys.exit(main())
