"""Check that a lock file installs from wheels on another Python and platform: every pinned package
has a wheel for it, and the lock is closed there (each dependency that applies on that Python is
pinned, at a version the dependent accepts; nothing is left to the resolver).

Two steps, both without installing anything:
1. ``pip download --only-binary=:all: --python-version 3.10 --implementation cp --abi cp310 --platform
   manylinux_2_5_x86_64 ... manylinux_2_35_x86_64 -r LOCK``: a wheel for CPython 3.10 on Linux x86_64
   with glibc 2.35 (Ubuntu 22.04) for every package, Requires-Python included.
   (``pip install --dry-run --target`` with the same options does not apply Requires-Python to the
   target version, and on this registry it fetches the same wheels, so it is neither faster nor
   enough.)
2. pip evaluates environment markers (``tomli; python_version < "3.11"``) on the Python that runs it,
   so the dependencies are read here from the downloaded wheels' metadata and their markers evaluated
   for the target: each one that applies must be pinned, at a version its specifier admits.

Usage: check_lock.py LOCK [--python-version 3.10] [--glibc 2.35]
"""
import argparse
import email.parser
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
except ImportError:  # a bare interpreter: the copy that pip carries
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.specifiers import SpecifierSet


def normalize(name: str) -> str:
    """PEP 503 name: 'ruamel.yaml.clib' and 'Ruamel_Yaml-Clib' are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict:
    """{normalized name: version} of the ``name==version`` lines; anything else is an error."""
    pins = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not version.strip() or any(c in version for c in "<>=!~;, "):
            raise ValueError(f"{path}:{number}: expected name==version, got '{line}'")
        pins[normalize(name.strip())] = version.strip()
    return pins


def target_environment(python_version: str) -> dict:
    """Marker environment of CPython ``python_version`` on Linux x86_64."""
    return {"python_version": python_version, "python_full_version": f"{python_version}.0",
            "implementation_name": "cpython", "implementation_version": f"{python_version}.0",
            "platform_python_implementation": "CPython", "os_name": "posix", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "platform_release": "",
            "platform_version": ""}


def wheel_metadata(wheel: Path) -> tuple:
    """(name, version, Requires-Python, [Requires-Dist]) read from a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        path = next(n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        meta = email.parser.Parser().parsestr(archive.read(path).decode("utf-8"), headersonly=True)
    return (meta["Name"], meta["Version"], meta.get("Requires-Python"), meta.get_all("Requires-Dist") or [])


def closure_problems(pins: dict, metadata: dict, environment: dict) -> list:
    """Problems, one line each, of the lock on the target environment. ``metadata``: {normalized
    name: (version, Requires-Python, [Requires-Dist])} of the wheels the lock selects."""
    python = environment["python_full_version"]
    problems = [f"{name}=={pins[name]} requires Python {requires} (not {python})"
                for name, (_, requires, _) in sorted(metadata.items())
                if requires and not SpecifierSet(requires).contains(python, prereleases=True)]
    extras = {name: {""} for name in metadata}          # the extras each package is asked for
    checked = set()
    while True:
        todo = [(name, extra) for name in sorted(extras) for extra in sorted(extras[name])
                if (name, extra) not in checked and name in metadata]
        if not todo:
            return problems
        for name, extra in todo:
            checked.add((name, extra))
            for line in metadata[name][2]:
                req = Requirement(line)
                if req.marker and not req.marker.evaluate({**environment, "extra": extra}):
                    continue
                dep = normalize(req.name)
                if dep not in pins:
                    problems.append(f"{dep} is needed by {name} ({line}) but not pinned")
                elif not req.specifier.contains(pins[dep], prereleases=True):
                    problems.append(f"{name} requires {line}, the lock pins {dep}=={pins[dep]}")
                extras.setdefault(dep, {""}).update(req.extras)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lock", type=Path)
    parser.add_argument("--python-version", default="3.10")
    parser.add_argument("--glibc", default="2.35", help="newest manylinux glibc the target accepts")
    args = parser.parse_args(argv)
    target = f"CPython {args.python_version} on Linux x86_64 (glibc {args.glibc})"
    try:
        pins = read_lock(args.lock)
    except (OSError, ValueError) as exc:
        print(f"check_lock: {exc}", file=sys.stderr)
        return 1
    major, minor = args.python_version.split(".")[:2]
    glibc_major, glibc_minor = (int(x) for x in args.glibc.split("."))
    platforms = [f"manylinux_{glibc_major}_{m}_x86_64" for m in range(5, glibc_minor + 1)]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    with tempfile.TemporaryDirectory(prefix="check_lock-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--only-binary=:all:", "--python-version", f"{major}.{minor}", "--implementation", "cp",
               "--abi", f"cp{major}{minor}", "--abi", "abi3", "--abi", "none", "--dest", tmp,
               *(arg for p in platforms for arg in ("--platform", p)), "-r", str(args.lock)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            errors = [line for line in run.stderr.splitlines() if "is ignored: it is neither" not in line]
            print("\n".join(errors[-25:]), file=sys.stderr)
            print(f"check_lock: {args.lock} does not resolve to wheels for {target}; pip exited "
                  f"{run.returncode}", file=sys.stderr)
            return 1
        metadata = {}
        for wheel in sorted(Path(tmp).glob("*.whl")):
            name, version, requires_python, requires = wheel_metadata(wheel)
            metadata[normalize(name)] = (version, requires_python, requires)
    problems = [f"{name}=={pins[name]} was not downloaded" for name in sorted(pins) if name not in metadata]
    problems += [f"{name}: pinned {pins[name]}, downloaded {metadata[name][0]}" for name in sorted(pins)
                 if name in metadata and metadata[name][0] != pins[name]]
    problems += closure_problems(pins, {n: m for n, m in metadata.items() if n in pins},
                                 target_environment(f"{major}.{minor}"))
    for problem in problems:
        print(f"check_lock: {args.lock}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_lock: {args.lock}: {len(pins)} packages, each a wheel for {target}, "
          f"every dependency pinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
