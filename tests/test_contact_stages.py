"""The contact step's stages (denoc_pin/contact/pipeline.py), each called on its own on a tilted cube resting on its
corners, against a second route: Pinocchio's mass matrix and frame velocities, closed forms, the solvers' own
entry points."""

import numpy as np
import pinocchio as pin
import pytest

import denoc_pin as dp
from denoc_pin.contact import ContactStepper, solve_admm
from denoc_pin.contact import pipeline as st
from denoc_pin.contact.stepping import INFO, settings_numbers
from denoc_pin.core.records import contact_records, contact_work, contact_work_arrays, shape_pairs
from denoc_pin.core.views import SET_BETA

DT = 1e-3


def cube_scene(speed=0.0, restitution=0.0):
    """A 0.2 m cube, turned a little, its lowest corner 0.1 mm into a ground of μ 0.5; its stepper and state."""
    b = dp.ModelBuilder("cube")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.04 / 6, link="cube")
    b.add_collision("cube", dp.Box((0.2, 0.2, 0.2)))
    m = b.build()
    q = dp.neutral(m)
    q[3:] = pin.Quaternion(pin.rpy.rpyToMatrix(0.02, -0.03, 0.4)).coeffs()
    q[2] = 0.1 - 1e-4
    ground = dp.Ground(friction=0.5, restitution=restitution)
    s = ContactStepper(m, ground, dp.ContactSettings(margin=0.02), DT)
    rng = np.random.default_rng(3)
    v = rng.normal(size=6) * 0.1
    v[2] -= speed
    return m, s, q, v, rng.normal(size=6)


ROUTES = ["factored", "sweeps"]  # M = Lᵀ L where it pays (pipeline.factor_pays); Table 3's sweeps elsewhere


def on_route(s, route):
    """The stepper, its work area swapped for one with room for M's factor Lᵀ L (nd = nv: its steps factor M, as on
    a scene where ``pipeline.factor_pays``) or without (nd = 0: Table 3's sweeps on the UDUᵀ factors, the route of a
    scene where the factor does not pay or of a model above ``pipeline.DENSE_STEP`` DOF)."""
    head = s.scene.work[:8].astype(int)
    work = contact_work(*head[:7], head[1] if route == "factored" else 0)
    contact_work_arrays(work).sweep_order[:] = contact_work_arrays(s.scene.work).sweep_order
    s.scene = s.scene._replace(work=work)
    return s


def staged(m, s, q, v, tau):
    """free_velocity and detect through the compiled stages; (work views, n_c)."""
    w = contact_work_arrays(s.scene.work)
    assert st.free_velocity(m.mi, m.mf, s.data.ws, q, v, tau, DT, w.v_free, s.scene.work) == 0
    nc = st.detect(s.scene.geometry, s.scene.ground, s.scene.settings, s.data.oR, s.data.op, shape_pairs(0),
                   s.scene.contacts, s.scene.work, s.scene.warm)  # fmt: skip
    return w, nc


