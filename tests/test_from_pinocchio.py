"""A Pinocchio user's idioms on denoc_pin: its data fields, the joint Jacobian, the array forms it accepts, edits by
id, its placements and inertias; each against Pinocchio itself (docs/from-pinocchio.md)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

ATOL = 1e-12


def _pair(name: str):
    path = str(example_robot_urdf(name))
    return dp.load_urdf(path), pin.buildModelFromUrdf(path)


def _floating_pair(name: str):
    path = str(example_robot_urdf(name))
    return dp.load_urdf(path, "free-flyer"), pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())


@pytest.mark.parametrize("name", ["talos_left_arm", "ur5", "solo"])
def test_data_fields_oMi_oMf_v_a_and_joint_jacobians_are_pinocchios(name):
    """data.oMi, data.oMf, data.v, data.a after forward_kinematics, and joint_jacobian in the three references, equal
    Pinocchio's after forwardKinematics / updateFramePlacements / computeJointJacobians, joint by joint."""
    model, pm = _floating_pair(name) if name == "solo" else _pair(name)
    pd, data = pm.createData(), model.create_data()
    rng = np.random.default_rng(3)
    q, v, a = dp.random_configuration(model, rng), rng.standard_normal(pm.nv), rng.standard_normal(pm.nv)
    pin.forwardKinematics(pm, pd, q, v, a)
    pin.updateFramePlacements(pm, pd)
    pin.computeJointJacobians(pm, pd, q)
    dp.forward_kinematics(model, data, q, v, a)
    assert data.oMi.shape == (pm.njoints, 4, 4) and data.oMf.shape == (pm.nframes, 4, 4)
    for i in range(pm.njoints):
        np.testing.assert_allclose(data.oMi[i], pd.oMi[i].homogeneous, atol=ATOL)
        np.testing.assert_allclose(data.v[i], pd.v[i].vector, atol=ATOL)
        np.testing.assert_allclose(data.a[i], pd.a[i].vector, atol=ATOL)
    names = [f.name for f in model.frames]
    for f in range(pm.nframes):  # frames by name: the orders may differ where a loader adds its own
        mine = model.frame_id(pm.frames[f].name, type=None if names.count(pm.frames[f].name) == 1 else "body")
        if names.count(pm.frames[f].name) > 1 and pm.frames[f].type != pin.FrameType.BODY:
            continue
        np.testing.assert_allclose(data.oMf[mine], pd.oMf[f].homogeneous, atol=ATOL)
    for ref in (pin.LOCAL, pin.WORLD, pin.LOCAL_WORLD_ALIGNED):
        for j in range(pm.njoints):
            np.testing.assert_allclose(dp.joint_jacobian(model, data, q, j, ref), pin.getJointJacobian(pm, pd, j, ref),
                                       atol=ATOL)  # fmt: skip
        np.testing.assert_allclose(dp.joint_jacobian(model, data, q, pm.njoints - 1, ref),
                                   pin.computeJointJacobian(pm, pd, q, pm.njoints - 1) if ref == pin.LOCAL
                                   else pin.getJointJacobian(pm, pd, pm.njoints - 1, ref), atol=ATOL)  # fmt: skip
    with pytest.raises(ValueError, match="read-only"):  # the kinematics fill them
        data.oMi[1, 0, 0] = 2.0
    assert not data.oMi.flags.writeable and not data.v.flags.writeable


