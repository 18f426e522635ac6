"""Model edits for structure-varying systems: lock_joints and attach."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.explicit import world_poses
from denoc_pin.tools.validate import compare_with_pinocchio


def kept(model, locked):
    return [k for k in range(1, model.njoints) if model.names[k] not in locked]


def test_locking_a_joint_equals_freezing_it(case):
    """The locked model's GIM is the original's with the locked rows and columns removed, and its
    inverse dynamics equal the original's with zero motion at the locked joints."""
    model, _ = case
    if model.njoints < 3:
        pytest.skip("locking needs a joint to remain")
    for lp in model.loops:  # the GIM and ID are the tree's; locking in a loop may leave it rigid (tested below)
        model = dp.without_loop(model, lp.name)
    rng = np.random.default_rng(5)
    q = dp.random_configuration(model, rng)
    locked = [
        model.names[k] for k in rng.choice(np.arange(1, model.njoints), size=(model.njoints - 1) // 2, replace=False)
    ]
    before = {k: v.copy() for k, v in vars(model).items() if isinstance(v, np.ndarray)}
    edited = dp.lock_joints(model, locked, q)
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
    model = dp.load_urdf(URDF_DIR / "spatial_tree.urdf")
    q = dp.random_configuration(model, 0)
    edited = dp.lock_joints(model, ["finger", "tool_spin"], q)
    assert len(model.modules) == 5 and len(edited.modules) == 1  # what is left is a serial chain
    assert edited.modules[0].joints == ("waist", "shoulder", "arm_slide", "elbow", "wrist")
    assert np.array_equal(dp.connectivity_matrix(edited), np.triu(np.ones((5, 5), dtype=int)))


def test_lock_errors():
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    with pytest.raises(dp.ModelError, match="no joint 'elbow' in model 'gripper'; joints are: joint_1_1"):
        dp.lock_joints(model, ["elbow"], np.zeros(4))
    with pytest.raises(ValueError, match=r"q must have shape \(4,\)"):
        dp.lock_joints(model, ["joint_1_2"], np.zeros(3))


def test_attach_a_branch():
    gripper = dp.load_urdf(URDF_DIR / "gripper.urdf")
    arm = dp.load_urdf(URDF_DIR / "two_link.urdf")
    R = pin.exp3(np.array([0.0, 0.3, 0.0]))
    p = np.array([0.05, 0.0, 0.01])
    both = dp.attach(gripper, "link_2_2", arm, placement=(R, p), prefix="tool_")
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
    assert len(dp.attach(gripper, "link_1_1", arm, prefix="t_").modules) == 4
    failed = [c.algorithm for c in compare_with_pinocchio(both, dp.to_pinocchio(both), samples=2) if not c.passed]
    assert not failed, failed


def test_attach_to_a_link_merged_by_a_fixed_joint():
    tree = dp.load_urdf(URDF_DIR / "spatial_tree.urdf")  # `payload` is fixed to the hand
    both = dp.attach(tree, "payload", dp.load_urdf(URDF_DIR / "two_link.urdf"), prefix="t_")
    k = both.joint_id("t_alpha")
    assert both.parents[k] == both.joint_id("wrist")
    payload = next(f for f in tree.frames if f.name == "payload")
    np.testing.assert_allclose(both.placement_translation[k], payload.translation, atol=1e-15)
    failed = [c.algorithm for c in compare_with_pinocchio(both, dp.to_pinocchio(both), samples=2) if not c.passed]
    assert not failed, failed


def test_attach_errors():
    gripper = dp.load_urdf(URDF_DIR / "gripper.urdf")
    with pytest.raises(dp.ModelError, match="no link 'hand' in model 'gripper'; links are:"):
        dp.attach(gripper, "hand", gripper)
    with pytest.raises(dp.ModelError, match="exists already"):
        dp.attach(gripper, "link_1_3", gripper)  # the same names twice, without a prefix


# ---------------------------------------------------------------------------------------
# Loops and passive joints as edits; events in simulate.
# ---------------------------------------------------------------------------------------

FIVE_BAR = URDF_DIR / "isobe_five_bar.urdf"
FOUR_BAR = URDF_DIR / "four_bar.urdf"


def _without_loop_elements(path, tmp_path):
    """The same URDF with its <loop_joint> elements removed: the open model built from scratch."""
    from lxml import etree

    tree = etree.parse(str(path))
    for element in tree.getroot().findall("loop_joint"):
        element.getparent().remove(element)
    out = tmp_path / path.name
    tree.write(str(out))
    return dp.load_urdf(out)


def test_opening_and_closing_a_loop_equals_building_the_model(tmp_path):
    closed = dp.load_urdf(FOUR_BAR)
    q = dp.assemble(closed, [0.3, 1.0, 1.2], fixed=["crank_joint"])
    v, _ = dp.complete_motion(closed, q, ["crank_joint"], [1.5])
    tau = np.array([0.1, 0.0, 0.0])
    a_before, lam_before = dp.constrained_forward_dynamics(closed, closed.create_data(), q, v, tau)
    opened = dp.without_loop(closed, closed.loops[0].name)
    scratch = _without_loop_elements(FOUR_BAR, tmp_path)
    assert opened.loops == () and closed.n_constraints == 5  # the original still has its loop
    assert str(opened) == str(scratch)
    fd_opened = dp.forward_dynamics(opened, opened.create_data(), q, v, tau)
    assert_close(fd_opened, dp.forward_dynamics(scratch, scratch.create_data(), q, v, tau), rtol=1e-15, what="FD")
    reclosed = dp.with_loop(opened, closed.loops[0])
    a, lam = dp.constrained_forward_dynamics(reclosed, reclosed.create_data(), q, v, tau)
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(lam, lam_before)
    a_again, _ = dp.constrained_forward_dynamics(closed, closed.create_data(), q, v, tau)
    np.testing.assert_array_equal(a_again, a_before)


def test_with_passive_sets_the_default_actuators():
    model = dp.load_urdf(FIVE_BAR)
    q = dp.assemble(model, np.zeros(model.nq))
    v, a = dp.complete_motion(model, q, ["joint1", "joint5"], [0.5, -0.3], [1.0, 2.0])
    data = model.create_data()
    explicit = dp.constrained_inverse_dynamics(model, data, q, v, a, actuated=["joint1", "joint5"])
    edited = dp.with_passive(model, ["joint2", "joint4"])
    assert model.passive == () and edited.passive == ("joint2", "joint4") and "passive joints" in str(edited)
    implicit = dp.constrained_inverse_dynamics(edited, edited.create_data(), q, v, a)
    np.testing.assert_array_equal(implicit[0], explicit[0])
    # the passive set survives other edits, minus the joints they remove
    assert dp.without_loop(edited, "joint3").passive == ("joint2", "joint4")
    assert dp.lock_joints(edited, ["joint4"], q).passive == ("joint2",)


def test_locking_a_loop_joint_keeps_the_mechanism_moving():
    """Locking joint4 of the 2-DOF five-bar leaves a four-bar (1 DOF): its closed-loop dynamics are the
    five-bar's with joint4's motion forced to zero."""
    from denoc_pin.loops import loop_mobility

    model = dp.load_urdf(FIVE_BAR)
    q = dp.assemble(model, np.array([0.2, 0.1, -0.1, 0.0]), fixed=["joint1", "joint5"])
    four = dp.lock_joints(model, ["joint4"], q)
    q4 = q[[0, 1, 2]]
    assert loop_mobility(model, q) == {"joint3": 2} and loop_mobility(four, q4) == {"joint3": 1}
    v, a = dp.complete_motion(four, q4, ["joint1"], [0.7], [0.4])
    tau, _ = dp.constrained_inverse_dynamics(four, four.create_data(), q4, v, a, actuated=["joint1"])
    # the same motion in the five-bar with joint4 still (its velocity and acceleration zero), driven by
    # joint1 and a motor at joint4 that holds it: joint1 needs the same torque
    v5, a5 = np.r_[v, 0.0], np.r_[a, 0.0]
    tau5, _ = dp.constrained_inverse_dynamics(model, model.create_data(), q, v5, a5, actuated=["joint1", "joint4"])
    assert_close(tau[0], tau5[0], rtol=1e-12, what="joint1 torque")


@pytest.mark.parametrize(
    ("edit", "error", "message"),
    [
        (lambda m, q: dp.lock_joints(m, ["nope"], q), dp.ModelError, "no joint 'nope'.*joints are: joint1, joint2"),
        (lambda m, q: dp.lock_joints(m, ["joint4", "joint2"], q), dp.ModelError, "leaves loop 'joint3'.*rigid"),
        (lambda m, q: dp.without_loop(m, "pin"), dp.ModelError, "no loop joint 'pin'; loop joints are: joint3"),
        (lambda m, q: dp.with_loop(m, m.loops[0]), dp.ModelError, "already has a loop joint 'joint3'"),
        (lambda m, q: dp.with_loop(m, "joint3"), dp.ModelError, "needs a dp.LoopJoint"),
        (lambda m, q: dp.with_passive(m, ["joint3"]), dp.ModelError, "passive joint 'joint3' is not in model"),
    ],
)
def test_bad_edits(edit, error, message):
    model = dp.load_urdf(FIVE_BAR)
    q = dp.assemble(model, np.zeros(model.nq))
    with pytest.raises(error, match=message):
        edit(model, q)


@pytest.fixture(scope="module")
def floating():
    """Three bodies floating freely (no gravity): a free-flyer, a revolute and a spherical joint."""
    b = dp.ModelBuilder("floating", gravity=(0, 0, 0))
    inertia = np.diag([0.02, 0.03, 0.04])
    b.add_body(0, joint="free-flyer", mass=1.0, com=[0.1, 0, 0], inertia=inertia, name="base")
    b.add_body("base", joint="revolute", axis=[0, 1, 0.3], placement=(np.eye(3), [0.2, 0, 0]), mass=0.7,
               com=[0.1, 0.02, 0], inertia=inertia, name="j1")  # fmt: skip
    b.add_body("j1", joint="spherical", placement=(np.eye(3), [0.2, 0, 0]), mass=0.5, com=[0.1, 0, 0.03],
               inertia=inertia, name="j2")  # fmt: skip
    return b.build()


def _momentum_about_origin(pm, pd, q, v):
    """Linear and angular momentum about the world origin (Pinocchio's centroidal momentum, moved)."""
    pin.ccrba(pm, pd, q, v)
    h, c = pd.hg, pd.com[0]
    return np.r_[h.linear, h.angular + np.cross(c, h.linear)]


def test_event_driven_locking_conserves_momentum(floating):
    rng = np.random.default_rng(0)
    q0, v0 = dp.random_configuration(floating, rng), rng.uniform(-2, 2, floating.nv)
    events = [(0.2, lambda m, q: dp.lock_joints(m, ["j1"], q)), (0.3, lambda m, q: dp.lock_joints(m, ["j2"], q))]
    traj = dp.simulate(floating, q0, v0, 0.4, dt=1e-3, events=events, progress=False)
    assert traj.q.shape == (401, floating.nq) and np.allclose(traj.t, np.arange(401) * 1e-3)
    pm = dp.to_pinocchio(floating)
    pd = pm.createData()
    h = np.array([_momentum_about_origin(pm, pd, q, v) for q, v in zip(traj.q, traj.v, strict=True)])
    assert np.abs(h - h[0]).max() <= 1e-11 * np.abs(h[0]).max()  # measured 3e-13 relative
    # the locked joints stopped and kept their angles; the impacts took kinetic energy, which the balance counts
    assert np.all(traj.v[200:, 6] == 0) and np.all(traj.q[200:, 7] == traj.q[200, 7])
    assert np.all(traj.v[300:, 7:] == 0)
    assert [e["t"] for e in traj.events] == pytest.approx([0.2, 0.3])
    assert all(e["kinetic_lost"] > 1e-4 for e in traj.events)
    assert traj.energy["impact_loss"][-1] == pytest.approx(sum(e["kinetic_lost"] for e in traj.events))
    E = traj.energy["total"]
    assert np.abs(E - E[0]).max() <= 1e-10 * traj.energy["kinetic"].max()
    assert traj.energy["kinetic"][199] - traj.energy["kinetic"][200] > 1e-4  # the loss shows in the kinetic energy


def test_event_continues_exactly_as_a_run_of_the_edited_model():
    """The segment after an event is the edited model's own simulation from the carried state."""
    from denoc_pin.loaders.edits import transfer_state

    model = dp.load_urdf(FOUR_BAR)
    q0 = dp.assemble(model, [0.3, 1.0, 1.2], fixed=["crank_joint"])
    name = model.loops[0].name
    traj = dp.simulate(model, q0, np.zeros(3), 0.4, dt=1e-3, events=[(0.25, lambda m, q: dp.without_loop(m, name))],
                       progress=False)  # fmt: skip
    before = dp.simulate(model, q0, np.zeros(3), 0.25, dt=1e-3, progress=False)
    np.testing.assert_array_equal(traj.q[:250], before.q[:250])
    opened = dp.without_loop(model, name)
    q, v, lost = transfer_state(model, opened, before.q[-1], before.v[-1])
    assert lost == 0.0  # opening a loop takes no energy
    after = dp.simulate(opened, q, v, 0.15, dt=1e-3, progress=False)
    assert_close(traj.q[250:], after.q, rtol=1e-13, what="q after the event")


def test_closing_a_loop_is_an_inelastic_impact():
    """Closing a loop on a moving open chain: v⁺ satisfies the loop, and the impulse GIM (v⁺ − v) lies in the
    span of Jᵀ (it acts only through the new joint)."""
    from denoc_pin.loaders.edits import transfer_state

    closed = dp.load_urdf(FOUR_BAR)
    opened = dp.without_loop(closed, closed.loops[0].name)
    q = dp.assemble(closed, [0.3, 1.0, 1.2], fixed=["crank_joint"])
    v = np.array([1.0, -0.5, 2.0])
    q_new, v_plus, lost = transfer_state(opened, closed, q, v)
    J = dp.loop_jacobian(closed, q)
    assert np.abs(J @ v).max() > 0.1 and np.abs(J @ v_plus).max() < 1e-12
    impulse = dp.gim(closed, closed.create_data(), q) @ (v_plus - v)
    coef = np.linalg.lstsq(J.T, impulse, rcond=None)[0]
    np.testing.assert_allclose(J.T @ coef, impulse, atol=1e-12)
    assert lost > 0


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([(0.5, lambda m, q: m)], r"needs 0 < t < t_final"),
        ([(0.05, "lock")], "callable edit"),
        ([(0.05, lambda m, q: None)], "returned NoneType"),
        ([(0.05, lambda m, q: dp.attach(m, "tool", dp.models.rope(1), prefix="r_"))], r"adds joints \['r_u1'\]"),
        ([(0.05, lambda m, q: m), (0.0501, lambda m, q: m)], "same step"),
    ],
)
def test_bad_events(events, message):
    model = dp.load_urdf(URDF_DIR / "spatial_tree.urdf")
    with pytest.raises(ValueError, match=message):
        dp.simulate(model, dp.neutral(model), np.zeros(model.nv), 0.1, events=events, progress=False)
