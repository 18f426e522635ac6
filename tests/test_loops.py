"""Closed loops (loops.py): cut joints against Pinocchio's constraintDynamics, a dense KKT
reference built from the explicit DeNOC matrices, and Schiehlen's closed form (eq. 18–25)."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import LOOP_ROUTES, ROOT, URDF_DIR, assert_close, loop_data

import denoc_pin as dp
from denoc_pin.algorithms.configuration import integrate
from denoc_pin.algorithms.explicit import world_poses
from denoc_pin.core.layout import LW_ND, factor_cost
from denoc_pin.tools.validate import compare_loops
from denoc_pin.tools.validate import reference_constrained_dynamics as kkt_reference
from denoc_pin.tools.validate import reference_loop_bias as reference_bias
from denoc_pin.tools.validate import reference_loop_jacobian as reference_jacobian


def pinocchio_constrained(model, q, v, tau):
    from denoc_pin.tools.validate import pinocchio_constrained_dynamics

    return pinocchio_constrained_dynamics(model, dp.to_pinocchio(model), q, v, tau)


URDF = URDF_DIR


def _rotation(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def closed_random_tree(seed: int, types, n: int = 7, joints=("revolute", "prismatic", "spherical", "universal")):
    """A seeded depth-first random tree closed by cut joints of ``types`` between random bodies, each
    placed so that the loops are closed at the returned q0 (C2 put where C1 is at q0).  Pairs of
    bodies are redrawn until the constraints are independent (rank J = number of constraints)."""
    rng = np.random.default_rng(seed)
    for _ in range(50):
        model, q0 = _closed_random_tree(int(rng.integers(1 << 30)), types, n, joints)
        J = dp.loop_jacobian(model, q0)
        if np.linalg.matrix_rank(J) == J.shape[0]:
            return model, q0
    raise AssertionError("no independent set of cuts found")


def _closed_random_tree(seed: int, types, n: int, joints):
    rng = np.random.default_rng(seed)
    b = dp.ModelBuilder(f"closed_{seed}")
    parents = [0]
    for k in range(1, n + 1):
        chain = [k - 1]
        while chain[-1] > 0:
            chain.append(parents[chain[-1]])
        parent = int(rng.choice(chain))
        parents.append(parent)
        joint = str(rng.choice(joints))
        if joint == "universal":
            e1 = rng.standard_normal(3)
            e2 = np.cross(e1, rng.standard_normal(3))
            axis = (e1 / np.linalg.norm(e1), e2 / np.linalg.norm(e2))
        else:
            axis = rng.standard_normal(3)
        A = rng.standard_normal((3, 3))
        b.add_body(parent, joint=joint, axis=axis, placement=(_rotation(rng), rng.normal(size=3) * 0.3),
                   mass=rng.uniform(0.5, 2.0), com=rng.normal(size=3) * 0.1, inertia=0.05 * (A @ A.T + 0.1 * np.eye(3)),
                   name=f"j{k}", link=f"l{k}")  # fmt: skip
    tree = b.build()
    q0 = dp.random_configuration(tree, rng)
    R, o, _, _ = world_poses(tree, q0)
    for i, kind in enumerate(types):
        k1, k2 = sorted(int(x) for x in rng.choice(tree.njoints, 2, replace=False))
        R1, p1 = _rotation(rng), rng.normal(size=3) * 0.2
        Rc, pc = R[k1] @ R1, o[k1] + R[k1] @ p1
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        axis2 = None
        if kind == "universal":  # axis2 in C2, ⟂ axis; C2 = C1 at q0
            axis2 = np.cross(axis, rng.standard_normal(3))
        b.add_loop(f"cut{i}", kind, tree.link_names[k1], tree.link_names[k2], (R1, p1),
                   (R[k2].T @ Rc, R[k2].T @ (pc - o[k2])), axis=axis, axis2=axis2)  # fmt: skip
    return b.build(), q0


def consistent_velocity(model, q, rng) -> np.ndarray:
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    return v - np.linalg.pinv(J) @ (J @ v)


# ----------------------------------------------------------------------------------------
# Against Pinocchio: spherical cuts are CONTACT_3D, fixed cuts CONTACT_6D.
# ----------------------------------------------------------------------------------------


spatial_four_bar = dp.models.spatial_four_bar


def test_spatial_four_bar_matches_pinocchio_contact_3d():
    model = spatial_four_bar()
    q = dp.assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8] / np.r_[1, 1, 1, 1, 1, 1], fixed=["crank"])
    assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
    J = dp.loop_jacobian(model, q)
    assert np.linalg.matrix_rank(J) == 3  # independent constraints: λ is unique
    data = model.create_data()
    rng = np.random.default_rng(0)
    for _ in range(3):
        v, tau = consistent_velocity(model, q, rng), rng.uniform(-2, 2, model.nv)
        a, lam = dp.constrained_forward_dynamics(model, data, q, v, tau)
        a_ref, lam_ref = pinocchio_constrained(model, q, v, tau)
        assert_close(a, a_ref, rtol=1e-8, what="accelerations")
        assert_close(lam, lam_ref, rtol=1e-8, what="reactions")


@pytest.mark.parametrize("seed", range(6))
def test_branched_two_loops_match_pinocchio(seed):
    """A branched random tree with a spherical and a fixed cut (3 + 6 constraints, independent)."""
    model, q = closed_random_tree(seed, ["spherical", "fixed"], n=9, joints=("spherical", "revolute", "spherical"))
    J = dp.loop_jacobian(model, q)
    assert np.linalg.matrix_rank(J) == 9, "the test needs independent constraints (unique λ)"
    assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
    data = model.create_data()
    rng = np.random.default_rng(seed)
    v, tau = consistent_velocity(model, q, rng), rng.uniform(-2, 2, model.nv)
    a, lam = dp.constrained_forward_dynamics(model, data, q, v, tau)
    a_ref, lam_ref = pinocchio_constrained(model, q, v, tau)
    assert_close(a, a_ref, rtol=1e-8, what="accelerations")
    assert_close(lam, lam_ref, rtol=1e-8, what="reactions")


def test_revolute_cut_matches_pinocchio_two_point_contacts():
    """A revolute cut blocks what two ball joints on its axis block: Pinocchio with two CONTACT_3D
    (rank-deficient, 6 rows for 5 constraints) gives the same accelerations."""
    model = dp.load_urdf(URDF / "four_bar.urdf")
    q = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    rng = np.random.default_rng(3)
    v, tau = consistent_velocity(model, q, rng), rng.uniform(-1, 1, model.nv)
    a, _ = dp.constrained_forward_dynamics(model, model.create_data(), q, v, tau)
    pm = dp.to_pinocchio(model)
    pd = pm.createData()
    cut = model.cuts[0]
    cms = []
    for s in (-0.1, 0.1):  # two points on the pin's axis (y)
        off = cut.axis * s
        c1, c2 = pin.SE3(cut.R1, cut.p1 + cut.R1 @ off), pin.SE3(cut.R2, cut.p2 + cut.R2 @ off)
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, int(cut.body1), c1, int(cut.body2), c2,
                                            pin.ReferenceFrame.LOCAL))  # fmt: skip
    cds = [c.createData() for c in cms]
    pin.initConstraintDynamics(pm, pd, cms, cds)
    a_ref = pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, pin.ProximalSettings(1e-14, 1e-8, 1000))
    assert_close(a, a_ref, rtol=1e-8, what="accelerations")


def test_validate_checks_loops_against_pinocchio_and_the_dense_reference():
    model = spatial_four_bar()
    checks = compare_loops(model, dp.to_pinocchio(model), samples=4)
    names = {(c.algorithm, c.reference) for c in checks}
    assert ("constrained_fd q̈", "constraintDynamics") in names and (
        "constrained_fd λ",
        "dense KKT (denoc_matrices)",
    ) in names
    assert all(c.passed for c in checks), checks


# ----------------------------------------------------------------------------------------
# Every cut type against a dense reference: GIM and h from the explicit DeNOC matrices
# (eq. 3–13, world frame), J from their twist map N, J̇ q̇ by differentiating J, then a KKT solve.
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", LOOP_ROUTES)
@pytest.mark.parametrize("kind", list(dp.LOOP_TYPES))
@pytest.mark.parametrize("seed", range(3))
def test_every_cut_type_matches_dense_kkt(kind, seed, route):
    model, q = closed_random_tree(10 + seed, [kind, "spherical"], n=8)
    assert model.create_data().lw[LW_ND] == model.nv, "these trees take the factor by default"
    rng = np.random.default_rng(seed)
    q = integrate(model, q, rng.uniform(-1, 1, model.nv) * 1e-3)  # slightly open: Baumgarte terms matter
    J = dp.loop_jacobian(model, q)
    assert np.linalg.matrix_rank(J) == J.shape[0], "the test needs independent constraints"
    assert_close(J, reference_jacobian(model, q), rtol=1e-12, what="J")
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    a, lam = dp.constrained_forward_dynamics(model, loop_data(model, route), q, v, tau, baumgarte=(5.0, 3.0))
    a_ref, lam_ref = kkt_reference(model, q, v, tau, baumgarte=(5.0, 3.0))
    assert_close(a, a_ref, rtol=1e-8, what=f"{kind}: accelerations")
    assert_close(lam, lam_ref, rtol=1e-8, what=f"{kind}: reactions")


def test_the_route_is_the_factor_where_it_pays():
    """A closed model's Data holds room for the GIM's factor where ``layout.factor_pays`` (Σ d² ≤ 16 × rows × nv, up
    to LOOP_FACTOR_DOF): the four-bar (Σ d² = 31 for 5 DOF, 3 rows) and a chain of 8 closed by a ball joint (204), not
    one of 24 (4,900 > 16 × 3 × 24) nor of 49 (above LOOP_FACTOR_DOF).  On the long chain both routes give the
    dense KKT solve's q̈ and λ, the factor's too."""
    four_bar = dp.models.spatial_four_bar()
    assert factor_cost(four_bar.dof_parent) == 31 and four_bar.create_data().lw[LW_ND] == 5
    for n, nd in ((8, 8), (24, 0), (49, 0)):
        chain = dp.models.chain(n)
        names = chain.link_names
        closed = dp.with_loop(chain, dp.LoopJoint("ball", "spherical", names[1], names[-1]))
        assert closed.create_data().lw[LW_ND] == nd, n
        assert factor_cost(closed.dof_parent) == n * (n + 1) * (2 * n + 1) // 6
    rng = np.random.default_rng(3)
    q = dp.random_configuration(closed, rng)
    v, tau = rng.uniform(-1, 1, (2, closed.nv))
    a_ref, lam_ref = kkt_reference(closed, q, v, tau, baumgarte=(5.0, 3.0))
    for route in LOOP_ROUTES:
        a, lam = dp.constrained_forward_dynamics(closed, loop_data(closed, route), q, v, tau, baumgarte=(5.0, 3.0))
        assert_close(a, a_ref, rtol=1e-8, what=f"chain of 49, {route}: accelerations")
        assert_close(lam, lam_ref, rtol=1e-8, what=f"chain of 49, {route}: reactions")


@pytest.mark.parametrize("kind", list(dp.LOOP_TYPES))
def test_residual_rate_is_the_jacobian_on_the_manifold(kind):
    """ṙ = J q̇ where the loops are closed, so that Baumgarte's r̈ + 2 kd ṙ + kp² r = 0 is consistent."""
    model, q = closed_random_tree(20, [kind], n=8)
    assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
    v = np.random.default_rng(1).uniform(-1, 1, model.nv)
    h = 1e-4
    rdot = dp.loop_residual(model, integrate(model, q, v, h)) - dp.loop_residual(model, integrate(model, q, v, -h))
    assert_close(rdot / (2 * h), dp.loop_jacobian(model, q) @ v, rtol=1e-7, what="dr/dt vs J v")


