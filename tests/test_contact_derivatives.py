"""Jacobians of the contact step (``contact.derivatives``, ``dp.step_derivatives(…, ground=…)``) against central
finite differences of the step itself, with each perturbed step checked to keep every contact's mode: a ball and a
cube resting, sticking and sliding, solo12 standing on its four mesh feet, a floating tree of every joint kind the
q-derivatives take, Cassie with its loops, and a stack's pair contacts (v and τ); sticking feet against the dense KKT
system of the step they hold; ∂/∂μ against differences in the ground's friction; what is not given yet is refused by
name; random steps never give a NaN."""

import functools
import runpy
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import denoc_pin as dp
from denoc_pin.contact import ContactSettings, ContactStepper
from denoc_pin.contact.derivatives import MODES
from denoc_pin.loaders.robots import example_robot_urdf

EXAMPLES = Path(__file__).parents[1] / "examples"
TIGHT = ContactSettings(tol=1e-13, max_iter=5000)


def modes_of(stepper, q, v, tau, record) -> list:
    """Each contact's mode from its velocity σ = G λ + g after the step (the impulses of redundant points are split
    as the solver chose; their velocities are not): separating (σ_n > 0), sliding (σ_t ≠ 0), sticking (σ = 0)."""
    P = stepper.problem(q, v, tau)
    lam = np.concatenate([record["impulses"].reshape(-1), record["loop_impulses"]])
    sigma = P["G"] @ lam + P["g"]
    out = []
    for i in range(P["nc"]):
        if record["impulses"][i, 2] <= 0.0 and sigma[3 * i + 2] > 1e-10:
            out.append(0)
        else:
            out.append(2 if np.hypot(*sigma[3 * i : 3 * i + 2]) > 1e-10 else 1)
    return out


def finite_differences(stepper, q, v, tau, eps):
    """(A, B) by central differences of ``stepper.step`` in the tangent spaces at q and q⁺, and whether every
    perturbed step kept the contacts and their modes."""
    model, nv = stepper.model, stepper.model.nv
    q1, v1, rec = stepper.step(q, v, tau)
    base = (rec["keys"], modes_of(stepper, q, v, tau, rec))
    held = True

    def run(qq, vv, tt):
        nonlocal held
        a, b, r = stepper.step(qq, vv, tt)
        held &= (r["keys"], modes_of(stepper, qq, vv, tt, r)) == base
        return np.r_[dp.difference(model, q1, a), b - v1]

    A, B = np.zeros((2 * nv, 2 * nv)), np.zeros((2 * nv, nv))
    for d in range(nv):
        e = np.zeros(nv)
        e[d] = eps
        A[:, d] = (run(dp.integrate(model, q, e), v, tau) - run(dp.integrate(model, q, -e), v, tau)) / (2 * eps)
        A[:, nv + d] = (run(q, v + e, tau) - run(q, v - e, tau)) / (2 * eps)
        B[:, d] = (run(q, v, tau + e) - run(q, v, tau - e)) / (2 * eps)
    return A, B, held


def assert_matches(model, ground, q, v, tau, modes, dt=1e-3, eps=1e-6, wrt=("q", "v", "tau"), settings=TIGHT):
    """The step's Jacobians equal central differences to 1e-6 of their largest entry (and 1e-6 absolute), the
    contacts in ``modes`` (names), none at a switch."""
    stepper = ContactStepper(model, ground, settings, dt)
    r = stepper.derivatives(q, v, tau, wrt)
    assert [MODES[k] for k in r.modes] == modes and not r.one_sided.any() and r.converged
    A, B, held = finite_differences(stepper, q, v, tau, eps)
    assert held, "a perturbed step changed a contact's mode: the differences are not of one mode"
    nv = model.nv
    cols = np.r_[[("q" in wrt)] * nv, [("v" in wrt)] * nv]
    scale = max(1.0, np.abs(A).max(), np.abs(B).max())
    assert np.abs(r.A - A)[:, cols].max() <= 1e-6 * scale
    if "tau" in wrt:
        assert np.abs(r.B - B).max() <= 1e-6 * scale
    return r


