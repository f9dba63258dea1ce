"""Every public class and function of inertial_id/core has a docstring; papers are named only in
docstrings' References lines, never by their seed number in text, help or messages."""
import ast
import re

import pytest

from paths import SOURCES

MSG = SOURCES.parent / "msg"
SEED = re.compile(r"seed 00\d")
# "References: Authors, "Title" (seed 00N)." or a list item "- Authors, "Title" (seed 00N)"
REFERENCE = re.compile(r'^\s*(References:\s*|-\s+)[^"]+"[^"]+"\s*\(seed 00\d\)\.?\s*$')


def undocumented(tree: ast.Module, path: str) -> list[str]:
    """``path:line name`` of public module-level classes and functions, and public methods of public
    classes, that have no docstring."""
    missing = []

    def walk(body, prefix):
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{path}:{node.lineno} {prefix}{node.name}")
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return missing


def docstring_lines(tree: ast.Module) -> set[int]:
    """Line numbers covered by the docstrings of the module, its classes and functions."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def misplaced_seeds(text: str, path: str) -> list[str]:
    """``path:line text`` of every "seed 00N" outside a docstring's References line."""
    allowed = docstring_lines(ast.parse(text)) if path.endswith(".py") else set()
    return [f"{path}:{i} {line.strip()}" for i, line in enumerate(text.splitlines(), 1)
            if SEED.search(line) and not (i in allowed and REFERENCE.match(line))]


def test_every_public_definition_of_core_has_a_docstring():
    core = SOURCES / "core"
    missing = [m for p in sorted(core.rglob("*.py")) for m in undocumented(ast.parse(p.read_text()), str(p.relative_to(core)))]
    assert not missing, f"{len(missing)} public definitions without a docstring:\n" + "\n".join(missing)


def test_paper_numbers_only_in_references():
    files = sorted(SOURCES.rglob("*.py")) + sorted(MSG.rglob("*.msg"))
    assert len(files) > 50
    found = [m for p in files for m in misplaced_seeds(p.read_text(), str(p.relative_to(SOURCES.parent)))]
    assert not found, "paper numbers outside a References line:\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ('def f():\n    pass\n\nclass A:\n    """A."""\n    def g(self):\n        pass\n    def _h(self):\n        pass\n',
     ["m.py:1 f", "m.py:6 A.g"]),
    ('def _private():\n    pass\n\nclass _Hidden:\n    def g(self):\n        pass\n', []),
])
def test_the_docstring_check_finds_what_is_missing(source, expected):
    assert undocumented(ast.parse(source), "m.py") == expected


def test_the_reference_check_tells_references_from_text():
    ok = '"""Module.\n\nReferences: Lin, "Minimal parameters" (seed 002).\n"""\n'
    in_text = '"""The method of seed 003 does this."""\n'
    in_code = '"""Module."""\nHELP = "see seed 004"\n'
    listed = '"""Module.\n\nReferences:\n- Lin, "Minimal parameters" (seed 002)\n"""\n'
    assert misplaced_seeds(ok, "a.py") == misplaced_seeds(listed, "a.py") == []
    assert misplaced_seeds(in_text, "a.py") == ['a.py:1 """The method of seed 003 does this."""']
    assert misplaced_seeds(in_code, "a.py") == ['a.py:2 HELP = "see seed 004"']
    assert misplaced_seeds("# paper seed 001\n", "x.msg") == ["x.msg:1 # paper seed 001"]
