"""The compiled narrow phase's closed forms (denoc_pin/contact/narrow_phase.py) against coal, the collision library
Pinocchio ships: on 10,000 random placements of each pair (sizes 5 cm to 0.5 m, centres within 0.6 m, so that about
half of them overlap), the signed distance, the normal and both nearest points; deep and grazing cases; no NaN."""

import coal
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from denoc_pin.contact.narrow_phase import UNSUPPORTED, pair_distance, segments_nearest
from denoc_pin.core.shapes import BOX, CAPSULE, CYLINDER, SPHERE

N = 10_000


def coal_shape(code, par):
    if code == SPHERE:
        return coal.Sphere(par[0])
    if code == BOX:
        return coal.Box(*(2 * par))
    return coal.Capsule(par[0], 2 * par[1])


def coal_distance(code1, par1, R1, p1, code2, par2, R2, p2):
    """coal's signed distance, normal (from 1 to 2) and nearest points."""
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    coal.distance(coal_shape(code1, par1), coal.Transform3s(R1, p1), coal_shape(code2, par2), coal.Transform3s(R2, p2),
                  req, res)  # fmt: skip
    return res.min_distance, np.array(res.normal), np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2())


def params(rng, code):
    r = rng.uniform(0.05, 0.25)
    if code == SPHERE:
        return np.array([r, 0.0, 0.0])
    if code == CAPSULE:
        return np.array([r, rng.uniform(0.02, 0.25), 0.0])
    return rng.uniform(0.05, 0.25, 3)


def placements(seed, code1, code2):
    rng = np.random.default_rng(seed)
    for _ in range(N):
        R1, R2 = Rotation.random(2, random_state=rng).as_matrix()
        p1, p2 = rng.uniform(-0.3, 0.3, 3), rng.uniform(-0.3, 0.3, 3)
        yield params(rng, code1), R1, p1, params(rng, code2), R2, p2


def ours(code1, par1, R1, p1, code2, par2, R2, p2):
    d, n, x1, x2 = pair_distance(code1, par1, R1, p1, code2, par2, R2, p2)
    return d, np.array(n), np.array(x1), np.array(x2)


@pytest.mark.parametrize(("code1", "code2"), [(SPHERE, SPHERE), (SPHERE, CAPSULE), (CAPSULE, SPHERE),
                                              (CAPSULE, CAPSULE), (SPHERE, BOX), (BOX, SPHERE)])  # fmt: skip
def test_closed_forms_agree_with_coal_on_random_placements(code1, code2):
    """Distance to 1e-12 m everywhere; normal and nearest points to 1e-9 where they are unique (not for a sphere's
    centre equidistant from two faces of a box, nor nearly parallel capsules whose overlap coal may touch anywhere
    along: their distance still agrees); about half the placements overlap, so deep and grazing cases are in."""
    worst, compared, overlapping = 0.0, 0, 0
    for par1, R1, p1, par2, R2, p2 in placements(7 * code1 + code2, code1, code2):
        d, n, x1, x2 = ours(code1, par1, R1, p1, code2, par2, R2, p2)
        cd, cn, cx1, cx2 = coal_distance(code1, par1, R1, p1, code2, par2, R2, p2)
        assert np.isfinite([d, *n, *x1, *x2]).all()
        assert abs(d - cd) <= 1e-12, (d, cd)
        assert abs(np.linalg.norm(n) - 1.0) <= 1e-14
        overlapping += d < 0
        axes1, axes2 = R1[:, 2], R2[:, 2]
        if code1 == code2 == CAPSULE and abs(axes1 @ axes2) > 1 - 1e-6:
            continue
        if BOX in (code1, code2):
            box, c = (par2, R2.T @ (p1 - p2)) if code2 == BOX else (par1, R1.T @ (p2 - p1))
            gaps = np.sort(box - np.abs(c))
            if (gaps > 0).all() and gaps[1] - gaps[0] < 1e-9:
                continue
        compared += 1
        worst = max(worst, np.abs(n - cn).max(), np.abs(x1 - cx1).max(), np.abs(x2 - cx2).max())
    assert worst <= 1e-9, worst
    assert compared >= 0.99 * N and 0.2 * N < overlapping < 0.8 * N, (compared, overlapping)