def r_keys(m, q, v, tau):
    """The keys of the contacts of a step of ``m`` on the tree test's ground."""
    return ContactStepper(m, dp.Ground(friction=0.9), TIGHT, 1e-3).problem(q, v, tau)["keys"]


def ball(z, vx=0.0):
    b = dp.ModelBuilder("ball")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.004, link="ball")
    b.add_collision("ball", dp.Sphere(0.1))
    m = b.build()
    q = dp.neutral(m)
    q[2] = z
    v = np.zeros(6)
    v[0] = vx
    return m, q, v


def cube_on_incline(angle_deg: float, pressed: float, v_down: float = 0.0):
    """A 2 kg, 20 cm cube resting on a plane tilted about y, ``pressed`` m into it, moving down the slope at v_down."""
    b = dp.ModelBuilder("cube")
    b.add_body(0, joint="free-flyer", mass=2.0, inertia=np.eye(3) * 2 * 0.08 / 12, link="cube")
    b.add_collision("cube", dp.Box((0.2, 0.2, 0.2)))
    m = b.build()
    a = np.radians(angle_deg)
    n = np.array([np.sin(a), 0.0, np.cos(a)])
    R = Rotation.from_rotvec([0.0, a, 0.0])
    q = dp.neutral(m)
    q[:3], q[3:7] = (0.1 - pressed) * n, R.as_quat()
    v = np.zeros(6)
    v[0] = v_down  # along the cube's own x: down the slope (body frame)
    return m, q, v, n


@pytest.mark.parametrize(
    ("case", "modes"),
    [("resting", ["sticking"]), ("rolling and sliding", ["sliding"]), ("above, within the margin", ["separating"])],
)
def test_a_ball(case, modes):
    """A 10 cm ball 0.1 mm into the ground at rest (sticking), the same moving at 1 m/s (sliding), 0.5 mm above it
    (a contact within the margin that carries nothing)."""
    z, vx = {"resting": (0.0999, 0.0), "rolling and sliding": (0.0999, 1.0), "above, within the margin": (0.1005, 0.0)}[
        case
    ]
    m, q, v = ball(z, vx)
    assert_matches(m, dp.Ground(friction=0.5), q, v, np.zeros(6), modes)


def test_a_cube_sticking_on_an_incline_and_sliding_down_a_steeper_one():
    """Four corners on a 10° incline at μ = 0.8 stick; on a 30° incline at μ = 0.2 moving down at 0.3 m/s they slide;
    τ pushes it too (a wrench on the free flyer)."""
    m, q, v, n = cube_on_incline(10.0, 1e-4)
    assert_matches(m, dp.Ground(friction=0.8, normal=n), q, v, np.zeros(6), ["sticking"] * 4)
    m, q, v, n = cube_on_incline(30.0, 1e-4, v_down=-0.3)
    tau = np.array([2.0, 1.0, 0.0, 0.05, -0.1, 0.2])
    assert_matches(m, dp.Ground(friction=0.2, normal=n), q, v, tau, ["sliding"] * 4)


def test_a_cube_pushed_while_it_slides():
    """On flat ground at μ = 0.3, sliding at 0.5 m/s under a push and a twist."""
    m, q, v, _ = cube_on_incline(0.0, 1e-4, v_down=0.5)
    tau = np.array([5.0, 1.0, 0.0, 0.1, 0.2, 0.3])
    assert_matches(m, dp.Ground(friction=0.3), q, v, tau, ["sliding"] * 4)


@functools.cache
def _solo12_settled():
    legged = runpy.run_path(str(EXAMPLES / "legged_standing.py"), run_name="legged_standing")
    model, q0, pd, ground = legged["scene"]("solo12")
    tr = dp.simulate(model, q0, np.zeros(model.nv), 0.5, 1e-3, tau=pd, ground=ground, progress=False)
    return model, pd, ground, tr.q[-1], tr.v[-1]


def solo12_pressed():
    """(model, pd, ground, q, v): solo12 from its URDF settled 0.5 s under joint PD on its four mesh feet
    (examples/legged_standing.py), its base pressed 0.1 mm; the run made once a session, q and v copies."""
    model, pd, ground, q, v = _solo12_settled()
    q = q.copy()
    q[2] -= 1e-4
    return model, pd, ground, q, v.copy()


