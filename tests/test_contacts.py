"""Contact with friction (docs/contacts.md): scenes whose answers are known in closed form, the solvers against
Pinocchio 4.1's own on the same problems, the Delassus matrix against ``computeDelassusMatrix``, and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, add_random_body

import denoc_pin as dp
from denoc_pin.contact import ContactStepper, solve_admm, solve_pgs, solve_sticking
from denoc_pin.contact.solvers import problem_residuals

G0 = 9.81


def cube(mass=1.0, a=0.2, name="cube", friction=1.0):
    b = dp.ModelBuilder(name)
    b.add_body(0, joint="free-flyer", mass=mass, inertia=np.eye(3) * mass * a * a / 6, link=name)
    b.add_collision(name, dp.Box((a, a, a)), friction=friction)
    return b.build()


def ball(r=0.1):
    b = dp.ModelBuilder("ball")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.4 * r * r, link="ball")
    b.add_collision("ball", dp.Sphere(r))
    return b.build()


def converged(tr, tol=1e-8, share=1.0, worst=None):
    """The solves met the tolerance on the primal, dual and complementarity residuals: every one, or at least
    ``share`` of the steps with the others, which report it, below ``worst``."""
    flags = [c["converged"] for c in tr.contacts]
    assert all(c["residual"] <= tol for c in tr.contacts if c["converged"])
    assert sum(flags) >= share * len(flags), (sum(flags), len(flags))
    assert max(c["residual"] for c in tr.contacts) <= (tol if worst is None else worst)


@pytest.mark.parametrize("solver", ["admm", "pgs"])
def test_ball_bounces_to_e_squared_heights(solver):
    """Dropped from 1 m with e = 0.5: the k-th apex is e^{2k} m (within 1%, three bounces)."""
    r = 0.1
    m = ball(r)
    q0 = dp.neutral(m)
    q0[2] = 1.0 + r
    tr = dp.simulate(m, q0, np.zeros(6), 2.2, 2e-4, ground=dp.Ground(restitution=0.5),
                     contact=dp.ContactSettings(solver=solver), progress=False)  # fmt: skip
    z = tr.q[:, 2] - r
    apex = [z[i] for i in range(1, len(z) - 1) if z[i] >= z[i - 1] and z[i] > z[i + 1]][:3]
    assert len(apex) == 3
    for k, h in enumerate(apex, start=1):
        assert abs(h / 0.5 ** (2 * k) - 1) < 0.01, (k, h)
    assert z.min() > -1e-4
    converged(tr)


@pytest.mark.parametrize("solver", ["admm", "pgs"])
def test_cube_slides_to_a_stop(solver):
    """A 0.2 m, 1 kg cube with μ = 0.4 at 1 m/s stops after v₀²/(2μg), penetration ≤ 1e-4 m, no tipping."""
    m = cube()
    q0 = dp.neutral(m)
    q0[2] = 0.1
    mu = 0.4
    tr = dp.simulate(m, q0, [1.0, 0, 0, 0, 0, 0], 0.5, 5e-4, ground=dp.Ground(friction=mu),
                     contact=dp.ContactSettings(solver=solver), progress=False)  # fmt: skip
    expected = 1.0 / (2 * mu * G0)
    assert abs(tr.q[-1, 0] / expected - 1) < 0.01
    assert np.abs(tr.v[-1]).max() < 1e-4  # at rest
    assert 0.1 - tr.q[:, 2].min() <= 1e-4
    assert np.abs(tr.q[:, 3:6]).max() < 1e-6  # the quaternion stays the identity
    assert max(len(c["points"]) for c in tr.contacts) == 4  # the bottom face: four corners, one patch
    converged(tr)


def _on_incline(m, theta, mu, t_final=1.0, solver="admm"):
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    R = np.array([[np.cos(theta), 0, -np.sin(theta)], [0, 1, 0], [np.sin(theta), 0, np.cos(theta)]])
    q0 = dp.neutral(m)
    q0[:3] = 0.1 * n
    q0[3:] = pin.Quaternion(R).coeffs()
    tr = dp.simulate(m, q0, np.zeros(6), t_final, 1e-3, ground=dp.Ground(normal=n, friction=mu),
                     contact=dp.ContactSettings(solver=solver), progress=False)  # fmt: skip
    up = np.array([np.cos(theta), 0.0, np.sin(theta)])
    return tr, (tr.q[:, :3] - tr.q[0, :3]) @ up, 0.1 - tr.q[:, :3] @ n


@pytest.mark.parametrize("solver", ["admm", "pgs"])
def test_cube_on_an_incline_sticks_below_the_friction_angle(solver):
    """tan θ < μ: the cube stays (drift ≤ 1e-6 m in 1 s)."""
    tr, s, pen = _on_incline(cube(), np.radians(15), 0.4, solver=solver)
    assert np.abs(s).max() <= 1e-6
    assert pen.max() <= 1e-4
    converged(tr)


def test_cube_on_an_incline_slides_above_the_friction_angle():
    """tan θ > μ: it slides down at g (sin θ − μ cos θ) (within 1%)."""
    theta, mu = np.radians(30), 0.4
    tr, s, pen = _on_incline(cube(), theta, mu)
    acc = 2 * np.polyfit(tr.t[100:], s[100:], 2)[0]
    assert abs(acc / (-G0 * (np.sin(theta) - mu * np.cos(theta))) - 1) < 0.01
    assert pen.max() <= 1e-4
    converged(tr)


def test_a_ramped_force_moves_the_cube_at_mu_m_g():
    """A horizontal force F = k t on the resting cube: it starts to move when F = μ m g (within 2%)."""
    m, mu, k = cube(), 0.4, 4.0  # N/s: μ m g = 3.924 N is reached near t = 0.98 s
    q0 = dp.neutral(m)
    q0[2] = 0.1
    tr = dp.simulate(m, q0, np.zeros(6), 1.3, 1e-3, tau=lambda t, q, v: np.array([k * t, 0, 0, 0, 0, 0]),
                     ground=dp.Ground(friction=mu), progress=False)  # fmt: skip
    moving = np.flatnonzero(tr.q[:, 0] > 1e-7)  # x ≈ k (t − t₀)³ / 6 m: 1e-7 m is 5 ms after the start
    assert len(moving)
    F = tr.tau[moving[0], 0]
    assert abs(F / (mu * 1.0 * G0) - 1) < 0.02, F
    converged(tr)


def test_ill_conditioned_stack_rests():
    """A 1e-3 kg cube under a 1e3 kg cube (mass ratio 1e6, ContactBench's stack) rests for 2 s, penetration ≤ 1e-3 m."""
    a = 0.2
    b = dp.ModelBuilder("stack")
    b.add_body(0, joint="free-flyer", mass=1e-3, inertia=np.eye(3) * 1e-3 * a * a / 6, link="light")
    b.add_collision("light", dp.Box((a, a, a)))
    b.add_body(0, joint="free-flyer", mass=1e3, inertia=np.eye(3) * 1e3 * a * a / 6, link="heavy")
    b.add_collision("heavy", dp.Box((a, a, a)))
    m = b.build()
    q0 = dp.neutral(m)
    q0[2], q0[9] = 0.5 * a, 1.5 * a
    tr = dp.simulate(m, q0, np.zeros(12), 2.0, 1e-3, ground=dp.Ground(friction=1.0), progress=False)
    assert np.abs(tr.q[:, [0, 1, 7, 8]]).max() < 1e-5  # nothing slides
    assert 0.5 * a - tr.q[:, 2].min() <= 1e-3  # the light cube into the ground
    assert ((tr.q[:, 2] + 0.5 * a) - (tr.q[:, 9] - 0.5 * a)).max() <= 1e-3  # the heavy one into the light one
    assert np.abs(tr.v[-1]).max() < 1e-3
    converged(tr, share=0.99, worst=1e-2)  # a step may stop at the cap; it says so


# ---------------------------------------------------------------------------------------
# The solvers against Pinocchio 4.1's, and G against computeDelassusMatrix.
# ---------------------------------------------------------------------------------------


def _pinocchio_solve(kind, G, g, mu, tol=1e-12):
    """Pinocchio's ADMMConstraintSolver or PGSConstraintSolver on the same (G, g, cones)."""
    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "ff")
    pm.appendBodyToJoint(j, pin.Inertia.FromBox(1.0, 0.1, 0.1, 0.1), pin.SE3.Identity())
    models, datas = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    for m_i in mu:  # the constraint models only carry the cones here: G and g are given
        c = pin.PointContactConstraintModel(pm, j)
        c.setFriction(float(m_i))
        models.append(pin.ConstraintModel(c))
    for c in models:
        datas.append(c.createData())
    n = len(g)
    if kind == "admm":
        solver, settings, result = pin.ADMMConstraintSolver(n), pin.ADMMSolverSettings(), pin.ADMMSolverResult()
    else:
        solver, settings, result = pin.PGSConstraintSolver(n), pin.PGSSolverSettings(), pin.PGSSolverResult()
    settings.max_iterations = 100000
    for name in ("absolute_feasibility_tol", "absolute_complementarity_tol", "relative_feasibility_tol",
                 "relative_complementarity_tol"):  # fmt: skip
        setattr(settings, name, tol)
    solver.solve(pin.DelassusOperatorDense(G), g, models, datas, settings, result)
    assert result.converged
    return np.array(result.retrieveConstraintImpulses()), int(result.iterations)


