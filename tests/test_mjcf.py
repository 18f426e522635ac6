"""MJCF files (loaders/mjcf.py): each tree against MuJoCo itself (mass matrix, bias forces, inverse dynamics with its
constraints, contacts and passive forces off), the loops against Pinocchio's constraintDynamics and the dense KKT
reference, bad files."""

from __future__ import annotations

import warnings

import mujoco  # noqa: E402
import numpy as np
import pytest
from conftest import ROOT, assert_close, mujoco_references
from scipy.spatial import ConvexHull

import denoc_pin as dp
from denoc_pin.core.spatial import quaternion_rotation
from denoc_pin.loaders.mjcf import mujoco_state
from denoc_pin.tools.validate import compare_loops

MJCF = ROOT / "tests" / "mjcf"


def mujoco_model(path):
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_DAMPER
    return m


@pytest.mark.parametrize("name", ["four_bar", "angles", "chain_weld", "leg", "refs"])
def test_the_tree_against_mujoco(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # the actuator, named once (tested below)
        model = dp.load_mjcf(MJCF / f"{name}.xml")
    m = mujoco_model(MJCF / f"{name}.xml")
    assert (model.nq, model.nv) == (m.nq, m.nv)
    d = mujoco.MjData(m)
    data = model.create_data()
    rng = np.random.default_rng(0)
    for _ in range(5):
        d.qpos[:] = m.qpos0
        mujoco.mj_integratePos(m, d.qpos, rng.uniform(-1, 1, m.nv), 1.0)
        d.qvel[:] = rng.uniform(-1, 1, m.nv)
        d.qacc[:] = rng.uniform(-1, 1, m.nv)
        q, v, a, M = mujoco_references(mujoco, m, d, model)
        if model.kinds[1] != dp.core.joints.FREE_FLYER and "float" not in model.names:
            assert_close(dp.gim(model, data, q), M, 1e-9)
            assert_close(dp.nonlinear_effects(model, data, q, v), d.qfrc_bias, 1e-9)
            assert_close(dp.inverse_dynamics(model, data, q, v, a), d.qfrc_inverse, 1e-9)
        else:  # a free joint: MuJoCo's linear velocity is in the world frame, ours in the body's: compare energies
            assert_close(0.5 * v @ dp.gim(model, data, q) @ v, 0.5 * d.qvel @ M @ d.qvel, 1e-9)


def test_the_tree_against_pinocchios_mjcf_parser():
    """Pinocchio's buildModelFromMJCF as a second referee where it reads the file as MuJoCo does (one top-level
    body, inertias given, no armature): the mass matrix, the bias forces, forward dynamics and every body's
    placement relative to the top body.  Where it does not (several top-level bodies), it reads less of the file
    than we do."""
    import pinocchio as pin

    for name in ("chain_parts", "leg"):
        model, pm = dp.load_mjcf(MJCF / f"{name}.xml"), pin.buildModelFromMJCF(str(MJCF / f"{name}.xml"))
        assert (model.nq, model.nv) == (pm.nq, pm.nv) and not pm.armature.any()
        data, pd = model.create_data(), pm.createData()
        rng = np.random.default_rng(2)
        for _ in range(3):
            q = dp.random_configuration(model, rng)
            v, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
            M = pin.crba(pm, pd, q)
            assert_close(dp.gim(model, data, q), np.triu(M) + np.triu(M, 1).T, 1e-9, what=name)
            assert_close(dp.nonlinear_effects(model, data, q, v), pin.nonLinearEffects(pm, pd, q, v), 1e-9)
            assert_close(dp.forward_dynamics(model, data, q, v, tau), pin.aba(pm, pd, q, v, tau), 1e-9)
            pin.framesForwardKinematics(pm, pd, q)
            bodies = [f.name for f in pm.frames if f.type == pin.FrameType.BODY]
            assert len(bodies) >= 4  # every MJCF body (ours adds one body per extra joint of a body)
            # relative to the top body: Pinocchio drops the pos of a top body without a joint (leg.xml's pelvis)
            base = dp.frame_placement(model, data, q, model.frame_id(bodies[0], type="body"))
            pin_base = pd.oMf[pm.getFrameId(bodies[0], pin.FrameType.BODY)].homogeneous
            for f in bodies:
                P = np.linalg.solve(base, dp.frame_placement(model, data, q, model.frame_id(f, type="body")))
                P_pin = np.linalg.solve(pin_base, pd.oMf[pm.getFrameId(f, pin.FrameType.BODY)].homogeneous)
                assert_close(P, P_pin, 1e-12, what=f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        four = dp.load_mjcf(MJCF / "four_bar.xml")
    assert pin.buildModelFromMJCF(str(MJCF / "four_bar.xml")).nv < four.nv  # the rocker, a second top body


def test_a_free_joint_state_maps_to_the_same_motion():
    model = dp.load_mjcf(MJCF / "angles.xml")
    m = mujoco_model(MJCF / "angles.xml")
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    mujoco.mj_integratePos(m, d.qpos, rng.uniform(-1, 1, m.nv), 1.0)
    d.qvel[:] = rng.uniform(-1, 1, m.nv)
    mujoco.mj_forward(m, d)
    q, v = mujoco_state(model, d.qpos, d.qvel)
    data = model.create_data()
    for body in ("a", "c", "d", "floating", "tail"):
        P = dp.frame_placement(model, data, q, body)
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body)
        assert_close(P[:3, 3], d.xpos[i], 1e-12)
        assert_close(P[:3, :3], d.xmat[i].reshape(3, 3), 1e-12)
        # the body's origin velocity and angular velocity, world axes: MuJoCo's body Jacobian against ours
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacBody(m, d, jacp, jacr, i)
        ours = dp.frame_velocity(model, data, q, v, body, "local_world_aligned")
        assert_close(ours, np.r_[jacp @ d.qvel, jacr @ d.qvel], 1e-10)


def test_connect_and_weld_against_pinocchio_and_the_dense_kkt():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        four = dp.load_mjcf(MJCF / "four_bar.xml")
    assert [(lp.name, lp.type) for lp in four.loops] == [("pin", "spherical")]
    checks = compare_loops(four, dp.to_pinocchio(four), samples=3)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert any(c.reference == "50 digits (pin M, h, J)" for c in checks)
    chain = dp.load_mjcf(MJCF / "chain_weld.xml")
    assert [(lp.name, lp.type) for lp in chain.loops] == [("weld", "fixed")]
    (c,) = chain.couplings
    assert (c.joint, c.reference, c.multiplier, c.offset) == ("j2", "j1", -0.5, 0.0)
    checks = compare_loops(chain, dp.to_pinocchio(chain), samples=2)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]


