"""The locks, one per install route (docs/install.rst). What `make check-locks` does not see: the Jazzy
apt route's lock must be the Jazzy wheel route's environment (which CI runs) less what apt brings there."""
import re

from paths import REPO

# What apt brings on the Jazzy apt route and the wheel route's lock pins: ROS (ros-*) and its build
# tools, pinocchio 3 and what its wheels need
APT_ON_JAZZY = re.compile(r"ros-.*|pin|libpinocchio|eigenpy|coal|libcoal|cmeel(-.*)?|jrl-cmakemodules|catkin-pkg|empy|"
                          r"lark-parser|docutils|wheel")


def read_lock(name: str) -> dict[str, str]:
    pins = {}
    for line in (REPO / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            package, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", package).lower()] = version
    return pins


def test_the_jazzy_apt_lock_is_the_wheel_routes_environment_less_what_apt_brings():
    apt, wheels = read_lock("requirements-jazzy-apt.lock"), read_lock("requirements-jazzy.lock")
    assert apt["numpy"] == "1.26.4"                  # Ubuntu 24.04's, which Jazzy's modules are built against
    assert not [p for p in apt if APT_ON_JAZZY.fullmatch(p)]
    assert {p: v for p, v in apt.items() if wheels.get(p) != v} == {}
    # the Humble lock's packages, less its Python 3.10 backports, are all there
    humble = set(read_lock("requirements-humble.lock")) - {"exceptiongroup", "tomli", "importlib-resources", "six"}
    assert humble - set(apt) == set()
