"""The MJCF compiler's options that change the numbers (``docs/mjcf.md#compiler-and-option``), each against MuJoCo's
compile of the same small file with the option on and off: the mass matrix, the bias forces, the inverse dynamics,
every body's mass and every body's and site's placement at random states (≤ 1e-9)."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
from conftest import assert_close, mujoco_references

import denoc_pin as dp

ARM = """<mujoco model="arm">
  <compiler {compiler}/>
  {option}
  <worldbody>
    <body name="base" pos="0 0 1"><geom type="box" size=".1 .1 .1" mass="3"/></body>
    <body name="upper" pos="0.1 0 0.2" euler="10 20 30">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="box" size=".1 .2 .3" mass="1" pos="0 0 -.1"/>
      <geom type="sphere" size=".1" pos=".2 0 0" group="4" mass="2"/>
      <site name="tool" type="capsule" size=".01" fromto="0 0 0 .1 .2 .3"/>
      <body name="fore" pos="0 0.1 -0.5">
        <joint name="elbow" type="hinge" axis="1 0 0"/>
        <inertial pos="0.05 0 -.1" quat="0.9 0.1 0.3 0.2" mass="{fore_mass}" diaginertia="{fore_inertia}"/>
        <site name="fore" pos="0 0 -.2"/>
        <body name="hand" pos="0 0 -0.3">
          <joint name="wrist" type="slide" axis="0 0 1"/>
          <geom type="capsule" size=".03" fromto="0 0 0 0 .1 -.1" group="2"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def write(tmp_path, name="arm.xml", compiler="", option="", fore_mass="0.5", fore_inertia="0.01 0.02 0.025"):
    path = tmp_path / name
    path.write_text(ARM.format(compiler=compiler, option=option, fore_mass=fore_mass, fore_inertia=fore_inertia))
    return path