def test_an_integer_frame_stays_a_frame_and_the_joint_is_asked_by_joint_jacobian():
    """frame_jacobian(…, 6) is frame 6, as pin.computeFrameJacobian(…, 6); joint 6 is joint_jacobian's, by index or
    name; a batch gets a leading B; an index out of range names the valid ones."""
    model, pm = _pair("ur5")
    pd, data = pm.createData(), model.create_data()
    q = pin.neutral(pm) + 0.3
    assert pm.frames[6].name == model.frames[6].name
    np.testing.assert_allclose(dp.frame_jacobian(model, data, q, 6), pin.computeFrameJacobian(pm, pd, q, 6),
                               atol=ATOL)  # fmt: skip
    J6 = pin.computeJointJacobian(pm, pd, q, 6)
    np.testing.assert_allclose(dp.joint_jacobian(model, data, q, 6), J6, atol=ATOL)
    np.testing.assert_allclose(dp.joint_jacobian(model, data, q, pm.names[6]), J6, atol=ATOL)
    assert np.abs(dp.frame_jacobian(model, data, q, 6) - J6).max() > 0.1  # frame 6 is not joint 6 on the ur5
    batch = dp.joint_jacobian(model, data, np.stack([q, q + 0.1]), 6, "world")
    assert batch.shape == (2, 6, 6)
    pin.computeJointJacobians(pm, pd, q + 0.1)
    np.testing.assert_allclose(batch[1], pin.getJointJacobian(pm, pd, 6, pin.WORLD), atol=ATOL)
    with pytest.raises(dp.ModelError, match=r"joint index 7 is out of range .* 0 \(the universe\) … 6"):
        dp.joint_jacobian(model, data, q, 7)
    with pytest.raises(dp.ModelError, match="joints are: shoulder_pan_joint"):
        dp.joint_jacobian(model, data, q, "no_such_joint")


def test_columns_are_one_state_and_a_batch_in_columns_is_told_to_transpose():
    """Pinocchio's (n, 1) columns give what its (n,) vectors give; a batch written as columns (nq, B) is refused
    with 'pass q.T'; a wrong size says the expected and the given size."""
    model, pm = _pair("panda")
    pd, data = pm.createData(), model.create_data()
    rng = np.random.default_rng(0)
    pin.seed(0)
    q = pin.randomConfiguration(pm)[:, None]
    v, a = rng.random((pm.nv, 1)), rng.random((pm.nv, 1))
    tau = dp.inverse_dynamics(model, data, q, v, a)
    assert tau.shape == (pm.nv,)
    np.testing.assert_allclose(tau, pin.rnea(pm, pd, q, v, a), rtol=1e-12, atol=ATOL)
    np.testing.assert_allclose(dp.forward_dynamics(model, data, q, v, a), pin.aba(pm, pd, q, v, a), rtol=1e-12,
                               atol=ATOL)  # fmt: skip
    np.testing.assert_allclose(dp.nonlinear_effects(model, data, q, v), pin.nonLinearEffects(pm, pd, q, v),
                               rtol=1e-12, atol=ATOL)  # fmt: skip
    np.testing.assert_allclose(dp.gim(model, data, q), pin.crba(pm, pd, q), atol=ATOL)
    np.testing.assert_allclose(dp.integrate(model, q, v), pin.integrate(pm, q, v), atol=ATOL)
    np.testing.assert_allclose(dp.difference(model, q, q + 0.1), pin.difference(pm, q, q + 0.1), atol=ATOL)
    np.testing.assert_allclose(dp.frame_jacobian(model, data, q, 5), pin.computeFrameJacobian(pm, pd, q, 5),
                               atol=ATOL)  # fmt: skip
    dp.forward_kinematics(model, data, q, v)
    pin.forwardKinematics(pm, pd, q, v)
    np.testing.assert_allclose(data.v[-1], pd.v[pm.njoints - 1].vector, atol=ATOL)
    Q = np.tile(q, (1, 4))
    V = np.tile(v, (1, 4))
    with pytest.raises(ValueError, match=r"q of shape \(9, 4\) is a batch in columns .* pass q.T"):
        dp.inverse_dynamics(model, data, Q, V, V)
    with pytest.raises(ValueError, match=r"pass q.T"):
        dp.frame_jacobian(model, data, Q, 5)
    with pytest.raises(ValueError, match=r"v of shape \(4, 9\), got \(9, 4\): pass v.T"):
        dp.inverse_dynamics(model, data, Q.T, V, V.T)
    with pytest.raises(ValueError, match=r"expected 9, got 5"):
        dp.inverse_dynamics(model, data, q[:5], v, a)
    with pytest.raises(ValueError, match=r"q must have shape \(9,\) or \(9, 1\), got \(9, 4\).*pass q.T"):
        dp.integrate(model, Q, v)


