"""Model edits for structure-varying systems: lock_joints and attach."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.explicit import world_poses
from denoc_pin.validate import compare_with_pinocchio


def kept(model, locked):
    return [k for k in range(1, model.njoints) if model.names[k] not in locked]


def test_locking_a_joint_equals_freezing_it(case):
    """The locked model's GIM is the original's with the locked rows and columns removed, and its
    inverse dynamics equal the original's with zero motion at the locked joints."""
    model, _ = case
    if model.njoints < 3:
        pytest.skip("locking needs a joint to remain")
    rng = np.random.default_rng(5)
    q = dp.random_configuration(model, rng)
    locked = [
        model.names[k] for k in rng.choice(np.arange(1, model.njoints), size=(model.njoints - 1) // 2, replace=False)
    ]
    before = {k: v.copy() for k, v in vars(model).items() if isinstance(v, np.ndarray)}
    edited = model.lock_joints(locked, q)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(model, k), v)  # the original is untouched
    keep = kept(model, locked)
    assert list(edited.names[1:]) == [model.names[k] for k in keep]
    iq = np.concatenate([np.arange(model.idx_q[k], model.idx_q[k] + model.nqs[k]) for k in keep])
    iv = np.concatenate([np.arange(model.idx_v[k], model.idx_v[k] + model.nvs[k]) for k in keep])
    M = dp.gim(model, model.create_data(), q)
    assert_close(dp.gim(edited, edited.create_data(), q[iq]), M[np.ix_(iv, iv)], what="GIM")
    v, a = np.zeros(model.nv), np.zeros(model.nv)
    v[iv], a[iv] = rng.uniform(-1, 1, (2, len(iv)))
    tau = dp.inverse_dynamics(model, model.create_data(), q, v, a)[iv]
    assert_close(dp.inverse_dynamics(edited, edited.create_data(), q[iq], v[iv], a[iv]), tau, what="ID")


def test_lock_rebuilds_the_modules():
    model = dp.load_urdf(ROOT / "urdf" / "spatial_tree.urdf")
    q = dp.random_configuration(model, 0)
    edited = model.lock_joints(["finger", "tool_spin"], q)
    assert len(model.modules) == 5 and len(edited.modules) == 1  # what is left is a serial chain
    assert edited.modules[0].joints == ("waist", "shoulder", "arm_slide", "elbow", "wrist")
    assert np.array_equal(dp.connectivity_matrix(edited), np.triu(np.ones((5, 5), dtype=int)))


def test_lock_errors():
    model = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    with pytest.raises(dp.ModelError, match="no joint 'elbow' in model 'gripper'; joints are: joint_1_1"):
        model.lock_joints(["elbow"], np.zeros(4))
    with pytest.raises(ValueError, match=r"q must have shape \(4,\)"):
        model.lock_joints(["joint_1_2"], np.zeros(3))


def test_attach_a_branch():
    gripper = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    arm = dp.load_urdf(ROOT / "urdf" / "two_link.urdf")
    R = pin.exp3(np.array([0.0, 0.3, 0.0]))
    p = np.array([0.05, 0.0, 0.01])
    both = gripper.attach("link_2_2", arm, placement=(R, p), prefix="tool_")
    assert both.nv == gripper.nv + arm.nv
    # inserted right after the host's subtree, so the model stays depth-first (Pinocchio's order)
    assert both.names == ("universe", "joint_1_1", "joint_1_2", "joint_2_2", "tool_alpha", "tool_delta", "joint_1_3")
    assert gripper.nv == 4  # unchanged
    # the tool's first joint sits at `placement` in link_2_2, whatever q
    q = dp.random_configuration(both, 1)
    Rw, o, _, _ = world_poses(both, q)
    k, host = both.joint_id("tool_alpha"), both.joint_id("joint_2_2")
    np.testing.assert_allclose(o[k], o[host] + Rw[host] @ p, atol=1e-14)
    alpha = q[both.idx_q[k]]
    np.testing.assert_allclose(Rw[k], Rw[host] @ R @ pin.exp3(np.array([0.0, alpha, 0.0])), atol=1e-14)
    # link 2² was the tip of module M2: the tool extends that serial chain, no new branch starts
    assert len(both.modules) == len(gripper.modules) == 3
    assert both.modules[1].joints == ("joint_1_2", "joint_2_2", "tool_alpha", "tool_delta")
    # on link 1¹, which already carries two fingers, it is a new module
    assert len(gripper.attach("link_1_1", arm, prefix="t_").modules) == 4
    failed = [c.algorithm for c in compare_with_pinocchio(both, both.to_pinocchio(), samples=2) if not c.passed]
    assert not failed, failed


def test_attach_to_a_link_merged_by_a_fixed_joint():
    tree = dp.load_urdf(ROOT / "urdf" / "spatial_tree.urdf")  # `payload` is fixed to the hand
    both = tree.attach("payload", dp.load_urdf(ROOT / "urdf" / "two_link.urdf"), prefix="t_")
    k = both.joint_id("t_alpha")
    assert both.parents[k] == both.joint_id("wrist")
    payload = next(f for f in tree.frames if f.name == "payload")
    np.testing.assert_allclose(both.placement_translation[k], payload.translation, atol=1e-15)
    failed = [c.algorithm for c in compare_with_pinocchio(both, both.to_pinocchio(), samples=2) if not c.passed]
    assert not failed, failed


def test_attach_errors():
    gripper = dp.load_urdf(ROOT / "urdf" / "gripper.urdf")
    with pytest.raises(dp.ModelError, match="no link 'hand' in model 'gripper'; links are:"):
        gripper.attach("hand", gripper)
    with pytest.raises(dp.ModelError, match="exists already"):
        gripper.attach("link_1_3", gripper)  # the same names twice, without a prefix