def test_a_cassie_like_leg_closed_by_two_connects():
    """Two rods on the leg (one hanging from a ball joint), each held by a connect: closed at q = 0 as MuJoCo
    defines it, against the 50-digit referee and Pinocchio's constraintDynamics."""
    leg = dp.load_mjcf(MJCF / "leg.xml")
    assert [(lp.name, lp.type) for lp in leg.loops] == [("achilles_heel", "spherical"), ("plantar_foot", "spherical")]
    assert np.abs(dp.loop_residual(leg, dp.neutral(leg))).max() < 1e-15
    checks = compare_loops(leg, dp.to_pinocchio(leg), samples=3)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert {c.reference for c in checks} >= {"50 digits (pin M, h, J)", "dense KKT (denoc_matrices)"}


def test_a_joint_equality_reads_its_offset(tmp_path):
    path = tmp_path / "gear.xml"
    path.write_text("<mujoco><worldbody><body name='a'><joint name='j1'/><geom size='0.1'/><body name='b'>"
                    "<joint name='j2'/><geom size='0.1'/></body></body></worldbody><equality>"
                    "<joint joint1='j2' joint2='j1' polycoef='0.25 2 0 0 0'/></equality></mujoco>")  # fmt: skip
    (c,) = dp.load_mjcf(path).couplings
    assert (c.joint, c.reference, c.multiplier, c.offset) == ("j2", "j1", 2.0, 0.25)