def test_lock_joints_by_id_keeps_the_frames_names_as_pinocchios_reduced_model():
    """lock_joints by Pinocchio's joint ids (or names, or both) gives buildReducedModel's model: its nq, its frame
    names (the locked joint's frame keeps its name, now a fixed joint), its dynamics."""
    model, pm = _pair("ur5")
    q = pin.neutral(pm) + np.linspace(0.1, 0.6, pm.nq)
    ids = [pm.getJointId("wrist_1_joint"), pm.getJointId("elbow_joint")]
    reduced = pin.buildReducedModel(pm, ids, q)
    for locked in (dp.lock_joints(model, ids, q), dp.lock_joints(model, ["wrist_1_joint", ids[1]], q)):
        assert (locked.nq, locked.nv) == (reduced.nq, reduced.nv)
        assert list(locked.names) == list(reduced.names)
        f = locked.frames[locked.frame_id("wrist_1_joint")]
        assert f.type == "fixed_joint" and reduced.frames[reduced.getFrameId("wrist_1_joint")].type == pin.FIXED_JOINT
        rq = pin.neutral(reduced) + 0.2
        np.testing.assert_allclose(dp.inverse_dynamics(locked, locked.create_data(), rq, rq, rq),
                                   pin.rnea(reduced, reduced.createData(), rq, rq, rq), rtol=1e-12)  # fmt: skip
        pin.framesForwardKinematics(reduced, rd := reduced.createData(), rq)
        np.testing.assert_allclose(dp.frame_placement(locked, locked.create_data(), rq, "tool0"),
                                   rd.oMf[reduced.getFrameId("tool0")].homogeneous, atol=ATOL)  # fmt: skip
    with pytest.raises(dp.ModelError, match="out of range"):
        dp.lock_joints(model, [99], q)
    with pytest.raises(dp.ModelError, match="universe"):
        dp.lock_joints(model, 0, q)


def test_attach_by_frame_id_at_an_se3_is_pinocchios_append_model():
    """attach at a frame index with a pinocchio.SE3 (or its 4 x 4) gives appendModel's dynamics."""
    model, pm = _pair("ur5")
    b = dp.ModelBuilder("tool", base="tool_base")  # a two-finger tool whose names are not the arm's
    pin.seed(2)
    for i in range(2):
        b.add_body("tool_base", "prismatic", axis=(0, 1 - 2 * i, 0), placement=pin.SE3.Random(),
                   inertia=pin.Inertia.Random(), name=f"finger_{i}_joint", link=f"finger_{i}")  # fmt: skip
    tool = b.build()
    S = pin.SE3(pin.utils.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.01, 0.02, 0.1]))
    fid = pm.getFrameId("tool0")
    appended = pin.appendModel(pm, dp.to_pinocchio(tool), fid, S)
    by_id = dp.attach(model, fid, tool, S)
    by_matrix = dp.attach(model, "tool0", tool, S.homogeneous)
    q = pin.neutral(appended) + 0.25
    for m in (by_id, by_matrix):
        assert (m.nq, m.nv) == (appended.nq, appended.nv)
        np.testing.assert_allclose(dp.inverse_dynamics(m, m.create_data(), q, q, q),
                                   pin.rnea(appended, appended.createData(), q, q, q), rtol=1e-12)  # fmt: skip
    with pytest.raises(dp.ModelError, match="attach: placement must be"):
        dp.attach(model, "tool0", tool, np.eye(3))


