"""The explicit DeNOC matrices (section 2, eq. 3–13): the independent reference."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.configuration import random_configuration
from denoc_pin.tools.validate import pinocchio_world_twists


def test_denoc_matrices_against_pinocchio_and_the_recursions(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(31)
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    m = dp.denoc_matrices(model, q, v)
    M_ref = pin.crba(pm, pd, q).copy()
    M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T
    assert_close(m.gim, M_ref, what="Nᵀ M N vs crba")
    assert_close(m.mci @ v + m.gravity, pin.nonLinearEffects(pm, pd, q, v), what="C q̇ + g vs nle")
    assert_close(m.t, pinocchio_world_twists(pm, pd, q, v), what="t = N q̇ vs Pinocchio's velocities")
    # The recursion of Table 1 is τ = N_dᵀ N_lᵀ w: same torques from the explicit matrices.
    assert_close(m.gim @ a + m.mci @ v + m.gravity, dp.inverse_dynamics(model, data, q, v, a), what="eq. (12)")


def test_denoc_matrix_structure():
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    m = dp.denoc_matrices(model, np.array([0.1, 0.2, 0.3, 0.4]), np.ones(4))
    n = 4
    assert m.N_l.shape == (6 * n, 6 * n) and m.N_d.shape == (6 * n, 4)
    np.testing.assert_array_equal(m.N, m.N_l @ m.N_d)
    # Eq. (14): N_l's block (3^3, 2^2) is zero — module M3 does not descend from M2.
    blocks = (m.N_l.reshape(n, 6, n, 6) != 0).any(axis=(1, 3))
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 1]], dtype=bool)
    np.testing.assert_array_equal(blocks, expected)
    assert np.allclose(np.diag(m.E)[0::6], 1) and np.allclose(np.diag(m.E)[3::6], 0)


def test_denoc_matrices_refuse_large_models(monkeypatch):
    import denoc_pin.algorithms.explicit as explicit

    monkeypatch.setattr(explicit, "MAX_BODIES", 3)
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    with pytest.raises(dp.ModelError, match="has 4 bodies; the explicit 6n x 6n matrices are built only up to n = 3"):
        dp.denoc_matrices(model, np.zeros(4), np.zeros(4))
