"""Recursive inverse dynamics (Table 1) and nonlinear effects against Pinocchio and the paper's closed form."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.configuration import random_configuration


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
    model = dp.load_urdf(URDF_DIR / "two_link.urdf")
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
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    data = model.create_data()
    z = np.zeros(4)
    with pytest.raises(ValueError, match=r"q must have shape \(4,\), got \(3,\)"):
        dp.inverse_dynamics(model, data, np.zeros(3), z, z)
    # Pinocchio's (n, 1) column is one state (docs/from-pinocchio.md); two columns are not
    np.testing.assert_array_equal(dp.inverse_dynamics(model, data, z, z, np.ones((4, 1))),
                                  dp.inverse_dynamics(model, data, z, z, np.ones(4)))  # fmt: skip
    with pytest.raises(ValueError, match=r"a must have shape \(4,\) or \(4, 1\), got \(4, 2\)"):
        dp.inverse_dynamics(model, data, z, z, np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"v has non-finite entries .* indices \[2\]"):
        dp.inverse_dynamics(model, data, z, np.array([0, 0, np.nan, 0]), z)
    with pytest.raises(ValueError, match=r"q has non-finite"):
        dp.nonlinear_effects(model, data, np.array([0, np.inf, 0, 0]), z)
    with pytest.raises(ValueError, match=r"fext must have shape \(5, 6\)"):
        dp.inverse_dynamics(model, data, z, z, z, np.zeros((4, 6)))
    with pytest.raises(ValueError, match=r"fext has non-finite"):
        dp.inverse_dynamics(model, data, z, z, z, np.full((5, 6), np.nan))


def test_data_from_another_model_is_refused():
    gripper = dp.load_urdf(URDF_DIR / "gripper.urdf")
    other = dp.load_urdf(URDF_DIR / "gripper.urdf")
    z = np.zeros(4)
    with pytest.raises(ValueError, match="data was not created by this model"):
        dp.inverse_dynamics(gripper, other.create_data(), z, z, z)
    with pytest.raises(ValueError, match="got dict"):
        dp.inverse_dynamics(gripper, {}, z, z, z)
    # The same after the other data has been used (its GIM buffer exists): the fast path checks
    # the stamp of the data, not only its shapes, which are the same here.
    used = other.create_data()
    dp.gim(other, used, z)
    dp.forward_dynamics(other, used, z, z, z)
    for call in (
        lambda: dp.inverse_dynamics(gripper, used, z, z, z),
        lambda: dp.forward_dynamics(gripper, used, z, z, z),
        lambda: dp.gim(gripper, used, z),
    ):
        with pytest.raises(ValueError, match="data was not created by this model"):
            call()


def test_forces_of_an_earlier_call_do_not_leak_into_the_next(case):
    """The fast path (no fext) runs without reading data.fext, which still holds the last call's forces."""
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(4)
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    F = rng.uniform(-2, 2, (model.njoints, 6))
    tau = pin.rnea(pm, pd, q, v, a)
    dp.inverse_dynamics(model, data, q, v, a, F)
    assert_close(dp.inverse_dynamics(model, data, q, v, a), tau, what="rnea after fext")
    dp.forward_dynamics(model, data, q, v, tau, F)
    assert_close(dp.forward_dynamics(model, data, q, v, tau), pin.aba(pm, pd, q, v, tau), what="aba after fext")


def _as(kind: str, x: np.ndarray):
    """x handed over in one of the forms the fast path must refuse (and the checked path accept)."""
    if kind == "readonly":
        y = x.copy()
        y.setflags(write=False)
        return y
    if kind == "list":
        return x.tolist()
    if kind == "float32":
        return x.astype(np.float32)
    if kind == "strided":
        y = np.zeros(2 * len(x))
        y[::2] = x
        return y[::2]
    return x


@pytest.mark.parametrize("kind", ["readonly", "list", "float32", "strided"])
def test_every_array_form_gives_the_same_answer(kind):
    """The compiled entry points take writable float64 C arrays only (_call.py): every other form goes
    through the checked path, which converts it; the answer is that of the ready arrays."""
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    data = model.create_data()
    rng = np.random.default_rng(5)
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    tau = dp.inverse_dynamics(model, data, q, v, a)
    ddq = dp.forward_dynamics(model, data, q, v, tau)
    M = dp.gim(model, data, q)
    rtol = 1e-4 if kind == "float32" else 0.0  # float32 inputs are rounded before the call
    for i in range(3):  # each argument on its own in the odd form
        args = [q, v, a]
        args[i] = _as(kind, args[i])
        np.testing.assert_allclose(dp.inverse_dynamics(model, data, *args), tau, rtol=rtol, atol=rtol)
        args = [q, v, tau]
        args[i] = _as(kind, args[i])
        np.testing.assert_allclose(dp.forward_dynamics(model, data, *args), ddq, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(dp.gim(model, data, _as(kind, q)), M, rtol=rtol, atol=rtol)
    # and the odd forms leave the fast path working for the next ready call
    np.testing.assert_array_equal(dp.inverse_dynamics(model, data, q, v, a), tau)


def test_wrong_lengths_on_the_fast_path_are_named():
    """A float64 array of the wrong length passes the entry point's signature; the kernel's length
    check sends it to the checked path, which names it."""
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    data = model.create_data()
    z = np.zeros(4)
    dp.gim(model, data, z)  # allocates the GIM buffers, so that gim takes its fast path too
    with pytest.raises(ValueError, match=r"v must have shape \(4,\), got \(5,\)"):
        dp.inverse_dynamics(model, data, z, np.zeros(5), z)
    with pytest.raises(ValueError, match=r"tau must have shape \(4,\), got \(3,\)"):
        dp.forward_dynamics(model, data, z, z, np.zeros(3))
    with pytest.raises(ValueError, match=r"q must have shape \(4,\), got \(6,\)"):
        dp.gim(model, data, np.zeros(6))
