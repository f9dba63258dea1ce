import numpy as np

from inertial_id.core.robot import params
from inertial_id.core.pmd import metrics, objects
from inertial_id.core.pmd.objects import bench_object, bench_objects


def test_eight_objects_with_exact_composite_inertia():
    objs = bench_objects()
    assert [o.name for o in objs] == ["Hammer", "Barbell", "Tee", "Uniform", "Corners", "Rod", "Half-N-Half", "Empty"]
    for o in objs:
        assert params.is_physically_consistent(o.pi_S)
    uniform = bench_object("Uniform")
    assert np.isclose(uniform.pi_S[0], objects.BAR_MASS_KG + 12 * objects.STEEL_KG)
    np.testing.assert_allclose(uniform.pi_S[1:4] / uniform.pi_S[0], objects.X_SO.translation, atol=1e-12)
    # hammer: head of three steel weights at +x pulls the COM towards it
    hammer = bench_object("Hammer")
    assert hammer.pi_S[1] / hammer.pi_S[0] > 0.02
    # empty: the bar alone, a uniform box about its centre
    m, c, I_C = params.com_from_params(bench_object("Empty").pi_S)
    a, b, h = objects.BAR_SIZE_M
    np.testing.assert_allclose(I_C, m / 12 * np.diag([b * b + h * h, a * a + h * h, a * a + b * b]), atol=1e-15)


def test_metrics_are_zero_for_the_truth_and_scale_with_the_box():
    o = bench_object("Tee")
    box = np.array(objects.BAR_SIZE_M)
    e = metrics.errors_pct(o.pi_S, o.pi_S, box)
    assert e == {"mass": 0.0, "com": 0.0, "inertia": 0.0}
    m, c, I_C = params.com_from_params(o.pi_S)
    shifted = params.params_from_com(1.1 * m, c + [0.016, 0.0, 0.0], I_C * 1.1)
    e = metrics.errors_pct(shifted, o.pi_S, box)
    assert np.isclose(e["mass"], 10.0) and np.isclose(e["com"], 100 * 0.1 / 3)
    assert metrics.errors_pct(-o.pi_S, o.pi_S, box)["com"] == np.inf
