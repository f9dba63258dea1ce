"""The tests' own tree (docs/development.rst): test modules import helpers by basename from any folder
of test/, which is on sys.path (conftest.py), so every basename names one module. That includes
``conftest``: under colcon's test run, a second conftest.py shadowed the suite's, and every
``from conftest import`` failed there while a plain pytest passed."""
from collections import Counter

from paths import TESTS


def test_every_module_of_the_tests_has_a_name_of_its_own():
    names = Counter(p.name for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    assert {name: n for name, n in names.items() if n > 1} == {}