def _random_problem(seed, nc):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3 * nc, 3 * nc + 2))
    G = A @ A.T / (3 * nc) + 1e-3 * np.eye(3 * nc)
    g = rng.standard_normal(3 * nc)
    g[2::3] -= 0.5  # most points approach: some stick, some slide, some separate
    mu = rng.uniform(0.2, 1.2, nc)
    return G, g, mu


@pytest.mark.parametrize("seed", range(6))
def test_solvers_agree_with_pinocchio(seed):
    """Our PGS and ADMM and Pinocchio's on the same seeded problems: the impulses agree to 1e-7 (the solutions of a
    strongly monotone G are unique), and every solve reports residuals within its tolerance."""
    nc = 1 + seed % 4
    G, g, mu = _random_problem(seed, nc)
    ref, _ = _pinocchio_solve("admm", G, g, mu)
    ref_pgs, _ = _pinocchio_solve("pgs", G, g, mu)
    assert np.abs(ref - ref_pgs).max() <= 1e-7 * (1 + np.abs(ref).max())
    for solve in (solve_pgs, solve_admm):
        lam, sigma, stats = np.zeros(len(g)), np.empty(len(g)), np.zeros(5)
        args = (0.0, 1e-9) if solve is solve_admm else ()
        ok = solve(G, g, mu, nc, lam, 1e-12, 100000, *args, sigma, stats)
        assert ok and stats[1] <= 1e-12
        assert np.abs(lam - ref).max() <= 1e-7 * (1 + np.abs(ref).max()), (solve.__name__, lam, ref)
    states = []
    for c in range(nc):  # the seeds cover every contact state
        lt, ln = np.hypot(*ref[3 * c : 3 * c + 2]), ref[3 * c + 2]
        states.append("separate" if ln < 1e-9 else ("slide" if lt > mu[c] * ln * (1 - 1e-6) else "stick"))
    test_solvers_agree_with_pinocchio.states = getattr(test_solvers_agree_with_pinocchio, "states", set()) | set(states)


