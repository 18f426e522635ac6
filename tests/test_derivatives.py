"""Analytical derivatives: inverse and forward dynamics against Pinocchio's computeRNEADerivatives and
computeABADerivatives (and, on universal joints, where Pinocchio 4.1 is wrong, against sixth-order central
differences of the dynamics), integrate and difference against dIntegrate and dDifference, and one integrator step's
Jacobians against central differences of the step."""

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import add_random_body, assert_close

import denoc_pin as dp
from denoc_pin.core.joints import UNIVERSAL
from denoc_pin.loaders.robots import example_robot_urdf
from denoc_pin.tools.validate import central_differences, compare_derivatives, dynamics_differences

KINDS = ["revolute", "continuous", "prismatic", "spherical", "universal", "helical", "fixed"]


def every_kind_tree(seed: int, root: str | None) -> dp.Model:
    """A random depth-first tree with a root of ``root`` (None: fixed base) and every other joint kind, branching."""
    rng = np.random.default_rng(seed)
    b = dp.ModelBuilder(f"every_kind_{seed}")
    path = [0]
    if root:
        path.append(add_random_body(b, rng, 0, root))
    for i in range(int(rng.integers(7, 12))):
        kind = KINDS[i] if i < len(KINDS) else str(rng.choice(KINDS))
        if len(path) > 2 and rng.random() < 0.4:
            del path[int(rng.integers(2, len(path))) :]
        k = add_random_body(b, rng, path[-1], kind, float(rng.uniform(-0.3, 0.3)) if kind == "helical" else None)
        if kind != "fixed":
            path.append(k)
    return b.build()


def test_derivatives_match_pinocchio(case):
    """Bundled files, example-robot-data robots and 50 random URDF trees: every derivative row at 1e-9."""
    model, pm = case
    checks = compare_derivatives(model, pm, samples=2, seed=3)
    assert len(checks) == 9
    failed = [(c.algorithm, c.worst_ratio) for c in checks if not c.passed]
    assert not failed, failed


@pytest.mark.parametrize("root", ["free-flyer", "planar", None])
@pytest.mark.parametrize("seed", range(3))
def test_every_joint_kind_and_root(seed, root):
    """Trees of every kind (helical, spherical, universal, continuous, …) on each root: against Pinocchio where it is
    right, and on the universal joint against central differences, where Pinocchio's derivatives are off by O(1)
    (docs/derivatives.md says so; this keeps the statement true)."""
    model = every_kind_tree(seed, root)
    assert UNIVERSAL in model.kinds
    checks = compare_derivatives(model, dp.to_pinocchio(model), samples=2, seed=seed)
    failed = [(c.algorithm, c.worst_ratio) for c in checks if not c.passed]
    assert not failed, failed
    judged = {c.algorithm: c.reference for c in checks if not c.info}
    assert judged["inverse_dyn._derivatives ∂τ/∂q"] == "central differences"
    (pinocchio,) = [c for c in checks if c.info]
    assert pinocchio.max_rel > 1e-3  # Pinocchio 4.1's RNEA/ABA derivatives on a universal joint


@pytest.mark.parametrize("name", ["solo12", "talos_reduced"])
def test_free_flyer_robots(name):
    path = example_robot_urdf(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.InertiaWarning)  # CAD inertias of the standard robots
        model = dp.load_urdf(path, root_joint="free-flyer")
    checks = compare_derivatives(model, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()), samples=2)
    assert all(c.passed for c in checks), [(c.algorithm, c.worst_ratio) for c in checks if not c.passed]


def test_a_single_universal_joint():
    """One universal joint about x then y: the analytical derivatives against sixth-order central differences of
    the float64 dynamics (which agree with Pinocchio's rnea to rounding), and Pinocchio's derivatives off by O(1e-1)
    there: the smallest case of the disagreement docs/derivatives.md reports."""
    b = dp.ModelBuilder("universal")
    b.add_body(0, joint="universal", axis=((1, 0, 0), (0, 1, 0)), mass=1.0, com=(0.1, 0.2, 0.3),
               inertia=np.diag([0.1, 0.2, 0.3]))  # fmt: skip
    model = b.build()
    data = model.create_data()
    rng = np.random.default_rng(1)
    q, v, a = rng.standard_normal((3, 2))
    dq, dv, da = dp.inverse_dynamics_derivatives(model, data, q, v, a)
    ref_q, ref_v = dynamics_differences(model, data, False, q, v, a)
    assert_close(dq, ref_q, what="∂τ/∂q")
    assert_close(dv, ref_v, what="∂τ/∂v")
    assert_close(da, dp.gim(model, data, q), what="∂τ/∂q̈ = GIM")
    pm = dp.to_pinocchio(model)
    pin_dq, pin_dv, _ = pin.computeRNEADerivatives(pm, pm.createData(), q, v, a)
    assert np.abs(pin_dq - ref_q).max() > 1e-2 and np.abs(pin_dv - ref_v).max() > 1e-3


