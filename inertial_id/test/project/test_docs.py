"""The docs site (docs/) and the README.

- The site builds with Sphinx, warnings as errors (what ``make docs`` runs), into a temporary folder.
- README.md stays a short front page (at most 150 lines) whose relative links exist.
- Every command shown in a shell code block of the docs pages and of the README is checked, cheaply:
  ``inertial-id ...`` lines are parsed by the command's own parser (so a renamed command or option
  fails here), and a ``launch`` line's ``NAME:=VALUE`` arguments are checked as ``inertial-id launch``
  checks them before it starts anything; ``make`` targets and variables, ``ros2 launch|run|service|
  lifecycle|param`` lines and the files named by ``rviz2 -d`` and ``pip install -r`` are checked
  against the package. The code blocks that follow the comment ``.. checked-by-test: run`` are run
  for real, in a temporary folder, with ``--duration`` cut to a few seconds.
"""
from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from paths import PACKAGE, REPO

pytestmark = pytest.mark.slow          # Sphinx builds the site

DOCS = REPO / "docs"
README = REPO / "README.md"
README_MAX_LINES = 150
RUN_MARK = ".. checked-by-test: run"
RUN_DURATION_S = 4.0
SHELLS = {"bash", "console", "shell", "sh"}
# programs of other tools: shown for completeness, not checked here
NOT_CHECKED = {"mkdir", "cd", "git", "rosdep", "colcon", "export", ".", "source", "python3", "touch"}
NOT_CHECKED_ROS2 = {"security", "bag", "pkg"}
TRANSITIONS = {"configure", "activate", "deactivate", "cleanup", "shutdown"}


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    words: tuple[str, ...]
    run: bool

    def __str__(self):
        return f"{self.page}:{self.line}: {' '.join(self.words)}"


def _commands_of_line(text: str) -> list[list[str]]:
    """The commands of one shell line: split at ``&&`` and ``;``, comments and leading ``VAR=value``
    assignments dropped."""
    words = shlex.split(text, comments=True)
    out, current = [], []
    for word in words + ["&&"]:
        if word in ("&&", ";", "||"):
            while current and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", current[0]):
                current = current[1:]
            if current:
                out.append(current)
            current = []
        else:
            current.append(word)
    return out


def rst_blocks(path: Path):
    """``(first line number, lines, marked to run)`` of each shell code block of an RST page."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)\.\. code-block::\s*(\S+)", lines[i])
        if not match or match.group(2) not in SHELLS:
            i += 1
            continue
        before = [line.strip() for line in lines[:i] if line.strip()]
        run = bool(before) and before[-1] == RUN_MARK
        indent = len(match.group(1))
        j, body = i + 1, []
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            if lines[j].strip() and not lines[j].strip().startswith(":"):
                body.append((j + 1, lines[j].strip()))
            j += 1
        yield body, run
        i = j


def markdown_blocks(path: Path):
    """``(lines, False)`` of each fenced code block of a Markdown file in a shell language (or none)."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if not match:
            i += 1
            continue
        j, body = i + 1, []
        while j < len(lines) and not lines[j].startswith("```"):
            if lines[j].strip():
                body.append((j + 1, lines[j].strip()))
            j += 1
        if match.group(1) in SHELLS | {""}:
            yield body, False
        i = j + 1


def documented_commands() -> list[Command]:
    sources = [(p, rst_blocks(p)) for p in sorted(DOCS.rglob("*.rst"))] + [(README, markdown_blocks(README))]
    commands = []
    for path, blocks in sources:
        for body, run in blocks:
            for number, text in body:
                for words in _commands_of_line(text):
                    commands.append(Command(str(path.relative_to(REPO)), number, tuple(words), run))
    return commands


COMMANDS = documented_commands()


# --- the checks per program ----------------------------------------------------------------------

def _parser():
    from inertial_id.cli import build_parser
    return build_parser()


def parse_inertial_id(args: list[str]):
    """The parsed arguments, or an AssertionError with argparse's message."""
    import contextlib
    import io
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return _parser().parse_args(args)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise AssertionError(f"the parser refuses it: {err.getvalue().strip()}") from None
        return None