@pytest.mark.parametrize("seed", range(40))
def test_the_sticking_guess_is_taken_only_when_it_solves(seed):
    """solve_sticking on seeded problems: where every contact of Pinocchio's ADMM solution sticks (σ = 0, interior
    of the cones), it returns that solution (to 1e-7) with its residuals within tol; where one slides or separates it
    declines and leaves λ as it was.  Warm-started from the solution, it returns it whenever no contact slides.  The
    seeds give both outcomes."""
    nc = 1 + seed % 4
    G, g, mu = _random_problem(seed, nc)
    g[2::3] -= 2.0 * (seed % 2)  # every other seed pushed into the ground: all stick more often
    ref, _ = _pinocchio_solve("admm", G, g, mu)
    sticks = all(ref[3 * c + 2] > 1e-6 and np.hypot(*ref[3 * c : 3 * c + 2]) < mu[c] * ref[3 * c + 2] * (1 - 1e-6)
                 for c in range(nc))  # fmt: skip
    lam, sigma, stats = np.full(len(g), 7.0), np.empty(len(g)), np.zeros(5)
    ok = solve_sticking(G, g, mu, nc, lam, 1e-10, sigma, stats)
    assert ok == sticks
    if ok:
        assert stats[0] == 0 and stats[1] <= 1e-10
        assert np.abs(lam - ref).max() <= 1e-7 * (1 + np.abs(ref).max())
    else:
        assert (lam == 7.0).all()
    # from the solution as warm start, the contacts it leaves at zero carry nothing and the rest stick: taken when
    # none slides
    slides = any(ref[3 * c + 2] > 1e-6 and np.hypot(*ref[3 * c : 3 * c + 2]) >= mu[c] * ref[3 * c + 2] * (1 - 1e-6)
                 for c in range(nc))  # fmt: skip
    lam = np.where(np.repeat(ref[2::3] > 1e-6, 3), ref, 0.0)
    if any(lam[2::3] > 0):
        assert solve_sticking(G, g, mu, nc, lam, 1e-10, sigma, stats) == (not slides)
        if not slides:
            assert np.abs(lam - ref).max() <= 1e-7 * (1 + np.abs(ref).max())
    outcomes = getattr(test_the_sticking_guess_is_taken_only_when_it_solves, "outcomes", set())
    test_the_sticking_guess_is_taken_only_when_it_solves.outcomes = outcomes | {bool(ok)}


def test_the_sticking_seeds_give_both_outcomes():
    for seed in range(40):
        test_the_sticking_guess_is_taken_only_when_it_solves(seed)
    assert test_the_sticking_guess_is_taken_only_when_it_solves.outcomes == {True, False}


def test_the_seeded_problems_cover_every_contact_state():
    for seed in range(6):
        test_solvers_agree_with_pinocchio(seed)
    assert test_solvers_agree_with_pinocchio.states == {"separate", "slide", "stick"}


ROLLED_FEET = np.load(ROOT / "tests" / "data" / "contact_problems.npz")


@pytest.mark.parametrize("k", range(25))
def test_admm_solves_the_landings_on_rolled_feet(k):
    """Stored problems of solo12 and go2 landing and standing on rolled feet (two or three points of a foot within
    PATCH_FLAT: G singular, each point its own Baumgarte target), from their steps' warm starts, where ADMM with De
    Saxcé's shift taken from G z + g stalled (one of them diverged to NaN): ADMM meets tol = 1e-8 within its 1,000
    iterations, and its λ and σ = G λ + g agree with Pinocchio's ADMMConstraintSolver solved to 1e-11."""
    G, g, mu, lam = (ROLLED_FEET[f"{name}{k}"] for name in ("G", "g", "mu", "lam"))
    nc = len(mu)
    sigma, stats = np.empty(len(g)), np.zeros(5)
    assert solve_admm(G, g, mu, nc, lam, 1e-8, 1000, 0.0, 1e-6, sigma, stats), (ROLLED_FEET["source"][k], stats)
    assert np.isfinite(lam).all() and stats[1] <= 1e-8
    ref, _ = _pinocchio_solve("admm", G, g, mu, tol=1e-11)
    assert np.abs(lam - ref).max() <= 1e-6 * np.abs(ref).max()
    assert np.abs(G @ lam + g - (G @ ref + g)).max() <= 2e-8


def test_a_non_finite_impulse_is_never_a_solution():
    """problem_residuals of a λ holding a NaN or an inf is inf (Python's max() would pass over a NaN and report 0):
    a solver whose iterates overflow cannot report convergence."""
    G, g, mu = _random_problem(3, 2)
    for bad in (np.nan, np.inf):
        lam = np.zeros(6)
        lam[4] = bad
        stats = np.zeros(5)
        assert problem_residuals(G, g, mu, 2, lam, np.empty(6), stats) == np.inf and (stats[2:] == np.inf).all()


def test_delassus_matrix_against_pinocchio():
    """G = J M⁻¹ Jᵀ of the cube resting on its four corners, tilted and spinning, against computeDelassusMatrix."""
    m = cube()
    q = dp.neutral(m)
    R = pin.rpy.rpyToMatrix(0.02, -0.03, 0.4)
    q[3:] = pin.Quaternion(R).coeffs()
    q[2] = 0.1 - 1e-4
    stepper = ContactStepper(m, dp.Ground(friction=0.5), dp.ContactSettings(margin=0.02), 1e-3)
    P = stepper.problem(q, np.zeros(6), np.zeros(6))
    assert P["nc"] == 4
    pm = dp.to_pinocchio(m)
    pd = pm.createData()
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    pin.forwardKinematics(pm, pd, q)
    for x in P["points"]:
        local = pd.oMi[1].actInv(x)
        c = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, 1, pin.SE3(np.eye(3), local),
                                     pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)  # fmt: skip
        models.append(c)
        datas.append(c.createData())
    G_pin = pin.computeDelassusMatrix(pm, pd, q, models, datas, 0.0)
    # Pinocchio 4.1 returns it in each contact's LOCAL frame (the body's axes), whatever reference_frame says: ours,
    # in the ground's frame (t₁, t₂, n), is carried there by the body's rotation
    B = np.kron(np.eye(4), pd.oMi[1].rotation)
    assert np.abs(B.T @ P["G"] @ B - G_pin).max() <= 1e-9 * np.abs(G_pin).max()
    Minv = pin.computeMinverse(pm, pd, q)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    assert np.abs(P["J"] @ Minv @ P["J"].T - P["G"]).max() <= 1e-9 * np.abs(G_pin).max()


