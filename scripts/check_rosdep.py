"""What a ROS user's ``rosdep install --from-paths src --ignore-src`` makes of this repository's
package.xml files, on Humble (Ubuntu 22.04) and Jazzy (Ubuntu 24.04): a key that resolves to nothing
stops that install, and with it the user's ``colcon build``. Fails unless every key resolves on both.

Offline: rosdep reads the rosdistro snapshot given as the argument (its rosdep/*.yaml keys and the
distribution files of index-v4.yaml) into a cache of its own under build/rosdep, never ~/.ros or
/etc/ros. Run with the python of the venv that has rosdep (``make check-rosdep``).

    python scripts/check_rosdep.py ../shared/vendor/rosdistro
"""
import argparse
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from catkin_pkg.packages import find_packages

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
ROSDEP_DIR = BUILD / "rosdep"
ROSDEP = Path(sys.executable).with_name("rosdep")
TARGETS = (("humble", "ubuntu:jammy"), ("jazzy", "ubuntu:noble"))
# What a sourced ROS environment sets and would change the answer: --ignore-src also drops every key
# installed under AMENT_PREFIX_PATH or ROS_PACKAGE_PATH (a venv with the ROS wheels would hide rclpy's),
# and the ROS_* versions would override those rosdep derives from --rosdistro.
ROS_ENV = ("AMENT_PREFIX_PATH", "ROS_PACKAGE_PATH", "ROS_DISTRO", "ROS_VERSION", "ROS_PYTHON_VERSION")


def rosdep_env(snapshot: Path) -> dict[str, str]:
    """The environment of every rosdep call: its sources list and cache under build/rosdep (rosdep's
    cache lives in $ROS_HOME/rosdep), the distribution index of the snapshot."""
    env = {k: v for k, v in os.environ.items() if k not in ROS_ENV}
    env.update(ROSDEP_SOURCE_PATH=str(ROSDEP_DIR / "sources.list.d"), ROS_HOME=str(ROSDEP_DIR / "home"),
               ROSDISTRO_INDEX_URL=(snapshot / "index-v4.yaml").as_uri())
    return env


def rosdep(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROSDEP), *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def update(snapshot: Path, env: dict[str, str]) -> None:
    """A fresh cache from the snapshot, so that a changed snapshot is always what is read."""
    sources = ROSDEP_DIR / "sources.list.d"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "10-snapshot.list").write_text(
        "".join(f"yaml {(snapshot / 'rosdep' / name).as_uri()}\n" for name in ("base.yaml", "python.yaml")))
    done = rosdep(env, "update")
    if done.returncode:
        sys.exit(f"rosdep update from {snapshot} failed:\n{done.stdout}{done.stderr}")


def resolve(env: dict[str, str], paths: list[str], distro: str, os_name: str) -> tuple[dict[str, str], list[str]]:
    """Each key of the packages found here and the installer it resolves to, and the keys that resolve
    to nothing (``rosdep resolve`` prints ``#ROSDEP[key]``, then ``#installer`` and its packages)."""
    keys = rosdep(env, "keys", "--from-paths", *paths, "--ignore-src", "--rosdistro", distro)
    if keys.returncode:
        sys.exit(f"rosdep keys ({distro}) failed:\n{keys.stdout}{keys.stderr}")
    listed = sorted(keys.stdout.split())
    answer = rosdep(env, "resolve", *listed, "--rosdistro", distro, "--os", os_name).stdout
    installers, key = {}, None
    for line in answer.splitlines():
        if found := re.fullmatch(r"#ROSDEP\[(.+)\]", line):
            key = found[1]
        elif line.startswith("#") and key is not None:
            installers[key] = line[1:]
    return installers, [k for k in listed if k not in installers]


def check(env: dict[str, str], paths: list[str], distro: str, os_name: str) -> bool:
    """The ROS user's command (simulated, every package listed whatever this machine has installed),
    its full output kept in build/rosdep, one summary line printed."""
    installers, unresolved = resolve(env, paths, distro, os_name)
    simulate = rosdep(env, "install", "--simulate", "--reinstall", "--from-paths", *paths, "--ignore-src",
                      "--rosdistro", distro, "--os", os_name)
    log = ROSDEP_DIR / f"simulate-{distro}.txt"
    log.write_text(simulate.stdout + simulate.stderr)
    keys_of = {i: sorted(k for k, v in installers.items() if v == i) for i in sorted(set(installers.values()))}
    # apt is what package.xml means to ask for (it says why not pip): the keys of any other installer are named
    by_installer = ", ".join(f"{len(keys)} {i}" + ("" if i == "apt" else f" ({' '.join(keys)})")
                             for i, keys in keys_of.items())
    print(f"{distro} ({os_name}): {len(installers) + len(unresolved)} keys: {by_installer}; "
          f"{len(unresolved)} unresolved{' (' + ' '.join(unresolved) + ')' if unresolved else ''}; "
          f"rosdep install --simulate: exit {simulate.returncode} ({log.relative_to(ROOT)})")
    if simulate.returncode:
        print(simulate.stderr.strip(), file=sys.stderr)
    return not unresolved and simulate.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshot", type=Path, help="the rosdistro snapshot (rosdep/, index-v4.yaml, <distro>/)")
    snapshot = parser.parse_args().snapshot.resolve()
    if not (snapshot / "index-v4.yaml").is_file():
        sys.exit(f"no rosdistro snapshot at {snapshot} (index-v4.yaml): set SHARED=<path of shared/>")
    # build/ holds a colcon workspace whose src/ links back to this repository: catkin_pkg's
    # crawl (which follows links) would find every package twice there, and skips folders with this file.
    BUILD.mkdir(exist_ok=True)
    (BUILD / "COLCON_IGNORE").touch()
    env = rosdep_env(snapshot)
    update(snapshot, env)
    found = find_packages(str(ROOT))
    if not found:
        sys.exit(f"no package.xml under {ROOT}")
    print(f"rosdep {version('rosdep')} on {snapshot}; packages: "
          + ", ".join(f"{p.name} ({path})" for path, p in sorted(found.items())))
    # rosdep's own crawl of "." (rospkg's) skips CATKIN_IGNORE folders only: it would read the copies of
    # package.xml that the builds install into .venv*/share and build/; the packages' folders are what a
    # user's clone in src/ holds
    paths = sorted(found)
    ok = [check(env, paths, distro, os_name) for distro, os_name in TARGETS]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