def test_batches_give_what_each_state_gives():
    path = example_robot_urdf("panda")
    model = dp.load_urdf(path)
    data = model.create_data()
    rng = np.random.default_rng(0)
    Q = dp.random_configuration(model, 1, n=5)
    V, X = rng.uniform(-1, 1, (2, 5, model.nv))
    for f in (dp.inverse_dynamics_derivatives, dp.forward_dynamics_derivatives):
        batch = f(model, data, Q, V, X)
        assert [m.shape for m in batch] == [(5, model.nv, model.nv)] * 3
        for i in range(5):
            for got, want in zip(batch, f(model, data, Q[i], V[i], X[i]), strict=True):
                np.testing.assert_array_equal(got[i], want)


def test_fast_path_results_are_copies_and_fext_is_forgotten():
    model = dp.load_urdf(example_robot_urdf("ur5"))
    data = model.create_data()
    rng = np.random.default_rng(4)
    q = dp.random_configuration(model, 0)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    fext = rng.uniform(-1, 1, (model.njoints, 6))
    first = dp.inverse_dynamics_derivatives(model, data, q, v, a)
    assert data.derivatives_ws is not None  # the next call takes the fast path
    with_f = dp.inverse_dynamics_derivatives(model, data, q, v, a, fext)
    again = dp.inverse_dynamics_derivatives(model, data, q, v, a)
    assert not np.array_equal(with_f[0], first[0])
    for x, y in zip(first, again, strict=True):
        np.testing.assert_array_equal(x, y)
    first[0][:] = 0.0  # a copy: the next call is unaffected
    np.testing.assert_array_equal(dp.inverse_dynamics_derivatives(model, data, q, v, a)[0], again[0])
    ddq_dq, _, _ = dp.forward_dynamics_derivatives(model, data, q, v, a)
    np.testing.assert_array_equal(data.ddq, dp.forward_dynamics(model, data, q, v, a))
    assert ddq_dq.shape == (model.nv, model.nv)


def test_bad_input_is_named():
    model = dp.load_urdf(example_robot_urdf("ur5"))
    data = model.create_data()
    q, z = dp.neutral(model), np.zeros(model.nv)
    with pytest.raises(ValueError, match=r"a has shape \(5,\), expected \(6,\)|a must have shape"):
        dp.inverse_dynamics_derivatives(model, data, q, z, z[:5])
    with pytest.raises(ValueError, match=r"tau has non-finite entries"):
        dp.forward_dynamics_derivatives(model, data, q, z, np.full(model.nv, np.nan))
    with pytest.raises(ValueError, match=r"a batch of 2 states needs v of shape \(2, 6\)"):
        dp.inverse_dynamics_derivatives(model, data, np.tile(q, (2, 1)), z, np.zeros((2, 6)))
    other = dp.models.bundled("two_link")
    with pytest.raises(ValueError, match=r"data was not created by this model"):
        dp.inverse_dynamics_derivatives(model, other.create_data(), q, z, z)


def _step_differences(model, data, q, v, tau, dt, method):
    """[A B] of dp.step by central differences in the tangent spaces (the referee of step_derivatives)."""
    nv = model.nv
    q1, v1 = dp.step(model, data, q, v, tau, dt, method)

    def f(d):
        qa, va = dp.step(model, data, dp.integrate(model, q, d[:nv]), v + d[nv : 2 * nv], tau + d[2 * nv :], dt, method)
        return np.r_[dp.difference(model, q1, qa), va - v1]

    return central_differences(f, 3 * nv)


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("which", ["panda", "every_kind"])
def test_step_derivatives_against_differences_of_the_step(method, which):
    model = dp.load_urdf(example_robot_urdf("panda")) if which == "panda" else every_kind_tree(0, "free-flyer")
    data = model.create_data()
    rng = np.random.default_rng(5)
    q = dp.random_configuration(model, 2)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    A, B = dp.step_derivatives(model, data, q, v, tau, 0.01, method)
    assert A.shape == (2 * model.nv, 2 * model.nv) and B.shape == (2 * model.nv, model.nv)
    assert_close(np.hstack([A, B]), _step_differences(model, data, q, v, tau, 0.01, method), rtol=1e-9,
                 what=f"{method} step Jacobians")  # fmt: skip