# ---------------------------------------------------------------------------------------
# Loops solved with the contacts, compliance, bad input.
# ---------------------------------------------------------------------------------------


def walker():
    """A 2 kg free-flying trunk on a parallelogram leg: two 0.3 m links from the trunk, a foot bar between their ends
    closed by a spherical cut (its out-of-plane row is one no velocity reaches), a sphere at each corner of the foot."""
    b = dp.ModelBuilder("walker")
    b.add_body(0, joint="free-flyer", mass=2.0, inertia=np.diag([0.02, 0.03, 0.04]), link="trunk")
    for side, x in (("a", -0.1), ("b", 0.1)):
        b.add_body("trunk", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), (x, 0, 0)), mass=0.2,
                   com=(0, 0, -0.15), inertia=np.eye(3) * 1e-3, link=f"leg_{side}")  # fmt: skip
    b.add_body("leg_a", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), (0, 0, -0.3)), mass=0.3,
               com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3, link="foot")  # fmt: skip
    b.add_loop("close", "spherical", "foot", "leg_b", (np.eye(3), (0.2, 0, 0)), (np.eye(3), (0, 0, -0.3)))
    for x in (-0.05, 0.25):
        for y in (-0.1, 0.1):
            b.add_collision("foot", dp.Sphere(0.02), placement=(np.eye(3), (x, y, 0)))
    b.add_passive("joint_3", "joint_4")
    return b.build()


def mixed_joints():
    """A seeded tree on a free-flyer through universal (2-DOF), spherical, prismatic, helical and revolute joints, a
    sphere on each body: G's φ̂ = Î φ̃ reads Î_k for 1-, 2-, 3- and 6-DOF joints."""
    rng = np.random.default_rng(11)
    b = dp.ModelBuilder("mixed")
    b.add_body(0, joint="free-flyer", mass=2.0, inertia=np.diag([0.02, 0.03, 0.04]), link="base")
    parent = 1
    for kind in ("universal", "spherical", "prismatic", "universal", "revolute", "helical"):
        parent = add_random_body(b, rng, parent, kind, pitch=0.05 if kind == "helical" else None)
    for link in b.build().link_names[1:]:
        b.add_collision(link, dp.Sphere(0.03))
    return b.build()


@pytest.mark.parametrize("scene", ["solo12", "walker", "mixed"])
def test_delassus_matrix_of_trees_and_loops(scene):
    """G from the backward recursion alone, a column's sweep over the bodies its row moves, is J M⁻¹ Jᵀ: solo12 on
    its four feet against Pinocchio's M⁻¹ (each row moves one leg and the base, the other legs skipped); the walker
    on its foot with its loop's rows (dense columns) against the inverse of the dense GIM (Pinocchio needs a
    depth-first tree); and a step's v⁺ − v_f is M⁻¹ Jᵀ λ."""
    if scene == "solo12":
        m, q0, pd = solo12_standing()
        q0[2] -= 0.05 - 2e-4
        rng = np.random.default_rng(5)
        v, tau = rng.normal(0, 0.5, m.nv), rng.normal(0, 1.0, m.nv)
    elif scene == "walker":
        m = walker()
        q0 = dp.neutral(m)
        q0[2] = 0.3 + 0.02 - 1e-4  # the foot's spheres 0.1 mm deep
        v, tau = np.zeros(m.nv), np.zeros(m.nv)
    else:
        m = mixed_joints()
        q0 = dp.random_configuration(m, 3)
        q0[:3] = 0.0
        rng = np.random.default_rng(4)
        v, tau = rng.normal(0, 0.5, m.nv), rng.normal(0, 1.0, m.nv)
        d = m.create_data()
        dp.forward_kinematics(m, d, q0)
        heights = [d.oR[c.body] @ c.translation + d.op[c.body] for c in m.collisions]
        q0[2] -= min(h[2] for h in heights) - 0.03 + 1e-4  # the lowest sphere 0.1 mm deep
    margin = 10.0 if scene == "mixed" else dp.ContactSettings().margin  # mixed: every sphere a contact
    stepper = ContactStepper(m, dp.Ground(), dp.ContactSettings(margin=margin), 1e-3)
    P = stepper.problem(q0, v, tau)
    assert P["nc"] >= 4 and P["G"].shape[0] == 3 * P["nc"] + m.n_constraints
    if scene == "solo12":
        pm = dp.to_pinocchio(m)
        Minv = pin.computeMinverse(pm, pm.createData(), q0)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
    else:  # not depth-first, which Pinocchio's computeMinverse needs: the dense GIM (the composite route), inverted
        Minv = np.linalg.inv(dp.gim(m, m.create_data(), q0))
    ref = P["J"] @ Minv @ P["J"].T
    assert np.abs(P["G"] - ref).max() <= 1e-9 * np.abs(ref).max()
    q1, v1, rec = stepper.step(q0, v, tau)
    lam = np.r_[rec["impulses"].ravel(), rec["loop_impulses"]]
    dv = Minv @ (stepper.problem(q0, v, tau)["J"].T @ lam)
    assert np.abs(v1 - P["v_free"] - dv).max() <= 1e-9 * max(np.abs(dv).max(), 1e-12)