def test_reactions_are_forces_on_link2_in_c1():
    """λ of a fixed cut at rest under gravity: a body on a vertical slider (under a revolute about z)
    welded to the ground.  The weld must hold the weight along the slider (+z force on link2); the
    moment of the weight is carried by the joints' bearings, so the minimum-norm λ puts none in the weld."""
    b = dp.ModelBuilder("weld")
    b.add_body(0, "revolute", axis=(0, 0, 1), mass=0.0, name="j1", link="a")
    b.add_body("a", "prismatic", axis=(0, 0, 1), mass=2.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2, name="j2",
               link="b")  # fmt: skip
    b.add_loop("weld", "fixed", "universe", "b")
    model = b.build()
    q = np.zeros(model.nq)
    a, lam = dp.constrained_forward_dynamics(model, model.create_data(), q, np.zeros(2), np.zeros(2))
    assert_close(a, np.zeros(2), atol=1e-12, what="at rest")
    assert_close(lam, [0, 0, 0, 0, 0, 2.0 * 9.81], what="reaction [n; f] on link2")


# ----------------------------------------------------------------------------------------
# Planar mechanisms in 3-D: redundant constraints, minimum-norm reactions.
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, guess, fixed",
    [("four_bar", [0.3, 1.0, 1.2], "crank_joint"), ("slider_crank", [0.3, -0.4, 0.1], "crank_joint")],
)
@pytest.mark.parametrize("route", LOOP_ROUTES)
def test_planar_mechanisms_rank_deficient(name, guess, fixed, route):
    model = dp.load_urdf(URDF / f"{name}.urdf")
    q = dp.assemble(model, np.array(guess), fixed=[fixed])
    assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
    J = dp.loop_jacobian(model, q)
    assert np.linalg.matrix_rank(J) == 2 < J.shape[0]
    rng = np.random.default_rng(5)
    v, tau = consistent_velocity(model, q, rng), rng.uniform(-1, 1, model.nv)
    a, lam = dp.constrained_forward_dynamics(model, loop_data(model, route), q, v, tau)
    # reference: the same KKT system, solved by least squares (the accelerations are unique)
    dm = dp.denoc_matrices(model, q, v)
    Jr, m = reference_jacobian(model, q), J.shape[0]
    K = np.block([[dm.gim, -Jr.T], [Jr, np.zeros((m, m))]])
    x = np.linalg.lstsq(K, np.r_[tau - dm.mci @ v - dm.gravity, -reference_bias(model, q, v)], rcond=1e-12)[0]
    assert_close(a, x[: model.nv], rtol=1e-8, what="accelerations")
    # minimum norm: λ has no component in the null space of Jᵀ (the redundant directions)
    _, s, Vt = np.linalg.svd(J.T)
    null = Vt[np.sum(s > 1e-10 * s[0]) :]
    assert np.abs(null @ lam).max() <= 1e-10 * np.abs(lam).max()
    assert_close(dm.gim @ a + dm.mci @ v + dm.gravity, tau + J.T @ lam, rtol=1e-9, what="equations of motion")


