"""Isobe & Yagi: the connectivity matrix (Fig. 3, eq. 4 and 6) and the parallel solution scheme τ = L T P."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp


def chain_with_branch(a: int, b: int, i: int) -> dp.Model:
    """An a-link serial system with a b-link branch on link i (the paper's Fig. 2c), depth first."""
    builder = dp.ModelBuilder("fig2c")
    inertia = np.eye(3) * 1e-3
    for k in range(1, a + 1):
        builder.add_body(k - 1, "revolute", axis=(0, 0, 1), mass=0.2, com=(0.1, 0, 0), inertia=inertia,
                         placement=(np.eye(3), np.array([0.2 if k > 1 else 0.0, 0, 0])), link=f"a{k}")  # fmt: skip
    parent = f"a{i}"
    for k in range(1, b + 1):
        parent = builder.add_body(
            parent, "revolute", axis=(0, 0, 1), mass=0.2, com=(0.1, 0, 0), inertia=inertia,
            placement=(np.eye(3), np.array([0.2, 0.05, 0])), link=f"b{k}",
        )  # fmt: skip
    return builder.build()


def test_serial_system_is_upper_triangular_eq4():
    L = dp.connectivity_matrix(dp.models.chain(5))
    np.testing.assert_array_equal(L, np.triu(np.ones((5, 5), dtype=int)))


def test_multibranch_system_eq6():
    """A 4-link system with a 2-link branch on link 2: the branch's rows are duplicated into the
    branching joint's row and the rows above it."""
    L = dp.connectivity_matrix(chain_with_branch(a=4, b=2, i=2))
    expected = np.array(
        [
            [1, 1, 1, 1, 1, 1],
            [0, 1, 1, 1, 1, 1],
            [0, 0, 1, 1, 0, 0],
            [0, 0, 0, 1, 0, 0],
            [0, 0, 0, 0, 1, 1],
            [0, 0, 0, 0, 0, 1],
        ]
    )
    np.testing.assert_array_equal(L, expected)


def test_closed_loop_system_eq5():
    """Fig. 2(b): a closed loop cut into serial sub-chains from the base is block diagonal, one upper-triangular
    block per sub-chain (parallel structures do not add up).  The five-bar, cut at joint3: [joint1, joint2] and
    [joint5, joint4]."""
    model = dp.load_urdf(URDF_DIR / "isobe_five_bar.urdf")
    assert model.names[1:] == ("joint1", "joint2", "joint5", "joint4")
    block = np.triu(np.ones((2, 2), dtype=int))
    np.testing.assert_array_equal(dp.connectivity_matrix(model), np.block([[block, 0 * block], [0 * block, block]]))


def test_connectivity_is_the_block_pattern_of_N_l_transpose(case):
    model, _ = case
    if model.njoints - 1 > 60:
        pytest.skip("the explicit N_l is dense; the pattern is checked on the smaller models")
    mats = dp.denoc_matrices(model, dp.neutral(model), np.zeros(model.nv))
    n = model.njoints - 1
    blocks = (mats.N_l.reshape(n, 6, n, 6) != 0).any(axis=(1, 3))
    np.testing.assert_array_equal(dp.connectivity_matrix(model), blocks.T.astype(int))


def test_parallel_scheme_matches_the_recursion_and_pinocchio(case):
    model, pm = case
    rng = np.random.default_rng(41)
    q = dp.random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    tau = dp.parallel_scheme.inverse_dynamics(model, q, v, a)
    assert_close(tau, pin.rnea(pm, pm.createData(), q, v, a), what="τ = L T P vs rnea")
    assert_close(tau, dp.inverse_dynamics(model, model.create_data(), q, v, a), what="vs Table 1")


def test_parallel_scheme_with_multi_dof_joints():
    for model in (dp.models.rope(6), chain_with_branch(3, 2, 1)):
        pm = dp.to_pinocchio(model)
        rng = np.random.default_rng(3)
        q = dp.random_configuration(model, rng)
        v, a = rng.uniform(-1, 1, (2, model.nv))
        assert_close(dp.parallel_scheme.inverse_dynamics(model, q, v, a), pin.rnea(pm, pm.createData(), q, v, a))


def test_cli_info_prints_the_connectivity(capsys):
    from denoc_pin.tools import cli

    assert cli.main(["info", str(URDF_DIR / "gripper.urdf"), "--connectivity"]) == 0
    out = capsys.readouterr().out
    assert "connectivity (Isobe & Yagi, Fig. 3)" in out and "1 1 1 1" in out


def test_connectivity_refuses_huge_models(monkeypatch):
    import denoc_pin.algorithms.parallel_scheme as ps

    monkeypatch.setattr(ps, "DENSE_LIMIT", 10)
    with pytest.raises(dp.ModelError, match="has 20 bodies; the dense nb x nb matrix is built only up to 10"):
        dp.connectivity_matrix(dp.models.chain(20))