def test_with_limits_and_a_pinocchio_inertia_in_the_builder():
    """with_limits sets limits in Pinocchio's layout (one number for all, or the vector), refuses a wrong length and
    lower > upper; ModelBuilder takes a pinocchio.Inertia and a pinocchio.SE3, giving Pinocchio's dynamics."""
    model, pm = _pair("ur5")
    limited = dp.with_limits(model, lower=-1.0, velocity=np.arange(1.0, 7.0))
    np.testing.assert_array_equal(limited.lower_position_limit, -np.ones(6))
    np.testing.assert_array_equal(limited.velocity_limit, np.arange(1.0, 7.0))
    np.testing.assert_array_equal(limited.upper_position_limit, model.upper_position_limit)
    np.testing.assert_array_equal(limited.effort_limit, model.effort_limit)
    with pytest.raises(dp.ModelError, match=r"upper_position_limit must be 6 numbers \(not NaN\), got shape \(5,\)"):
        dp.with_limits(model, upper=np.zeros(5))
    with pytest.raises(dp.ModelError, match="lower is above upper at q indices"):
        dp.with_limits(model, lower=4.0)
    with pytest.raises(dp.ModelError, match="non-negative"):
        dp.with_limits(model, effort=-1.0)

    pin.seed(5)
    pmodel = pin.Model()
    b = dp.ModelBuilder("built")
    parent_pin, parent = 0, 0
    for i in range(3):
        inertia, placement = pin.Inertia.Random(), pin.SE3.Random()
        parent_pin = pmodel.addJoint(parent_pin, pin.JointModelRY(), placement, f"j{i}")
        pmodel.appendBodyToJoint(parent_pin, inertia, pin.SE3.Identity())
        parent = b.add_body(parent, "revolute", axis=(0, 1, 0), placement=placement, inertia=inertia, name=f"j{i}")
    built = b.build()
    q = np.array([0.3, -0.4, 0.5])
    np.testing.assert_allclose(dp.inverse_dynamics(built, built.create_data(), q, q, q),
                               pin.rnea(pmodel, pmodel.createData(), q, q, q), rtol=1e-12)  # fmt: skip
    with pytest.raises(dp.ModelError, match="pass mass= and com= or the Inertia, not both"):
        dp.ModelBuilder("x").add_body(0, "revolute", mass=1.0, inertia=pin.Inertia.Random())


@pytest.mark.parametrize("name", ["panda", "solo"])
def test_the_small_calls_fast_path_and_checked_path_are_pinocchios(name):
    """integrate, difference, normalize, neutral on ready arrays (the compiled fast entries) and on lists, columns and
    an int dt (the checked path) equal Pinocchio's; a wrong length or a NaN is refused by name."""
    model, pm = _floating_pair(name) if name == "solo" else _pair(name)
    rng = np.random.default_rng(7)
    q0, q1 = dp.random_configuration(model, rng), dp.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    np.testing.assert_allclose(dp.neutral(model), pin.neutral(pm), atol=0)
    for a, b in ((q0, v), (list(q0), list(v)), (q0[:, None], v[:, None])):
        np.testing.assert_allclose(dp.integrate(model, a, b), pin.integrate(pm, q0, v), atol=ATOL)
        np.testing.assert_allclose(dp.integrate(model, a, b, 2), pin.integrate(pm, q0, 2 * v), atol=ATOL)
    for a, b in ((q0, q1), (list(q0), q1), (q0[:, None], q1)):
        np.testing.assert_allclose(dp.difference(model, a, b), pin.difference(pm, q0, q1), atol=ATOL)
    scaled = q0 * 1.5
    np.testing.assert_allclose(dp.normalize(model, scaled), pin.normalize(pm, scaled), atol=ATOL)
    np.testing.assert_allclose(dp.normalize(model, list(scaled)), pin.normalize(pm, scaled), atol=ATOL)
    n = dp.neutral(model)
    n[0] = 5.0  # a copy each call: the model's own stays
    assert dp.neutral(model)[0] == pin.neutral(pm)[0]
    with pytest.raises(ValueError, match="v must have shape"):
        dp.integrate(model, q0, v[:-1])
    with pytest.raises(ValueError, match=r"q1 has non-finite entries .* \[2\]"):
        dp.difference(model, q0, np.where(np.arange(model.nq) == 2, np.nan, q1))
    with pytest.raises(ValueError, match="dt must be finite"):
        dp.integrate(model, q0, v, np.inf)
    if name == "solo":  # a quaternion of zeros has no direction: refused, not NaN
        with pytest.raises(ValueError, match=r"joint 'root_joint' has its 4 unit entries of q all zero \(q\[3:7\]\)"):
            dp.normalize(model, np.where((np.arange(model.nq) >= 3) & (np.arange(model.nq) < 7), 0.0, q0))