# ----------------------------------------------------------------------------------------
# Schiehlen's two-body robot, closed (section 5, eq. 18–25).
# ----------------------------------------------------------------------------------------


def test_two_link_closed_matches_schiehlen_closed_form():
    """Absolute angles α, β = α + δ: diag(I, I₂) ÿ = Q + Gᵀ F (eq. 23–24), closing condition
    φ = R cos α + L cos β = 0 with G = ∂φ/∂y, and the generalized closing reaction
    F = (γ − G M⁻¹ Q) / (G M⁻¹ Gᵀ) (eq. 20/25; the paper's angles are measured from the other axis,
    hence its cos ↔ sin).  Values of two_link.urdf: R = 0.5, L = 0.4, m1 = 2, m2 = 1."""
    model = dp.load_urdf(URDF / "two_link_closed.urdf")
    R, L, m1, m2, g = 0.5, 0.4, 2.0, 1.0, 9.81
    I1 = m1 * 0.25**2 + 0.04171666667  # body 1 about the ground pin
    I2 = 0.05335833333  # body 2 about its centre of mass C2
    Ia = I1 + m2 * R**2
    for alpha, alpha_dot, M1 in ((1.0, 1.3, 0.7), (1.4, -0.6, -2.0), (2.2, 2.0, 0.0)):
        q = dp.assemble(model, np.array([alpha, 2.0 if alpha < 2 else 1.0]), fixed=["alpha"])
        al, be = q[0], q[0] + q[1]
        assert abs(R * np.cos(al) + L * np.cos(be)) <= 1e-12
        be_dot = -R * np.sin(al) * alpha_dot / (L * np.sin(be))
        v = np.array([alpha_dot, be_dot - alpha_dot])
        a, lam = dp.constrained_forward_dynamics(model, model.create_data(), q, v, np.array([M1, 0.0]))
        Q = np.array([M1 + (m1 * R / 2 + m2 * R) * g * np.cos(al), 0.0])
        G = np.array([-R * np.sin(al), -L * np.sin(be)])
        gamma = R * np.cos(al) * alpha_dot**2 + L * np.cos(be) * be_dot**2  # −Ġ ẏ
        Minv = np.diag([1 / Ia, 1 / I2])
        F = (gamma - G @ Minv @ Q) / (G @ Minv @ G)
        y = Minv @ (Q + G * F)
        assert_close(a, [y[0], y[1] - y[0]], rtol=1e-9, what="accelerations")
        # λ = (F_x, F_y): the slot's force on the pin along C1's b₁ = x; the out-of-plane row is idle
        assert_close(lam, [F, 0.0], rtol=1e-9, what="closing reaction F")


