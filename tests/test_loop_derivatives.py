"""Derivatives of the closed-loop dynamics (loops/loop_derivatives.py): every cut type, couplings, Cassie's redundant
loops and the closed-loop step, against central differences of the 50-digit referee (tools/referee.py), which
shares no recursion with the package; Pinocchio's computeConstraintDynamicsDerivatives where its constraint is ours."""

import warnings

import mpmath
import numpy as np
import pinocchio as pin
import pytest
from conftest import LOOP_ROUTES, ROOT, assert_close, loop_data
from test_loops import closed_random_tree

import denoc_pin as dp
from denoc_pin.loaders.robots import robots_dir
from denoc_pin.simulation.step import BAUMGARTE as STEP_BAUMGARTE
from denoc_pin.tools.referee import Referee
from denoc_pin.tools.validate import closed_configurations, pinocchio_loop_constraints

BAUMGARTE = (5.0, 3.0)


def unit_directions(nv):
    """(δq, δv, δτ) of every column of the three derivatives, in the order q, v, τ."""
    eye, z = np.eye(nv), np.zeros(nv)
    return [(e, z, z) for e in eye] + [(z, e, z) for e in eye] + [(z, z, e) for e in eye]


def against_referee(model, q, v, tau, baumgarte=BAUMGARTE, directions=None, rtol=1e-9, what="", route=None):
    """Every output (all columns, or the given directions) against the referee's 50-digit central differences; on
    the route the model's Data chooses, or the one given (``conftest.loop_data``)."""
    data = model.create_data() if route is None else loop_data(model, route)
    out = dp.constrained_forward_dynamics_derivatives(model, data, q, v, tau, baumgarte=baumgarte)
    ref = Referee(model, q, baumgarte=baumgarte, basis=data.reaction_basis)
    nv = model.nv
    full = directions is None
    directions = unit_directions(nv) if full else directions
    res = ref.derivatives(v, tau, directions)
    for w, name in enumerate(("q", "v", "tau")):
        if full:
            da = np.array([r[0] for r in res[w * nv : (w + 1) * nv]]).T
            dl = np.array([r[1] for r in res[w * nv : (w + 1) * nv]]).T
            ours_a, ours_l = out[w], out[3 + w]
        else:
            (da, dl), x = res[w], directions[w][w]
            ours_a, ours_l = out[w] @ x, out[3 + w] @ x
        assert_close(ours_a, da, rtol, what=f"{what} ∂q̈/∂{name}")
        assert_close(ours_l, dl, rtol, what=f"{what} ∂λ/∂{name}")
    return out


@pytest.mark.parametrize("route", LOOP_ROUTES)
@pytest.mark.parametrize("kind", list(dp.LOOP_TYPES))
def test_every_cut_type_against_50_digit_differences(kind, route):
    """Random trees of revolute, prismatic, spherical and universal joints closed by a cut of each type and a
    spherical one, slightly open (the Baumgarte terms and the off-manifold residual count), every column; on the
    GIM's factor and on Table 3's recursions."""
    model, q = closed_random_tree(10, [kind, "spherical"], n=8)
    rng = np.random.default_rng(0)
    q = dp.integrate(model, q, rng.uniform(-1, 1, model.nv) * 1e-2)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    against_referee(model, q, v, tau, what=f"{kind}, {route}", route=route)


def test_referee_is_the_dynamics():
    """The referee's own (q̈, λ) are ours to rounding: it differentiates the same function."""
    model, q = closed_random_tree(11, ["universal", "revolute"], n=7)
    rng = np.random.default_rng(1)
    q = dp.integrate(model, q, rng.uniform(-1, 1, model.nv) * 1e-2)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    a, lam = dp.constrained_forward_dynamics(model, model.create_data(), q, v, tau, baumgarte=BAUMGARTE)
    ar, lr = Referee(model, q, baumgarte=BAUMGARTE).forward(np.zeros(model.nv), v, tau)
    assert_close(a, np.array([float(x) for x in ar]), 1e-12, what="q̈")
    assert_close(lam, np.array([float(x) for x in lr]), 1e-12, what="λ")


def test_couplings_and_a_weld():
    """A chain welded to the world with a gear coupling (MJCF <weld> and <joint> equality): every column."""
    model = dp.load_mjcf(ROOT / "tests" / "mjcf" / "chain_weld.xml")
    assert model.coupled and [c.loop.type for c in model.cuts] == ["fixed"]
    rng = np.random.default_rng(2)
    q = dp.integrate(model, dp.neutral(model), rng.uniform(-1, 1, model.nv) * 1e-2)
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    against_referee(model, q, v, tau, what="chain_weld")