def assert_as_mujoco(path, sites=("tool", "fore")):
    """M, the bias, ID, body masses and the bodies' and sites' placements against MuJoCo's compile of ``path``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # MuJoCo's deprecation of settotalmass
        m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    model = dp.load_mjcf(path)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    for name in ("upper", "fore", "hand"):
        k = model.frames[model.frame_id(name, type="body")].body
        assert_close(model.masses[k], m.body(name).mass[0], 1e-12, what=f"{name}'s mass")
    d, data = mujoco.MjData(m), model.create_data()
    rng = np.random.default_rng(5)
    for _ in range(4):
        d.qpos[:] = rng.uniform(-1, 1, m.nq)
        d.qvel[:] = rng.uniform(-1, 1, m.nv)
        d.qacc[:] = rng.uniform(-1, 1, m.nv)
        q, v, a, M = mujoco_references(mujoco, m, d, model)
        assert_close(dp.gim(model, data, q), M, 1e-9, what="M")
        assert_close(dp.nonlinear_effects(model, data, q, v), d.qfrc_bias, 1e-9, what="bias")
        assert_close(dp.inverse_dynamics(model, data, q, v, a), d.qfrc_inverse, 1e-9, what="ID")
        for name in ("upper", "fore", "hand"):
            X = dp.frame_placement(model, data, q, model.frame_id(name, type="body"))
            assert_close(X[:3, 3], d.body(name).xpos, 1e-12, what=f"body {name}")
            assert_close(X[:3, :3], d.body(name).xmat.reshape(3, 3), 1e-12, what=f"body {name}")
        for name in sites:
            X = dp.frame_placement(model, data, q, model.frame_id(name, type="op_frame"))
            assert_close(X[:3, 3], d.site(name).xpos, 1e-12, what=f"site {name}")
            assert_close(X[:3, :3], d.site(name).xmat.reshape(3, 3), 1e-12, what=f"site {name}")
    return model, m


@pytest.mark.parametrize(
    "compiler, fore",
    [
        ("", ("0.5", "0.01 0.02 0.025")),
        ('settotalmass="10"', ("0.5", "0.01 0.02 0.025")),
        ('boundmass="0.7" boundinertia="0.015"', ("0.5", "0.01 0.02 0.025")),
        ('balanceinertia="true"', ("0.5", "0.01 0.01 0.05")),
        ('inertiagrouprange="0 3"', ("0.5", "0.01 0.02 0.025")),
        ('inertiagrouprange="2 5"', ("0.5", "0.01 0.02 0.025")),
        ('balanceinertia="true" boundmass="0.7" settotalmass="4"', ("1e-4", "0.01 0.01 0.05")),
    ],
    ids=[
        "none",
        "settotalmass",
        "boundmass+boundinertia",
        "balanceinertia",
        "inertiagrouprange",
        "inertiagrouprange 2..5",
        "all",
    ],  # fmt: skip
)
def test_the_compilers_mass_options_as_mujoco_applies_them(tmp_path, compiler, fore):
    path = write(tmp_path, compiler=compiler, fore_mass=fore[0], fore_inertia=fore[1])
    model, m = assert_as_mujoco(path)
    if compiler:  # the option changed the numbers: the test can tell it from the file without it
        plain = mujoco.MjModel.from_xml_path(str(write(tmp_path, "plain.xml", fore_mass=fore[0],
                                                       fore_inertia="0.01 0.02 0.025")))  # fmt: skip
        assert not np.allclose(plain.body_mass, m.body_mass) or not np.allclose(plain.body_inertia, m.body_inertia)


def test_gravity_disabled_by_an_option_flag(tmp_path):
    on = dp.load_mjcf(write(tmp_path, "on.xml"))
    path = write(tmp_path, option='<option><flag gravity="disable"/></option>')
    model, m = assert_as_mujoco(path)
    assert np.all(model.gravity == 0.0) and np.all(on.gravity == (0, 0, -9.81))
    with pytest.raises(dp.ModelError, match="expected enable or disable"):
        dp.load_mjcf(write(tmp_path, "bad.xml", option='<option><flag gravity="off"/></option>'))


def test_an_included_mujocoinclude_file_and_a_site_named_like_a_body(tmp_path):
    """Collections split robots into files whose root is <mujocoinclude>, which MuJoCo includes; a site may carry
    a body's name (each kind of element has its own names)."""
    (tmp_path / "leg.xml").write_text(
        '<mujocoinclude><body name="leg" pos="0 0 -.3"><joint name="knee" axis="1 0 0"/>'
        '<geom type="capsule" size=".02" fromto="0 0 0 0 0 -.3"/><site name="upper" pos="0 0 -.3"/></body>'
        "</mujocoinclude>"
    )
    (tmp_path / "main.xml").write_text(
        '<mujoco><worldbody><body name="upper"><joint name="hip" axis="0 1 0"/><geom type="sphere" size=".05"/>'
        '<include file="leg.xml"/></body></worldbody></mujoco>'
    )
    model = dp.load_mjcf(tmp_path / "main.xml")
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "main.xml"))
    d, data = mujoco.MjData(m), model.create_data()
    d.qpos[:] = (0.3, -0.7)
    mujoco.mj_forward(m, d)
    X = dp.frame_placement(model, data, d.qpos, model.frame_id("upper", type="op_frame"))
    assert_close(X[:3, 3], d.site("upper").xpos, 1e-12)
    M = np.zeros((2, 2))
    mujoco.mj_fullM(m, d, M)
    assert_close(dp.gim(model, data, d.qpos), M, 1e-9)
    with pytest.raises(dp.ModelError, match="no <mujoco> element"):
        dp.load_mjcf(tmp_path / "leg.xml")  # the main file itself must be a <mujoco>


CHAIN = """<mujoco><compiler angle="radian"/>
  <worldbody><body name="a"><joint name="a" axis="0 1 0" ref="0.2"/>
    <geom type="capsule" size=".04" fromto="0 0 0 0 0 -.3"/>
    <body name="b" pos="0 0 -.3"><joint name="b" axis="0 1 0" ref="-0.1"/>
      <geom type="capsule" size=".03" fromto="0 0 0 .2 0 -.2"/>
      <body name="c" pos=".2 0 -.2"><joint name="c" axis="1 0 0"/><geom type="box" size=".05 .04 .03"/>
        <body name="d"><joint name="d" type="slide" axis="0 0 1" ref="0.05"/>
          <geom type="sphere" size=".03" pos="0 .1 0"/>
  </body></body></body></body></worldbody>
  <tendon><fixed name="t1"><joint joint="a" coef="2"/></fixed>
    <fixed name="t2"><joint joint="a" coef="1"/><joint joint="b" coef="-1"/></fixed>
    <fixed name="t3"><joint joint="c" coef="0.5"/></fixed>
    <fixed name="t4"><joint joint="b" coef="1"/><joint joint="c" coef="1"/><joint joint="d" coef="1"/></fixed></tendon>
  <equality>{eq}</equality>
</mujoco>"""