LOADED = """
import sys
import numpy as np
from numba.core.registry import CPUDispatcher
import denoc_pin as dp

def loaded():
    found = set()
    for name, module in list(sys.modules.items()):
        if name.startswith("denoc_pin"):
            for attr, x in vars(module).items():
                if isinstance(x, CPUDispatcher) and x.signatures:
                    found.add(f"{name}.{attr}")
    return found
"""  # the package's compiled kernels a process has loaded
WARMED = (
    LOADED
    + """
model = dp.load_urdf(sys.argv[1], "free-flyer")
dp.warmup(model)
before = loaded()
data = model.create_data()
rng = np.random.default_rng(1)
q, v, a = dp.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
dp.forward_kinematics(model, data, q, v, a)
tau = dp.inverse_dynamics(model, data, q, v, a)
dp.forward_dynamics(model, data, q, v, tau)
dp.nonlinear_effects(model, data, q, v)
dp.gim(model, data, q)
dp.frame_jacobian(model, data, q, "FL_FOOT", "local_world_aligned")
dp.joint_jacobian(model, data, q, 3)
dp.frame_placement(model, data, q, "FL_FOOT")
dp.frame_velocity(model, data, q, v, "FL_FOOT", "world")
dp.center_of_mass(model, data, q)
dp.energy(model, data, q, v)
dp.difference(model, q, dp.integrate(model, q, v, 0.01))
print(sorted(loaded() - before))
"""
)


WARMED_LOOPS = (
    LOADED
    + """
model = dp.models.spatial_four_bar()
q = dp.assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])
dp.warmup(model, derivatives=True, batches=True)
before = loaded()
data = model.create_data()
v, tau = np.zeros(model.nv), np.ones(model.nv)
Q, V, T = np.tile(q, (3, 1)), np.zeros((3, model.nv)), np.ones((3, model.nv))
for x in ((q, v, tau), (Q, V, T)):
    a = dp.forward_dynamics(model, data, *x)
    dp.inverse_dynamics(model, data, x[0], x[1], a)
    dp.inverse_dynamics_derivatives(model, data, x[0], x[1], a)
    dp.forward_dynamics_derivatives(model, data, *x)
    dp.constrained_forward_dynamics(model, data, *x)
    dp.constrained_forward_dynamics_derivatives(model, data, *x)
    dp.frame_jacobian(model, data, x[0], len(model.frames) - 1)
dp.gim(model, data, q)
dp.energy(model, data, q, v)
print(sorted(loaded() - before))
"""
)


@pytest.mark.parametrize("script", ["tree", "loops"])
def test_warmup_loads_every_kernel_the_first_calls_need(script):
    """In a fresh process, after dp.warmup(model) the calls of a control loop load no kernel they did not have: on
    solo's tree, and on a closed mechanism warmed with its derivatives and batches (one state and a batch each)."""
    import subprocess
    import sys

    args = [WARMED, str(example_robot_urdf("solo"))] if script == "tree" else [WARMED_LOOPS]
    out = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_integrate_keeps_pinocchios_quaternion_sign_on_large_turns():
    """A turn beyond π in one integrate: Pinocchio's free-flyer keeps the quaternion in the input's hemisphere and its
    spherical joint does not; denoc_pin gives the same q, not only the same rotation."""
    b = dp.ModelBuilder("two", base="world")
    b.add_body("world", "free-flyer", mass=1.0, inertia=np.eye(3), name="root", link="body")
    b.add_body("body", "spherical", mass=1.0, inertia=np.eye(3), name="ball", link="arm")
    model = b.build()
    pm = dp.to_pinocchio(model)
    rng = np.random.default_rng(11)
    for _ in range(50):
        q, v = dp.random_configuration(model, rng), 3.0 * rng.standard_normal(model.nv)
        np.testing.assert_allclose(dp.integrate(model, q, v), pin.integrate(pm, q, v), atol=ATOL)


def _pinocchio_contacts(closed, pm):
    pd = pm.createData()
    cms = pin.StdVec_RigidConstraintModel(dp.to_pinocchio_constraints(closed, pm))
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pin.initConstraintDynamics(pm, pd, cms, cds)
    return pd, cms, cds


