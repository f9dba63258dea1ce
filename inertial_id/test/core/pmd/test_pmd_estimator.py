import numpy as np
import pinocchio as pin
import pytest

from inertial_id.core.robot import params
from inertial_id.core.pmd.estimator import PmdEstimator
from inertial_id.core.pmd.shapes import ShapeError
from inertial_id.core.pmd.samples import WristSamples
from inertial_id.core.robot.profile import Payload

SHAPE = {"type": "box", "size": [0.16, 0.12, 0.04], "pose": {"xyz": [0.0, 0.0, 0.02], "rpy": [0.0, 0.0, 0.3]},
         "density_per_cm3": 0.04}


def _truth_P():
    """A box-shaped payload with a heavy corner, parameters in the payload (flange) frame."""
    X_PO = pin.SE3(pin.rpy.rpyToMatrix(0, 0, 0.3), np.array([0, 0, 0.02]))
    pi_O = params.box_inertia_params(0.1, (0.16, 0.12, 0.04)) + params.box_inertia_params(0.2, (0.02, 0.02, 0.02), (0.06, 0.04, 0.0))
    return params.transform_params(pi_O, X_PO)


def test_estimator_returns_a_consistent_payload_frame_estimate_from_static_samples():
    rng = np.random.default_rng(0)
    X_SP = pin.SE3(pin.rpy.rpyToMatrix(np.pi, 0, 0), np.array([0.0, 0.0, 0.035]))   # sensor below the flange, flipped
    pi_S = params.transform_params(_truth_P(), X_SP)
    est = PmdEstimator.from_payload_profile(Payload.model_validate({"shape": SHAPE, "pmd": {"c1": 300.0}}), X_SP)
    zero = np.zeros(3)
    for _ in range(40):
        g_S = pin.exp3(rng.normal(size=3)).T @ [0, 0, -9.81]
        A = WristSamples(zero[None], zero[None], zero[None], g_S[None], np.zeros((1, 6))).full_regressors()[0]
        est.update(zero, zero, zero, g_S, A @ pi_S + rng.normal(scale=[1e-3] * 3 + [5e-5] * 3))
    r = est.result()
    assert r["physically_consistent"] and r["samples_used"] == 40
    pi = r["estimate"]
    truth = _truth_P()
    assert abs(pi[0] / truth[0] - 1) < 2e-3
    np.testing.assert_allclose(pi[1:4] / pi[0], truth[1:4] / truth[0], atol=1e-3)


def test_estimator_rejects_bad_input():
    with pytest.raises(ValueError, match="needs 'payload: shape:'"):
        PmdEstimator.from_payload_profile(Payload(name="payload"))
    with pytest.raises(ShapeError, match="beyond the plausible"):
        PmdEstimator({**SHAPE, "pose": {"xyz": [0, 0, 20.0]}})
    est = PmdEstimator(SHAPE)
    with pytest.raises(ValueError, match="no samples"):
        est.result()
    with pytest.raises(ValueError, match="finite"):
        est.update([0, 0, np.nan], [0, 0, 0], [0, 0, 0], [0, 0, -9.81], np.zeros(6))
    with pytest.raises(ValueError, match=r"wrench_S must be \(K, 6\)"):
        est.update([0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, -9.81], np.zeros(5))