@pytest.mark.parametrize("solver", ["admm", "pgs"])
def test_loops_are_solved_with_the_contacts(solver):
    """The walker dropped from 2 cm, its hip held by PD: its loop stays closed on every step (the loop rows are in the
    contact problem), and at rest the ground carries its weight: Σ λ_n = m g dt (to 0.1%), the loop's reaction and
    the contact impulses from one solve."""
    m = walker()
    q0 = dp.neutral(m)
    q0[2] = 0.3 + 0.02 + 0.02
    q0[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.05, 0, 0)).coeffs()  # rolled a little: two feet land first
    dt = 1e-3

    def tau(t, q, v):  # PD on the hip joint_2 (q[7], v[6]) to its neutral angle; the loop's joints are passive
        out = np.zeros(m.nv)
        out[6] = -50.0 * q[7] - 2.0 * v[6]
        return out

    tr = dp.simulate(m, q0, np.zeros(m.nv), 1.5, dt, tau=tau, ground=dp.Ground(friction=1.0),
                     contact=dp.ContactSettings(solver=solver), progress=False)  # fmt: skip
    r = np.array([np.abs(dp.loop_residual(m, q)).max() for q in tr.q])
    assert r.max() <= 1e-6  # while it falls, lands and settles
    assert r[-100:].max() <= 1e-9  # at rest
    weight = m.masses.sum() * G0 * dt
    last = tr.contacts[-2]
    assert len(last["points"]) == 4
    assert abs(last["impulses"][:, 2].sum() / weight - 1) < 1e-3
    assert np.abs(tr.v[-1]).max() < 1e-3
    # the solves that stop at the iteration cap (a few stick–slip transitions of four feet and a loop) say so, and
    # stay close: at most 5% of the steps, residuals ≤ 1e-4 m/s
    converged(tr, share=0.95, worst=1e-4)


def test_compliant_contact_settles_at_m_g_over_k():
    """ContactSettings(compliance=(k, c)): a 1 kg ball rests at the depth m g / k (within 1%)."""
    m = ball(0.1)
    q0 = dp.neutral(m)
    q0[2] = 0.1
    k, c = 1e4, 200.0
    tr = dp.simulate(m, q0, np.zeros(6), 1.0, 1e-3, ground=dp.Ground(),
                     contact=dp.ContactSettings(compliance=(k, c)), progress=False)  # fmt: skip
    depth = 0.1 - tr.q[-1, 2]
    assert abs(depth / (G0 / k) - 1) < 0.01
    converged(tr)


def test_bad_contact_input_is_refused():
    with pytest.raises(ValueError, match="Sphere radius"):
        dp.Sphere(-1.0)
    with pytest.raises(ValueError, match="three edge lengths"):
        dp.Box((1.0, 2.0))
    with pytest.raises(ValueError, match="Capsule length"):
        dp.Capsule(0.1, float("nan"))
    with pytest.raises(ValueError, match="no such mesh file"):
        dp.Mesh("/nonexistent/foot.stl")
    with pytest.raises(ValueError, match="normal"):
        dp.Ground(normal=(0, 0, 0))
    with pytest.raises(ValueError, match="restitution"):
        dp.Ground(restitution=1.5)
    with pytest.raises(ValueError, match="solver must be one of admm, pgs"):
        dp.ContactSettings(solver="lemke")
    for bad in ((-1.0, 0.0), (None, 1.0), "soft"):
        with pytest.raises(ValueError, match="compliance"):
            dp.ContactSettings(compliance=bad)
    with pytest.raises(ValueError, match="stabilization"):
        dp.ContactSettings(stabilization="half")
    b = dp.ModelBuilder("m")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3), link="body")
    with pytest.raises(dp.ModelError, match="links are: universe, body"):
        b.add_collision("nope", dp.Sphere(0.1))
    with pytest.raises(dp.ModelError, match="needs a shape"):
        b.add_collision("body", "sphere")
    bare = b.build()
    with pytest.raises(dp.ModelError, match="no collision shapes"):
        dp.simulate(bare, dp.neutral(bare), np.zeros(6), 0.01, 1e-3, ground=dp.Ground())
    m = ball()
    with pytest.raises(ValueError, match="semi-implicit Euler"):
        dp.simulate(m, dp.neutral(m), np.zeros(6), 0.01, 1e-3, method="rk45", ground=dp.Ground())
    with pytest.raises(ValueError, match="dp.Ground"):
        dp.simulate(m, dp.neutral(m), np.zeros(6), 0.01, 1e-3, ground="floor")


def test_mesh_feet_give_a_reduced_patch(tmp_path):
    """A mesh box lying flat gives its deepest vertex and its extremes, not every vertex; its motion matches the
    primitive box's."""
    import trimesh

    path = tmp_path / "foot.stl"
    trimesh.creation.box((0.2, 0.2, 0.2)).subdivide().subdivide().export(path)
    b = dp.ModelBuilder("meshcube")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.04 / 6, link="cube")
    b.add_collision("cube", dp.Mesh(path))
    m = b.build()
    q0 = dp.neutral(m)
    q0[2] = 0.1
    v0 = [1.0, 0, 0, 0, 0, 0]
    tr = dp.simulate(m, q0, v0, 0.3, 1e-3, ground=dp.Ground(friction=0.4), progress=False)
    ref = dp.simulate(cube(), q0, v0, 0.3, 1e-3, ground=dp.Ground(friction=0.4), progress=False)
    assert max(len(c["points"]) for c in tr.contacts) <= 5
    assert np.abs(tr.q - ref.q).max() < 1e-6


def test_collisions_travel_with_the_model():
    """Edits made from the model's own fields and pickling keep its collisions."""
    import pickle

    m = cube()
    for edited in (dp.with_passive(m, []), dp.with_limits(m, velocity=np.full(6, 3.0)), m.add_frame("tip", "cube"),
                   pickle.loads(pickle.dumps(m))):  # fmt: skip
        same = [(c.name, c.body, c.shape) for c in m.collisions]
        assert [(c.name, c.body, c.shape) for c in edited.collisions] == same


def _world_collisions(model, q) -> dict:
    data = model.create_data()
    dp.forward_kinematics(model, data, q)
    return {c.name: (data.oR[c.body] @ c.rotation, data.oR[c.body] @ c.translation + data.op[c.body], c)
            for c in model.collisions}  # fmt: skip


