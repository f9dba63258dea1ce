"""One estimator interface: every registered method builds an Estimator, names are looked up in one
place, and the estimator node and the offline pipeline check messages in the same session (test_estimator_session)."""
import ast

import numpy as np
import pytest

from inertial_id.core.robot import model as robot_model
from inertial_id.core.estimators import factory
from inertial_id.core.estimators.intake import CheckedRows, Skipped, check_rows
from inertial_id.core.estimators.payload import PayloadEstimate
from inertial_id.core.estimators.protocol import EstimationMethod, Estimator, method_class, method_names, register
from inertial_id.core.estimators.row_checks import RowLimits
from inertial_id.core.robot.profile import ProfileError

from paths import SOURCES

ROBOTS = ("kinova_gen3", "xarm7")


def served():
    """(robot, method) for every registered method on every profile that can serve it."""
    out = []
    for robot in ROBOTS:
        r = robot_model.load_robot(robot)
        for m in method_names():
            try:
                method_class(m).create(r)
            except ProfileError:
                continue
            out.append((robot, m))
    return out


def test_the_registry_holds_one_class_per_method():
    assert method_names() == factory.METHODS == ("rls", "lmi", "pmd", "guaranteed", "log_cholesky")
    classes = [method_class(m) for m in method_names()]
    assert len(set(classes)) == len(classes)
    assert all(issubclass(c, EstimationMethod) and c.name == m for c, m in zip(classes, method_names()))
    with pytest.raises(ValueError, match="registered twice"):
        register("rls")(type("Again", (EstimationMethod,), {}))


@pytest.mark.parametrize("robot, method", served())
def test_every_registered_method_builds_an_estimator(robot, method):
    r = robot_model.load_robot(robot)
    est = factory.make_estimator(r, method)
    assert isinstance(est, Estimator)
    assert tuple(est.kinds) == factory.row_kinds(r, method)
    assert est.bounds_raised == 0 and sum(est.refused.values()) == 0
    res = est.result()
    assert isinstance(res, PayloadEstimate) and res.parameter_names == est.column_names[:10]
    assert res.samples_used == 0 and np.all(res.lower <= res.upper)


def test_every_method_is_served_by_some_profile():
    assert {m for _, m in served()} == set(method_names())


@pytest.mark.parametrize("call", [factory.make_estimator, factory.row_kinds])
def test_an_unknown_method_is_one_line_listing_the_choices(call):
    with pytest.raises(ProfileError) as err:
        call(robot_model.load_robot("xarm7"), "magic")
    text = str(err.value)
    assert "\n" not in text and "'magic'" in text
    assert all(m in text for m in method_names())


def _rows_message(est, rows=6, kind="wrench", **changes):
    """A message-like row set for ``est`` (wrench rows, 10 payload columns)."""
    rng = np.random.default_rng(1)
    fields = dict(kind=kind, parameter_names=list(est.column_names), rows=rows, samples=1,
                  A=rng.normal(size=rows * 10), b=rng.normal(size=rows), e=np.full(rows, 1.0),
                  sigma=np.full(rows, 0.3), kinematics=rng.normal(size=2 * rows), acceleration_bound=np.zeros(rows))
    fields.update(changes)
    return fields


def test_check_rows_takes_drops_and_passes_over():
    r = robot_model.load_robot("xarm7")
    limits = RowLimits.from_robot(r)
    pmd = factory.make_estimator(r, "pmd")
    ok = check_rows(pmd, limits, **_rows_message(pmd))
    assert isinstance(ok, CheckedRows) and ok.A.shape == (6, 10) and ok.kinematics.shape == (12,)
    other = check_rows(pmd, limits, **_rows_message(pmd, kind="joint_torque"))
    assert isinstance(other, Skipped) and other.ignored and other.reason == "joint_torque_rows"
    for changes, reason in [(dict(parameter_names=["x"] * 10), "parameter_names"),
                            (dict(b=np.full(6, np.nan)), "non_finite"),
                            (dict(kinematics=np.zeros(0)), "pmd_needs_wrench_kinematics"),
                            (dict(kinematics=None), "pmd_needs_wrench_kinematics"),
                            (dict(acceleration_bound=None), "no_acceleration_bound"),
                            (dict(acceleration_bound=np.full(5, 0.1)), "acceleration_bound")]:
        skipped = check_rows(pmd, limits, **_rows_message(pmd, **changes))
        assert isinstance(skipped, Skipped) and not skipped.ignored and skipped.reason == reason
    lmi = factory.make_estimator(r, "lmi")     # no kinematics needed: none passed on
    assert check_rows(lmi, limits, **_rows_message(lmi, kinematics=None)).kinematics is None


def _sources():
    return [SOURCES / "core" / "offline.py", SOURCES / "nodes" / "estimator.py",
            *sorted((SOURCES / "core" / "estimators").glob("*.py"))]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_no_method_name_branches_or_duck_typing_outside_the_registry(path):
    """No ``hasattr``/``getattr`` on an estimator, no comparison of a method name with a literal."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") \
                and "estimator" in ast.unparse(node.args[0]):
            bad.append(ast.unparse(node))
        if isinstance(node, ast.Compare) and "method" in ast.unparse(node.left) and \
                any(isinstance(c, (ast.Constant, ast.Tuple)) for c in node.comparators):
            bad.append(ast.unparse(node))
    assert not bad, f"{path.name}: {bad}"