# ----------------------------------------------------------------------------------------
# Inverse dynamics of closed loops.
# ----------------------------------------------------------------------------------------


def closed_accelerations(model, q, v, rng):
    tau = rng.uniform(-1, 1, model.nv)
    return dp.constrained_forward_dynamics(model, model.create_data(), q, v, tau)[0]


@pytest.mark.parametrize(
    "name, guess, actuated",
    [
        ("four_bar", [0.3, 1.0, 1.2], ["crank_joint"]),
        ("four_bar", [0.3, 1.0, 1.2], ["rocker_joint"]),
        ("slider_crank", [0.3, -0.4, 0.1], ["crank_joint"]),
        ("two_link_closed", [1.0, 2.0], ["alpha"]),
    ],
)
def test_inverse_dynamics_round_trip(name, guess, actuated):
    model = dp.load_urdf(URDF / f"{name}.urdf")
    q = dp.assemble(model, np.array(guess), fixed=[model.names[1]])
    rng = np.random.default_rng(8)
    data = model.create_data()
    for _ in range(3):
        v = consistent_velocity(model, q, rng)
        a = closed_accelerations(model, q, v, rng)
        tau, lam = dp.constrained_inverse_dynamics(model, data, q, v, a, actuated=actuated)
        passive = [k for k in range(1, model.njoints) if model.names[k] not in actuated]
        assert all(tau[model.idx_v[k]] == 0.0 for k in passive), "passive joints get exactly zero torque"
        a_fd, lam_fd = dp.constrained_forward_dynamics(model, data, q, v, tau)
        assert_close(a_fd, a, rtol=1e-9, what="FD(ID(a))")
        assert_close(lam_fd, lam, rtol=1e-8, what="reactions")


def test_inverse_dynamics_of_a_spatial_loop_with_pinocchio_forward():
    model = spatial_four_bar()
    q = dp.assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])
    rng = np.random.default_rng(2)
    v = consistent_velocity(model, q, rng)
    a = closed_accelerations(model, q, v, rng)
    # two actuators: the crank, and the coupler's spin about its own axis is driven by the ball's x
    tau, lam = dp.constrained_inverse_dynamics(model, model.create_data(), q, v, a, actuated=["crank", "coupler_joint"])
    a_ref, lam_ref = pinocchio_constrained(model, q, v, tau)
    assert_close(a_ref, a, rtol=1e-8, what="Pinocchio's FD of our ID")
    assert_close(lam, lam_ref, rtol=1e-8, what="reactions")