def test_collisions_travel_through_lock_joints_and_attach():
    """lock_joints merges a locked link, its shapes with it; attach brings the tool's shapes, names prefixed: every
    shape is where it was in the world, with its shape, bits and friction."""
    from conftest import ROOT

    from denoc_pin.loaders.edits import transfer_state

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # actuators, armature: beyond the rigid bodies
        m = dp.load_mjcf(ROOT / "tests" / "data" / "menagerie" / "unitree_go2" / "go2.xml")
    rng = np.random.default_rng(3)
    q = dp.neutral(m)
    q[:3], q[3:7] = (0.1, -0.2, 0.3), pin.Quaternion(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)).coeffs()
    q[7:] = rng.uniform(-0.5, 0.5, m.nq - 7)
    before = _world_collisions(m, q)
    locked = dp.lock_joints(m, ["FL_calf_joint", "RR_thigh_joint"], q)
    q_locked = transfer_state(m, locked, q, np.zeros(m.nv))[0]
    after = _world_collisions(locked, q_locked)
    assert after.keys() == before.keys()
    for name, (R, p, c) in before.items():
        R2, p2, c2 = after[name]
        np.testing.assert_allclose(R2, R, atol=1e-12)
        np.testing.assert_allclose(p2, p, atol=1e-12)
        assert (c2.shape, c2.group, c2.mask, c2.friction) == (c.shape, c.group, c.mask, c.friction)
    foot = next(c for c in locked.collisions if c.name == "FL")  # the calf merged into the thigh, its foot with it
    assert foot.body == locked.link_names.index("FL_thigh")
    tool = cube(0.5, 0.1, name="gripper")
    X = (pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.1, 0.0, 0.05]))
    held = dp.attach(m, "base", tool, placement=X, prefix="tool_")
    assert [c.name for c in held.collisions] == [c.name for c in m.collisions] + ["tool_" + tool.collisions[0].name]
    q_held = transfer_state(m, held, q, np.zeros(m.nv))[0]
    world = _world_collisions(held, q_held)
    data = m.create_data()
    base = dp.frame_placement(m, data, q, "base")
    R, p, _ = world["tool_" + tool.collisions[0].name]
    np.testing.assert_allclose(R, base[:3, :3] @ X[0], atol=1e-12)
    np.testing.assert_allclose(p, base[:3, :3] @ X[1] + base[:3, 3], atol=1e-12)


# ---------------------------------------------------------------------------------------
# Collision shapes from URDF files.
# ---------------------------------------------------------------------------------------

URDF = """<robot name="r">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial>{collision}</link>
</robot>"""


def test_urdf_collisions_are_read(tmp_path):
    """Each <collision> becomes a dp.Collision on its link's body, its origin composed; a bad one is left out with a
    warning naming the link (refused when strict), as a bad <visual> is."""
    f = tmp_path / "r.urdf"
    f.write_text(URDF.format(collision="""<collision><origin xyz="0 0 -0.1" rpy="0 0 0"/><geometry>
        <cylinder radius="0.05" length="0.2"/></geometry></collision><collision><geometry><box size="0.1 0.2 0.3"/>
        </geometry></collision>"""))  # fmt: skip
    m = dp.load_urdf(f, root_joint="free-flyer")
    assert [type(c.shape).__name__ for c in m.collisions] == ["Cylinder", "Box"]
    assert np.allclose(m.collisions[0].translation, [0, 0, -0.1]) and m.collisions[1].shape.size == (0.1, 0.2, 0.3)
    assert all(c.body == 1 and c.group == 1 and c.mask == 0 for c in m.collisions)
    f.write_text(URDF.format(collision='<collision><geometry><sphere radius="-1"/></geometry></collision>'))
    with pytest.warns(dp.ModelWarning, match=r"link 'base' \(line 2\): <collision> 0: Sphere radius"):
        assert dp.load_urdf(f, root_joint="free-flyer").collisions == ()
    with pytest.raises(dp.ModelError, match="Sphere radius must be a positive number"):
        dp.load_urdf(f, root_joint="free-flyer", strict=True)
    f.write_text(URDF.format(collision='<collision><geometry><mesh filename="package://nope/foot.stl"/></geometry>'
                                       "</collision>"))  # fmt: skip
    with pytest.warns(dp.ModelWarning, match="collision mesh 'package://nope/foot.stl' not found"):
        assert dp.load_urdf(f, root_joint="free-flyer").collisions == ()
    with pytest.raises(dp.ModelError, match="not found"):
        dp.load_urdf(f, root_joint="free-flyer", strict=True)


def solo12_standing():
    """solo12 from example-robot-data, its 17 collision meshes found through package://, 5 cm above the ground in a
    crouch, and the PD that holds that crouch."""
    from denoc_pin.loaders.robots import example_robot_urdf

    m = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    qj = np.array([0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6])
    q0 = dp.neutral(m)
    q0[7:] = qj
    stepper = ContactStepper(m, dp.Ground(), dp.ContactSettings(margin=1.0), 1e-3)
    depth = stepper.contacts(q0)[3]
    q0[2] = -depth.min() + 0.05
    return m, q0, dp.JointPD(m, 20.0, 0.5, q0)


def test_solo12_stands_on_its_mesh_feet():
    """solo12 dropped from 5 cm under joint PD (dp.JointPD: the run is one compiled loop): only the four feet touch
    (each a patch of at most five vertices), and at rest they carry its weight (1%)."""
    m, q0, pd = solo12_standing()
    assert len(m.collisions) == 17 and all(isinstance(c.shape, dp.Mesh) for c in m.collisions)
    tr = dp.simulate(m, q0, np.zeros(m.nv), 1.0, 1e-3, tau=pd, ground=dp.Ground(friction=0.9), progress=False)
    last = tr.contacts[-2]
    assert {b for _, b in last["collisions"]} == {f"{leg}_FOOT_collision_0" for leg in ("FL", "FR", "HL", "HR")}
    assert len(last["points"]) <= 20
    assert abs(last["forces"][:, 2].sum() / (m.masses.sum() * G0) - 1) < 0.01
    assert -min(d.min() for d in (c["depths"] for c in tr.contacts) if len(d)) <= 1e-3
    converged(tr, share=0.9, worst=1e-2)


