"""Batches and huge chains: correctness only (timings live in benchmarks/compare.py)."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf


@pytest.fixture(scope="module")
def panda():
    return dp.load_urdf(example_robot_urdf("panda"))


def test_batched_calls_equal_single_calls(panda):
    data = panda.create_data()
    rng = np.random.default_rng(0)
    B = 37  # not a multiple of the number of chunks
    Q = np.stack([dp.random_configuration(panda, rng) for _ in range(B)])
    V, A = rng.uniform(-1, 1, (2, B, panda.nv))
    F = rng.uniform(-1, 1, (panda.njoints, 6))
    tau = dp.inverse_dynamics(panda, data, Q, V, A, F)
    ddq = dp.forward_dynamics(panda, data, Q, V, tau, F)
    h = dp.nonlinear_effects(panda, data, Q, V)
    assert tau.shape == ddq.shape == h.shape == (B, panda.nv)
    # The threaded kernel is compiled separately from the single-call one, so the two may round
    # differently in the last bit (measured: 5e-16 relative, max-norm).
    for i in range(B):
        assert_close(tau[i], dp.inverse_dynamics(panda, data, Q[i], V[i], A[i], F), rtol=1e-13, atol=0, what="τ")
        assert_close(ddq[i], dp.forward_dynamics(panda, data, Q[i], V[i], tau[i], F), rtol=1e-13, atol=0, what="q̈")
        assert_close(h[i], dp.nonlinear_effects(panda, data, Q[i], V[i]), rtol=1e-13, atol=0, what="h")
    assert_close(ddq, A, rtol=1e-9, what="batched FD(ID(a))")


def test_batch_shapes_and_bad_values_are_checked(panda):
    data = panda.create_data()
    Q = np.zeros((4, panda.nq))
    with pytest.raises(ValueError, match=r"a batch of 4 states needs v of shape \(4, 9\), got \(3, 9\)"):
        dp.inverse_dynamics(panda, data, Q, np.zeros((3, 9)), np.zeros((4, 9)))
    V = np.zeros((4, 9))
    V[2, 5] = np.nan
    with pytest.raises(ValueError, match=r"v has non-finite entries .* \[\[2, 5\]\]"):
        dp.forward_dynamics(panda, data, Q, V, np.zeros((4, 9)))


def test_chain_model():
    planar, spatial = dp.models.chain(6, planar=True), dp.models.chain(6)
    assert planar.nv == spatial.nv == 6 and len(planar.modules) == 1
    np.testing.assert_array_equal(planar.axes[1:], [[0, 1, 0]] * 6)
    np.testing.assert_array_equal(spatial.axes[1:4], [[0, 1, 0], [0, 0, 1], [0, 1, 0]])
    np.testing.assert_allclose(spatial.masses[1:], 0.004)
    # horizontal at q = 0: gravity pulls every link down, the base joint carries the most torque
    z = np.zeros(6)
    g = dp.inverse_dynamics(planar, planar.create_data(), z, z, z)
    assert np.all(np.abs(np.diff(np.abs(g))) > 0) and abs(g[0]) > abs(g[-1])
    with pytest.raises(ValueError, match="n must be at least 1"):
        dp.models.chain(0)


@pytest.mark.parametrize("planar", [False, True])
def test_chain_matches_pinocchio(planar):
    model = dp.models.chain(60, planar=planar)
    pm = dp.to_pinocchio(model)
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-np.pi, np.pi, (3, 60))
    assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a), what="rnea")
    assert_close(dp.forward_dynamics(model, data, q, v, a), pin.aba(pm, pd, q, v, a), rtol=1e-8, what="aba")


def test_forward_of_inverse_on_a_1000_dof_chain():
    model = dp.models.chain(1000)
    data = model.create_data()
    rng = np.random.default_rng(0)
    q, v, a = rng.uniform(-np.pi, np.pi, 1000), rng.uniform(-1, 1, 1000), rng.uniform(-1, 1, 1000)
    a2 = dp.forward_dynamics(model, data, q, v, dp.inverse_dynamics(model, data, q, v, a))
    assert_close(a2, a, rtol=1e-6, what="FD(ID(a)), 1000 DOF")  # measured 5e-8


def test_100000_dof_chain_is_backward_stable():
    """At 100,000 DOF the GIM's condition number (≈ n⁴) makes any float64 forward error large,
    but the UDUᵀ recursions stay backward stable: the accelerations they return reproduce the
    torques, ID(FD(τ)) = τ, to a few 1e-14 (see the README's accuracy section)."""
    n = 100_000
    model = dp.models.chain(n)
    assert (model.nq, model.nv, len(model.modules)) == (n, n, 1)
    data = model.create_data()
    rng = np.random.default_rng(0)
    q, v, a = rng.uniform(-np.pi, np.pi, n), rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    tau = dp.inverse_dynamics(model, data, q, v, a)
    ddq = dp.forward_dynamics(model, data, q, v, tau)
    assert np.all(np.isfinite(ddq))
    assert_close(dp.inverse_dynamics(model, data, q, v, ddq), tau, rtol=1e-12, what="ID(FD(τ)) = τ at 100,000 DOF")
    assert_close(ddq, a, rtol=1e-1, what="FD(ID(a)), 100,000 DOF")  # measured 6e-3: conditioning, not the solver
    with pytest.raises(dp.ModelError, match="dense nv x nv matrices are formed only up to"):
        dp.gim(model, data, q)


def test_data_for_a_huge_chain_stays_linear_in_n():
    model = dp.models.chain(20_000)
    data = model.create_data()
    per_body = data.ws.nbytes / model.njoints
    assert per_body < 1000, per_body  # bytes per body: no nv x nv array is allocated up front
    assert not data._dense


def test_gripper_still_fine_with_batches_of_one():
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    data = model.create_data()
    Q = np.zeros((1, 4))
    np.testing.assert_allclose(
        dp.inverse_dynamics(model, data, Q, Q, Q)[0], dp.nonlinear_effects(model, data, Q[0], Q[0])
    )


def test_results_fed_back_take_the_fast_path(panda, monkeypatch):
    """Arrays returned by denoc_pin (boxed by numba, with a distinct float64 dtype object) must
    be recognised as ready, not converted again on every call."""
    import denoc_pin.algorithms.protocol as call

    data = panda.create_data()
    q = dp.random_configuration(panda, 0)
    v = np.zeros(panda.nv)
    tau = dp.inverse_dynamics(panda, data, q, v, v)
    assert call.ready(tau, panda.nv)

    def no_slow_path(*args, **kwargs):
        raise AssertionError("slow path taken")

    monkeypatch.setattr(call, "configuration", no_slow_path)
    dp.forward_dynamics(panda, data, q, v, tau)


@pytest.mark.parametrize("name", ["isobe_multibranch", "rope", "chain"])
def test_batches_match_pinocchio_row_by_row(name):
    """Every row of a threaded batch against Pinocchio.  Each thread works on copies of the buffers,
    viewed without references (layout.py): a copy freed too early left garbage in the second
    thread's rows of this very test (0.26 N·m on isobe_multibranch)."""
    model = {"isobe_multibranch": dp.models.isobe_multibranch, "rope": lambda: dp.models.rope(6),
             "chain": lambda: dp.models.chain(12)}[name]()  # fmt: skip
    pm = dp.to_pinocchio(model)
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(7)
    B = 300
    Q = np.stack([dp.random_configuration(model, rng) for _ in range(B)])
    V, A = rng.uniform(-1, 1, (2, B, model.nv))
    tau = dp.inverse_dynamics(model, data, Q, V, A)
    ddq = dp.forward_dynamics(model, data, Q, V, tau)
    for i in range(B):
        assert_close(tau[i], pin.rnea(pm, pd, Q[i], V[i], A[i]), what=f"τ row {i}")
        assert_close(ddq[i], pin.aba(pm, pd, Q[i], V[i], tau[i]), what=f"q̈ row {i}")


def test_the_fast_path_raises_a_refusal_it_cannot_explain(panda, monkeypatch):
    """A fast entry point's TypeError or AttributeError takes the checked path only when an argument is explicitly
    not in the kernels' form; with every argument in form it is a bug, and it is raised, not hidden."""
    import denoc_pin.algorithms.dynamics_api as api

    data = panda.create_data()
    q = dp.random_configuration(panda, 0)
    v = np.zeros(panda.nv)
    expected = dp.inverse_dynamics(panda, data, q, v, v)

    def broken(*args):
        raise TypeError("a bug inside the kernel")

    monkeypatch.setattr(api, "rnea_fast", broken)
    with pytest.raises(TypeError, match="a bug inside the kernel"):
        dp.inverse_dynamics(panda, data, q, v, v)
    # a list is not in the kernels' form: the refusal is explained, and the checked path answers
    np.testing.assert_array_equal(dp.inverse_dynamics(panda, data, list(q), v, v), expected)