def test_step_is_the_simulation_step():
    model = every_kind_tree(1, "free-flyer")
    rng = np.random.default_rng(6)
    q = dp.random_configuration(model, 3)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    traj = dp.simulate(model, q, v, 0.02, dt=0.01, tau=tau, progress=False)
    data = model.create_data()
    q1, v1 = dp.step(model, data, q, v, tau, 0.01)
    q2, v2 = dp.step(model, data, q1, v1, tau, 0.01)
    np.testing.assert_allclose(traj.q[2], q2, rtol=0, atol=1e-14)
    np.testing.assert_allclose(traj.v[2], v2, rtol=0, atol=1e-13)


def test_step_refuses_what_it_does_not_do():
    model = dp.models.bundled("four_bar")
    data = model.create_data()
    q, z = dp.neutral(model), np.zeros(model.nv)
    with pytest.raises(ValueError, match=r"baumgarte gains must be finite and non-negative"):
        dp.step_derivatives(model, data, q, z, z, 0.01, baumgarte=(1.0, -1.0))
    tree = dp.models.bundled("two_link")
    with pytest.raises(ValueError, match=r"method must be one of rk4, euler; got 'rk45'"):
        dp.step(tree, tree.create_data(), dp.neutral(tree), np.zeros(2), None, 0.01, "rk45")
    with pytest.raises(ValueError, match=r"dt must be a positive number"):
        dp.step(tree, tree.create_data(), dp.neutral(tree), np.zeros(2), None, 0.0)


def test_above_the_dense_limit_table3_serves_the_forward_derivatives():
    """Above ``DENSE_PRODUCT`` DOF, GIM⁻¹ and −GIM⁻¹ ∂τ/∂· come from Table 3 on their columns: against Pinocchio on a
    wide tree (21 branches of 10 links, well conditioned, so that both routes agree to 1e-9)."""
    from denoc_pin.algorithms.derivatives import DENSE_PRODUCT

    rng = np.random.default_rng(8)
    b = dp.ModelBuilder("wide")
    for _ in range(21):
        parent = 0
        for _ in range(10):
            parent = add_random_body(b, rng, parent, "revolute")
    model = b.build()
    assert model.nv > DENSE_PRODUCT
    checks = {c.algorithm: c for c in compare_derivatives(model, dp.to_pinocchio(model), samples=1)}
    for name in ("forward_dyn._derivatives ∂q̈/∂q", "forward_dyn._derivatives ∂q̈/∂v", "forward_dyn._derivatives ∂q̈/∂τ"):
        assert checks[name].passed, (name, checks[name].worst_ratio)


def test_the_small_spd_inverse_against_lapack():
    """``dense.cholesky_inverse`` (the forward derivatives' GIM⁻¹ up to ``SMALL_INVERSE`` DOF) against NumPy's
    inverse on random SPD matrices, cond up to 1e8; on a matrix that is not positive definite it refuses and leaves A
    as it was, and ``dense_forward`` then takes LAPACK's LU (the same −A⁻¹ B)."""
    from denoc_pin.algorithms.derivatives import SMALL_INVERSE, dense_forward
    from denoc_pin.core.dense import cholesky_inverse

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 18, 33, SMALL_INVERSE):
        Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
        A = (Q * np.logspace(0, 8, n)) @ Q.T
        A = 0.5 * (A + A.T)
        X = A.copy()
        assert cholesky_inverse(X, np.empty((n, n)))
        ref = np.linalg.inv(A)
        assert np.abs(X - X.T).max() == 0.0
        assert np.abs(X - ref).max() <= 1e-7 * np.abs(ref).max()  # both within cond(A) ε of A⁻¹
        assert np.abs(X @ A - np.eye(n)).max() <= 1e-7
    A = np.diag([2.0, -1.0, 3.0])
    X = A.copy()
    assert not cholesky_inverse(X, np.empty((3, 3)))
    assert np.array_equal(X, A)
    B1, B2 = rng.normal(size=(2, 3, 3))
    d1, d2, d3 = B1.copy(), B2.copy(), A.copy()
    dense_forward(d1, d2, d3)
    assert_close(d3, np.linalg.inv(A))
    assert_close(d1, -np.linalg.inv(A) @ B1)
    assert_close(d2, -np.linalg.inv(A) @ B2)