def test_a_mesh_patch_holds_its_deepest_vertex_wherever_the_search_starts():
    """A mesh's vertex chunks are read from the one that held its deepest vertex at the last detection, and only those
    that can come within PATCH_FLAT of the deepest found so far: on solo12's mesh feet in 200 random poses at the
    ground, each touching mesh's patch holds its deepest vertex (every vertex's height in NumPy, from the shape pose the
    step used) and no point more than PATCH_FLAT above it, and the contacts are the same to the bit when every
    search starts from another chunk."""
    from denoc_pin.contact.detection import PATCH_FLAT
    from denoc_pin.core.records import contact_work_arrays
    from denoc_pin.core.views import COL_VCOUNT, COL_VSTART

    m, q0, _ = solo12_standing()
    stepper = ContactStepper(m, dp.Ground(), dp.ContactSettings(), 1e-3)
    work, geo = contact_work_arrays(stepper.scene.work), stepper.scene.geometry
    rng = np.random.default_rng(3)
    touching = 0
    for _ in range(200):
        q = q0.copy()
        q[2] -= 0.05 + rng.uniform(-0.005, 0.01)
        q[3:7] += rng.normal(0.0, 0.05, 4)
        q[3:7] /= np.linalg.norm(q[3:7])
        q[7:] += rng.normal(0.0, 0.2, 12)
        first = stepper.contacts(q)
        work.hint[:] = rng.integers(0, 40, len(work.hint))  # any chunk (past a mesh's last: its last)
        again = stepper.contacts(q)
        assert first[5] == again[5]
        for a, b in zip(first[:5], again[:5], strict=True):
            assert np.array_equal(a, b)
        depths, keys = first[3], first[5]
        for col in {k[1] for k in keys}:
            row = geo.rows[col]
            vs, nv = int(row[COL_VSTART]), int(row[COL_VCOUNT])
            height = (geo.verts[vs : vs + nv] @ work.col_R[col].T + work.col_p[col])[:, 2]  # the ground: z = 0
            mine = [i for i, k in enumerate(keys) if k[1] == col]
            assert abs(depths[mine].min() - height.min()) <= 1e-12
            assert depths[mine].max() <= height.min() + PATCH_FLAT + 1e-12
            touching += 1
    assert touching > 300


def test_the_compiled_run_is_the_stepwise_run(monkeypatch):
    """The one compiled loop (τ a JointPD) and one compiled step a call from Python (τ a callback evaluating the same
    law) are the same arithmetic: solo12's landing matches to rounding, state, torques and contacts, recorded every
    7th of 300 steps (the last 6 steps recorded in no row), and the same again when the compiled run's contact
    records are emptied every 2 recorded rows (``RECORD_SLOTS``); the law itself is τ_ff + K_p (q_ref ⊖ q) +
    K_d (v_ref − v), zero on the free-flyer."""
    from denoc_pin.simulation import contact_simulation

    m, q0, pd = solo12_standing()
    v0 = np.zeros(m.nv)
    v0[6:] = 0.3
    ground = dp.Ground(friction=0.9)

    def run(tau):
        return dp.simulate(m, q0, v0, 0.3, 1e-3, tau=tau, ground=ground, record_every=7, progress=False)

    a, b = run(pd), run(lambda t, q, v: pd(t, q, v))
    capacity = ContactStepper(m, ground, dp.ContactSettings(), 1e-3).capacity  # 17 meshes, at most 5 points each
    assert capacity == 85
    monkeypatch.setattr(contact_simulation, "RECORD_SLOTS", 2 * capacity)
    c = run(pd)
    for x in (a, c):
        assert len(x.t) == len(b.t) == 43
        for u, w in ((x.q, b.q), (x.v, b.v), (x.tau, b.tau), (x.a, b.a), (x.energy["work"], b.energy["work"])):
            assert np.abs(u - w).max() <= 1e-9 * max(1.0, np.abs(w).max())
        for ca, cb in zip(x.contacts, b.contacts, strict=True):
            assert ca["collisions"] == cb["collisions"]
            for key in ("points", "normals", "forces", "depths"):
                assert np.abs(ca[key] - cb[key]).max(initial=0.0) <= 1e-9 * max(1.0, np.abs(cb[key]).max(initial=0))
            assert ca["iterations"] == cb["iterations"] and ca["converged"] == cb["converged"]
    landed = [i for i, x in enumerate(b.contacts) if len(x["points"])]
    assert landed and len(landed) > len(a.t) // 2
    q, v = a.q[20], a.v[20]
    expected = 20.0 * dp.difference(m, q, q0) + 0.5 * (0.0 - v)
    expected[:6] = 0.0
    assert np.abs(a.tau[20] - expected).max() <= 1e-12 * np.abs(expected).max()


def test_joint_pd_checks_its_input():
    m = ball()
    with pytest.raises(dp.ModelError, match="JointPD needs a denoc_pin.Model"):
        dp.JointPD("ball", 1.0, 1.0, np.zeros(7))
    with pytest.raises(ValueError, match="JointPD kp must be finite and >= 0"):
        dp.JointPD(m, -1.0, 1.0, dp.neutral(m))
    with pytest.raises(ValueError, match="JointPD kd must be a number or an \\(6,\\) array"):
        dp.JointPD(m, 1.0, "stiff", dp.neutral(m))
    with pytest.raises(ValueError, match="JointPD kp"):
        dp.JointPD(m, np.ones(5), 1.0, dp.neutral(m))
    with pytest.raises(ValueError, match="JointPD q_ref"):
        dp.JointPD(m, 1.0, 1.0, np.zeros(3))
    other = cube()
    with pytest.raises(ValueError, match="JointPD of model 'cube'"):
        dp.simulate(m, dp.neutral(m), np.zeros(6), 0.01, 1e-3, tau=dp.JointPD(other, 1.0, 1.0, dp.neutral(other)),
                    ground=dp.Ground())  # fmt: skip
    assert not np.any(dp.JointPD(m, 5.0, 5.0, dp.neutral(m)).kp)  # a free-flyer alone: nothing driven