def test_feet_held_by_contact_3d_are_pinocchios_contact_3d_with_its_baumgarte_gains():
    """solo12's four feet held by dp.contact_3d where they stand: q̈ and λ of constrainedDynamics (λ = −Pinocchio's
    λ_c, the foot's reaction on the ground), and Pinocchio's corrector (Kp, Kd) given as it is: its gains' share of
    q̈, off the contact position and velocity, equals Pinocchio's."""
    model, pm = _floating_pair("solo12")
    rng = np.random.default_rng(0)
    q0 = dp.random_configuration(model, rng)
    closed = model
    for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        closed = dp.with_loop(closed, dp.contact_3d(model, foot, q0))
    assert closed.n_constraints == 12 and np.abs(dp.loop_residual(closed, q0)).max() < 1e-15
    pd, cms, cds = _pinocchio_contacts(closed, pm)
    tau = rng.standard_normal(model.nv)
    settings = pin.ProximalSettings(1e-14, 1e-12, 100)

    def pinocchio(q, v, Kp=0.0, Kd=0.0):
        for cm in cms:
            cm.m_baumgarte_parameters.Kp, cm.m_baumgarte_parameters.Kd = Kp, Kd
        return pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, settings).copy(), pd.lambda_c.copy()

    def ours(q, v, Kp=0.0, Kd=0.0):
        gains = pin.BaumgarteCorrectorParameters(Kp, Kd)
        return dp.constrained_forward_dynamics(closed, closed.create_data(), q, v, tau, baumgarte=gains)

    v = 0.3 * rng.standard_normal(model.nv)
    J = dp.loop_jacobian(closed, q0)
    v0 = v - np.linalg.pinv(J) @ (J @ v)  # the feet at rest: Pinocchio's constraint and ours agree
    (a, lam), (pa, plam) = ours(q0, v0), pinocchio(q0, v0)
    np.testing.assert_allclose(a, pa, atol=1e-10 * np.abs(pa).max())
    np.testing.assert_allclose(lam, -plam, atol=1e-10 * np.abs(plam).max())
    q1 = dp.integrate(model, q0, 0.01 * rng.standard_normal(model.nv))  # the feet off their points
    J1 = dp.loop_jacobian(closed, q1)
    v1 = v - np.linalg.pinv(J1) @ (J1 @ v)
    share, pin_share = ours(q1, v1, 40.0)[0] - ours(q1, v1)[0], pinocchio(q1, v1, 40.0)[0] - pinocchio(q1, v1)[0]
    np.testing.assert_allclose(share, pin_share, atol=1e-10 * np.abs(pin_share).max())
    share, pin_share = ours(q0, v, 0.0, 9.0)[0] - ours(q0, v)[0], pinocchio(q0, v, 0.0, 9.0)[0] - pinocchio(q0, v)[0]
    np.testing.assert_allclose(share, pin_share, atol=1e-10 * np.abs(pin_share).max())
    np.testing.assert_allclose(ours(q1, v1, 40.0, 9.0)[0], dp.constrained_forward_dynamics(
        closed, closed.create_data(), q1, v1, tau, baumgarte=(np.sqrt(40.0), 4.5))[0], rtol=1e-15)  # fmt: skip
    with pytest.raises(ValueError, match="non-negative"):
        ours(q0, v, -1.0, 0.0)


def test_a_hand_held_by_contact_6d_is_pinocchios_contact_6d():
    """panda's wrist joint frame held in place by dp.contact_6d (at q, or at a given pin.SE3): the cut closes there,
    and q̈, λ are Pinocchio's CONTACT_6D (λ = −λ_c, angular rows first)."""
    model, pm = _pair("panda")
    rng = np.random.default_rng(4)
    q = dp.random_configuration(model, rng)
    cut = dp.contact_6d(model, "panda_joint7", q)
    assert (cut.type, cut.link1, cut.link2, cut.name) == ("fixed", "panda_link7", "panda_link0", "panda_joint7_contact")
    closed = dp.with_loop(model, cut)
    assert np.abs(dp.loop_residual(closed, q)).max() < 1e-14
    J = dp.loop_jacobian(closed, q)
    v = rng.standard_normal(model.nv)
    v -= np.linalg.pinv(J) @ (J @ v)
    tau = rng.standard_normal(model.nv)
    a, lam = dp.constrained_forward_dynamics(closed, closed.create_data(), q, v, tau)
    pd, cms, cds = _pinocchio_contacts(closed, pm)
    pa = pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, pin.ProximalSettings(1e-14, 1e-12, 100))
    np.testing.assert_allclose(a, pa, atol=1e-10 * np.abs(pa).max())
    np.testing.assert_allclose(lam, -np.r_[pd.lambda_c[3:], pd.lambda_c[:3]], atol=1e-9 * np.abs(lam).max())
    elsewhere = pin.SE3(np.eye(3), np.array([0.3, 0.1, 0.5]))
    moved = dp.with_loop(model, dp.contact_6d(model, "panda_joint7", q, placement=elsewhere, name="hold"))
    held = dp.assemble(moved, q)
    np.testing.assert_allclose(dp.frame_placement(moved, moved.create_data(), held, "panda_joint7"),
                               elsewhere.homogeneous, atol=1e-9)  # fmt: skip
    with pytest.raises(dp.ModelError, match="on the base"):
        dp.contact_3d(model, "panda_link0")