def test_solo12_standing_on_its_mesh_feet():
    """solo12 from its URDF (collision meshes on its feet) settled 0.5 s under joint PD, pressed 0.1 mm, its PD torque
    held: four feet sticking; the derivatives with respect to q, v and τ."""
    model, pd, ground, q, v = solo12_pressed()
    assert_matches(model, ground, q, v, pd(0.0, q, v), ["sticking"] * 4)


def test_a_floating_tree_of_every_joint_kind_on_the_ground():
    """A free-flying base with six legs, one of each joint kind the q-derivatives take (revolute, continuous,
    prismatic, helical, ball, universal), each ending in a sphere 0.1 mm into the ground, from a random nearby state
    and torque."""
    m = dp.models.every_joint_legs()
    rng = np.random.default_rng(11)  # a draw where the ball and universal legs stick, two others slide
    q = dp.neutral(m)
    q[2] = 0.24 - 1e-4
    dq = np.zeros(m.nv)
    dq[6:] = rng.uniform(-0.01, 0.01, m.nv - 6)
    q = dp.integrate(m, q, dq)
    v = np.r_[0.0, 0.0, 0.0, rng.uniform(-0.01, 0.01, 3), rng.uniform(-0.01, 0.01, m.nv - 6)]
    tau = np.r_[np.zeros(6), rng.uniform(-0.05, 0.05, m.nv - 6)]
    r = ContactStepper(m, dp.Ground(friction=0.9), TIGHT, 1e-3).derivatives(q, v, tau)
    stuck = {m.collisions[k[1]].link for k, mode in zip(r_keys(m, q, v, tau), r.modes, strict=True) if mode == 1}
    assert {"leg4", "leg5"} <= stuck  # the ball and universal legs carry load
    # eps 1e-7: the sliding legs (slip 2–5 cm/s) curve the step enough that 1e-6 leaves 2e-5 of truncation
    assert_matches(m, dp.Ground(friction=0.9), q, v, tau, [MODES[k] for k in r.modes], eps=1e-7)


def test_a_stack_of_boxes_by_v_and_tau_and_what_is_not_given_yet_is_refused():
    """Two boxes stacked on the ground (four corners each on the ground and on the lower box), the upper sliding on
    the lower: ∂/∂v and ∂/∂τ against differences, and the same with the pair's points found by coal (whose contacts
    grow the scene within the step); ∂/∂q of a pair's contacts and of a cylinder's rim are refused with the way out
    (wrt=('v', 'tau')), as is an unknown ``wrt``."""
    b = dp.ModelBuilder("two boxes")
    for k in range(2):
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * 0.04 / 12, link=f"box{k}")
        b.add_collision(f"box{k}", dp.Box((0.2, 0.2, 0.2)), friction=0.8)
    m = b.build()
    q = dp.neutral(m)
    q[2], q[9] = 0.1 - 1e-4, 0.3 - 2e-4
    ground = dp.Ground(friction=0.8)
    v = np.zeros(m.nv)
    v[6] = 0.3  # the upper box slides on the lower along x
    first = ContactStepper(m, ground, TIGHT, 1e-3).derivatives(q, v, np.zeros(m.nv), wrt=("v", "tau"))
    modes = [MODES[k] for k in first.modes]
    assert modes.count("sliding") >= 4
    r = assert_matches(m, ground, q, v, np.zeros(m.nv), modes, wrt=("v", "tau"))
    assert np.all(r.A[:, : m.nv] == 0.0) and np.abs(r.B).max() > 1e-4
    by_coal = ContactStepper(m, ground, TIGHT, 1e-3, compiled_pairs=False)  # the pair's points found by coal
    r2 = by_coal.derivatives(q, v, np.zeros(m.nv), wrt=("v", "tau"))
    assert np.abs(r2.A - r.A).max() <= 1e-6 * np.abs(r.A).max() and np.abs(r2.B - r.B).max() <= 1e-6 * np.abs(r.B).max()
    with pytest.raises(dp.ModelError, match=r"between two bodies is not given yet; ask wrt=\('v', 'tau'\)"):
        dp.step_derivatives(m, m.create_data(), q, np.zeros(m.nv), None, 1e-3, ground=ground)
    with pytest.raises(ValueError, match="wrt names the inputs"):
        dp.step_derivatives(m, m.create_data(), q, np.zeros(m.nv), None, 1e-3, ground=ground, wrt=("x",))
    b = dp.ModelBuilder("can")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.01, link="can")
    b.add_collision("can", dp.Cylinder(0.05, 0.2))
    can = b.build()
    q = dp.neutral(can)
    q[2] = 0.0999
    with pytest.raises(dp.ModelError, match=r"a Cylinder's contact with the ground is not given yet"):
        dp.step_derivatives(can, can.create_data(), q, np.zeros(6), None, 1e-3, ground=dp.Ground())


