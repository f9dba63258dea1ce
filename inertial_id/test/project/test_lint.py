"""`ruff check` is a gate: the rules and the reasoned exceptions are in pyproject.toml. And a rule of
the house that ruff does not check: no class holds more than 30 attributes of its own, and a stamp
becomes seconds in one place."""
import ast
import re
import subprocess
import sys

from paths import PACKAGE, REPO

MAX_ATTRIBUTES = 30


def test_ruff_check_is_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def self_attributes(cls: ast.ClassDef) -> set[str]:
    """Names assigned as ``self.<name>`` anywhere in the class's body."""
    return {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}


def test_no_class_holds_more_than_thirty_attributes():
    crowded = {}
    for path in (PACKAGE / "inertial_id").rglob("*.py"):
        for cls in (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)):
            if len(self_attributes(cls)) > MAX_ATTRIBUTES:
                crowded[f"{path.relative_to(PACKAGE)}:{cls.name}"] = len(self_attributes(cls))
    assert not crowded, crowded


def test_stamps_become_seconds_in_one_place():
    """``sec + 1e-9 nanosec`` is written once (inertial_id.core.signals.stamps); everything else calls it."""
    pattern = re.compile(r"\.sec\s*\+\s*1e-9\s*\*|nanosec\s*\*\s*1e-9")
    found = [f"{path.relative_to(PACKAGE)}:{k}" for folder in ("inertial_id", "test") for path in (PACKAGE / folder).rglob("*.py")
             for k, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == ["inertial_id/core/signals/stamps.py:10"], found
