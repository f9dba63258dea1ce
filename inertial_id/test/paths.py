"""Where things are, for every test whatever its folder (test/ mirrors the package: a test of
inertial_id/core/estimators/x.py is in test/core/estimators/). Import it as ``from paths import ...``:
test/ is on sys.path (conftest.py)."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent     # inertial_id/test
DATA = TESTS / "data"                       # the files the tests read (URDFs of arms the package does not ship)
PACKAGE = TESTS.parent                      # the inertial_id ROS package (setup.py, config/, launch/, examples/)
SOURCES = PACKAGE / "inertial_id"           # its Python package
REPO = PACKAGE.parent                       # the repository (Makefile, docs/, scripts/, ruff.toml, mypy.ini)
SHARED = REPO.parent / "shared"             # the project's shared folder beside the repository
REAL_GEN3 = SHARED / "data" / "kinova_gen3_real"    # the real Kinova Gen3 runs