def test_inverse_dynamics_singular_and_bad_input():
    model = dp.load_urdf(URDF / "four_bar.urdf")
    q = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    rng = np.random.default_rng(4)
    v = consistent_velocity(model, q, rng)
    a = closed_accelerations(model, q, v, rng)
    data = model.create_data()
    with pytest.raises(dp.SingularConfigurationError, match="cannot produce"):
        dp.constrained_inverse_dynamics(model, data, q, v, a, actuated=[])
    with pytest.raises(ValueError, match="violates the loop constraints"):
        dp.constrained_inverse_dynamics(model, data, q, v, a + 1.0, actuated=["crank_joint"])
    with pytest.raises(ValueError, match="takes one state: q must be 1-D, got shape"):
        dp.constrained_inverse_dynamics(model, data, q[None], v, a, actuated=["crank_joint"])
    with pytest.raises(ValueError, match=r"tau must have shape \(3,\)"):
        dp.constrained_forward_dynamics(model, data, q, v, np.zeros(2))
    with pytest.raises(ValueError, match="baumgarte gains must be finite"):
        dp.constrained_forward_dynamics(model, data, q, v, np.zeros(3), baumgarte=(-1, 0))
    with pytest.raises(ValueError, match="baumgarte gains must be finite"):
        dp.constrained_forward_dynamics(model, data, q, v, np.zeros(3), baumgarte=(np.inf, 0.0))
    with pytest.raises(ValueError, match="rcond must be a finite non-negative number"):
        dp.constrained_forward_dynamics(model, data, q, v, np.zeros(3), rcond=-1.0)
    with pytest.raises(ValueError, match=r"v has non-finite entries \(NaN or inf\) at indices \[1\]"):
        dp.constrained_forward_dynamics(model, data, q, np.array([0.0, np.nan, 0.0]), np.zeros(3))
    with pytest.raises(ValueError, match=r"a batch of 2 states needs v of shape \(2, 3\)"):
        dp.constrained_forward_dynamics(model, data, np.stack([q, q]), v, np.zeros((2, 3)))
    with pytest.raises(dp.ModelError, match="joints are: crank_joint, coupler_joint, rocker_joint"):
        dp.constrained_inverse_dynamics(model, data, q, v, a, actuated=["motor"])
    # toggle position: crank and coupler in line, the rocker at the end of its swing; there the rocker
    # cannot drive the crank (its rate is zero for any crank rate)
    q_t = dp.assemble(model, np.array([0.3, 0.0, 1.2]), fixed=["coupler_joint"])
    assert np.abs(dp.loop_residual(model, q_t)).max() <= 1e-12 and q_t[1] == 0.0
    v_t = consistent_velocity(model, q_t, rng)
    a_t = closed_accelerations(model, q_t, v_t, rng)
    dp.constrained_inverse_dynamics(model, data, q_t, v_t, a_t, actuated=["crank_joint"])  # the crank can
    with pytest.raises(dp.SingularConfigurationError):
        dp.constrained_inverse_dynamics(model, data, q_t, v_t, a_t, actuated=["rocker_joint"])


# ----------------------------------------------------------------------------------------
# Assembly, declarations, simulation.
# ----------------------------------------------------------------------------------------


def test_assemble_closes_a_perturbed_four_bar_and_refuses_the_impossible():
    model = dp.load_urdf(URDF / "four_bar.urdf")
    q = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    rng = np.random.default_rng(0)
    for _ in range(5):
        q_bad = q + rng.normal(scale=0.1, size=3)
        q_new = dp.assemble(model, q_bad, fixed=["crank_joint"])
        assert np.abs(dp.loop_residual(model, q_new)).max() <= 1e-12
        assert q_new[0] == q_bad[0]  # the fixed joint stays where it was put
    b = dp.ModelBuilder("short")  # two 0.1 m arms 1 m apart: they cannot meet
    b.add_body(0, "revolute", axis=(0, 1, 0), mass=1, com=(0.05, 0, 0), inertia=np.eye(3) * 1e-3, name="a", link="a")
    b.add_body(0, "revolute", axis=(0, 1, 0), placement=(np.eye(3), (1, 0, 0)), mass=1, com=(0.05, 0, 0),
               inertia=np.eye(3) * 1e-3, name="b", link="b")  # fmt: skip
    b.add_loop("pin", "revolute", "a", "b", (np.eye(3), (0.1, 0, 0)), (np.eye(3), (0.1, 0, 0)), axis=(0, 1, 0))
    with pytest.raises(dp.AssemblyError, match="residual stalls"):
        dp.assemble(b.build(), np.zeros(2))