def test_a_sphere_deep_inside_a_box_leaves_by_its_nearest_face_and_grazing_spheres_touch_at_zero():
    I = np.eye(3)
    d, n, x1, x2 = ours(SPHERE, np.array([0.05, 0, 0]), I, np.array([0.0, 0.0, 0.15]), BOX, np.array([0.5, 0.5, 0.2]),
                        I, np.zeros(3))  # fmt: skip
    assert d == pytest.approx(-0.1) and np.allclose(n, [0, 0, -1]) and np.allclose(x2, [0, 0, 0.2])
    d, n, _, _ = ours(SPHERE, np.array([0.1, 0, 0]), I, np.zeros(3), SPHERE, np.array([0.1, 0, 0]), I,
                      np.array([0.2, 0, 0]))  # fmt: skip
    assert d == 0.0 and tuple(n) == (1.0, 0.0, 0.0)
    d, n, _, _ = ours(SPHERE, np.array([0.1, 0, 0]), I, np.zeros(3), SPHERE, np.array([0.1, 0, 0]), I, np.zeros(3))
    assert d == -0.2 and np.isfinite(n).all()  # concentric: a normal all the same


def test_parallel_segments_meet_in_the_middle_of_their_overlap_and_other_pairs_are_left_to_gjk():
    s, t = segments_nearest((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 1.0, (0.5, 0.3, 0.0), (1.0, 0.0, 0.0), 1.0)
    assert (s, t) == pytest.approx((0.25, -0.25))  # overlap [-0.5, 1] in segment 1's terms; its middle
    I = np.eye(3)
    assert pair_distance(BOX, np.ones(3), I, np.zeros(3), CYLINDER, np.ones(3), I, np.ones(3))[0] == UNSUPPORTED


def ball_on_box():
    """A 10 kg slab (1 x 1 x 0.2 m) on the ground, a 1 kg ball of 0.1 m on it: a sphere–box pair and a box on the
    ground."""
    import denoc_pin as dp

    b = dp.ModelBuilder("ball on box")
    b.add_body(0, joint="free-flyer", mass=10.0, inertia=np.eye(3) * 10 * 1.04 / 12, link="box")
    b.add_collision("box", dp.Box((1.0, 1.0, 0.2)), friction=0.5)
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.004, link="ball")
    b.add_collision("ball", dp.Sphere(0.1), friction=0.5)
    m = b.build()
    q = dp.neutral(m)
    q[2], q[9] = 0.1, 0.31
    return m, q


def test_a_ball_rests_on_a_box_in_the_compiled_run():
    """The pair is answered in the compiled loop (no coal pair left for Python): after 1 s the ball rests on the slab
    (centre 0.3 m up, penetration ≤ 1e-4 m), the pair carries its weight m g and the ground both bodies' (to 1e-6)."""
    import denoc_pin as dp
    from denoc_pin.contact import ContactStepper

    m, q = ball_on_box()
    g = dp.Ground(friction=0.5)
    assert ContactStepper(m, g, dp.ContactSettings(), 1e-3).pairs is None
    tr = dp.simulate(m, q, np.zeros(12), 1.0, 1e-3, ground=g, progress=False)
    assert abs(tr.q[-1][9] - 0.3) <= 1e-4 and abs(tr.q[-1][2] - 0.1) <= 1e-4
    c = tr.contacts[-2]
    ball = [k for k, names in enumerate(c["collisions"]) if names[0] != "ground"]
    assert len(ball) == 1 and c["converged"]
    assert abs(c["forces"][ball[0], 2] - 9.81) <= 1e-6 * 9.81
    assert abs(c["forces"][:, 2].sum() - 9.81 - 11 * 9.81) <= 1e-6 * 11 * 9.81


def test_compiled_pairs_step_as_coals_pairs_do():
    """The same 300 steps, the ball pushed across the slab by a varying force, with the pair answered in the compiled
    step and by coal between steps (``compiled_pairs=False``): the states agree to 1e-12."""
    import denoc_pin as dp
    from denoc_pin.contact import ContactStepper

    m, q = ball_on_box()
    g = dp.Ground(friction=0.5)
    steppers = [ContactStepper(m, g, dp.ContactSettings(), 1e-3, compiled_pairs=c) for c in (True, False)]
    assert steppers[0].pairs is None and steppers[1].pairs.pairs == [(0, 1)]
    states = [(q.copy(), np.zeros(12)), (q.copy(), np.zeros(12))]
    moved = 0.0
    for k in range(300):
        tau = np.zeros(12)
        tau[6:8] = 2.0 * np.sin(k / 30), 1.0
        states = [s.step(*state, tau)[:2] for s, state in zip(steppers, states, strict=True)]
        assert np.abs(states[0][0] - states[1][0]).max() <= 1e-12 and np.abs(states[0][1] - states[1][1]).max() <= 1e-12
        moved = max(moved, np.abs(states[0][0][7:9] - q[7:9]).max())
    assert moved > 0.01  # the ball rolled and slid on the slab: the pair's tangential rows were at work
