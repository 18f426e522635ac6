"""UDUᵀ forward dynamics (Table 3, A.1–A.8), the factors and the GIM inverse, against Pinocchio."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

import denoc_pin as dp
from denoc_pin.algorithms.configuration import random_configuration


def test_forward_dynamics_matches_aba(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = random_configuration(model, rng)
        v, tau = rng.uniform(-1, 1, (2, model.nv))
        assert_close(dp.forward_dynamics(model, data, q, v, tau), pin.aba(pm, pd, q, v, tau), what="aba")


def test_forward_dynamics_with_external_forces(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(12)
    q = random_configuration(model, rng)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    F = rng.uniform(-2, 2, (model.njoints, 6))
    ref = pin.aba(pm, pd, q, v, tau, [pin.Force(f) for f in F])
    assert_close(dp.forward_dynamics(model, data, q, v, tau, F), ref, what="aba fext")


def test_forward_of_inverse_is_identity(case):
    model, _ = case
    data = model.create_data()
    rng = np.random.default_rng(13)
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    tau = dp.inverse_dynamics(model, data, q, v, a)
    assert_close(dp.forward_dynamics(model, data, q, v, tau), a, rtol=1e-8, what="FD(ID(a))")


def test_gim_inverse_matches_computeMinverse(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    q = random_configuration(model, np.random.default_rng(14))
    ref = pin.computeMinverse(pm, pd, q).copy()
    ref = np.triu(ref) + np.triu(ref, 1).T
    Minv = dp.gim_inverse(model, data, q)
    assert_close(Minv, ref, what="computeMinverse")
    assert_close(Minv @ dp.gim(model, data, q), np.eye(model.nv), rtol=1e-8, atol=1e-8, what="Minv M = 1")


def test_udut_reproduces_the_gim_and_has_the_paper_structure(case):
    model, pm = case
    data, pd = model.create_data(), pm.createData()
    q = random_configuration(model, np.random.default_rng(15))
    U, D = dp.udut(model, data, q)
    M = pin.crba(pm, pd, q).copy()
    M = np.triu(M) + np.triu(M, 1).T
    assert_close(U @ D @ U.T, M, what="U D Uᵀ")
    assert np.array_equal(np.diag(U), np.ones(model.nv)), "U is unit upper-triangular"
    assert np.all(np.tril(U, -1) == 0)
    assert np.all(np.diag(D) > 0) and np.count_nonzero(D - np.diag(np.diag(D))) == 0
    # U_{k,j} ≠ 0 only when joint k supports body j (eq. 18): the tree's sparsity.
    for j in range(1, model.njoints):
        ancestors, b = set(), model.parents[j]
        while b > 0:
            ancestors.add(b)
            b = model.parents[b]
        for k in range(1, j):
            if k not in ancestors:
                assert U[model.idx_v[k], model.idx_v[j]] == 0.0


def test_singular_configuration_is_a_clear_error_not_a_nan(tmp_path):
    """A point mass that a prismatic joint slides onto the axis of the revolute joint above it:
    the GIM is singular exactly at q2 = 0 (regular elsewhere, so the model loads)."""
    urdf = tmp_path / "singular.urdf"
    urdf.write_text(
        '<robot name="s"><link name="b"/><link name="arm"/>'
        '<link name="slider"><inertial><mass value="1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>'
        "</inertial></link>"
        '<joint name="turn" type="revolute"><parent link="b"/><child link="arm"/><axis xyz="0 0 1"/>'
        '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        '<joint name="slide" type="prismatic"><parent link="arm"/><child link="slider"/><axis xyz="1 0 0"/>'
        '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>'
    )
    model = dp.load_urdf(urdf)
    data = model.create_data()
    z = np.zeros(2)
    assert np.all(np.isfinite(dp.forward_dynamics(model, data, np.array([0.3, 0.2]), z, z)))
    with pytest.raises(ValueError, match="singular at this configuration: joint 'turn'"):
        dp.forward_dynamics(model, data, np.array([0.3, 0.0]), z, z)
    with pytest.raises(ValueError, match="singular"):
        dp.gim_inverse(model, data, np.array([0.3, 0.0]))


def test_a_universal_joint_whose_second_axis_moves_no_inertia_is_refused():
    """Î_k of a 2-DOF joint (2 x 2, inverted in registers) must be positive definite, not only its first pivot: a
    point mass on the second axis gives Î_11 > 0 and det Î_k = 0, everywhere (the model is refused) and the
    forward dynamics of a model that gets there reports the joint."""
    b = dp.ModelBuilder("u")
    b.add_body(0, "universal", axis=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), mass=1.0, com=(0.0, 0.1, 0.0),
               inertia=np.zeros((3, 3)), name="u")  # fmt: skip
    with pytest.warns(dp.ModelWarning, match="joint 'u' moves no inertia"):
        singular = b.build()
    with pytest.raises(dp.SingularConfigurationError, match="joint 'u' moves no mass"):
        dp.forward_dynamics(singular, singular.create_data(), np.zeros(2), np.zeros(2), np.zeros(2))
    b = dp.ModelBuilder("u2")  # a second body on a slider: singular only when it sits on the second axis
    b.add_body(0, "universal", axis=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), mass=1.0, com=(0.0, 0.1, 0.0),
               inertia=np.zeros((3, 3)), name="u")  # fmt: skip
    b.add_body(1, "prismatic", axis=(1.0, 0.0, 0.0), mass=1.0, inertia=np.zeros((3, 3)), name="slide")
    model = b.build()
    data, z = model.create_data(), np.zeros(3)
    assert np.isfinite(dp.forward_dynamics(model, data, np.array([0.2, 0.3, 0.4]), z, z)).all()
    with pytest.raises(ValueError, match="singular at this configuration: joint 'u'"):
        dp.forward_dynamics(model, data, np.array([0.2, 0.3, 0.0]), z, z)
    a = dp.forward_dynamics(model, data, np.array([0.2, 0.3, 0.4]), z, z)
    M = dp.gim(model, data, np.array([0.2, 0.3, 0.4]))
    h = dp.nonlinear_effects(model, data, np.array([0.2, 0.3, 0.4]), z)
    assert_close(a, np.linalg.solve(M, -h), rtol=1e-10)