def test_load_reads_xml_as_mjcf():
    assert dp.load(MJCF / "chain_weld.xml").loops


BAD = {
    "equality": ("<mujoco><worldbody><body name='a'><joint/><geom size='0.1'/></body></worldbody>"
                 "<equality><flex flex='f'/></equality></mujoco>", "<flex> is not read"),
    "tendon": ("<mujoco><worldbody><body name='a'><joint/><geom size='0.1'/></body></worldbody>"
               "<equality><tendon tendon1='t'/></equality></mujoco>", "tendon1 't' is not a fixed tendon; fixed "
               "tendons are: none"),
    "class": ("<mujoco><worldbody><body name='a'><joint class='nope'/><geom size='0.1'/></body></worldbody>"
              "</mujoco>", "class 'nope' is not defined"),
    "include": ("<mujoco><include file='missing.xml'/></mujoco>", "no such file"),
    "free": ("<mujoco><worldbody><body name='a'><joint/><geom size='0.1'/><body name='b'><freejoint/>"
             "<geom size='0.1'/></body></body></worldbody></mujoco>", "free joint belongs on a top-level body"),
    "mesh": ("<mujoco><worldbody><body name='a'><joint/><geom type='mesh' mesh='m'/></body></worldbody></mujoco>",
             "mesh 'm' is not in <asset>"),
    "mesh_file": ("<mujoco><asset><mesh file='gone.stl'/></asset><worldbody><body name='a'><joint/>"
                  "<geom type='mesh' mesh='gone'/></body></worldbody></mujoco>", "no such mesh file"),
    "mesh_mode": ("<mujoco><asset><mesh name='m' vertex='0 0 0 1 0 0 0 1 0 0 0 1' inertia='approx'/></asset>"
                  "<worldbody><body name='a'><joint/><geom type='mesh' mesh='m'/></body></worldbody></mujoco>",
                  "inertia 'approx'; mesh inertia modes are: legacy, exact, convex, shell"),
    "density": ("<mujoco><worldbody><body name='a'><joint/><geom size='0.1' density='-1'/></body></worldbody>"
                "</mujoco>", "negative mass or density"),
    "frame_joint": ("<mujoco><worldbody><body name='a'><frame><joint/></frame><geom size='0.1'/></body>"
                    "</worldbody></mujoco>", "joint inside a <frame>"),
    "no_joint": ("<mujoco><worldbody><body name='a'><geom size='0.1'/></body></worldbody></mujoco>",
                 "no movable joint"),
    "poly": ("<mujoco><worldbody><body name='a'><joint name='j1'/><geom size='0.1'/><body name='b'>"
             "<joint name='j2'/><geom size='0.1'/></body></body></worldbody><equality>"
             "<joint joint1='j2' joint2='j1' polycoef='0 1 0.5 0 0'/></equality></mujoco>", "only the linear part"),
    "number": ("<mujoco><worldbody><body name='a' pos='0 nan 0'><joint/><geom size='0.1'/></body></worldbody>"
               "</mujoco>", "finite"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_mjcf_files_name_file_line_and_element(tmp_path, case):
    text, match = BAD[case]
    path = tmp_path / f"{case}.xml"
    path.write_text(text)
    with pytest.raises(dp.ModelError, match=match) as e:
        dp.load_mjcf(path)
    assert str(path) in str(e.value)


def test_what_lies_beyond_the_rigid_bodies_is_named_once():
    with pytest.warns(dp.ModelWarning, match="left out, beyond the rigid-body dynamics: actuator"):
        dp.load_mjcf(MJCF / "four_bar.xml")


def _four_bar_and(path, text: str):
    """(the four-bar, a variant of its file written to ``path``, MuJoCo's model of the variant)."""
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # the actuator, named once
        return dp.load_mjcf(MJCF / "four_bar.xml"), dp.load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))


