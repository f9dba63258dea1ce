"""Sphinx extension of the inertial_id docs, offline and self-contained.

- ``.. inertial-id-cli::`` renders the ``inertial-id`` command's argparse parser (every subcommand,
  sub-subcommands too) at build time: one section per command with its ``--help`` text, so the CLI
  reference cannot drift from the code.
- ``.. inertial-id-modules:: PACKAGE`` documents every module of ``PACKAGE`` (recursively) with
  autodoc, one section per module, except the subpackages that another page of ``docs/api`` claims
  with its own ``inertial-id-modules`` directive. The module list is read from the source tree at
  build time, so a module that is added or moved is documented without editing the docs.
- ``autodoc-process-docstring``: the package's docstrings are plain text with RST inline markup
  (``code``, ``:class:``); what plain text means but RST reads otherwise is made literal before
  docutils sees it: ``|x|`` (absolute values, not substitutions), a lone ``*`` (multiplication, not
  emphasis), a list that starts or ends without a blank line, and Markdown tables (made list-tables).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import pkgutil
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
API_DIR = HERE.parent / "api"
# layers that are not ROS-free (rclpy nodes, the command-line entry points, the timed benchmarks)
NOT_DOCUMENTED = ("inertial_id.nodes", "inertial_id.cli", "inertial_id.benchmarks")


# --- the CLI reference ---------------------------------------------------------------------------

@contextlib.contextmanager
def _columns(width: int):
    """argparse wraps help at $COLUMNS: a fixed width makes the page the same on every machine."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """``(words, help, parser)`` of every subcommand of ``parser``, depth first, in --help order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                words = prefix + (name,)
                yield words, helps.get(name) or "", sub
                yield from subcommands(sub, words)


class CliDirective(Directive):
    """``.. inertial-id-cli::``: the whole command reference, generated from the parser."""
    has_content = False
    option_spec = {"width": directives.positive_int}

    def run(self):
        from inertial_id.cli import build_parser
        width = self.options.get("width", 100)
        with _columns(width):
            parser = build_parser()
            out = [self._section(("inertial-id",), parser.description or "", parser.format_help(), [])]
            parents = {("inertial-id",): out[0]}
            for words, summary, sub in subcommands(parser):
                section = self._section(("inertial-id",) + words, summary, sub.format_help(), [])
                parent = parents.get(("inertial-id",) + words[:-1])
                if len(words) > 1 and parent is not None:
                    parent += section
                else:
                    out.append(section)
                parents[("inertial-id",) + words] = section
        return out

    def _section(self, words, summary, help_text, children):
        title = " ".join(words)
        section = nodes.section(ids=[nodes.make_id(title)], names=[nodes.fully_normalize_name(title)])
        section += nodes.title(text=title)
        if summary:
            summary = " ".join(summary.split())
            summary = summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
            inline, messages = self.state.inline_text(_inline(summary), self.lineno)
            section += nodes.paragraph("", "", *inline)
            section += messages
        block = nodes.literal_block(help_text, help_text)
        block["language"] = "text"
        section += block
        for child in children:
            section += child
        self.state.document.note_implicit_target(section)
        return section


# --- the API reference ---------------------------------------------------------------------------

def _claimed_packages() -> dict[str, str]:
    """package -> page of every ``inertial-id-modules`` directive in docs/api (read from the sources
    before parsing, so a page knows which subpackages the other pages document)."""
    claimed = {}
    for page in sorted(API_DIR.glob("*.rst")):
        for match in re.finditer(r"^\.\. inertial-id-modules::\s*(\S+)", page.read_text(), re.M):
            claimed[match.group(1)] = page.stem
    return claimed


