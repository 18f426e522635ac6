"""Spatial operators against Pinocchio's SE3/Inertia, and the one [linear; angular] conversion."""

import numpy as np
import pinocchio as pin
import pytest
from numba import njit

from denoc_pin.core import spatial as sp


def test_order_conversion_matches_pinocchio_motion_and_force():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(6)
    m = pin.Motion(x)  # pinocchio: [linear; angular]
    y = sp.from_pinocchio_order(x)
    np.testing.assert_array_equal(y[:3], m.angular)
    np.testing.assert_array_equal(y[3:], m.linear)
    np.testing.assert_array_equal(sp.to_pinocchio_order(y), x)
    X = rng.standard_normal((6, 6))
    np.testing.assert_array_equal(sp.from_pinocchio_matrix(sp.from_pinocchio_matrix(X)), X)
    with pytest.raises(ValueError, match="last dimension of 6"):
        sp.from_pinocchio_order(np.zeros(5))
    with pytest.raises(ValueError, match=r"\(\.\.\., 6, 6\)"):
        sp.from_pinocchio_matrix(np.zeros((6, 5)))


def test_twist_propagation_is_pinocchio_frame_change():
    rng = np.random.default_rng(1)
    R = pin.exp3(rng.standard_normal(3))
    r = rng.standard_normal(3)
    pose = pin.SE3(R, r)  # frame k in the parent frame
    E = R.T
    A = sp.twist_matrix(E, r)
    np.testing.assert_allclose(A, sp.from_pinocchio_matrix(pose.inverse().action), atol=1e-14)
    t = rng.standard_normal(6)
    out = np.empty(6)
    sp.propagate_twist(E, r, t, out)
    np.testing.assert_allclose(out, A @ t, atol=1e-14)
    w = rng.standard_normal(6)
    acc = np.zeros(6)
    sp.add_transferred_wrench(E, r, w, acc)
    np.testing.assert_allclose(acc, A.T @ w, atol=1e-14)
    X = rng.standard_normal((6, 6))
    X = X + X.T  # the congruence is only ever applied to symmetric inertias
    acc6 = np.ones((6, 6))
    sp.add_symmetric_of(sp.congruence_of(E, r, sp.symmetric_of(X)), acc6)
    np.testing.assert_allclose(acc6, 1.0 + A.T @ X @ A, atol=1e-13)
    d, I_o = rng.standard_normal(3), X[:3, :3] @ X[:3, :3].T
    acc6[:] = 0.0
    sp.add_symmetric_of(sp.mass_matrix_of(2.0, d, I_o), acc6)
    np.testing.assert_array_equal(acc6, sp.mass_matrix(2.0, d, I_o))


def test_axis_angle_and_skew():
    rng = np.random.default_rng(2)
    e = rng.standard_normal(3)
    e /= np.linalg.norm(e)
    np.testing.assert_allclose(sp.axis_angle(e, 0.7), pin.exp3(0.7 * e), atol=1e-15)
    x, y = rng.standard_normal((2, 3))
    np.testing.assert_allclose(sp.skew(x) @ y, np.cross(x, y), atol=1e-15)


def test_newton_euler_matches_pinocchio_inertia():
    """w = M ṫ + Ω M E t with classical accelerations equals Pinocchio's I a + v ×* I v
    with the spatial acceleration a = ṫ − [0; ω × v]."""
    rng = np.random.default_rng(3)
    m, c = 1.7, rng.standard_normal(3) * 0.2
    L = rng.standard_normal((3, 3))
    I_c = L @ L.T + np.eye(3) * 0.1
    M = sp.mass_matrix(m, c, sp.inertia_about_origin(m, c, I_c))
    np.testing.assert_allclose(M, sp.from_pinocchio_matrix(pin.Inertia(m, c, I_c).matrix()), atol=1e-14)
    M_into = np.empty((6, 6))
    sp.mass_matrix_into(m, c, sp.inertia_about_origin(m, c, I_c), M_into)
    np.testing.assert_array_equal(M_into, M)
    t, tdot = rng.standard_normal((2, 6))
    w = np.array(sp.newton_euler(m, c, sp.inertia_about_origin(m, c, I_c), *t[:3], *tdot))
    v = pin.Motion(sp.to_pinocchio_order(t))
    a_spatial = tdot.copy()
    a_spatial[3:] -= np.cross(t[:3], t[3:])
    inertia = pin.Inertia(m, c, I_c)
    f = inertia * pin.Motion(sp.to_pinocchio_order(a_spatial)) + v.cross(inertia * v)
    np.testing.assert_allclose(w, sp.from_pinocchio_order(f.vector), atol=1e-12)


