"""The statistical interval's accounting (core/estimators/bootstrap.py) and how the real-data study
names it (studies/realdata.py): the run-to-run bias enters at the Student-t quantile of the runs it
was measured on, and the interval is called by its level only when held-out coverage reached it."""
import numpy as np
import pytest

from inertial_id.core.estimators.bootstrap import bias_quantile, interval_label, widen_by_bias
from inertial_id.studies.realdata import label_statistical, statistical_coverage


def test_bias_quantile_is_student_t_of_the_runs_behind_the_rms():
    # t quantiles at 97.5 %: 2 and 3 degrees of freedom, and the normal limit
    assert bias_quantile(0.95, 2) == pytest.approx(4.303, abs=1e-3)
    assert bias_quantile(0.95, 3) == pytest.approx(3.182, abs=1e-3)
    assert bias_quantile(0.95, 10_000) == pytest.approx(1.960, abs=1e-3)
    assert bias_quantile(0.95, 2) > bias_quantile(0.95, 3) > bias_quantile(0.95, 30)


def test_widen_by_bias_adds_the_quantile_of_its_runs_in_quadrature():
    boot = {"lower": np.full(10, -0.3), "upper": np.full(10, 0.3), "median": np.zeros(10), "level": 0.95}
    bias = np.linspace(0.0, 0.9, 10)
    for runs in (2, 5):
        out = widen_by_bias(boot, bias, runs)
        half = np.hypot(0.3, bias_quantile(0.95, runs) * bias)
        np.testing.assert_allclose(out["upper"], half)
        np.testing.assert_allclose(out["lower"], -half)
        assert out["bias_runs"] == runs
    # fewer runs behind the same RMS: a wider interval
    assert np.all(widen_by_bias(boot, bias, 2)["upper"][1:] > widen_by_bias(boot, bias, 5)["upper"][1:])


def test_label_names_the_level_only_when_held_out_coverage_reached_it():
    unvalidated = interval_label(0.95)
    assert "NOT validated" in unvalidated and "nominal 95%" in unvalidated and "NOT guaranteed" in unvalidated
    short = interval_label(0.95, 0.9167)
    assert short.startswith("statistical, held-out coverage 91.7%") and "NOT reached" in short
    assert interval_label(0.95, 0.95).startswith("statistical 95% (held-out coverage 95.0%")
    for label in (unvalidated, short):
        assert not label.startswith("statistical 95%")


def _case(run, covered, level=0.95):
    return {"held_out": run, "statistical": {"level": level, "covered": covered}}


def test_study_coverage_is_per_parameter_and_per_run_and_labels_every_case():
    hit, miss_mass = [True] * 10, [False] + [True] * 9
    cases = [_case("run1", hit), _case("run1", hit), _case("run2", miss_mass), _case("run2", hit), {"held_out": "run3"}]
    summary = statistical_coverage(cases)
    assert summary["statistical_coverage"] == pytest.approx(15 / 16)
    assert summary["statistical_coverage_all_parameters"] == pytest.approx(39 / 40)
    assert summary["statistical_coverage_per_parameter"][0] == pytest.approx(0.75)
    assert summary["statistical_coverage_per_run"] == {"run1": 1.0, "run2": pytest.approx(7 / 8)}
    label_statistical(cases, summary)
    assert summary["statistical_validated"] is False and "93.8%" in summary["statistical_label"]
    assert all(c["statistical"]["label"] == summary["statistical_label"] for c in cases if "statistical" in c)

    covered = [_case("run1", hit), _case("run2", hit)]
    summary = statistical_coverage(covered)
    label_statistical(covered, summary)
    assert summary["statistical_validated"] is True and summary["statistical_label"].startswith("statistical 95%")


def test_study_without_statistical_intervals_has_no_label():
    summary = statistical_coverage([{"held_out": "run1"}])
    assert summary["statistical_coverage"] is None and summary["statistical_coverage_per_run"] == {}
    label_statistical([{"held_out": "run1"}], summary)
    assert summary["statistical_label"] is None and summary["statistical_validated"] is None