def _exists(name: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _walk(package: str):
    """``package`` and every module below it, found on disk (nothing is imported to find them)."""
    import importlib.util
    spec = importlib.util.find_spec(package)
    yield package
    for location in (spec.submodule_search_locations or []) if spec else []:
        for info in pkgutil.iter_modules([location]):
            name = f"{package}.{info.name}"
            if info.ispkg:
                yield from _walk(name)
            else:
                yield name


def _skipped(name: str) -> bool:
    return any(p.startswith("_") for p in name.split(".")) or name.startswith(NOT_DOCUMENTED)


def modules_of(package: str, claimed: dict[str, str]) -> list[str]:
    """``package`` and its modules, recursively, less the subpackages claimed by other directives,
    the private modules, ``__main__`` and the layers in NOT_DOCUMENTED; packages before their modules."""
    others = [c for c in claimed if c != package and c.startswith(package + ".")]
    return [name for name in _walk(package)
            if not _skipped(name) and not any(name == c or name.startswith(c + ".") for c in others)]


def _documented_on_pages() -> set[str]:
    """What docs/api documents: the packages of ``inertial-id-modules`` and the modules of ``automodule``."""
    found = set(_claimed_packages())
    for page in sorted(API_DIR.glob("*.rst")):
        found.update(re.findall(r"^\.\. automodule::\s*(\S+)", page.read_text(), re.M))
    return found


def check_coverage(app):
    """A warning (an error under -W) for every module of the package that no page of docs/api
    documents, and for a page that names a package that does not exist (moved or renamed)."""
    documented = _documented_on_pages()
    for name in sorted(documented):
        if not _exists(name):
            logger.warning("docs/api names %s, which does not exist (moved or renamed?): update the page", name)
    for name in _walk("inertial_id"):
        if _skipped(name) or name == "inertial_id":
            continue
        if not any(name == d or name.startswith(d + ".") for d in documented):
            logger.warning("%s is documented by no page of docs/api: add it to a page (an "
                           "inertial-id-modules or automodule directive)", name)


class ModulesDirective(Directive):
    """``.. inertial-id-modules:: PACKAGE``: autodoc of every module of PACKAGE (see module docstring)."""
    required_arguments = 1
    has_content = False

    def run(self):
        package = self.arguments[0]
        if not _exists(package):
            return []           # check_coverage has said so
        lines = []
        for name in modules_of(package, _claimed_packages()):
            title = f"``{name}``"
            lines += [title, "-" * len(title), "", f".. automodule:: {name}", "   :members:",
                      "   :ignore-module-all:", ""]
        content = StringList(lines, source=f"inertial-id-modules {package}")
        holder = nodes.section()
        holder.document = self.state.document
        nested_parse_with_titles(self.state, content, holder)
        return holder.children


# --- plain-text docstrings as RST ----------------------------------------------------------------

_PROTECTED = re.compile(r"(``.+?``|:[\w:.+-]+:`[^`]*`|`[^`]+`_{0,2})", re.S)
_LONE_STAR = re.compile(r"(?<![\w*\\])\*(?=[\s),.;:]|$)", re.M)
_BULLET = re.compile(r"^(\s*)[-*+]\s+\S")
_ENUMERATOR = re.compile(r"^(\s*)(\d+[.)]|\(\d+\))\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|[\s:|-]+\|\s*$")


def _inline(text: str) -> str:
    """``|`` and a lone ``*`` made literal, outside inline literals, roles and interpreted text."""
    parts = _PROTECTED.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _LONE_STAR.sub(r"\\*", parts[i].replace("\\|", "|").replace("|", "\\|"))
    return "".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _table(rows: list[str], indent: str) -> list[str]:
    """A Markdown table (header, rule, rows) as a list-table."""
    def cells(row):
        return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]
    body = [cells(r) for r in rows if not _TABLE_RULE.match(r)]
    if len({len(row) for row in body}) != 1:           # not a table after all: plain text lines
        return [_TEXT + r for r in rows if not _TABLE_RULE.match(r)] + [""]
    out = [f"{indent}.. list-table::", f"{indent}   :header-rows: 1", ""]
    for row in body:
        for j, cell in enumerate(row):
            out.append(f"{indent}   {'* -' if j == 0 else '  -'} {_inline(cell) or '..'}")
    return out + [""]


def _starts_item(lines: list[str], i: int) -> bool:
    """An enumerator (``1.``, ``(2)``) starts a list item, as docutils reads it, only when the next
    line is blank, indented deeper, or another item; otherwise it is the start of a sentence."""
    if i + 1 >= len(lines) or not lines[i + 1].strip():
        return True
    after = lines[i + 1]
    return _indent(after) > _indent(lines[i]) or bool(_BULLET.match(after) or _ENUMERATOR.match(after))


def plain_text_to_rst(lines: list[str]) -> list[str]:
    """The docstring lines with the repairs of the module docstring; literal blocks (after ``::``)
    and directive bodies are left as they are."""
    out: list[str] = []
    literal_indent = None           # inside a literal block / directive body deeper than this
    list_indent = None              # inside a list whose bullets are at this indent
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if literal_indent is not None:
            if not stripped or _indent(line) > literal_indent:
                out.append(line)
                i += 1
                continue
            literal_indent = None
        if _TABLE_ROW.match(line) and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            j = i
            while j < len(lines) and _TABLE_ROW.match(lines[j]):
                j += 1
            if out and out[-1].strip():
                out.append("")
            out += _table(lines[i:j], line[:_indent(line)])
            list_indent = None
            i = j
            continue
        bullet = _BULLET.match(line) or (_ENUMERATOR.match(line) and (
            _starts_item(lines, i) or (list_indent is not None and _indent(line) == list_indent)))
        if bullet:
            if out and out[-1].strip() and (list_indent is None or _indent(line) != list_indent):
                out.append("")
            list_indent = _indent(line)
        elif stripped and list_indent is not None and _indent(line) <= list_indent:
            if out and out[-1].strip():
                out.append("")
            list_indent = None
        if stripped.startswith(".. ") or (stripped.endswith("::") and not stripped.startswith(":")):
            literal_indent = _indent(line)
            out.append(line if stripped.startswith(".. ") else _TEXT + line)
            i += 1
            continue
        out.append(_TEXT + line if stripped else line)
        i += 1
    return _inline_paragraphs(out)


_TEXT = "\x00"          # marks a line of running text (inline markup repaired per paragraph)


def _inline_paragraphs(lines: list[str]) -> list[str]:
    """:func:`_inline` on each run of consecutive text lines at once, so that an inline literal
    spanning two lines stays one."""
    out, run = [], []

    def flush():
        if run:
            out.extend(_inline("\n".join(run)).split("\n"))
            run.clear()
    for line in lines:
        if line.startswith(_TEXT):
            run.append(line[len(_TEXT):])
        else:
            flush()
            out.append(line)
    flush()
    return out


def process_docstring(app, what, name, obj, options, lines):
    """``autodoc-process-docstring``: :func:`plain_text_to_rst` on every docstring, in place."""
    lines[:] = plain_text_to_rst(list(lines))


def check_claims(app):
    """Two pages must not claim the same package (it would be documented twice)."""
    seen = {}
    for page in sorted(API_DIR.glob("*.rst")):
        for match in re.finditer(r"^\.\. inertial-id-modules::\s*(\S+)", page.read_text(), re.M):
            if match.group(1) in seen:
                raise RuntimeError(f"{match.group(1)} is claimed by api/{seen[match.group(1)]} and api/{page.stem}")
            seen[match.group(1)] = page.stem


def setup(app):
    app.add_directive("inertial-id-cli", CliDirective)
    app.add_directive("inertial-id-modules", ModulesDirective)
    app.connect("autodoc-process-docstring", process_docstring)
    app.connect("builder-inited", check_claims)
    app.connect("builder-inited", check_coverage)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