def test_random_steps_never_give_a_nan():
    """2,000 random steps of the ball and the cube (states, torques, friction, incline): every Jacobian entry is
    finite and each contact has a mode."""
    rng = np.random.default_rng(0)
    scenes = [ball(0.1, 0.0)[0], cube_on_incline(0.0, 0.0)[0]]
    count = 0
    for i in range(2000):
        m = scenes[i % 2]
        q = dp.neutral(m)
        q[:3] = rng.uniform(-0.05, 0.05, 3) + [0, 0, 0.1 if i % 2 == 0 else 0.17]
        q[3:7] = Rotation.random(random_state=rng.integers(1 << 30)).as_quat() if i % 2 else [0, 0, 0, 1]
        v = rng.normal(size=6)
        tau = rng.normal(scale=5.0, size=6)
        n = np.r_[rng.normal(scale=0.3, size=2), 1.0]
        ground = dp.Ground(friction=float(rng.uniform(0.0, 1.2)), normal=n / np.linalg.norm(n))
        r = dp.step_derivatives(m, m.create_data(), q, v, tau, 1e-3, ground=ground)
        assert np.isfinite(r.A).all() and np.isfinite(r.B).all() and len(r.modes) == len(r.one_sided)
        count += len(r.modes)
    assert count > 1000  # most steps have contacts


def test_a_coupled_mechanism_on_the_ground():
    """A box on the ground carrying two arms whose joints are geared together (a coupling: a bilateral row solved
    with the contacts): the Jacobians against differences, the coupling's row held."""
    b = dp.ModelBuilder("geared arms")
    b.add_body(0, joint="free-flyer", mass=2.0, inertia=np.eye(3) * 2 * 0.08 / 12, link="box")
    b.add_collision("box", dp.Box((0.2, 0.2, 0.2)))
    for i, y in enumerate((-0.05, 0.05)):
        b.add_body("box", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), np.array([0.0, y, 0.1])),
                   mass=0.2, com=(0.1, 0.0, 0.0), inertia=np.eye(3) * 1e-3, link=f"arm{i}", name=f"j{i}")  # fmt: skip
    b.add_coupling("gear", "j1", "j0", -1.0, 0.0)
    m = b.build()
    q = dp.neutral(m)
    q[2] = 0.1 - 1e-4
    v = np.zeros(m.nv)
    v[6], v[7] = 0.3, -0.3
    tau = np.zeros(m.nv)
    tau[6] = 0.2
    ground = dp.Ground(friction=0.8)
    r = assert_matches(m, ground, q, v, tau, ["sticking"] * 4)
    assert len(r.impulses) == 13  # four corners' three rows and the gear's


@pytest.mark.parametrize("scene", ["cube sliding", "ball sliding", "cube sticking"])
def test_the_friction_coefficients_jacobian(scene):
    """∂(q⁺, v⁺)/∂μ summed over the ground's contacts (they share its μ) against central differences of the step in
    the ground's friction: a cube pushed while it slides, a ball sliding, and a cube sticking (zero: its cone does
    not bind)."""
    if scene == "ball sliding":
        m, q, v = ball(0.0999, 1.0)
        tau = np.zeros(6)
    else:
        m, q, v, _ = cube_on_incline(0.0, 1e-4, v_down=0.5 if scene == "cube sliding" else 0.0)
        tau = np.array([5.0, 1.0, 0.0, 0.1, 0.2, 0.3]) if scene == "cube sliding" else np.zeros(6)
    mu, eps = 0.3, 1e-6

    def step(friction):
        return ContactStepper(m, dp.Ground(friction=friction), TIGHT, 1e-3).step(q, v, tau)[:2]

    r = ContactStepper(m, dp.Ground(friction=mu), TIGHT, 1e-3).derivatives(q, v, tau)
    (qa, va), (qb, vb) = step(mu + eps), step(mu - eps)
    fd = np.r_[dp.difference(m, qb, qa), va - vb] / (2 * eps)
    ours = r.friction.sum(axis=1)
    assert r.friction.shape == (2 * m.nv, len(r.modes))
    assert np.abs(ours - fd).max() <= 1e-6 * max(1.0, np.abs(fd).max())
    if scene == "cube sticking":
        assert np.all(r.friction == 0.0) and np.all(r.modes == 1)
    else:
        assert np.abs(fd).max() > 1e-3 and np.all(r.modes == 2)  # sliding: μ moves the step