EQUALITIES = {
    "joint held": '<joint joint1="b" polycoef="0.3 0 0 0 0"/>',
    "joint pair": '<joint joint1="a" joint2="d" polycoef="0.3 0.7 0 0 0"/>',
    "tendon of one joint held": '<tendon tendon1="t1" polycoef="0.3 0 0 0 0"/>',
    "tendon of two joints": '<tendon tendon1="t2" polycoef="0.1 0 0 0 0"/>',
    "tendon to tendon": '<tendon tendon1="t1" tendon2="t3" polycoef="0.3 -0.7 0 0 0"/>',
}


@pytest.mark.parametrize("case", list(EQUALITIES))
def test_joint_and_fixed_tendon_equalities_as_couplings(tmp_path, case):
    """A joint equality (with and without joint2) and fixed-tendon equalities (a tendon of one joint held, of two
    joints, a tendon against another) become couplings: at a configuration dp.assemble closes, MuJoCo's equality
    residual (efc_pos) is zero; the constrained forward dynamics equals the dense KKT solve of M q̈ = τ − h + Jᵀλ,
    J q̈ = 0 with J MuJoCo's own equality row (efc_J) and M, h MuJoCo's."""
    path = tmp_path / "chain.xml"
    path.write_text(CHAIN.format(eq=EQUALITIES[case]))
    with pytest.warns(dp.ModelWarning, match="left out, beyond the rigid-body dynamics: tendon"):
        model = dp.load_mjcf(path)  # the tendons no equality reads are named
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE  # efc_J as a dense row
    d, data = mujoco.MjData(m), model.create_data()
    assert len(model.couplings) == 1
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = dp.assemble(model, rng.uniform(-0.5, 0.5, model.nq))
        v = rng.uniform(-1, 1, model.nv)
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        assert d.ne == 1 and abs(d.efc_pos[0]) <= 1e-12, d.efc_pos
        J = d.efc_J[: m.nv].reshape(1, m.nv)
        v = v - np.linalg.lstsq(J, J @ v, rcond=None)[0]  # on the constraint's velocity space
        tau = rng.uniform(-1, 1, model.nv)
        a, lam = dp.constrained_forward_dynamics(model, data, q, v, tau)
        M = np.zeros((m.nv, m.nv))
        d.qvel[:] = v
        mujoco.mj_forward(m, d)
        mujoco.mj_fullM(m, d, M)
        K = np.block([[M, J.T], [J, np.zeros((1, 1))]])
        x = np.linalg.solve(K, np.r_[tau - d.qfrc_bias, 0.0])
        assert_close(a, x[: m.nv], 1e-9, what=f"{case}: q̈")
    # the derivatives, as for every coupling: ∂q̈/∂v and ∂q̈/∂τ against central differences
    _, da_dv, da_dtau, *_ = dp.constrained_forward_dynamics_derivatives(model, data, q, v, tau)
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1e-6
        for D, f in ((da_dv, lambda e: dp.constrained_forward_dynamics(model, data, q, v + e, tau)[0]),
                     (da_dtau, lambda e: dp.constrained_forward_dynamics(model, data, q, v, tau + e)[0])):  # fmt: skip
            assert_close(D[:, k], (f(e) - f(-e)) / 2e-6, 1e-6, atol=1e-7, what=f"{case}: column {k}")


def test_an_equality_over_three_joints_is_refused(tmp_path):
    path = tmp_path / "chain.xml"
    path.write_text(CHAIN.format(eq='<tendon tendon1="t4" polycoef="0.1 0 0 0 0"/>'))
    with pytest.raises(dp.ModelError, match=r"relates 3 joints \(b, c, d\); a coupling joins two, or holds one"):
        dp.load_mjcf(path)