@pytest.mark.parametrize("route", ROUTES)
def test_free_velocity_is_one_euler_step_of_pinocchio_aba(route):
    m, s, q, v, tau = cube_scene()
    on_route(s, route)
    w, _ = staged(m, s, q, v, tau)
    assert w.route[0] == (route == "factored")
    pm = dp.to_pinocchio(m)
    ref = v + DT * pin.aba(pm, pm.createData(), q, v, tau)
    assert np.abs(w.v_free - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


def test_detect_finds_the_corners_below_the_margin_at_their_depths():
    m, s, q, v, tau = cube_scene()
    _, nc = staged(m, s, q, v, tau)
    pm = dp.to_pinocchio(m)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q)
    corners = [pd.oMi[1].act(0.1 * np.array([x, y, z])) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    near = sorted(c[2] for c in corners if c[2] < 0.02)
    cts = s.scene.contacts
    assert nc == len(near) == 4
    assert np.abs(np.sort(cts.depth[:nc]) - near).max() <= 1e-14
    assert (cts.bodies[:nc, 0] == 0).all() and (cts.keys[:nc, 0] == -1).all() and (cts.mu[:nc] == 0.5).all()


def test_contact_rows_give_the_points_relative_velocity_in_the_contact_frame():
    """J v is each contact point's velocity (Pinocchio's, of a frame placed there) in the frame (t₁, t₂, n)."""
    m, s, q, v, tau = cube_scene()
    w, nc = staged(m, s, q, v, tau)
    J = np.zeros((3 * nc, m.nv))
    st.contact_rows(m.mi, m.mf, s.data.ws, s.scene.geometry.support, s.scene.contacts, nc, w.Jall, J)
    pm = dp.to_pinocchio(m)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, v)
    cts = s.scene.contacts
    for i in range(nc):
        local = pd.oMi[1].actInv(cts.points[i])
        vel = pd.oMi[1].rotation @ (pd.v[1].linear + np.cross(pd.v[1].angular, local))
        assert np.abs(J[3 * i : 3 * i + 3] @ v - cts.frames[i].T @ vel).max() <= 1e-13


@pytest.mark.parametrize("route", ROUTES)
def test_delassus_is_J_M_inverse_J_transposed_with_pinocchio_M(route):
    m, s, q, v, tau = cube_scene()
    on_route(s, route)
    w, nc = staged(m, s, q, v, tau)
    J = np.zeros((3 * nc, m.nv))
    st.contact_rows(m.mi, m.mf, s.data.ws, s.scene.geometry.support, s.scene.contacts, nc, w.Jall, J)
    G = np.zeros((3 * nc, 3 * nc))
    st.delassus(m.mi, m.mf, s.data.ws, J, s.scene.work, G)
    pm = dp.to_pinocchio(m)
    ref = J @ np.linalg.inv(pin.crba(pm, pm.createData(), q)) @ J.T
    assert np.abs(G - ref).max() <= 1e-12 * np.abs(ref).max()


@pytest.mark.parametrize("route", ROUTES)
def test_delassus_on_a_branched_tree_is_J_M_inverse_J_transposed(route):
    """solo12 (a base and four legs), 24 rows of J that reach the base alone, one leg, two legs or all, some with
    exact zeros inside a leg: each column's sweep visits its own bodies (the sweeps), the factor Lᵀ L fills nothing
    between legs (factored), and G = J M⁻¹ Jᵀ with Pinocchio's M, exactly symmetric."""
    from denoc_pin.loaders.robots import example_robot_urdf

    m = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    s = ContactStepper(m, dp.Ground(), dp.ContactSettings(), DT)
    on_route(s, route)
    rng = np.random.default_rng(5)
    q = dp.random_configuration(m, rng)
    w = contact_work_arrays(s.scene.work)
    v, tau = rng.normal(size=18), rng.normal(size=18)
    assert st.free_velocity(m.mi, m.mf, s.data.ws, q, v, tau, DT, w.v_free, s.scene.work) == 0
    assert w.route[0] == (route == "factored")
    blocks = [range(0, 6)] + [range(6 + 3 * i, 9 + 3 * i) for i in range(4)]  # the base's v, then each leg's
    J = np.zeros((24, m.nv))
    for i in range(24):
        for b in rng.choice(5, size=1 + i % 5, replace=False):
            cols = list(blocks[b])
            J[i, cols] = rng.normal(size=len(cols)) * (rng.random(len(cols)) < 0.8)
    G = np.zeros((24, 24))
    st.delassus(m.mi, m.mf, s.data.ws, J, s.scene.work, G)
    pm = dp.to_pinocchio(m)
    M = pin.crba(pm, pm.createData(), q)
    M = np.triu(M) + np.triu(M, 1).T
    ref = J @ np.linalg.solve(M, J.T)
    assert np.abs(G - ref).max() <= 1e-11 * np.abs(ref).max()
    assert np.array_equal(G, G.T)