def test_rigid_inertia_operators_match_the_mass_matrix():
    """The 10-number rigid inertia (rigid_inertia_into) times a motion, and moved to the parent,
    equal M_k p and A_{k,β}ᵀ M_k A_{k,β} formed as 6 x 6 matrices (eq. 2b, 7b, 17)."""
    rng = np.random.default_rng(4)
    m, c = 2.3, rng.standard_normal(3) * 0.3
    L = rng.standard_normal((3, 3))
    I_o = sp.inertia_about_origin(m, c, L @ L.T + np.eye(3) * 0.1)
    M = sp.mass_matrix(m, c, I_o)
    C = np.empty(10)
    sp.rigid_inertia_into(m, c, I_o, C)
    p = rng.standard_normal(6)
    np.testing.assert_allclose(sp.rigid_inertia_times(*C, *p), M @ p, rtol=1e-14, atol=1e-14)
    E, r = pin.SE3.Random().rotation, rng.standard_normal(3)
    A = np.block([[E, np.zeros((3, 3))], [-E @ sp.skew(r), E]])  # A_{k,β}: ω_k = E ω_β, ȯ_k = E (ȯ_β + ω_β × r)
    Cb = np.zeros(10)
    sp.add_transformed_rigid_inertia(E, r, C, Cb)
    moved = A.T @ M @ A
    np.testing.assert_allclose(sp.rigid_inertia_times(*Cb, *p), moved @ p, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_spd_inverse(n):
    rng = np.random.default_rng(n)
    L = rng.standard_normal((n, n))
    A = np.zeros((6, 6))
    A[:n, :n] = L @ L.T + n * np.eye(n)
    out = np.zeros((6, 6))
    assert sp.spd_inverse_into(A, n, out)
    np.testing.assert_allclose(out[:n, :n] @ A[:n, :n], np.eye(n), atol=1e-12)
    A[:n, :n] = -np.eye(n)
    assert not sp.spd_inverse_into(A, n, out)


@njit
def _sin_cos_all(x, out):
    for i in range(len(x)):
        out[i, 0], out[i, 1] = sp.sin_cos(x[i])


def test_sin_cos_is_within_two_ulp_of_the_true_values():
    """sin_cos against 50-digit mpmath (the true values) and against libm, over joint angles, multiples of π/2
    (the quadrant boundaries, where sine or cosine is tiny), tiny and huge arguments, and inf and NaN."""
    import mpmath

    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, 20000),
            rng.uniform(-1e5, 1e5, 2000),
            np.arange(-64, 65) * (np.pi / 2),  # doubles nearest the boundaries: |sin| or |cos| down to 6e-19
            np.arange(-64, 65) * (np.pi / 4),
            [0.0, -0.0, 5e-324, 1e-300, -1e-8, 0.7853981633974483, 823549.0, 823550.0, 1e10, -3e15, 1e300],
        ]
    )
    out = np.empty((len(x), 2))
    _sin_cos_all(x, out)
    with mpmath.workdps(50):
        exact = np.array([[float(mpmath.sin(mpmath.mpf(v))), float(mpmath.cos(mpmath.mpf(v)))] for v in x])
    ulp = np.abs(out - exact) / np.spacing(np.abs(exact))
    assert ulp.max() <= 2.0, (x[np.argmax(ulp.max(axis=1))], ulp.max())
    assert np.abs(out - np.column_stack([np.sin(x), np.cos(x)])).max() <= 2.3e-16
    for bad in (np.inf, -np.inf, np.nan):
        _sin_cos_all(np.array([bad]), out[:1])
        assert np.isnan(out[:1]).all()
