"""The paper's rope (Shah, Saha & Dutt, section 4): 50 elements, universal joints, 100 DOF."""

import mpmath
import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

import denoc_pin as dp
from denoc_pin.core.joints import UNIVERSAL
from denoc_pin.tools.validate import compare_with_pinocchio


@pytest.fixture(scope="module")
def rope():
    model = dp.models.rope()
    return model, dp.to_pinocchio(model)


def test_rope_is_the_papers_rope(rope):
    model, _ = rope
    assert (model.nq, model.nv, model.njoints - 1) == (100, 100, 50)
    assert all(k == UNIVERSAL for k in model.kinds[1:])
    np.testing.assert_allclose(model.masses[1:], 0.004)
    np.testing.assert_allclose(model.placement_translation[2:], [[0, 0, -0.05]] * 49, atol=1e-15)
    assert len(model.modules) == 1  # a serial chain is one module
    # hanging straight down at q = 0: gravity exerts no torque
    z = np.zeros(100)
    assert np.abs(dp.inverse_dynamics(model, model.create_data(), z, z, z)).max() < 1e-15


def test_rope_matches_pinocchio_twin(rope):
    """ID, GIM, UDUᵀ, nonlinear effects and the explicit DeNOC matrices at 1e-9, random states."""
    model, pm = rope
    checks = {c.algorithm: c for c in compare_with_pinocchio(model, pm, samples=3, seed=1)}
    for name in [
        "inverse_dynamics",
        "inverse_dynamics (fext)",
        "gim",
        "nonlinear_effects",
        "udut (U D Uᵀ)",
        "denoc_matrices gim = NᵀMN",
        "denoc_matrices C v + g",
        "denoc_matrices t = N v",
    ]:
        assert checks[name].passed, (name, checks[name].max_rel)


def test_rope_forward_dynamics_near_hanging_matches_aba(rope):
    model, pm = rope
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.uniform(-1, 1, model.nq)
        v, tau = rng.uniform(-1, 1, (2, model.nv))
        assert_close(dp.forward_dynamics(model, data, q, v, 1e-3 * tau), pin.aba(pm, pd, q, v, 1e-3 * tau), what="aba")


def test_rope_forward_dynamics_and_inverse_against_50_digit_arithmetic(rope):
    """At arbitrary configurations the rope's GIM has cond ≈ 5e6.  The referee is the same float64
    system solved in 50-digit arithmetic: denoc_pin's UDUᵀ recursions reach it to ~1e-11.
    (Pinocchio 4.1's aba is off by ~1e-9 here and its computeMinverse far more: see the README.)"""
    model, _ = rope
    data = model.create_data()
    mpmath.mp.dps = 50
    rng = np.random.default_rng(0)
    q = dp.random_configuration(model, rng)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    M = dp.gim(model, data, q)
    rhs = tau - dp.nonlinear_effects(model, data, q, v)
    A = mpmath.matrix(M.tolist())
    exact = np.array([float(x) for x in mpmath.lu_solve(A, mpmath.matrix(rhs.tolist()))])
    assert_close(dp.forward_dynamics(model, data, q, v, tau), exact, rtol=1e-9, what="FD vs 50 digits")
    Ainv = A**-1
    exact_inv = np.array([[float(Ainv[i, j]) for j in range(model.nv)] for i in range(model.nv)])
    assert_close(dp.gim_inverse(model, data, q), exact_inv, rtol=1e-9, what="GIM⁻¹ vs 50 digits")


def test_rope_arguments():
    assert dp.models.rope(n_links=3).nv == 6
    with pytest.raises(ValueError, match="n_links must be at least 1"):
        dp.models.rope(n_links=0)
    with pytest.raises(ValueError, match="must be positive"):
        dp.models.rope(mass=-1)
