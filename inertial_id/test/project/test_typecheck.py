"""mypy over inertial_id/core is a gate: the settings, the libraries without type information and the
strict set of modules are in mypy.ini at the repository root. mypy is pinned in requirements-test.lock,
which the main leg installs. Humble's leg does not run this test (Makefile, ci-humble: that lock does not
install on Python 3.10); mypy.ini checks the code as Python 3.10 code (python_version) on the main leg."""
import subprocess
import sys

from paths import REPO


def test_mypy_on_core_is_clean():
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "mypy.ini")],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