def test_a_joint_ref_is_the_files_pose_as_in_mujoco(tmp_path):
    """MuJoCo reads ``ref`` as the joint's value in the file's pose (qpos0 = ref): the four-bar with refs at the
    same file pose is the plain one with q shifted by ref, its loop closes at MuJoCo's qpos0, and its tree agrees
    with MuJoCo (``refs.xml`` in ``test_the_tree_against_mujoco``)."""
    refs = {"crank_joint": 0.3, "coupler_joint": -0.2, "rocker_joint": 0.5}
    text = (MJCF / "four_bar.xml").read_text()
    for name, r in refs.items():
        text = text.replace(f'name="{name}"', f'name="{name}" ref="{r}"')
    plain, shifted, m = _four_bar_and(tmp_path / "four_bar_refs.xml", text)
    q_file = mujoco_state(shifted, m.qpos0, np.zeros(m.nv))[0]
    ref = np.array([refs[n] for n in shifted.names[1:]])
    assert_close(q_file, ref, 0.0)
    assert_close(dp.loop_residual(shifted, q_file), dp.loop_residual(plain, np.zeros(plain.nq)), atol=1e-15)
    assert np.abs(dp.loop_residual(shifted, q_file)).max() < 1e-12
    rng = np.random.default_rng(0)
    d1, d2 = plain.create_data(), shifted.create_data()
    for _ in range(3):
        x, v = rng.uniform(-1, 1, (2, plain.nv))
        assert_close(dp.gim(shifted, d2, ref + x), dp.gim(plain, d1, x), 1e-12)
        assert_close(dp.nonlinear_effects(shifted, d2, ref + x, v), dp.nonlinear_effects(plain, d1, x, v), 1e-12)


def test_a_connect_between_sites_is_the_connect_by_anchor(tmp_path):
    """MuJoCo 3.1's ``<connect site1 site2>`` holds the two sites' origins together: on the four-bar, with a site at
    the rocker's tip, it is the connect by body and anchor, and its gap is MuJoCo's own (``efc_pos``)."""
    text = (MJCF / "four_bar.xml").read_text()
    text = text.replace('<geom fromto="0 0 0 -0.2 0 0.5"/>', '<geom fromto="0 0 0 -0.2 0 0.5"/><site name="rocker_tip" '
                        'pos="-0.2 0 0.5"/>').replace('body1="coupler" body2="rocker" anchor="0.1 0 0.5"',
                                                      'site1="coupler_tip" site2="rocker_tip"')  # fmt: skip
    assert "site1" in text and "rocker_tip" in text
    path = tmp_path / "four_bar_sites.xml"
    by_anchor, by_sites, m = _four_bar_and(path, text)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.uniform(-1, 1, by_sites.nq)
        gap = dp.loop_residual(by_sites, q)
        assert_close(np.linalg.norm(gap), np.linalg.norm(dp.loop_residual(by_anchor, q)), 1e-12)
        d.qpos[:] = q  # hinges only: qpos is q
        mujoco.mj_forward(m, d)
        assert_close(np.linalg.norm(gap), np.linalg.norm(d.efc_pos[:3]), 1e-12)
    bad = text.replace('site2="rocker_tip"', 'site2="nowhere"')
    path.write_text(bad)
    with pytest.raises(dp.ModelError, match=r"site2 'nowhere' is not a site; sites are: 'coupler_tip', 'rocker_tip'"):
        dp.load_mjcf(path)


