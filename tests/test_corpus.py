"""Public robot files nobody here wrote, against their own simulator: MuJoCo Menagerie's MJCF files (tests/data/
menagerie, with their licences) read by MuJoCo itself.  Every file agrees or is refused for a reason docs/mjcf.md
gives; Menagerie's Cassie closes its four loops from its ``home`` keyframe."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
from conftest import assert_close
from corpus import MENAGERIE, MENAGERIE_FILES, mujoco_model

import denoc_pin as dp
from denoc_pin.core.joints import FREE_FLYER
from denoc_pin.core.spatial import quaternion_rotation
from denoc_pin.loaders.mjcf import mujoco_state
from denoc_pin.tools.validate import compare_loops

REFUSED = {  # file -> the reason docs/mjcf.md gives; MuJoCo refuses the fragments too
    "realsense_d435i/d435i.xml": "no movable joint",  # a camera: nothing moves
    "iit_softfoot/scene.xml": "<attach>.*it makes bodies: not read",
    **{f: "no <worldbody> with a <body>" for f in ("aloha/filtered_cartesian_actuators.xml",
                                                   "aloha/joint_position_actuators.xml", "aloha/keyframe_ctrl.xml",
                                                   "aloha/keyframe_no_act.xml", "shadow_hand/keyframes.xml")},
}  # fmt: skip


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # actuators, tendons, sensors: named once
        return dp.load_mjcf(path)


def _velocity_map(model, q, v) -> tuple[np.ndarray, np.ndarray]:
    """(T, c) with v = T v_mujoco and v̇ = T v̇_mujoco + c: a free joint's linear velocity is in the world frame in
    MuJoCo, in the body frame here (v_b = Rᵀ v_w, so v̇_b = Rᵀ v̇_w − ω × v_b)."""
    T, c = np.eye(model.nv), np.zeros(model.nv)
    for k in range(1, model.njoints):
        if model.kinds[k] == FREE_FLYER:
            i, j = int(model.idx_q[k]), int(model.idx_v[k])
            T[j : j + 3, j : j + 3] = quaternion_rotation(*q[i + 3 : i + 7]).T
            c[j : j + 3] = -np.cross(v[j + 3 : j + 6], v[j : j + 3])
    return T, c


@pytest.mark.parametrize("path", MENAGERIE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_menagerie_files_agree_with_mujoco(path):
    """The joint order and names, the mass matrix, the inverse dynamics (mass matrix and bias forces), forward
    dynamics from MuJoCo's mass matrix and bias forces, and every named body's and site's placement, at random
    states, against MuJoCo reading the same file."""
    name = f"{path.parent.name}/{path.name}"
    if name in REFUSED:
        with pytest.raises(dp.ModelError, match=REFUSED[name]):
            _load(path)
        return
    model = _load(path)
    m = mujoco_model(path)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    for j in range(m.njnt):
        assert m.joint(j).name in ("", model.names[j + 1])
    d, data = mujoco.MjData(m), model.create_data()
    rng = np.random.default_rng(0)
    bodies = [(b, model.frame_id(m.body(b).name, type="body")) for b in range(1, m.nbody) if m.body(b).name]
    sites = [(i, model.frame_id(m.site(i).name, type="op_frame")) for i in range(m.nsite) if m.site(i).name]
    for _ in range(3):
        d.qpos[:] = m.qpos0
        mujoco.mj_integratePos(m, d.qpos, rng.uniform(-1, 1, m.nv), 1.0)
        d.qvel[:] = rng.uniform(-1, 1, m.nv)
        a = rng.uniform(-1, 1, m.nv)
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        q, v = mujoco_state(model, d.qpos, d.qvel)
        T, c = _velocity_map(model, q, v)
        assert_close(T.T @ dp.gim(model, data, q) @ T, M, 1e-9)
        tau = M @ a + d.qfrc_bias
        assert_close(T.T @ dp.inverse_dynamics(model, data, q, v, T @ a + c), tau, 1e-9)
        tau_ours = np.linalg.solve(T.T, tau)  # the same generalized forces in our velocity coordinates
        a_back = np.linalg.solve(T, dp.forward_dynamics(model, data, q, v, tau_ours) - c)
        # MuJoCo's own equation M a + bias = τ holds for our q̈ (a residual: free of M's conditioning, 1e7 on Cassie)
        assert_close(M @ a_back + d.qfrc_bias, tau, 1e-9)
        for s_, f in sites:
            assert_close(dp.frame_placement(model, data, q, f)[:3, 3], d.site_xpos[s_], 1e-11)
        for b, f in bodies:
            X = dp.frame_placement(model, data, q, f)
            assert_close(X[:3, 3], d.xpos[b], 1e-11)  # the soft foot's chains of small bodies: 1.6e-12
            assert_close(X[:3, :3], d.xmat[b].reshape(3, 3), 1e-11)


def test_menagerie_counts():
    """What the corpus holds: 160 files of 54 robots; 153 agree with MuJoCo, 7 are refused (``REFUSED``)."""
    assert len(MENAGERIE_FILES) == 160
    assert len({p.parent for p in MENAGERIE_FILES}) == 54
    assert set(REFUSED) <= {f"{p.parent.name}/{p.name}" for p in MENAGERIE_FILES} and len(REFUSED) == 7


CLOSED = ["agilex_piper/piper.xml", "aloha/aloha.xml", "arx_l5/arx_l5.xml", "franka_emika_panda/hand.xml",
          "i2rt_yam/yam.xml", "pal_talos/talos.xml", "robotiq_2f85/2f85.xml", "robotiq_2f85_v4/2f85.xml",
          "stanford_tidybot/tidybot.xml", "trossen_vx300s/vx300s.xml", "trossen_wx250s/wx250s.xml",
          "ufactory_lite6/lite6_gripper_narrow.xml", "ufactory_xarm7/hand.xml"]  # fmt: skip
"""One file of each robot whose equalities close loops or couple joints (Cassie has its own test below; the soft
foot, 5 loops and 45 couplings, passes the same checks in about 2 minutes: docs/mjcf.md)."""


@pytest.mark.parametrize("name", CLOSED)
def test_menagerie_equalities_against_the_dense_kkt_and_50_digits(name):
    """Each file's connects, welds and joint couplings at a closed state: constrained forward dynamics against the
    dense KKT of the explicit matrices and a 50-digit solve of Pinocchio's equations, the loop Jacobian, and
    constrained inverse dynamics fed back (``denoc-pin validate``'s loop rows)."""
    model = _load(MENAGERIE / name)
    assert model.loops or model.couplings
    checks = compare_loops(model, dp.to_pinocchio(model), samples=1)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert {"dense KKT (denoc_matrices)", "50 digits (pin M, h, J)"} <= {c.reference for c in checks}


def test_menagerie_cassie_closes_from_its_home_keyframe():
    """Its four connects are spherical cuts whose residuals at the ``home`` keyframe are MuJoCo's own (about
    1.9e-3 m: the keyframe is rounded); ``dp.assemble`` closes them near that keyframe; there the loop Jacobian
    spans MuJoCo's constraint Jacobian's rows and the closed-loop dynamics agree with the dense KKT."""
    path = MENAGERIE / "agility_cassie" / "cassie.xml"
    model = _load(path)
    assert [lp.type for lp in model.loops] == ["spherical"] * 4
    m = mujoco_model(path)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    mujoco.mj_forward(m, d)
    rows = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    q_home, _ = mujoco_state(model, d.qpos, d.qvel)
    r = dp.loop_residual(model, q_home).reshape(-1, 3)
    assert_close(np.linalg.norm(r, axis=1), np.linalg.norm(d.efc_pos[rows].reshape(-1, 3), axis=1), 1e-12)
    assert 1e-3 < np.abs(d.efc_pos[rows]).max() < 2e-3
    q = dp.assemble(model, q_home)
    assert np.abs(dp.loop_residual(model, q)).max() < 1e-12
    assert np.abs(q - q_home).max() < 0.05
    # at the closed configuration, MuJoCo's equality rows lie in the span of the loop Jacobian's (v mapped by T)
    d.qpos[:] = dp.to_mujoco_state(model, q)[0]
    mujoco.mj_forward(m, d)
    assert np.abs(d.efc_pos[rows]).max() < 1e-12  # closed for MuJoCo too
    J_mj = d.efc_J.reshape(-1, m.nv)[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
    T, _ = _velocity_map(model, q, np.zeros(model.nv))
    J = dp.loop_jacobian(model, q) @ T
    P = np.linalg.pinv(J) @ J
    assert np.abs(J_mj - J_mj @ P).max() < 1e-9 * np.abs(J_mj).max()
    checks = compare_loops(model, dp.to_pinocchio(model), samples=2)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert "dense KKT (denoc_matrices)" in {c.reference for c in checks}


def test_menagerie_toddlerbot_neck_closes_where_it_stands():
    """ToddlerBot's parallelogram neck (two rods, each pinned by two connects whose sites are written to 8 decimals)
    misses closure by 3e-8 m at the file's pose, 1e-8 of it along a direction the parallelogram makes redundant.
    ``dp.assemble`` closes the independent directions to 1e-12 and moves the joints by micro-radians — the nearest
    closed pose, not one found by the global search far away — and MuJoCo's connect rows agree at the result."""
    path = MENAGERIE / "toddlerbot_2xc" / "neck.xml"
    model = _load(path)
    assert (len(model.loops), len(model.couplings)) == (4, 1)
    q0 = dp.neutral(model)
    assert 2e-8 < np.abs(dp.loop_residual(model, q0)).max() < 4e-8
    q = dp.assemble(model, q0)
    assert np.abs(dp.difference(model, q0, q)).max() < 1e-5
    J, r = dp.loop_jacobian(model, q), dp.loop_residual(model, q)
    U, s, _ = np.linalg.svd(J, full_matrices=False)
    U = U[:, s > 1e-6 * s[0]]
    assert np.abs(U @ (U.T @ r)).max() < 1e-12  # closed along every direction a joint can move
    assert np.abs(r).max() < 2e-8  # what the rounding leaves along the redundant one
    m = mujoco_model(path)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    d.qpos[:] = dp.to_mujoco_state(model, q)[0]
    mujoco.mj_forward(m, d)
    connect = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    assert_close(np.abs(d.efc_pos[connect][:12]).max(), np.abs(r[:12]).max(), 1e-9)