def test_urdf_loop_joints_are_read_and_bad_ones_refused(tmp_path):
    model = dp.load_urdf(URDF / "four_bar.urdf")
    (lp,) = model.loops
    assert (lp.name, lp.type, lp.link1, lp.link2, lp.n_constraints) == ("pin_B", "revolute", "coupler", "rocker", 5)
    assert_close(lp.placement1[1], [0.5, 0, 0])
    assert_close(lp.axis, [0, 1, 0])
    assert model.n_constraints == 5 and "1 loops" in repr(model)
    text = (URDF / "four_bar.urdf").read_text()
    for old, new, match in [
        ('link="rocker" xyz="0.45', 'link="nope" xyz="0.45', "unknown link 'nope'; links are: "),
        ('type="revolute">\n    <link1', 'type="hinge">\n    <link1', "unknown type 'hinge'; loop joint types are"),
        ('<axis xyz="0 1 0"/>\n  </loop_joint>', '<axis xyz="0 0 0"/>\n  </loop_joint>', "zero-length <axis>"),
        ('<link2 link="rocker" xyz="0.45 0 0" rpy="0 0 0"/>', "", "has no <link2"),
        ('xyz="0.45 0 0" rpy="0 0 0"/>\n    <axis', 'xyz="0.45 0 x" rpy="0 0 0"/>\n    <axis', "not 3 finite"),
        ('link="rocker" xyz="0.45', 'link="coupler" xyz="0.45', "rigidly connected"),
    ]:
        assert old in text, old
        path = tmp_path / "bad.urdf"
        path.write_text(text.replace(old, new))
        with pytest.raises(dp.ModelError, match=match) as e:
            dp.load_urdf(path)
        assert str(path) in str(e.value)


def test_loops_survive_structure_edits():
    model = dp.load_urdf(URDF / "isobe_five_bar.urdf")  # 2 DOF: locking one joint leaves the loop mobile
    locked = dp.lock_joints(model, ["joint4"], dp.assemble(model, np.zeros(4)))
    assert [lp.name for lp in locked.loops] == ["joint3"]
    four_bar = dp.load_urdf(URDF / "four_bar.urdf")  # 1 DOF: the same edit would leave it rigid
    with pytest.raises(dp.ModelError, match="leaves loop 'pin_B'.*rigid"):
        dp.lock_joints(four_bar, ["crank_joint"], dp.assemble(four_bar, [0.3, 1.0, 1.2], fixed=["crank_joint"]))
    tree = dp.load_urdf(URDF / "two_link.urdf")
    assert dp.loop_residual(tree, np.zeros(2)).shape == (0,) and dp.loop_jacobian(tree, np.zeros(2)).shape == (0, 2)
    with pytest.raises(dp.ModelError, match="no loop joints"):
        dp.constrained_forward_dynamics(tree, tree.create_data(), np.zeros(2), np.zeros(2), np.zeros(2))


def test_four_bar_simulation_keeps_the_loop_closed_and_conserves_energy():
    """10 s, no actuation, no damping, Baumgarte (50, 50): ‖r‖ ≤ 1e-8 and total energy to rel 1e-6."""
    model = dp.load_urdf(URDF / "four_bar.urdf")
    q0 = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    J = dp.loop_jacobian(model, q0)
    v0 = np.array([3.0, 0.0, 0.0])
    v0 = v0 - np.linalg.pinv(J) @ (J @ v0)
    traj = dp.simulate(model, q0, v0, 10.0, dt=2e-3, progress=False)
    residual = max(np.abs(dp.loop_residual(model, q)).max() for q in traj.q[::5])
    assert residual <= 1e-8
    E = traj.energy["total"]
    assert np.abs(E - E[0]).max() <= 1e-6 * np.abs(E[0])
    assert traj.lam.shape == (len(traj.t), 5)
    assert np.ptp(traj.q[:, 0]) > 1.0, "the mechanism swings through a large motion"
    with pytest.raises(ValueError, match="dp.assemble"):
        dp.simulate(model, np.array([0.3, 1.0, 1.2]), np.zeros(3), 0.1)
    with pytest.raises(ValueError, match="velocity constraints"):
        dp.simulate(model, q0, np.ones(3), 0.1)


def test_symmetric_pinv_solve_is_the_minimum_norm_solution():
    """The compiled Jacobi pseudo-inverse behind the reaction system, against numpy's SVD pinv."""
    from denoc_pin.core.dense import symmetric_pinv_solve

    rng = np.random.default_rng(0)
    for m, rank in [(1, 1), (3, 3), (5, 2), (9, 9), (12, 7)]:
        B = rng.standard_normal((m, rank)) * rng.uniform(0.01, 100, rank)
        A = B @ B.T
        b = A @ rng.standard_normal(m)  # in the range of A
        x, r = symmetric_pinv_solve(A, b, 1e-10)
        assert r == rank
        assert_close(x, np.linalg.pinv(A, rcond=1e-10, hermitian=True) @ b, rtol=1e-9, what=f"m={m}, rank={rank}")


