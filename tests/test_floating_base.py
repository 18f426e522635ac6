"""Floating-base robots (free-flyer and planar roots) against Pinocchio: every algorithm, random unit quaternions."""

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf
from denoc_pin.tools.validate import compare_with_pinocchio

FLOATING = ["talos_reduced", "solo12", "anymal", "anymal_c", "g1", "romeo", "go2"]  # g1, romeo, talos: humanoids
ROOTS = {"free-flyer": pin.JointModelFreeFlyer, "planar": pin.JointModelPlanar}


def pair(name: str, root: str):
    path = example_robot_urdf(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.InertiaWarning)
        model = dp.load_urdf(path, root_joint=root)
    return model, pin.buildModelFromUrdf(str(path), ROOTS[root]())


@pytest.mark.parametrize("name", FLOATING)
def test_every_algorithm_matches_pinocchio_with_a_free_flyer(name):
    model, pm = pair(name, "free-flyer")
    assert model.names[1] == "root_joint" and model.nqs[1] == 7 and model.nvs[1] == 6
    assert list(model.names) == list(pm.names) and (model.nq, model.nv) == (pm.nq, pm.nv)
    checks = compare_with_pinocchio(model, pm, samples=3, seed=7)
    assert len(checks) == 39  # 11 dynamics rows, 9 derivative rows, 19 kinematics rows
    failed = [(c.algorithm, c.max_rel) for c in checks if not c.passed]
    assert not failed, failed


@pytest.mark.parametrize("name", ["solo12", "double_pendulum"])
def test_planar_root(name):
    model, pm = pair(name, "planar")
    assert model.nqs[1] == 4 and model.nvs[1] == 3
    failed = [(c.algorithm, c.max_rel) for c in compare_with_pinocchio(model, pm, samples=3, seed=8) if not c.passed]
    assert not failed, failed


def test_floating_base_is_the_first_module():
    model, _ = pair("solo12", "free-flyer")
    assert model.modules[0].joints == ("root_joint",) and model.modules[0].nv == 6
    assert all(m.parent == 0 for m in model.modules[1:])  # the four legs hang on the base module


def test_non_unit_quaternion_is_normalised_as_pinocchio_normalize():
    """denoc_pin normalises the base quaternion (and (cos, sin) pairs) before use: the result
    equals Pinocchio's on ``pinocchio.normalize(q)``.  (Pinocchio's own algorithms build the
    rotation from the raw coefficients, which is a rotation only for a unit quaternion.)"""
    model, pm = pair("solo12", "free-flyer")
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(3)
    q = dp.random_configuration(model, rng)
    q[3:7] *= 1.7
    v, a = rng.uniform(-1, 1, (2, model.nv))
    qn = pin.normalize(pm, q)
    assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, qn, v, a), what="rnea(normalize(q))")
    assert_close(dp.forward_dynamics(model, data, q, v, a), pin.aba(pm, pd, qn, v, a), what="aba(normalize(q))")
    np.testing.assert_allclose(dp.normalize(model, q), qn, atol=1e-15)


def test_fixed_base_sized_q_names_both_sizes():
    model, _ = pair("solo12", "free-flyer")
    data = model.create_data()
    z = np.zeros(model.nv)
    with pytest.raises(ValueError, match=r"q must have shape \(19,\), got \(12,\): this model has a free-flyer root"):
        dp.forward_dynamics(model, data, np.zeros(12), z, z)
    planar, _ = pair("solo12", "planar")
    with pytest.raises(ValueError, match=r"shape \(16,\), got \(12,\): .* planar root joint .* \[x, y, cos θ, sin θ\]"):
        dp.gim(planar, planar.create_data(), np.zeros(12))


def test_cli_validate_free_flyer(capsys):
    from denoc_pin.tools import cli

    assert cli.main(["validate", "solo12", "--root-joint", "free-flyer", "--samples", "2"]) == 0
    assert "nq=19, nv=18" in capsys.readouterr().out
