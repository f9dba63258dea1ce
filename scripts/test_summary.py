"""Summary line of a pytest JUnit report (what `colcon test` leaves), and the verdict as exit code:
non-zero when a test failed or errored, or when no test ran."""
import sys
import xml.etree.ElementTree as ET


def main(path: str) -> int:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        print(f"test summary: no test report ({exc})", file=sys.stderr)
        return 1
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    count = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
    failed = count["failures"] + count["errors"]
    passed = count["tests"] - failed - count["skipped"]
    print(f"pytest: {passed} passed, {failed} failed, {count['skipped']} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