def test_lu_inverse_is_the_inverse_and_refuses_a_singular_matrix():
    """The compiled Gauss–Jordan inverse behind the contact-step derivatives' mode system, against numpy's LAPACK
    inverse; a rank-deficient matrix (redundant sticking points' rows) and a badly scaled pivot are refused."""
    from denoc_pin.core.dense import lu_inverse

    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 12, 36):
        A = rng.standard_normal((m, m)) + 0.1 * np.eye(m)
        out = np.empty((m, m))
        assert lu_inverse(A, out, 1e-8)
        assert_close(out, np.linalg.inv(A), rtol=1e-9, what=f"m={m}")
        B = rng.standard_normal((m, max(1, m // 2)))
        out[:] = 7.0
        assert not lu_inverse(B @ rng.standard_normal((B.shape[1], m)), out, 1e-8) or m == 1
    assert not lu_inverse(np.diag([1.0, 1e-9]), np.empty((2, 2)), 1e-8)
    assert lu_inverse(np.diag([1.0, 1e-7]), np.empty((2, 2)), 1e-8)


def test_basic_inverse_solves_a_consistent_singular_system():
    """The generalized inverse the contact-step derivatives take of their mode system: the rank of a random
    rank-deficient matrix (rows repeated and combined, as redundant sticking points' and loops' rows are), A X b = b
    for every b in A's range, and A⁻¹ itself where A is invertible."""
    from denoc_pin.core.dense import basic_inverse

    rng = np.random.default_rng(4)
    for m, rank in [(1, 1), (4, 4), (12, 6), (24, 20), (36, 9)]:
        A = (rng.standard_normal((m, rank)) * rng.uniform(0.1, 10.0, rank)) @ rng.standard_normal((rank, m))
        X = np.full((m, m), 7.0)
        assert basic_inverse(A, X, 1e-9) == rank
        b = A @ rng.standard_normal((m, 5))
        assert_close(A @ (X @ b), b, rtol=1e-9, what=f"m={m}, rank={rank}")
        if rank == m:
            assert_close(X, np.linalg.inv(A), rtol=1e-9, what=f"m={m}")
    assert basic_inverse(np.zeros((3, 3)), np.empty((3, 3)), 1e-9) == 0


def test_info_lists_the_loops():
    text = str(dp.load_urdf(URDF / "four_bar.urdf"))
    assert "loop joint 'pin_B': revolute, coupler -> rocker, 5 constraints" in text


LOOP_MECHANISMS = {
    **{p.stem: (lambda p=p: dp.load_urdf(p)) for p in sorted(URDF.glob("*.urdf")) if "<loop_joint" in p.read_text()},
    "spatial_four_bar": dp.models.spatial_four_bar,
}


@pytest.mark.parametrize("name", list(LOOP_MECHANISMS))
def test_assemble_closes_every_bundled_mechanism_from_the_neutral_configuration(name):
    # The neutral configuration folds a four-bar flat: a stationary point of ‖r‖, where Newton and
    # Levenberg–Marquardt stall and the seeded global search must close it.
    model = LOOP_MECHANISMS[name]()
    q = dp.assemble(model, dp.neutral(model))
    assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
    assert np.array_equal(q, dp.assemble(model, dp.neutral(model)))  # seeded: the same answer every time
    # A second route: Pinocchio's forward kinematics puts each cut joint's two frames at one point.
    pm = dp.to_pinocchio(model)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q)
    for cut in model.cuts:
        c1 = pd.oMi[cut.body1].act(cut.p1)
        c2 = pd.oMi[cut.body2].act(cut.p2)
        d = c2 - c1
        if cut.loop.type in ("prismatic", "point_on_line"):  # C2 slides along the axis (in C1)
            e = pd.oMi[cut.body1].rotation @ cut.R1 @ cut.axis
            d -= (d @ e) * e
        assert np.abs(d).max() <= 1e-12


def test_batches_give_what_each_state_gives():
    """(B, nq) states: the rows of one threaded call equal the calls one by one; with external forces and
    Baumgarte's terms, on a model with a revolute cut and on one with a coupling."""
    for model in (dp.load_urdf(URDF / "four_bar.urdf"), dp.load_mjcf(ROOT / "tests" / "mjcf" / "chain_weld.xml")):
        rng = np.random.default_rng(7)
        data = model.create_data()
        Q = np.stack([integrate(model, dp.assemble(model, dp.random_configuration(model, rng)),
                                rng.uniform(-1, 1, model.nv) * 1e-3) for _ in range(5)])  # fmt: skip
        V, T = rng.uniform(-1, 1, (5, model.nv)), rng.uniform(-2, 2, (5, model.nv))
        fext = list(rng.uniform(-1, 1, (model.njoints, 6)))  # Pinocchio's layout: one wrench per joint
        A, L = dp.constrained_forward_dynamics(model, data, Q, V, T, fext=fext, baumgarte=(4.0, 3.0))
        assert A.shape == (5, model.nv) and L.shape == (5, model.n_constraints)
        for i in range(5):
            a, lam = dp.constrained_forward_dynamics(model, data, Q[i], V[i], T[i], fext=fext, baumgarte=(4.0, 3.0))
            assert_close(A[i], a, 1e-14)
            assert_close(L[i], lam, 1e-14)
        A0, _ = dp.constrained_forward_dynamics(model, data, Q, V, T, baumgarte=(4.0, 3.0))
        assert np.abs(A0 - A).max() > 1e-6  # the forces did act
        for i in range(5):
            assert_close(A0[i], kkt_reference(model, Q[i], V[i], T[i], baumgarte=(4.0, 3.0))[0], 1e-9)


def test_the_closed_loop_call_allocates_nothing():
    """The compiled call behind constrained_forward_dynamics (cfd_fast: the tree's forward dynamics, the loop rows
    and the reaction solve) makes no allocation, counted by numba's runtime (NUMBA_NRT_STATS), on a full-rank
    loop with a spherical joint (spatial four-bar), a redundant one (3-RRR) and one with a coupling."""
    import subprocess
    import sys

    script = """
import numpy as np, denoc_pin as dp
from numba import njit
from numba.core.runtime import rtsys
from denoc_pin.loops.loop_entries import cfd_fast

@njit
def calls(n, mb, ws, cb, lw, q, v, tau):  # from compiled code: a call from Python allocates its arguments' handles
    s = 0
    for _ in range(n):
        s += cfd_fast(mb, ws, cb, lw, q, v, tau, 1.0, 1.0, 1e-14)
    return s

for model in (dp.models.spatial_four_bar(), dp.models.bundled("rrr_3"), dp.load_mjcf("tests/mjcf/chain_weld.xml")):
    q = dp.assemble(model, dp.neutral(model))
    v, tau, data = np.zeros(model.nv), np.ones(model.nv), model.create_data()
    args = (model.mb, data.ws, model.constraint_buffer, data.lw, q, v, tau)
    counts = []
    for n in (0, 0, 10):
        before = rtsys.get_allocation_stats().alloc
        assert calls(n, *args) == 0
        counts.append(rtsys.get_allocation_stats().alloc - before)
    print(counts[2] - counts[1])
"""
    env = {**__import__("os").environ, "NUMBA_NRT_STATS": "1"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0", "0", "0"]


def test_closed_loop_simulation_compiled_and_from_python_agree():
    """A constant τ runs the closed-loop RK4 in compiled code; a τ callback runs the same steps from Python."""
    model = dp.load_urdf(URDF / "four_bar.urdf")
    q0 = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    v0 = consistent_velocity(model, q0, np.random.default_rng(1))
    tau = np.array([0.5, 0.0, 0.0])
    fast = dp.simulate(model, q0, v0, 0.3, dt=1e-3, tau=tau, progress=False)
    slow = dp.simulate(model, q0, v0, 0.3, dt=1e-3, tau=lambda t, q, v: tau, progress=False)
    for x, y in ((fast.q, slow.q), (fast.v, slow.v), (fast.a, slow.a), (fast.lam, slow.lam)):
        assert_close(x, y, 1e-12)
    assert_close(fast.energy["total"], slow.energy["total"], 1e-12)


def test_the_closed_loop_kernel_is_compiled_once_for_all_its_callers():
    """cfd_entry compiles at its first use for its one signature (``compile_on_first_use``), which the fast entry,
    the batches and the compiled simulation share: each would otherwise compile its own variant, half a minute
    each."""
    from denoc_pin.loops.loop_entries import CFD

    model = dp.models.spatial_four_bar()
    data = model.create_data()
    q = dp.assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])
    dp.constrained_forward_dynamics(model, data, q, np.zeros(5), np.zeros(5))
    dp.constrained_forward_dynamics(model, data, np.tile(q, (3, 1)), np.zeros((3, 5)), np.zeros((3, 5)))
    dp.simulate(model, q, np.zeros(5), 0.002, dt=1e-3)
    assert CFD.fast.signatures == [CFD.fast_signature.args]
    assert CFD.kernel.signatures == [CFD.signature.args]


CLOSED_FILES = ["iit_softfoot/softfoot.xml", "agility_cassie/cassie.xml", "robotiq_2f85/2f85.xml",
                "stanford_tidybot/tidybot.xml", "ufactory_xarm7/xarm7.xml", "pal_talos/talos.xml", "aloha/aloha.xml",
                "agilex_piper/piper.xml", "robotiq_2f85_v4/2f85.xml"]  # fmt: skip


@pytest.mark.parametrize("name", list(LOOP_MECHANISMS) + CLOSED_FILES)
def test_assemble_from_a_perturbed_closed_pose_is_the_nearest_closed_pose(name):
    """Every closed model of the test data (bundled mechanisms; Menagerie files with connect, weld and joint
    equalities): from a closed pose moved by δ (‖δ‖ from 1e-8 to 1e-2, a random direction), dp.assemble closes
    the loops to 1e-12 again and moves the configuration by at most 10 ‖δ‖ — a minimal correction, not a jump
    to another branch."""
    if name in LOOP_MECHANISMS:
        model = LOOP_MECHANISMS[name]()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dp.ModelWarning)
            model = dp.load_mjcf(ROOT / "tests" / "data" / "menagerie" / name)
    q0 = dp.assemble(model, dp.neutral(model))
    rng = np.random.default_rng(0)
    for eps in (1e-8, 1e-6, 1e-4, 1e-2):
        d = rng.normal(size=model.nv)
        start = dp.integrate(model, q0, d * eps / np.linalg.norm(d))
        q = dp.assemble(model, start)
        assert np.abs(dp.loop_residual(model, q)).max() <= 1e-12
        assert np.linalg.norm(dp.difference(model, start, q)) <= 10 * eps, f"{name}: moved from a δ of {eps:g}"