def _cassie():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        return dp.load_sdf(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf", "free-flyer")


@pytest.mark.parametrize("closed", [True, False])
@pytest.mark.parametrize("route", LOOP_ROUTES)
def test_cassie_redundant_loops(closed, route):
    """Cassie (free-flyer, four spherical cuts, 12 rows of which 10 independent where the legs are closed): random
    directions against the referee solving on the same basis of J's range; where closed, the rank rule drops two
    rows and the derivatives are those of the system on the remaining ten (the piece the dynamics are on, checked
    by float64 differences small enough to stay on it)."""
    model = _cassie()
    rng = np.random.default_rng(1)
    q = dp.integrate(model, dp.neutral(model), rng.uniform(-1, 1, model.nv) * 0.1)
    if closed:
        q = dp.assemble(model, q)
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    v -= np.linalg.pinv(J) @ (J @ v)
    tau = rng.uniform(-1, 1, model.nv)
    nv, z = model.nv, np.zeros(model.nv)
    dirs = [(rng.standard_normal(nv), z, z), (z, rng.standard_normal(nv), z), (z, z, rng.standard_normal(nv))]
    out = against_referee(model, q, v, tau, directions=dirs, what=f"cassie, {route}", route=route)
    data = loop_data(model, route)
    dp.constrained_forward_dynamics(model, data, q, v, tau, baumgarte=BAUMGARTE)
    assert data.reaction_basis.shape == ((12, 10) if closed else (12, 12))
    if closed:  # on the piece: h = 1e-7 keeps the rank at 10 along this direction
        h, d = 1e-7, dirs[0][0]
        ap, _ = dp.constrained_forward_dynamics(model, data, dp.integrate(model, q, h * d), v, tau, baumgarte=BAUMGARTE)
        assert data.reaction_basis.shape == (12, 10)
        am, _ = dp.constrained_forward_dynamics(model, data, dp.integrate(model, q, -h * d), v, tau,
                                                baumgarte=BAUMGARTE)  # fmt: skip
        assert_close(out[0] @ d, (ap - am) / (2 * h), 1e-6, what="Cassie ∂q̈/∂q against float64 differences")


def test_against_pinocchio_where_its_constraint_is_ours():
    """Pinocchio's CONTACT_6D/3D constraint (LOCAL) equals ours on the constraint manifold, not off it: its
    derivatives agree with ours along the manifold (∂/∂τ everywhere, ∂/∂q̇ along null(J)) at a closed state; off it
    each differentiates its own definition (ours checked against the referee above)."""
    model, _ = closed_random_tree(3, ["fixed", "spherical"], n=8, joints=("revolute", "prismatic", "spherical"))
    pm = dp.to_pinocchio(model)
    q = closed_configurations(model, 2, 1)[1]
    rng = np.random.default_rng(0)
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    v -= np.linalg.pinv(J) @ (J @ v)
    tau = rng.uniform(-1, 1, model.nv)
    pd, cms, cds = pinocchio_loop_constraints(model, pm)
    prox = pin.ProximalSettings(1e-14, 1e-12, 100)
    pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox)
    pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, prox)
    out = dp.constrained_forward_dynamics_derivatives(model, model.create_data(), q, v, tau)
    assert_close(out[2], pd.ddq_dtau, 1e-9, what="∂q̈/∂τ against Pinocchio")
    null = np.linalg.svd(J)[2][np.linalg.matrix_rank(J) :].T
    assert_close(out[1] @ null, pd.ddq_dv @ null, 1e-9, what="∂q̈/∂q̇ along null(J) against Pinocchio")
    # λ: Pinocchio's acts on link1 as [linear; angular], ours on link2 as [angular; linear], both in C1
    P, i = np.zeros((model.n_constraints,) * 2), 0
    for c in model.cuts:
        n = c.n_constraints
        P[i : i + n, i : i + n] = -np.eye(3) if n == 3 else -np.roll(np.eye(6), 3, axis=1)  # swap the halves
        i += n
    assert_close(out[5], P @ pd.dlambda_dtau, 1e-9, what="∂λ/∂τ against Pinocchio")


