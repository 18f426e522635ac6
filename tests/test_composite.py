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


def test_the_gim_factors_along_the_tree_without_fill(case):
    """GIM = Lᵀ L (``composite.ltl_factor``) on Pinocchio's crba: λ is Pinocchio's ``parents_fromRow``, L has no entry
    off the λ-paths (a tree fills nothing), Lᵀ L gives the GIM back and the two sweeps solve GIM x = b as LAPACK does,
    to the GIM's condition number."""
    from denoc_pin.algorithms.composite import l_solve, lt_solve, ltl_factor
    from denoc_pin.core.layout import model_views, numpy_views

    model, pm = case
    pd = pm.createData()
    lam = numpy_views(model_views, model.mi, model.mf).dof_parent
    assert list(lam) == [-1 if p < 0 else p for p in pd.parents_fromRow]
    rng = np.random.default_rng(23)
    M = pin.crba(pm, pd, random_configuration(model, rng)).copy()
    M = np.triu(M) + np.triu(M, 1).T
    H = M.copy()
    assert ltl_factor(H, lam) == -1
    L = np.tril(H)
    on_path = np.eye(model.nv, dtype=bool)
    for c in range(model.nv):
        j = lam[c]
        while j >= 0:
            on_path[c, j] = True
            j = lam[j]
    assert (L[~on_path] == 0).all()
    assert np.abs(L.T @ L - M).max() <= 1e-13 * np.abs(M).max()
    b = rng.normal(size=(model.nv, 3))
    x = b.copy()
    lt_solve(H, lam, x)
    for c in range(3):
        col = x[:, c].copy()
        l_solve(H, lam, col)
        x[:, c] = col
    ref = np.linalg.solve(M, b)
    assert np.abs(x - ref).max() <= 1e-15 * np.linalg.cond(M) * np.abs(ref).max() * 10


def test_the_tree_factor_names_the_pivot_that_fails():
    """A GIM that is not positive definite: ``ltl_factor`` returns the first DOF, from the leaves, whose pivot is not
    positive (the caller falls back to the UDUᵀ, which names the joint)."""
    from denoc_pin.algorithms.composite import ltl_factor

    lam = np.array([-1, 0, 1, 1])  # a DOF with a branch of two at its end
    M = np.diag([4.0, 3.0, 2.0, 1.0])
    M[3, 1] = M[1, 3] = 2.0  # DOF 3's pivot is 1; DOF 1's becomes 3 − 4 < 0
    assert ltl_factor(M.copy(), lam) == 1
    M[3, 3] = -1.0
    assert ltl_factor(M.copy(), lam) == 3
