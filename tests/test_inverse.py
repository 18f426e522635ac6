"""Recursive inverse dynamics (Table 1) and nonlinear effects against Pinocchio and the paper's closed form."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, assert_close

import denoc_pin as dp
from denoc_pin.configuration import random_configuration


def test_inverse_dynamics_matches_rnea(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = random_configuration(model, rng)
        v, a = rng.uniform(-1, 1, (2, model.nv))
        assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a), what="rnea")


def test_inverse_dynamics_with_external_forces(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(2)
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    F = rng.uniform(-2, 2, (model.njoints, 6))
    forces = [pin.Force(f) for f in F]
    ref = pin.rnea(pm, pd, q, v, a, forces)
    assert_close(dp.inverse_dynamics(model, data, q, v, a, F), ref, what="fext array")
    assert_close(dp.inverse_dynamics(model, data, q, v, a, forces), ref, what="fext list of pinocchio.Force")


def test_nonlinear_effects_matches_pinocchio(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(3)
    q = random_configuration(model, rng)
    v = rng.uniform(-1, 1, model.nv)
    assert_close(dp.nonlinear_effects(model, data, q, v), pin.nonLinearEffects(pm, pd, q, v), what="nle")


def test_gravity_only_at_rest_equals_pinocchio_generalized_gravity(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    q = random_configuration(model, np.random.default_rng(4))
    zero = np.zeros(model.nv)
    assert_close(dp.inverse_dynamics(model, data, q, zero, zero), pin.computeGeneralizedGravity(pm, pd, q), what="g(q)")


def test_two_link_open_loop_matches_schiehlen_eq_21():
    """Schiehlen eq. (21): with the force F2 at the tip and gravity switched off,
    M [α̈, δ̈]ᵀ = [M1 + F2 (R sin α + L sin(α+δ)) ... ] in the paper's planar convention.
    Here checked in the generic form τ = M(q) q̈ − J_tipᵀ F2 with the closed-form M of eq. (21)."""
    model = dp.load_urdf(ROOT / "urdf" / "two_link.urdf")
    data = model.create_data()
    R, L, m1, m2 = 0.5, 0.4, 2.0, 1.0
    I1 = m1 * (3 * 0.01**2 + R**2) / 12 + m1 * (R / 2) ** 2  # body 1 about the ground pin
    I2 = m2 * (3 * 0.01**2 + (2 * L) ** 2) / 12  # body 2 about its centre of mass C2
    M21 = np.array([[I1 + m2 * R**2 + I2, I2], [I2, I2]])
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 2)
        a = rng.uniform(-1, 1, 2)
        gravity_free = dp.inverse_dynamics(model, data, q, np.zeros(2), a) - dp.inverse_dynamics(
            model, data, q, np.zeros(2), np.zeros(2)
        )
        assert_close(gravity_free, M21 @ a, what="eq. (21) inertia matrix")


def test_bad_arrays_raise_value_error_naming_the_shape():
    model = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    data = model.create_data()
    z = np.zeros(4)
    with pytest.raises(ValueError, match=r"q must have shape \(4,\), got \(3,\)"):
        dp.inverse_dynamics(model, data, np.zeros(3), z, z)
    with pytest.raises(ValueError, match=r"a must have shape \(4,\), got \(4, 1\)"):
        dp.inverse_dynamics(model, data, z, z, np.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"v has non-finite entries .* indices \[2\]"):
        dp.inverse_dynamics(model, data, z, np.array([0, 0, np.nan, 0]), z)
    with pytest.raises(ValueError, match=r"q has non-finite"):
        dp.nonlinear_effects(model, data, np.array([0, np.inf, 0, 0]), z)
    with pytest.raises(ValueError, match=r"fext must have shape \(5, 6\)"):
        dp.inverse_dynamics(model, data, z, z, z, np.zeros((4, 6)))
    with pytest.raises(ValueError, match=r"fext has non-finite"):
        dp.inverse_dynamics(model, data, z, z, z, np.full((5, 6), np.nan))


def test_data_from_another_model_is_refused():
    gripper = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    other = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    z = np.zeros(4)
    with pytest.raises(ValueError, match="data was not created by this model"):
        dp.inverse_dynamics(gripper, other.create_data(), z, z, z)
    with pytest.raises(ValueError, match="got dict"):
        dp.inverse_dynamics(gripper, {}, z, z, z)