FRAMES = """<mujoco>
  <default><default class="light"><geom density="300"/></default></default>
  <worldbody>
    <frame pos="0.1 0 0.2" euler="0 0 30">
      <site name="anchor" pos="0 0.1 0"/>
      <body name="a" pos="0 0 0.5">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
        <frame pos="0.4 0 0" euler="0 20 0" childclass="light">
          <geom type="box" size="0.05 0.1 0.02" pos="0 0.05 0"/>
          <site name="tip" pos="0.1 0 0"/>
          <body name="b" euler="10 0 0"><joint type="slide" axis="1 0 0"/><geom size="0.07"/></body>
        </frame>
      </body>
    </frame>
  </worldbody>
  <worldbody>
    <body name="cube" pos="1 0 0.5"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>
"""


def test_frames_and_a_second_worldbody_as_in_mujoco(tmp_path):
    """MuJoCo 3's <frame> moves the bodies, geoms and sites it holds and gives them its childclass; a second
    <worldbody> adds to the first (the free cube of a scene): the tree, every body's and site's placement."""
    path = tmp_path / "frames.xml"
    path.write_text(FRAMES)
    model = dp.load_mjcf(path)
    assert model.nq == 2 + 7 and model.link_names[-1] == "cube"
    m = mujoco_model(path)
    d, data = mujoco.MjData(m), model.create_data()
    rng = np.random.default_rng(1)
    for _ in range(3):
        d.qpos[:] = m.qpos0
        mujoco.mj_integratePos(m, d.qpos, rng.uniform(-1, 1, m.nv), 1.0)
        mujoco.mj_forward(m, d)
        q, _ = mujoco_state(model, d.qpos)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        assert_close(dp.gim(model, data, q)[:2, :2], M[:2, :2], 1e-12)
        assert_close(dp.nonlinear_effects(model, data, q, np.zeros(m.nv))[:2], d.qfrc_bias[:2], 1e-12)
        for name in ("a", "b", "cube"):
            X = dp.frame_placement(model, data, q, model.frame_id(name, type="body"))
            assert_close(X[:3, 3], d.body(name).xpos, 1e-12)
            assert_close(X[:3, :3], d.body(name).xmat.reshape(3, 3), 1e-12)
        for name in ("anchor", "tip"):
            X = dp.frame_placement(model, data, q, name)
            assert_close(X[:3, 3], d.site(name).xpos, 1e-12)


def test_mesh_inertia_as_mujoco_computes_it(tmp_path):
    """A mesh geom's mass, centre and principal moments in each of MuJoCo's modes (legacy, its default; exact;
    convex; shell), scaled and by density or mass, against MuJoCo; the full tensor to the precision of MuJoCo's
    principal axes (its iterative eigen-solver)."""
    stl = ROOT / "tests" / "data" / "menagerie" / "wonik_allegro" / "assets" / "link_12.0_right.stl"
    for mode in ("legacy", "exact", "convex", "shell"):
        for scale, mass in (("1 1 1", "density='700'"), ("0.5 2 1", "mass='0.3'")):
            if mode == "exact":  # this mesh's faces are not consistently oriented: MuJoCo refuses exact
                continue
            path = tmp_path / f"{mode}.xml"
            path.write_text(f"<mujoco><asset><mesh file='{stl}' scale='{scale}' inertia='{mode}'/></asset>"
                            f"<worldbody><body name='a' pos='0 0 1'><joint axis='1 0 0'/><geom type='mesh' "
                            f"mesh='{stl.stem}' {mass} pos='0.1 0.2 0' euler='10 20 30'/></body></worldbody>"
                            "</mujoco>")  # fmt: skip
            model, m = dp.load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))
            assert_close(model.masses[1], m.body_mass[1], 1e-13)
            assert_close(model.coms[1], m.body_ipos[1], 1e-12)
            I = model.inertias[1]
            assert_close(np.linalg.eigvalsh(I), np.sort(m.body_inertia[1]), 1e-12)
            R = quaternion_rotation(*m.body_iquat[1][[1, 2, 3, 0]])
            assert_close(I, R @ np.diag(m.body_inertia[1]) @ R.T, 1e-7)
    # exact on a closed, consistently oriented mesh given by its vertices and faces: the true solid
    cube = "0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1"
    faces = "0 2 1 0 3 2 4 5 6 4 6 7 0 1 5 0 5 4 1 2 6 1 6 5 2 3 7 2 7 6 3 0 4 3 4 7"
    path = tmp_path / "cube.xml"
    path.write_text(f"<mujoco><asset><mesh name='c' vertex='{cube}' face='{faces}' inertia='exact'/></asset>"
                    "<worldbody><body name='a'><joint/><geom type='mesh' mesh='c' density='6'/></body></worldbody>"
                    "</mujoco>")  # fmt: skip
    model = dp.load_mjcf(path)
    assert_close(model.masses[1], 6.0, 1e-14)
    assert_close(model.coms[1], [0.5, 0.5, 0.5], 1e-14)
    assert_close(model.inertias[1], np.eye(3) * 6.0 * 2 / 12, 1e-14)


