"""The GIM by composite module inertias (eq. 16–17) against crba and against inverse dynamics."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.configuration import random_configuration


def test_gim_matches_crba(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(21)
    for _ in range(2):
        q = random_configuration(model, rng)
        ref = pin.crba(pm, pd, q).copy()
        ref = np.triu(ref) + np.triu(ref, 1).T
        M = dp.gim(model, data, q)
        assert_close(M, ref, what="crba")
        assert np.array_equal(M, M.T)


def test_gim_columns_are_inverse_dynamics_differences(case):
    """I e_i = ID(q, 0, e_i) − ID(q, 0, 0): two different recursions agree."""
    model, _ = case
    data = model.create_data()
    q = random_configuration(model, np.random.default_rng(22))
    zero = np.zeros(model.nv)
    g = dp.inverse_dynamics(model, data, q, zero, zero)
    cols = np.column_stack([dp.inverse_dynamics(model, data, q, zero, e) - g for e in np.eye(model.nv)])
    assert_close(dp.gim(model, data, q), cols, rtol=1e-9, atol=1e-12, what="GIM columns")


def test_dense_results_refuse_huge_models(monkeypatch):
    import denoc_pin.algorithms.dynamics_api as composite

    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    monkeypatch.setattr(composite, "DENSE_LIMIT", 3)
    with pytest.raises(dp.ModelError, match=r"gim: model 'gripper' has nv = 4; dense nv x nv matrices are formed only"):
        dp.gim(model, model.create_data(), np.zeros(4))
    with pytest.raises(dp.ModelError, match="gim_inverse"):
        dp.gim_inverse(model, model.create_data(), np.zeros(4))
    with pytest.raises(dp.ModelError, match="udut"):
        dp.udut(model, model.create_data(), np.zeros(4))