def test_cassie_standing_with_its_loops_solved_with_the_contacts():
    """Cassie from Menagerie's cassie.xml (examples/cassie_standing.py: four loops closed exactly with the feet's
    contacts), settled 0.3 s under its PD, pressed 0.1 mm: the Jacobians with respect to q, v and τ — the loop rows'
    ∂/∂q by the closed-loop derivatives' rule — against differences (solved to 1e-11, where the sticking guess
    holds: ADMM does not reach 1e-13 on it, and its iterates' noise would swamp the differences)."""
    cassie = runpy.run_path(str(EXAMPLES / "cassie_standing.py"), run_name="cassie_standing")
    path = Path(__file__).parent / "data" / "menagerie" / "agility_cassie" / "cassie.xml"
    model = cassie["load"](path)
    q0, tau_ff = cassie["stance"](model, path)
    pd, ground = cassie["controller"](model, q0, tau_ff, path), dp.Ground(friction=0.9)
    tr = dp.simulate(model, q0, np.zeros(model.nv), 0.3, 1e-3, tau=pd, ground=ground, progress=False)
    q, v = tr.q[-1].copy(), tr.v[-1]
    q[2] -= 1e-4
    r = assert_matches(model, ground, q, v, pd(0.0, q, v), ["sticking"] * 4, eps=3e-7,
                       settings=ContactSettings(tol=1e-11, max_iter=5000))  # fmt: skip
    assert len(r.impulses) > 12  # the loops' rows after the contacts'


