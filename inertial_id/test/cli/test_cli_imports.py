"""Every command pays for what building the parser imports: ``inertial-id --help`` (and each
subcommand's ``--help``) must load none of the heavy numerics, which a command imports when it runs.
The values the parsers show are defined once, numpy-free, in ``inertial_id.defaults``."""
import json
import re
import subprocess
import sys
from pathlib import Path


# cvxpy ~1.5 s, scipy.stats ~0.8 s, pinocchio, casadi, matplotlib, rclpy: each alone exceeds the 0.3 s
# CPU the whole `--help` may take (issue 31); numpy, ~0.2 s, would leave almost none of it either
HEAVY = ("cvxpy", "casadi", "scipy.stats", "matplotlib", "pinocchio", "rclpy", "numpy")


def modules_after(code: str) -> list:
    """The HEAVY modules loaded after ``code`` runs in a fresh interpreter."""
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_help_imports_no_heavy_module():
    # main(), as the inertial-id script runs it: builds the whole parser, prints the help, exits 0
    code = ("from inertial_id.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code")
    assert modules_after(code) == []


def test_each_subcommand_help_imports_no_heavy_module():
    # every command at every depth (a group's members too); the benchmarks' own parsers are left out:
    # each imports its benchmark, which loads what it measures
    code = ("import argparse, contextlib, io\n"
            "from inertial_id.cli import COMMANDS, GROUPS, build_parser, main\n"
            "def commands(parser, words=()):\n"
            "    for action in parser._actions:\n"
            "        if isinstance(action, argparse._SubParsersAction) and words != ('bench',):\n"
            "            for name, sub in action.choices.items():\n"
            "                yield [*words, name]\n"
            "                yield from commands(sub, (*words, name))\n"
            "found = list(commands(build_parser()))\n"
            "assert len(found) >= len(COMMANDS) + sum(len(m) for _, m in GROUPS.values()), found\n"
            "for words in found:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n            main([*words, '--help'])\n"
            "        except SystemExit as exc:\n            assert exc.code == 0, (words, exc.code)")
    assert modules_after(code) == []


def test_a_benchmark_gets_its_options_when_used():
    from inertial_id.benchmarks import BENCHMARKS
    from inertial_id.cli import build_parser
    args = build_parser().parse_args(["bench", "commands", "--plans", "3", "--json", "-"])
    assert (args.benchmark, args.plans, args.json, args.all_cores) == ("commands", 3, "-", False)
    assert args.handler == "bench.run"
    listed = build_parser()._subparsers._group_actions[0].choices["bench"].format_help()
    for name in (*BENCHMARKS, "cli"):
        assert re.search(rf"^    {name}\b", listed, re.M), name


def test_each_default_the_parsers_show_is_defined_once():
    """The values in inertial_id.defaults are assigned nowhere else in the package."""
    from inertial_id import defaults
    root = Path(defaults.__file__).parent
    names = [n for n in vars(defaults) if n.isupper()]
    assert len(names) >= 10
    for path in root.rglob("*.py"):
        if path != Path(defaults.__file__):
            assigned = [n for n in names if re.search(rf"^\s*{n}\s*=", path.read_text(), re.M)]
            assert assigned == [], (path, assigned)