def test_a_mesh_of_no_mass_needs_no_file(tmp_path):
    """A visual mesh (density or mass 0, touching nothing) and the meshes of a body welded to the world move
    nothing: their files are not read.  A collision mesh whose file is missing is left out with a warning."""
    path = tmp_path / "visual.xml"
    visual = "type='mesh' mesh='nowhere' contype='0' conaffinity='0'"
    path.write_text(f"<mujoco><asset><mesh file='nowhere.stl'/></asset><worldbody><body name='base'>"
                    f"<geom {visual}/><body name='a'><joint/><geom size='0.1'/>"
                    f"<geom {visual} density='0'/><geom {visual} mass='0'/>"
                    "</body></body></worldbody></mujoco>")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = dp.load_mjcf(path)
    assert_close(model.masses[1], 1000 * 4 / 3 * np.pi * 0.1**3, 1e-14)
    assert [c.name for c in model.collisions] == ["a_geom_0"]
    path.write_text(path.read_text().replace(f"{visual} mass='0'", "type='mesh' mesh='nowhere' mass='0'"))
    with pytest.warns(dp.ModelWarning, match=r"no such mesh file .*nowhere.stl.*geom 'a_geom_2' .*left out of the"):
        model = dp.load_mjcf(path)
    with pytest.raises(dp.ModelError, match="no such mesh file"):
        dp.load_mjcf(path, strict=True)


def test_obj_quads_refpos_refquat_and_merged_compilers_as_in_mujoco(tmp_path):
    """An OBJ's non-planar quad split along its shorter diagonal (tinyobjloader, MuJoCo's reader: the other split
    changes this mesh's volume by 7.5e-4); refpos and refquat move a mesh before its inertia; several <compiler>
    elements (one per included file) merge, later attributes winning."""
    assets = ROOT / "tests" / "data" / "menagerie"
    obj = assets / "google_robot" / "assets" / "link_finger_base_v.obj"
    stl = assets / "wonik_allegro" / "assets" / "link_13.0.stl"
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><compiler angle='degree'/><compiler angle='radian'/><asset>"
                    f"<mesh name='o' file='{obj}'/><mesh name='s' file='{stl}' refpos='0.01 0 0.02' "
                    "refquat='0.9 0.1 0.3 0.2' scale='1 2 1'/></asset><worldbody><body name='a'>"
                    "<joint axis='0 1 0' range='0 1'/><geom type='mesh' mesh='o' density='800'/>"
                    "<body name='b' pos='0 0 0.1'><joint/><geom type='mesh' mesh='s' density='900'/></body></body>"
                    "</worldbody></mujoco>")  # fmt: skip
    model, m = dp.load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))
    assert model.upper_position_limit[0] == 1.0  # radians: the later compiler's angle
    for k in (1, 2):
        assert_close(model.masses[k], m.body_mass[k], 1e-13)
        assert_close(model.coms[k], m.body_ipos[k], 1e-12)
        assert_close(np.linalg.eigvalsh(model.inertias[k]), np.sort(m.body_inertia[k]), 1e-12)


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("<geom type='box' size='0.1 0 0.1'/>", "size must be positive"),
        ("<geom size='0.1'/><replicate count='2'><geom size='0.1'/></replicate>", "<replicate>.*it makes bodies"),
    ],
)
def test_zero_sizes_and_the_elements_that_make_bodies_are_refused(tmp_path, body, match):
    path = tmp_path / "bad.xml"
    path.write_text(f"<mujoco><worldbody><body name='a'><joint/>{body}</body></worldbody></mujoco>")
    with pytest.raises(dp.ModelError, match=match):
        dp.load_mjcf(path)