def write_msh(path, V, F=None, normals=0):
    """MuJoCo's binary MSH: counts, float32 vertices, normals, texcoords, int32 faces."""
    F = np.zeros((0, 3), dtype=np.int32) if F is None else np.asarray(F, dtype=np.int32)
    head = np.array([len(V), normals, 0, len(F)], dtype="<i4").tobytes()
    path.write_bytes(head + np.asarray(V, dtype="<f4").tobytes() + np.zeros(3 * normals, "<f4").tobytes()
                     + F.astype("<i4").tobytes())  # fmt: skip


@pytest.mark.parametrize("faces", [True, False], ids=["faces", "hull"])
def test_an_msh_mesh_gives_mass_and_collision_as_in_mujoco(tmp_path, faces):
    """A binary MSH mesh (a slanted prism, with its faces or as the hull of its vertices) whose mass a body takes
    from it: mass, centre and inertia as MuJoCo computes them, and its vertices as the collision shape."""
    V = np.array([[0, 0, 0], [0.3, 0, 0], [0, 0.2, 0], [0.05, 0.02, 0.1], [0.35, 0.02, 0.1], [0.05, 0.22, 0.1]])
    F = [[0, 2, 1], [3, 4, 5], [0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4], [2, 0, 3], [2, 3, 5]]
    write_msh(tmp_path / "prism.msh", V, F if faces else None, normals=len(V))
    path = tmp_path / "msh.xml"
    path.write_text('<mujoco><asset><mesh file="prism.msh" scale="1 2 1"/></asset><worldbody><body name="p">'
                    '<joint axis="0 1 0"/><geom type="mesh" mesh="prism"/></body></worldbody></mujoco>')  # fmt: skip
    model = dp.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d, data = mujoco.MjData(m), model.create_data()
    assert_close(model.masses[1], m.body_mass[1], 1e-13)
    assert_close(model.coms[1], m.body_ipos[1], 1e-12)
    assert_close(np.linalg.eigvalsh(model.inertias[1]), np.sort(m.body_inertia[1]), 1e-12)
    d.qpos[:] = 0.4
    mujoco.mj_forward(m, d)
    M = np.zeros((1, 1))
    mujoco.mj_fullM(m, d, M)
    # MuJoCo keeps the principal axes (body_iquat) from an iterative eigen-solve: M to its precision (as for STL)
    assert_close(dp.gim(model, data, d.qpos), M, 1e-7)
    assert_close(dp.nonlinear_effects(model, data, d.qpos, np.zeros(1)), d.qfrc_bias, 1e-9)
    (c,) = model.collisions
    assert_close(np.sort(c.shape.vertices, axis=0), np.sort(V * (1, 2, 1), axis=0), 1e-7)
    write_msh(tmp_path / "prism.msh", V[:3])
    with pytest.raises(dp.ModelError, match="at least 4 vertices"):
        dp.load_mjcf(path)


def test_option_flags_that_take_out_equalities_and_contacts_and_the_medium(tmp_path):
    """<flag equality="disable"> (or constraint) leaves the equalities out as MuJoCo does, <flag contact="disable">
    the collisions; the medium's forces (density, viscosity, wind) are named as left out; a flag that is not
    enable/disable and alignfree are refused by name."""
    path = tmp_path / "chain.xml"
    options = '<option density="1.2"><flag equality="disable" contact="disable"/></option><worldbody>'
    path.write_text(CHAIN.format(eq='<joint joint1="a" joint2="d" polycoef="0.3 0.7 0 0 0"/>').replace(
        "<worldbody>", options, 1))  # fmt: skip
    with pytest.warns(dp.ModelWarning) as record:
        model = dp.load_mjcf(path)
    text = " ".join(str(w.message) for w in record)
    assert "leaves the equality constraints out" in text and "leaves contacts out" in text
    assert "the medium's forces (<option> density)" in text
    assert not model.couplings and not model.collisions
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ne == 0 and d.ncon == 0
    path.write_text(CHAIN.format(eq="").replace("<worldbody>", '<option><flag gravity="off"/></option><worldbody>', 1))
    with pytest.raises(dp.ModelError, match=r"<flag> \(line \d+\): gravity='off': expected enable or disable"):
        dp.load_mjcf(path)
    path.write_text(CHAIN.format(eq="").replace('<compiler angle="radian"/>', '<compiler alignfree="true"/>'))
    with pytest.raises(dp.ModelError, match='alignfree="true" .* is not read'):
        dp.load_mjcf(path)