def test_batch_fast_path_fext_and_errors():
    model = dp.models.spatial_four_bar()
    data = model.create_data()
    rng = np.random.default_rng(3)
    Q = np.array([dp.integrate(model, dp.assemble(model, np.r_[0.4, 0, 0.3, 0, 1, 0.8]), rng.uniform(-.1, .1, 5))
                  for _ in range(5)])  # fmt: skip
    V, T = rng.uniform(-1, 1, (2, 5, model.nv))
    batch = dp.constrained_forward_dynamics_derivatives(model, data, Q, V, T, baumgarte=BAUMGARTE)
    assert [x.shape for x in batch] == [(5, 5, 5)] * 3 + [(5, 3, 5)] * 3
    for i in range(5):
        one = dp.constrained_forward_dynamics_derivatives(model, data, Q[i], V[i], T[i], baumgarte=BAUMGARTE)
        for x, y in zip(one, batch, strict=True):
            np.testing.assert_array_equal(x, y[i])
    # the fast path (second call on the same data) and the checked one (a list) agree bit for bit
    first = dp.constrained_forward_dynamics_derivatives(model, data, Q[0], V[0], T[0])
    again = dp.constrained_forward_dynamics_derivatives(model, data, list(Q[0]), V[0], T[0])
    for x, y in zip(first, again, strict=True):
        np.testing.assert_array_equal(x, y)
    # external forces (constant in the joint frames) against 4th-order differences of the dynamics with them
    fext = rng.uniform(-1, 1, (model.njoints, 6))
    q, v, tau = Q[0], V[0], T[0]
    out = dp.constrained_forward_dynamics_derivatives(model, data, q, v, tau, fext=fext, baumgarte=BAUMGARTE)

    def acc(s, d):
        return dp.constrained_forward_dynamics(model, data, dp.integrate(model, q, s * d), v, tau, fext=fext,
                                               baumgarte=BAUMGARTE)[0]  # fmt: skip

    h, d = 1e-3, rng.standard_normal(model.nv)
    fd = (-acc(2 * h, d) + 8 * acc(h, d) - 8 * acc(-h, d) + acc(-2 * h, d)) / (12 * h)
    assert_close(out[0] @ d, fd, 1e-8, what="∂q̈/∂q with fext")
    tree = dp.models.bundled("two_link")
    with pytest.raises(dp.ModelError, match="has no loop joints or couplings"):
        dp.constrained_forward_dynamics_derivatives(tree, tree.create_data(), dp.neutral(tree), [0, 0], [0, 0])
    with pytest.raises(ValueError, match="baumgarte gains must be finite and non-negative"):
        dp.constrained_forward_dynamics_derivatives(model, data, q, v, tau, baumgarte=(-1.0, 0.0))
    with pytest.raises(ValueError, match=r"needs q of shape \(2, 6\)|tau"):
        dp.constrained_forward_dynamics_derivatives(model, data, Q[:2], V[:2], T[:3])


def _mp_step(ref: Referee, dq, v, tau, dt):
    """One RK4 step of the closed loops in the referee's arithmetic, for a model whose joints are all on vector
    spaces (K_i = v_i): the chart coordinates x⁺ (q⁺ = q ⊕ x⁺) and v⁺."""
    nv = len(v)
    x0, v0 = list(dq), list(v)
    xs, vs = list(x0), list(v0)
    Ks, As = [mpmath.mpf(0)] * nv, [mpmath.mpf(0)] * nv
    for i, (c, w) in enumerate(zip((0.5, 0.5, 1.0, None), (1, 2, 2, 1), strict=True)):
        a, _ = ref.forward(xs, vs, tau)
        Ks = [k + w * x for k, x in zip(Ks, vs, strict=True)]
        As = [k + w * x for k, x in zip(As, a, strict=True)]
        if i < 3:
            xs = [x + c * dt * k for x, k in zip(x0, vs, strict=True)]
            vs = [x + c * dt * y for x, y in zip(v0, a, strict=True)]
    return ([x + dt * k / 6 for x, k in zip(x0, Ks, strict=True)],
            [x + dt * k / 6 for x, k in zip(v0, As, strict=True)])  # fmt: skip


def test_closed_loop_step_derivatives_against_50_digit_differences():
    """The RK4 step of a closed mechanism (revolute, prismatic and universal joints: a vector-space chart, K_i =
    v_i), its (A, B) against central differences of the step taken in the referee's arithmetic; and step equals
    simulate's steps."""
    model, q = closed_random_tree(
        12, ["universal", "point_on_line"], n=7, joints=("revolute", "prismatic", "universal")
    )
    rng = np.random.default_rng(5)
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    v -= np.linalg.pinv(J) @ (J @ v)
    tau = rng.uniform(-1, 1, model.nv)
    dt, data = 0.01, model.create_data()
    traj = dp.simulate(model, q, v, 2 * dt, dt=dt, tau=tau, progress=False)
    q1, v1 = dp.step(model, data, q, v, tau, dt)
    q2, v2 = dp.step(model, data, q1, v1, tau, dt)
    np.testing.assert_allclose(traj.q[2], q2, rtol=0, atol=1e-14)
    np.testing.assert_allclose(traj.v[2], v2, rtol=0, atol=1e-13)
    A, B = dp.step_derivatives(model, data, q, v, tau, dt)
    ref = Referee(model, q, baumgarte=STEP_BAUMGARTE)
    nv = model.nv
    with mpmath.workdps(50):
        hh = mpmath.mpf("1e-20")
        for _ in range(2):
            dq, dv, dtau = rng.standard_normal((3, nv))
            ends = []
            for s in (hh, -hh):
                x, w = _mp_step(ref, [s * x for x in dq], [float(a) + s * b for a, b in zip(v, dv, strict=True)],
                                [float(a) + s * b for a, b in zip(tau, dtau, strict=True)], mpmath.mpf(dt))  # fmt: skip
                ends.append(x + w)
            ref_d = np.array([float((p - m) / (2 * hh)) for p, m in zip(*ends, strict=True)])
            assert_close(A @ np.r_[dq, dv] + B @ dtau, ref_d, 1e-9, what="closed-loop RK4 step derivatives")