def _collision_geoms(m) -> list[int]:
    """MuJoCo's geoms that denoc_pin reads as collisions, in order: on a body, touching something, of a shape it
    detects."""
    G = mujoco.mjtGeom
    kinds = {int(k) for k in (G.mjGEOM_SPHERE, G.mjGEOM_CAPSULE, G.mjGEOM_CYLINDER, G.mjGEOM_BOX, G.mjGEOM_MESH)}
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] != 0 and m.geom_type[g] in kinds
            and (m.geom_contype[g] or m.geom_conaffinity[g])]  # fmt: skip


def _assert_collisions_as_mujoco(model, m, rng):
    """Each collision's shape, size, bits, friction and world pose at random states, against MuJoCo's geom: a
    mesh's vertices in the world (MuJoCo recentres a mesh on its inertia frame and moves the geom to match)."""
    geoms = _collision_geoms(m)
    assert len(model.collisions) == len(geoms)
    d, data = mujoco.MjData(m), model.create_data()
    for _ in range(3):
        d.qpos[:] = m.qpos0
        mujoco.mj_integratePos(m, d.qpos, rng.uniform(-1, 1, m.nv), 1.0)
        mujoco.mj_kinematics(m, d)
        q, _ = mujoco_state(model, d.qpos)
        dp.forward_kinematics(model, data, q)
        for c, g in zip(model.collisions, geoms, strict=True):
            if m.geom(g).name:
                assert c.name == m.geom(g).name
            assert (c.group, c.mask) == (m.geom_contype[g], m.geom_conaffinity[g])
            assert c.friction == (0.0 if m.geom_condim[g] == 1 else m.geom_friction[g][0])
            R = data.oR[c.body] @ c.rotation
            p = data.oR[c.body] @ c.translation + data.op[c.body]
            xmat = d.geom_xmat[g].reshape(3, 3)
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
                adr, n = m.mesh_vertadr[m.geom_dataid[g]], m.mesh_vertnum[m.geom_dataid[g]]
                theirs = m.mesh_vert[adr : adr + n].astype(float) @ xmat.T + d.geom_xpos[g]
                ours = c.shape.vertices @ R.T + p
                gap = np.linalg.norm(ours[:, None] - theirs[None], axis=2).min(axis=1)  # each of ours is theirs
                assert gap.max() < 1e-6
                hull = ConvexHull(ours).equations  # and each of theirs is inside our hull: the same hull
                assert (theirs @ hull[:, :3].T + hull[:, 3]).max() < 1e-7
                continue
            assert_close(p, d.geom_xpos[g], 1e-12)
            assert_close(np.asarray(c.shape.params)[: {2: 1, 3: 2, 5: 2, 6: 3}[m.geom_type[g]]],
                         m.geom_size[g][: {2: 1, 3: 2, 5: 2, 6: 3}[m.geom_type[g]]], 1e-12)  # fmt: skip
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
                assert_close(R, xmat, 1e-12)
            elif m.geom_type[g] != mujoco.mjtGeom.mjGEOM_SPHERE:  # turned about its axis, or end for end, a
                z = xmat[:, 2] * np.sign(R[:, 2] @ xmat[:, 2])  # capsule or cylinder is the same shape
                assert_close(R[:, 2], z, 1e-12)