def test_the_step_factors_M_only_where_it_pays():
    """The route (``pipeline.factor_pays``, once a scene): the factor Lᵀ L for the cube (Σ d² = 91 for its six DOFs on
    one path), Table 3's sweeps for a 36-link chain with one collision (Σ d² = n (n + 1) (2 n + 1) / 6); v_f the same
    either way."""
    from denoc_pin.core.layout import factor_cost

    m, s, q, v, tau = cube_scene()
    assert factor_cost(m.dof_parent) == 91 and st.factor_pays(m)
    chain = dp.models.chain(36)
    ball = dp.Collision("ball", chain.link_names[-1], chain.njoints - 1, dp.Sphere(0.05), np.eye(3), np.zeros(3))
    chain = dp.Model(**(chain.fields() | {"collisions": (ball,)}))
    assert factor_cost(chain.dof_parent) == 36 * 37 * 73 // 6 and not st.factor_pays(chain)
    q, v, tau = np.full(36, 0.1), np.zeros(36), np.ones(36)
    vf = {}
    for route in ROUTES:
        s = on_route(ContactStepper(chain, dp.Ground(), dp.ContactSettings(), DT), route)
        w = contact_work_arrays(s.scene.work)
        assert st.free_velocity(chain.mi, chain.mf, s.data.ws, q, v, tau, DT, w.v_free, s.scene.work) == 0
        assert w.route[0] == (route == "factored")
        vf[route] = w.v_free.copy()
    kappa = np.linalg.cond(dp.gim(chain, chain.create_data(), q))
    assert np.abs(vf["factored"] - vf["sweeps"]).max() <= 100 * np.finfo(float).eps * kappa * np.abs(vf["sweeps"]).max()