def test_sticking_feet_are_the_kkt_systems_jacobians():
    """solo12's four sticking feet: ∂v⁺/∂v and ∂v⁺/∂τ equal those of the equality-constrained velocity step the
    contacts hold, [M J_Sᵀ; J_S 0] [v⁺; −λ] = [M v + dt (τ − h); −b_S], formed densely from Pinocchio's M (crba) and
    ∂h/∂v (computeRNEADerivatives) and differentiated by hand: [M Jᵀ; J 0] [δv⁺; −δλ] = [(M − dt ∂h/∂v) δv + dt δτ;
    0], to 1e-9."""
    model, pd, ground, q, v = solo12_pressed()
    tau, dt, nv = pd(0.0, q, v), 1e-3, model.nv
    stepper = ContactStepper(model, ground, TIGHT, dt)
    r = stepper.derivatives(q, v, tau)
    assert np.all(r.modes == 1)
    J = stepper.problem(q, v, tau)["J"]
    pm = pin.buildModelFromUrdf(str(example_robot_urdf("solo12")), pin.JointModelFreeFlyer())
    pdata = pm.createData()
    M = pin.crba(pm, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    dh_dv = pin.computeRNEADerivatives(pm, pdata, q, v, np.zeros(nv))[1]
    K = np.block([[M, J.T], [J, np.zeros((len(J), len(J)))]])
    rhs = np.zeros((nv + len(J), 2 * nv))
    rhs[:nv, :nv], rhs[:nv, nv:] = M - dt * dh_dv, dt * np.eye(nv)
    sol = np.linalg.solve(K, rhs)[:nv]
    assert np.abs(r.A[nv:, nv:] - sol[:, :nv]).max() <= 1e-9 * np.abs(sol[:, :nv]).max()
    assert np.abs(r.B[nv:] - sol[:, nv:]).max() <= 1e-9 * np.abs(sol[:, nv:]).max()


@pytest.mark.parametrize("scene", ["ball sliding", "solo12 standing"])
def test_the_masses_jacobian(scene):
    """∂(q⁺, v⁺)/∂m of a body's mass (its centre of mass and rotational inertia held) against central differences of
    the step of the model with that mass changed: the sliding ball's, and solo12's base under its PD torque; an
    unknown body is a ModelError that lists the bodies."""
    if scene == "ball sliding":
        m, q, v = ball(0.0999, 1.0)
        tau, ground, body = np.zeros(6), dp.Ground(friction=0.5), "ball"
    else:
        m, pd, ground, q, v = solo12_pressed()
        tau, body = pd(0.0, q, v), "base_link"
    r = ContactStepper(m, ground, TIGHT, 1e-3).derivatives(q, v, tau, masses=[body])
    k, eps = m.link_names.index(body), 1e-6

    def step(dm):
        masses = m.masses.copy()
        masses[k] += dm
        edited = dp.Model(**(m.fields() | {"masses": masses}))
        return ContactStepper(edited, ground, TIGHT, 1e-3).step(q, v, tau)[:2]

    (qa, va), (qb, vb) = step(eps), step(-eps)
    fd = np.r_[dp.difference(m, qb, qa), va - vb] / (2 * eps)
    assert r.mass.shape == (2 * m.nv, 1)
    assert np.abs(r.mass[:, 0] - fd).max() <= 1e-6 * max(1.0, np.abs(fd).max()) and np.abs(fd).max() > 1e-4
    with pytest.raises(dp.ModelError, match="no body 'nope'.*the bodies are"):
        ContactStepper(m, ground, TIGHT, 1e-3).derivatives(q, v, tau, masses=["nope"])


@pytest.mark.parametrize("moving", [False, True])
def test_a_planar_joint_on_the_ground(moving):
    """A box on a planar joint whose plane stands vertical (x–z), 0.1 mm into the ground: at rest (four corners
    sticking) and pushed and turning (two corners sliding, two separating) — its columns turn with the body, as a
    free flyer's."""
    b = dp.ModelBuilder("planar")
    upright = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # the joint's z along −y: its plane is x–z
    b.add_body(0, joint="planar", placement=(upright, np.zeros(3)), mass=1.0, inertia=np.diag([0.01, 0.02, 0.03]),
               link="puck")  # fmt: skip
    b.add_collision("puck", dp.Box((0.2, 0.2, 0.2)))
    m = b.build()
    q = dp.neutral(m)
    q[1] = 0.0999  # the joint's y: the world's z
    v, tau = (np.array([0.5, 0.0, 0.3]), np.array([2.0, 0.0, 0.1])) if moving else (np.zeros(3), np.zeros(3))
    modes = ["sliding", "separating", "sliding", "separating"] if moving else ["sticking"] * 4
    assert_matches(m, dp.Ground(friction=0.4), q, v, tau, modes)


def test_a_batch_is_each_states_own_call():
    """``derivatives_batch`` over solo12 states about its stance on two threads: each state's Jacobians bit for bit a
    new stepper's call at that state; a batch of mismatched shapes is a ValueError."""
    model, pd, ground, stance, _ = solo12_pressed()
    rng = np.random.default_rng(5)
    Q = np.stack([dp.integrate(model, stance, rng.normal(scale=1e-3, size=model.nv)) for _ in range(6)])
    V = rng.normal(scale=0.05, size=(6, model.nv))
    T = np.stack([pd(0.0, q, v) for q, v in zip(Q, V, strict=True)])
    stepper = ContactStepper(model, ground, ContactSettings(), 1e-3)
    batch = stepper.derivatives_batch(Q, V, T, threads=2)
    for b in range(6):
        one = ContactStepper(model, ground, ContactSettings(), 1e-3).derivatives(Q[b], V[b], T[b])
        assert np.array_equal(batch[b].A, one.A) and np.array_equal(batch[b].B, one.B)
        assert np.array_equal(batch[b].modes, one.modes) and np.array_equal(batch[b].q_next, one.q_next)
    with pytest.raises(ValueError, match="derivatives_batch"):
        stepper.derivatives_batch(Q, V[:3], T)