def test_collisions_read_as_mujoco_reads_them(tmp_path):
    """Every geom form of tests/mjcf/collisions.xml (pos, quat, euler, axisangle, zaxis, fromto, a <frame>, a class,
    a mesh by vertices with scale, refpos and refquat) against MuJoCo; the plane and the visual geom are not
    collisions; the default friction and the frictionless condim 1."""
    model = dp.load_mjcf(MJCF / "collisions.xml")
    m = mujoco.MjModel.from_xml_path(str(MJCF / "collisions.xml"))
    assert [c.name for c in model.collisions] == ["hull", "nose", "rail", "axle", "shin", "shoe", "pad"]
    assert [c.friction for c in model.collisions] == [0.7, 1.0, 1.0, 0.0, 1.0, 1.0, 1.2]
    _assert_collisions_as_mujoco(model, m, np.random.default_rng(1))
    stl = ROOT / "tests" / "data" / "menagerie" / "wonik_allegro" / "assets" / "link_12.0_right.stl"
    path = tmp_path / "stl.xml"  # a mesh file, scaled (read at its first use)
    path.write_text(f"<mujoco><asset><mesh name='s' file='{stl}' scale='1 2 -1'/></asset><worldbody><body name='a'>"
                    "<joint axis='0 1 0'/><geom type='mesh' mesh='s' pos='0.1 0 0.2' euler='0.1 0.2 0.3'/></body>"
                    "</worldbody></mujoco>")  # fmt: skip
    model, m = dp.load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))
    assert model.collisions[0].shape._vertices is None
    _assert_collisions_as_mujoco(model, m, np.random.default_rng(1))


@pytest.mark.parametrize("name", ["unitree_go2/go2.xml", "anybotics_anymal_c/anymal_c.xml", "agility_cassie/cassie.xml",
                                  "unitree_h1/h1.xml", "unitree_a1/a1.xml", "boston_dynamics_spot/spot.xml",
                                  "anybotics_anymal_b/anymal_b.xml", "agilex_piper/piper.xml"])  # fmt: skip
def test_menagerie_collisions_as_mujoco_reads_them(name):
    """Menagerie robots' collision primitives against MuJoCo (its file compiled with the mesh geoms taken out:
    their mesh files are not bundled; the mesh path is proven on collisions.xml).  A collision mesh whose file is
    missing, an ellipsoid, a primitive MuJoCo fits to a mesh (piper's) are left out with a warning; anymal_b's geoms
    give a quat over their class's euler, which MuJoCo takes as replacing it."""
    path = ROOT / "tests" / "data" / "menagerie" / name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = dp.load_mjcf(path)
    left_out = [str(w.message) for w in caught if "left out" in str(w.message) and "collision" in str(w.message)]
    spec = mujoco.MjSpec.from_file(str(path))
    for g in list(spec.geoms):  # meshes, and primitives MuJoCo fits to a mesh (left out here, with a warning)
        if g.type == mujoco.mjtGeom.mjGEOM_MESH or g.meshname:
            spec.delete(g)
    for asset in [*spec.meshes, *spec.textures]:
        spec.delete(asset)
    for material in spec.materials:
        material.textures = [""] * len(material.textures)
    m = spec.compile()
    kept = [c for c in model.collisions if not isinstance(c.shape, dp.Mesh)]
    model = dp.Model(**{**model.fields(), "collisions": kept})
    assert len(model.collisions) > 0
    _assert_collisions_as_mujoco(model, m, np.random.default_rng(2))
    ellipsoids = sum(m.geom_type == mujoco.mjtGeom.mjGEOM_ELLIPSOID)
    assert sum("ellipsoid" in s for s in left_out) == ellipsoids
    fitted = sum(bool(g.meshname) and g.type != mujoco.mjtGeom.mjGEOM_MESH and (g.contype or g.conaffinity)
                 for g in mujoco.MjSpec.from_file(str(path)).geoms)  # fmt: skip
    assert sum("fitted to mesh" in s for s in left_out) == fitted
