"""The package's layers, as the table in docs/development.rst ("Layers") draws them: no module imports
from a layer below its own in the table, no modules import each other in a circle, and an import
inside a function is there for an optional dependency that a ``# optional:`` comment names.

Read with ``ast`` from the sources, nothing imported: an import inside a function or under
``if TYPE_CHECKING`` counts like any other, since it is a dependency all the same."""
import ast
import re
from pathlib import Path

from paths import REPO, SOURCES

PACKAGE = SOURCES.name
TABLE = REPO / "docs" / "development.rst"

# A ratchet: lower it with every import that leaves a function, never raise it (issue 49: at most 20).
MAX_FUNCTION_IMPORTS = 13
OPTIONAL = "# optional:"


def layer_table() -> list[tuple[str, list[str]]]:
    """``[(layer, [path, ...])]`` of the list-table after the "Layers" title, lowest layer first."""
    text = TABLE.read_text().split("\nLayers\n------\n", 1)[1].split(".. list-table::", 1)[1]
    rows = []
    for row in re.split(r"^   \* - ", text, flags=re.M)[1:]:
        cells = re.split(r"^     - ", row, flags=re.M)
        rows.append((cells[0].strip(), re.findall(r"``([^`]+)``", cells[1])))
    assert rows[0] == ("layer", []), rows[0]
    return rows[1:]


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCES.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SOURCES.rglob("*.py"))}


def layer_of(path: Path, table) -> int:
    """Index in ``table`` of the longest table path that holds ``path`` (a folder holds what is under it)."""
    rel = path.relative_to(SOURCES).as_posix()
    found = [(len(p), i) for i, (_, paths) in enumerate(table) for p in paths
             if rel == p or (p.endswith("/") and rel.startswith(p))]
    assert found, f"{rel} is in no layer of {TABLE.name}'s table"
    return max(found)[1]


def imported_modules(name: str, node) -> list[str]:
    """The package's modules an import statement of module ``name`` loads by name (``from pkg import
    mod`` names ``pkg.mod``; ``from mod import func`` names ``mod``)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]
            parent = package.split(".")[:len(package.split(".")) - node.level + 1]
            base = ".".join(parent + ([node.module] if node.module else []))
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
    out = []
    for target in targets:
        while target not in MODULES and "." in target:       # import a.b.c of a module a.b: its attribute
            target = target.rsplit(".", 1)[0]
        if target in MODULES and target.split(".")[0] == PACKAGE:
            out.append(target)
    return out


def function_imports(tree) -> set:
    """The import statements inside a function's body (methods and nested functions too)."""
    return {node for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))}


def imports() -> list[tuple[str, int, str, bool]]:
    """``(module, line, imported module, inside a function)`` for every import of the package's modules."""
    out = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        inside = function_imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.extend((name, node.lineno, target, node in inside) for target in imported_modules(name, node))
    return out


def test_every_module_is_in_a_layer_of_the_table():
    table = layer_table()
    assert len(table) >= 10, table
    for path in MODULES.values():
        layer_of(path, table)


def test_no_import_runs_up_the_layers():
    table = layer_table()
    up = []
    for name, line, target, _ in imports():
        here, there = layer_of(MODULES[name], table), layer_of(MODULES[target], table)
        if there > here:
            up.append(f"{MODULES[name].relative_to(SOURCES)}:{line} ({table[here][0]}) imports {target} ({table[there][0]})")
    assert up == [], "\n".join(up)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one importing itself (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or v in edges.get(v, ()):
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    edges: dict[str, set[str]] = {}
    for name, _, target, _ in imports():
        # a package's modules import their package first; that arrow is not a dependency of the package
        if not name.startswith(target + "."):
            edges.setdefault(name, set()).add(target)
    assert cycles(edges) == []


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_imports_inside_functions_are_few_and_optional():
    """At most MAX_FUNCTION_IMPORTS, each saying which optional dependency keeps it there: a ``# optional:``
    comment on its first line, or on the line above the run of import lines it belongs to."""
    counted, unexplained = 0, []
    for path in MODULES.values():
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        import_lines = {k for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                        for k in range(node.lineno, node.end_lineno + 1)}
        for node in function_imports(tree):
            counted += 1
            rel = path.relative_to(SOURCES).as_posix()
            above = node.lineno - 1
            while above in import_lines:
                above -= 1
            said = OPTIONAL in lines[node.lineno - 1] or lines[above - 1].strip().startswith(OPTIONAL)
            if not said:
                unexplained.append(f"{rel}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert unexplained == [], "\n".join(sorted(unexplained))
    assert counted <= MAX_FUNCTION_IMPORTS, f"{counted} imports inside functions; lower the ratchet only"