def test_forward_dynamics_under_a_users_constraint_jacobian_is_pinocchios_forward_dynamics():
    """forward_dynamics(…, constraint_jacobian=J, constraint_drift=γ) gives pin.forwardDynamics(…, J, γ)'s q̈ and
    data.lambda_c (the same sign), dependent rows included (minimum-norm λ, unique q̈); a batch and a J of the
    wrong width are refused."""
    model, pm = _floating_pair("solo12")
    pd, data = pm.createData(), model.create_data()
    rng = np.random.default_rng(0)
    q, v, tau = dp.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    pin.computeJointJacobians(pm, pd, q)
    feet = [pm.getFrameId(n) for n in ("FL_FOOT", "FR_FOOT", "HL_FOOT")]
    J = np.vstack([pin.getFrameJacobian(pm, pd, f, pin.LOCAL_WORLD_ALIGNED)[:3] for f in feet])
    gamma = rng.standard_normal(9)
    pa = pin.forwardDynamics(pm, pd, q, v, tau, J, gamma).copy()
    a, lam = dp.forward_dynamics(model, data, q, v, tau, constraint_jacobian=J, constraint_drift=gamma)
    np.testing.assert_allclose(a, pa, atol=1e-11 * np.abs(pa).max())
    np.testing.assert_allclose(lam, pd.lambda_c, atol=1e-11 * np.abs(lam).max())
    np.testing.assert_allclose(J @ a, -gamma, atol=1e-10)
    twice = np.vstack([J, J[:3]])  # a repeated row: q̈ is unchanged, λ split evenly between the copies
    a2, lam2 = dp.forward_dynamics(model, data, q, v, tau, constraint_jacobian=twice, constraint_drift=np.r_[gamma,
                                   gamma[:3]])  # fmt: skip
    np.testing.assert_allclose(a2, pa, atol=1e-9 * np.abs(pa).max())
    np.testing.assert_allclose(lam2[:3] + lam2[9:], lam[:3], atol=1e-9 * np.abs(lam).max())
    with pytest.raises(ValueError, match="one state"):
        dp.forward_dynamics(model, data, np.tile(q, (2, 1)), v, tau, constraint_jacobian=J, constraint_drift=gamma)
    with pytest.raises(ValueError, match=r"constraint_jacobian must be a finite \(m, 18\)"):
        dp.forward_dynamics(model, data, q, v, tau, constraint_jacobian=J[:, :5], constraint_drift=gamma)
    with pytest.raises(ValueError, match="go together"):
        dp.forward_dynamics(model, data, q, v, tau, constraint_jacobian=J)


def test_a_loop_joint_takes_its_placements_as_pinocchio_se3():
    """A LoopJoint's placements given as pin.SE3 (or 4 x 4) resolve to the cut that (R, p) gives."""
    model = dp.models.spatial_four_bar()
    lp = model.loops[0]
    S1, S2 = (pin.SE3(np.asarray(R), np.asarray(p)) for R, p in (lp.placement1, lp.placement2))
    for p1, p2 in ((S1, S2), (S1.homogeneous, S2.homogeneous)):
        again = dp.with_loop(dp.without_loop(model, lp.name), dp.LoopJoint(lp.name, lp.type, lp.link1, lp.link2, p1, p2,
                                                                           lp.axis, lp.axis2))  # fmt: skip
        q = dp.random_configuration(model, np.random.default_rng(2))
        np.testing.assert_array_equal(dp.loop_residual(again, q), dp.loop_residual(model, q))
    with pytest.raises(dp.ModelError, match="placement of link1 must be"):
        dp.with_loop(dp.without_loop(model, lp.name), dp.LoopJoint(lp.name, lp.type, lp.link1, lp.link2, np.eye(3)))