@pytest.mark.parametrize("case", ["rigid", "compliant", "impact"])
def test_bias_closes_gaps_corrects_penetration_and_rebounds(case):
    """g = J v_f + b in closed form: a penetration d < 0 corrected by β d / dt; compliance (k, c): k d / (k dt + c)
    and 1 / (dt (k dt + c)) on G's diagonal; an impact at 1 m/s with e = 0.5 leaves at e times its speed."""
    m, s, q, v, tau = cube_scene(speed=1.0 if case == "impact" else 0.0, restitution=0.5 if case == "impact" else 0)
    settings = dp.ContactSettings(margin=0.02, compliance=(1e4, 10.0) if case == "compliant" else None)
    sp = settings_numbers(settings)
    w, nc = staged(m, s, q, v, tau)
    J = np.zeros((3 * nc, m.nv))
    st.contact_rows(m.mi, m.mf, s.data.ws, s.scene.geometry.support, s.scene.contacts, nc, w.Jall, J)
    G, g = np.zeros((3 * nc, 3 * nc)), np.zeros(3 * nc)
    st.bias(J, v, w.v_free, s.scene.contacts, nc, None, m.mi, DT, sp, G, g)
    free, d = J @ w.v_free, s.scene.contacts.depth[:nc]
    n = slice(2, None, 3)
    tangential = np.r_[0 : 3 * nc : 3, 1 : 3 * nc : 3]
    assert np.abs(g[tangential] - free[tangential]).max() <= 1e-14  # the tangential rows carry no bias
    if case == "compliant":
        k, c = 1e4, 10.0
        assert np.allclose(g[n], free[n] + k * d / (k * DT + c), rtol=1e-14, atol=0)
        assert np.allclose(np.diag(G)[n], 1.0 / (DT * (k * DT + c)), rtol=1e-14, atol=0)
        return
    low = -(np.maximum(d, 0.0) + sp[SET_BETA] * np.minimum(d, 0.0)) / DT
    if case == "rigid":
        assert np.allclose(g[n], free[n] - low, rtol=1e-14, atol=1e-14)
    else:
        vb = (J @ v)[n]
        an = (free[n] - vb) / DT
        gap = np.maximum(d, 0.0)
        up = np.sqrt(np.maximum(0.25 * (vb * vb - 2 * an * gap) + 2 * an * gap, 0.0))
        hit = (vb < -0.05) & (d + DT * vb < 0)
        assert hit.any()
        assert np.allclose(g[n], free[n] - np.where(hit, np.maximum(low, up), low), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("route", ROUTES)
def test_solve_advance_and_keep_warm_match_the_solver_and_pinocchio(route):
    """solve: the NCP's λ as ``solve_admm`` gives it (the sticking guess, or ADMM from zero); advance: v⁺ = v_f +
    M⁻¹ Jᵀ λ with Pinocchio's M, q⁺ = q ⊕ dt v⁺ (on either route's factors of M); keep_warm: the impulses kept under
    their keys, read back by warm_start at the next step; record_step: the world forces F = frame λ / dt."""
    m, s, q, v, tau = cube_scene()
    on_route(s, route)
    sc = s.scene
    status, nc, mrows = st.contact_problem(m.mi, m.mf, s.data.ws, None, None, sc, shape_pairs(0), q, v, tau, DT)
    assert status == 0 and mrows == 3 * nc == 12
    w = contact_work_arrays(sc.work)
    assert w.route[0] == (route == "factored")
    J, G, g = w.J[: mrows * 6].reshape(mrows, 6), w.G[: mrows**2].reshape(mrows, mrows), w.g[:mrows]
    lam, stats = np.zeros(mrows), np.zeros(5)
    assert st.solve(G, g, sc.contacts.mu, nc, lam, sc.settings, sc.solver, stats) == 1
    ref, sigma = np.zeros(mrows), np.zeros(mrows)
    assert solve_admm(G, g, sc.contacts.mu, nc, ref, 1e-8, 1000, 0.0, 1e-6, sigma, np.zeros(5)) == 1
    assert np.abs(lam - ref).max() <= 1e-6 * np.abs(ref).max()  # two solves of one NCP, each within tol 1e-8 m/s
    q1, v1 = np.zeros(7), np.zeros(6)
    st.advance(m.mi, m.mf, s.data.ws, J, lam, w.v_free, q, DT, q1, v1, sc.work)
    pm = dp.to_pinocchio(m)
    ref_v = w.v_free + np.linalg.solve(pin.crba(pm, pm.createData(), q), J.T @ lam)
    assert np.abs(v1 - ref_v).max() <= 1e-12 * np.abs(ref_v).max()
    assert np.abs(q1 - pin.integrate(pm, q, DT * v1)).max() <= 1e-14
    st.keep_warm(sc.geometry, sc.contacts, nc, lam, sc.warm, 7, stats, 1)
    assert sc.contacts.info[INFO["contacts"]] == nc and sc.contacts.info[INFO["converged"]] == 1
    again = np.zeros(mrows)
    st.warm_start(sc.geometry, sc.settings, sc.warm, shape_pairs(0), sc.contacts, nc, 8, again)
    assert (again == lam).all()
    st.warm_start(sc.geometry, sc.settings, sc.warm, shape_pairs(0), sc.contacts, nc, 9, again)
    assert (again == 0).all()  # a start two steps old is not used
    rec = contact_records(2, len(sc.contacts.depth))
    st.record_step(sc.contacts, DT, 0, rec)
    st.record_rest(1, rec)
    F = np.einsum("kij,kj->ki", sc.contacts.frames[:nc], lam.reshape(nc, 3)) / DT
    assert rec.count[0] == nc and np.abs(rec.forces[0, :nc] - F).max() <= 1e-12 * np.abs(F).max()
    assert rec.count[1] == 0 and rec.info[1, INFO["converged"]] == 1.0