@pytest.mark.parametrize("scene", ["solo12", "walker"])
def test_a_batch_is_its_runs(scene):
    """dp.simulate_batch runs each state as dp.simulate's compiled loop does, its runs spread over the threads: the
    same rows to rounding, solo12 under a JointPD and the walker (a closed loop on the ground) under a constant τ."""
    rng = np.random.default_rng(7)
    if scene == "solo12":
        m, q0, tau = solo12_standing()
        B, T = 5, 0.3
    else:
        m = walker()
        q0 = dp.neutral(m)
        q0[2] = 0.3 + 0.02 + 0.01
        tau, B, T = np.full(m.nv, 0.0), 3, 0.2
    q0s = np.stack([q0] * B)
    q0s[:, 2] += rng.uniform(0, 0.02, B)
    v0s = np.zeros((B, m.nv))
    v0s[:, :3] = rng.normal(0, 0.2, (B, 3))
    ground = dp.Ground(friction=0.9)
    out = dp.simulate_batch(m, q0s, v0s, T, 1e-3, tau=tau, ground=ground, record_every=10)
    assert out["errors"] == {} and out["q"].shape == (B, int(round(T / 1e-3)) // 10 + 1, m.nq)
    for b in range(B):
        tr = dp.simulate(m, q0s[b], v0s[b], T, 1e-3, tau=tau, ground=ground, record_every=10, progress=False)
        np.testing.assert_allclose(out["t"], tr.t)
        assert np.abs(out["q"][b] - tr.q).max() <= 1e-12 and np.abs(out["v"][b] - tr.v).max() <= 1e-9
        assert out["solved"][b] == pytest.approx(np.mean([c["converged"] for c in tr.contacts[:-1]]))


def test_a_batch_checks_its_input():
    m, q0, pd = solo12_standing()
    with pytest.raises(ValueError, match="not a callable"):
        dp.simulate_batch(m, [q0], tau=lambda t, q, v: np.zeros(m.nv), ground=dp.Ground())
    with pytest.raises(ValueError, match=r"v0s must be finite and \(B, nv\)"):
        dp.simulate_batch(m, [q0, q0], np.zeros((1, m.nv)), ground=dp.Ground())
    with pytest.raises(ValueError, match="record_every"):
        dp.simulate_batch(m, [q0], ground=dp.Ground(), record_every=0)
    with pytest.raises(ValueError, match="JointPD of model"):
        dp.simulate_batch(m, [q0], tau=dp.JointPD(walker(), 1.0, 0.1, dp.neutral(walker())), ground=dp.Ground())


def test_a_batch_without_contacts_is_each_runs_rk4():
    """simulate_batch without ground and contact: each run is dp.simulate's compiled RK4 run (the same kernel, the
    same numbers, bit for bit), the runs on the call protocol's threads; closed loops and a JointPD are refused with
    what to use instead."""
    m = dp.models.chain(4)
    rng = np.random.default_rng(5)
    q0s, v0s = rng.uniform(-1, 1, (5, m.nq)), 0.5 * rng.normal(size=(5, m.nv))
    tau = 1e-4 * rng.normal(size=m.nv)  # the chain's links weigh 4 g
    out = dp.simulate_batch(m, q0s, v0s, t_final=0.2, dt=1e-3, tau=tau, record_every=10, threads=2)
    assert out["q"].shape == (5, 21, m.nq) and not out["errors"]
    for b in range(5):
        tr = dp.simulate(m, q0s[b], v0s[b], 0.2, 1e-3, tau=tau, record_every=10, progress=False)
        assert (tr.q == out["q"][b]).all() and (tr.v == out["v"][b]).all()
    with pytest.raises(ValueError, match="closed loops"):
        loop = dp.models.spatial_four_bar()
        dp.simulate_batch(loop, dp.assemble(loop, dp.neutral(loop))[None], t_final=0.01, dt=1e-3)
    with pytest.raises(ValueError, match="JointPD"):
        dp.simulate_batch(m, q0s, t_final=0.01, dt=1e-3, tau=dp.JointPD(m, 1.0, 0.1, q0s[0]))


def test_a_method_with_a_ground_is_the_contact_steps_or_refused():
    """With a ground the step is semi-implicit Euler: method="semi-implicit" (the default) runs it; "rk4" or an
    adaptive method, which the contact step does not take, is refused with the methods listed — never a silent
    substitution; "semi-implicit" without contacts is refused too."""
    model = dp.ModelBuilder("ball")
    model.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 4e-3, link="ball")
    model.add_collision("ball", dp.Sphere(0.1))
    model = model.build()
    q0 = dp.neutral(model)
    q0[2] = 0.099
    ground = dp.Ground()
    a = dp.simulate(model, q0, np.zeros(6), 0.01, 1e-3, ground=ground, progress=False)
    b = dp.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method="semi-implicit", ground=ground, progress=False)
    assert np.array_equal(a.q, b.q)
    for method in ("rk4", "rk45", "euler"):
        with pytest.raises(ValueError, match=f"method must be one of semi-implicit \\(the default\\); got '{method}'"):
            dp.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method=method, ground=ground, progress=False)
    with pytest.raises(ValueError, match=r"method must be one of rk4, rk45, dop853 \(and semi-implicit with a ground"):
        dp.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method="semi-implicit", progress=False)
    with pytest.raises(ValueError, match="method must be semi-implicit \\(the default\\); got 'rk4'"):
        dp.step_derivatives(model, model.create_data(), q0, np.zeros(6), np.zeros(6), 1e-3, "rk4", ground=ground)