def check_launch(file: str, items: list[str]) -> None:
    """What ``inertial-id launch`` checks before it starts anything: one of this package's launch
    files, the argument names it declares, a profile, method and payload the nodes accept. A
    ``robot_profile`` that is a YAML path not in this repository is the user's copy of the file's
    robot (the tutorials say so) and is checked as that robot."""
    from inertial_id.cli import UserError
    from inertial_id.cli import launch
    items = [i for i in items if i not in ("-s", "--show-args", "--processes")]
    path = launch.find_launch_file(file)
    profile, with_sim = launch.declared_node_set(path)
    arguments = launch.parse_arguments(items)
    from inertial_id.nodes.launch import launch_arguments
    declared = {name for name, _, _ in launch_arguments(with_sim)}
    assert set(arguments) <= declared, f"{path.name} declares no {sorted(set(arguments) - declared)}"
    own = arguments.get("robot_profile", "")
    if own.endswith(".yaml") and not (REPO / own).is_file() and not (PACKAGE / own).is_file() and not Path(own).is_file():
        arguments["robot_profile"] = profile
    try:
        launch.check_arguments(arguments, profile)
    except UserError as exc:
        raise AssertionError(str(exc)) from None


def check_inertial_id(args: list[str]) -> None:
    parsed = parse_inertial_id(args)
    if parsed is None:
        return
    if parsed.command == "launch":
        check_launch(parsed.file, list(parsed.arguments) + (["-s"] if parsed.show_args else []))
    obstacles = getattr(parsed, "obstacles", None)
    if obstacles:
        assert (PACKAGE / "config" / "scenarios" / f"{obstacles}.yaml").is_file() or Path(obstacles).is_file(), \
            f"no obstacle scenario {obstacles}"


def check_make(args: list[str]) -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([\w.-]+)\s*:(?!=)", makefile, re.M))
    for word in args:
        if "=" in word:
            name = word.split("=", 1)[0]
            assert re.search(rf"\$\({name}\)|^{name}\s*\??=", makefile, re.M), f"the Makefile has no variable {name}"
        else:
            assert word in targets, f"the Makefile has no target {word} (targets: {', '.join(sorted(targets))})"


def _suite_interfaces() -> dict[str, set[str]]:
    """node -> its service names, on every shipped arm profile (the simulator included)."""
    from inertial_id.core.robot.model import load_robot
    from inertial_id.core.data.security_policy import node_interfaces
    nodes: dict[str, set[str]] = {}
    for robot in ("kinova_gen3", "xarm7"):
        for node, d in node_interfaces(load_robot(robot), sim=True).items():
            nodes.setdefault(node, set()).update(d["services"])
    return nodes


def _node(name: str, nodes) -> str:
    node = name.strip("/")
    assert node in nodes, f"no node {name} in the suite (nodes: {', '.join(sorted(nodes))})"
    return node


def check_ros2(args: list[str]) -> None:
    verb = args[0]
    if verb in NOT_CHECKED_ROS2:
        return
    if verb == "launch":
        assert args[1] == "inertial_id", f"not this package: {args[1]}"
        check_launch(args[2], args[3:])
        return
    if verb == "run":
        assert args[1] == "inertial_id", f"not this package: {args[1]}"
        params_file = PACKAGE / "config" / "params" / f"{args[2]}.yaml"
        assert params_file.is_file(), f"no node executable {args[2]} (config/params has none of that name)"
        declared = set(next(iter(yaml.safe_load(params_file.read_text()).values()))["ros__parameters"])
        declared |= {"robot_profile", "use_sim_time"}
        rest = args[3:]
        for flag, value in zip(rest, rest[1:]):
            if flag == "-p":
                name = value.split(":=", 1)[0]
                assert name in declared, f"{args[2]} declares no parameter {name}"
        return
    nodes = _suite_interfaces()
    if verb == "service":
        assert args[1] == "call", f"ros2 service {args[1]}: not checked by this test"
        node, _, service = args[2].strip("/").rpartition("/")
        node = _node(node, nodes)
        assert service in nodes[node], f"{node} offers no service {service} (it has: {', '.join(sorted(nodes[node]))})"
        assert re.fullmatch(r"\w+/srv/\w+", args[3]), f"not a service type: {args[3]}"
    elif verb == "lifecycle":
        assert args[1] == "set"
        _node(args[2], nodes)
        assert args[3] in TRANSITIONS, f"no lifecycle transition {args[3]}"
    elif verb == "param":
        _node(args[2], nodes)
    else:
        raise AssertionError(f"ros2 {verb}: a command this test does not know; teach test/project/test_docs.py")


def _repository_path(word: str) -> Path:
    """A path as the docs write it: relative to the repository, under an install prefix's
    share/inertial_id (the package's), or under a workspace's src/inertial_id (the repository's clone)."""
    if "share/inertial_id/" in word:
        return PACKAGE / word.split("share/inertial_id/", 1)[1]
    if "src/inertial_id/" in word:
        return REPO / word.split("src/inertial_id/", 1)[1]
    return REPO / word


def check_command(command: Command) -> None:
    words = list(command.words)
    program = words[0]
    if program.endswith("bin/inertial-id") or program == "inertial-id":
        check_inertial_id(words[1:])
    elif program == "make":
        check_make(words[1:])
    elif program == "ros2":
        check_ros2(words[1:])
    elif program == "rviz2":
        path = next(w for w in words if w.endswith(".rviz"))       # also after a $(ros2 pkg prefix ...)
        assert _repository_path(path).is_file(), f"no file {path}"
    elif program.endswith("pip"):
        path = words[words.index("-r") + 1]
        assert _repository_path(path).is_file(), f"no file {path}"
    elif program not in NOT_CHECKED:
        raise AssertionError(f"{program}: a command this test does not know; teach test/project/test_docs.py")


# --- the tests -----------------------------------------------------------------------------------

def test_the_docs_show_commands_of_every_kind():
    """The extraction finds the tutorials' commands (a change of markup must not silence the checks)."""
    pages = {c.page for c in COMMANDS}
    assert "README.md" in pages and len({p for p in pages if p.startswith("docs/tutorials/")}) >= 6, sorted(pages)
    programs = {Path(c.words[0]).name for c in COMMANDS}
    assert {"inertial-id", "make", "ros2", "rviz2"} <= programs, programs
    assert sum(c.run for c in COMMANDS) >= 3


def _id(command: Command) -> str:
    return f"{command.page}:{command.line}:{Path(command.words[0]).name}"


@pytest.mark.parametrize("command", COMMANDS, ids=_id)
def test_documented_command(command):
    try:
        check_command(command)
    except Exception as exc:
        raise AssertionError(f"{command}\n  {type(exc).__name__}: {exc}") from None


def test_marked_blocks_run(tmp_path):
    """The commands of the blocks marked to run, in order per page (a page's later commands use what
    its earlier ones wrote), each with exit code 0."""
    for page in sorted({c.page for c in COMMANDS if c.run}):
        folder = tmp_path / Path(page).stem
        folder.mkdir()
        for command in (c for c in COMMANDS if c.run and c.page == page):
            words = list(command.words)
            assert words[0].endswith("inertial-id"), f"{command}: only inertial-id commands run here"
            if "--duration" in words:
                k = words.index("--duration") + 1
                words[k] = str(min(float(words[k]), RUN_DURATION_S))
            done = subprocess.run([sys.executable, "-m", "inertial_id.cli", *words[1:]], cwd=folder,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{command}: exit code {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_readme_is_short_and_its_links_exist():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the manual is docs/ (at most {README_MAX_LINES})"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local, "README.md links to no docs page"
    missing = [link for link in local if not (REPO / link).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
    assert "make test" in README.read_text()


@pytest.mark.skipif(importlib.util.find_spec("sphinx") is None,
                    reason="Sphinx is not installed (make test installs it from requirements-test.lock)")
def test_docs_build_without_warnings(tmp_path):
    """What ``make docs`` runs: every warning is an error, the CLI reference generated from the parser
    and the API reference from the module tree."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"sphinx-build failed:\n{done.stderr[-6000:]}"
    assert "WARNING" not in done.stderr, done.stderr[-6000:]
    cli = (tmp_path / "html" / "reference" / "cli.html").read_text()
    for name in ("inertial-id demo", "inertial-id estimate", "inertial-id bench builder"):
        assert name in cli, f"the CLI reference lacks {name}"
    assert "acceleration_error_bound" in (tmp_path / "html" / "api" / "core.html").read_text()
