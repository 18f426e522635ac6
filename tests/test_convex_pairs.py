"""The compiled narrow phase's iterative route and contact patches (denoc_pin/contact/convex.py, patch.py): GJK/EPA
against coal on random placements of boxes, capsules and solo12's collision meshes
from example-robot-data, cylinders against a closed form and coal; the patches of faces on faces against their
corners; and scenes with known answers — a box sliding on a box, a 5-box stack, a capsule rolling down an incline."""

import coal
import numpy as np
import pytest
from conftest import box_on_table
from scipy.spatial.transform import Rotation

import denoc_pin as dp
from denoc_pin.contact.convex import NARROW_WORK, convex_distance, support
from denoc_pin.contact.detection import coal_geometry
from denoc_pin.contact.patch import PAIR_WORK, pair_patch
from denoc_pin.core.shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE

N = 2_000
NONE = np.zeros((0, 3))


def solo_meshes():
    from denoc_pin.loaders.robots import example_robot_urdf

    m = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    return [c.shape for c in m.collisions if c.shape.code == MESH]


def random_shape(rng, code, meshes):
    if code == SPHERE:
        return dp.Sphere(rng.uniform(0.03, 0.2))
    if code == BOX:
        return dp.Box(tuple(rng.uniform(0.05, 0.4, 3)))
    if code == CAPSULE:
        return dp.Capsule(rng.uniform(0.03, 0.2), rng.uniform(0.05, 0.4))
    if code == CYLINDER:
        return dp.Cylinder(rng.uniform(0.03, 0.2), rng.uniform(0.05, 0.4))
    return meshes[rng.integers(len(meshes))]


def args(shape, R, p):
    V = shape.support_vertices() if shape.code == MESH else NONE
    reach = np.sqrt((V**2).sum(axis=1)).max() if shape.code == MESH else shape.reach()
    return (shape.code, np.array(shape.params), R, p, V), reach


GEOMETRY: dict = {}


def coal_signed_distance(s1, T1, s2, T2):
    """coal's signed distance and normal (shape 1 to shape 2): ``distance`` apart, ``collide``'s EPA when they
    overlap."""
    for s in (s1, s2):
        if s.code == MESH and s not in GEOMETRY:
            GEOMETRY[s] = coal_geometry(s)  # a mesh's hull once (solo12's meshes are drawn again and again)
    g1, g2 = (GEOMETRY[s] if s.code == MESH else coal_geometry(s) for s in (s1, s2))
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    d = coal.distance(g1, T1, g2, T2, req, res)
    if d > 0:
        return d, np.array(res.normal)
    creq, cres = coal.CollisionRequest(), coal.CollisionResult()
    coal.collide(g1, T1, g2, T2, creq, cres)
    if not cres.isCollision():  # touching, no overlap
        return 0.0, np.array(res.normal)
    c = cres.getContact(0)
    return c.penetration_depth, np.array(c.normal)


def core_points(a):
    """A polytope core's vertices, world (a box's corners, a capsule's segment ends, a sphere's centre, a hull's)."""
    code, par, R, p, V = a
    if code == BOX:
        V = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * par
    elif code == CAPSULE:
        V = np.array([[0, 0, -par[1]], [0, 0, par[1]]])
    elif code == SPHERE:
        V = np.zeros((1, 3))
    return V @ R.T + p


def hull_depth(a1, a2) -> float:
    """The cores' penetration depth, exact: the distance from the origin to the boundary of their Minkowski
    difference, the convex hull (qhull) of every vertex of one less every vertex of the other."""
    from scipy.spatial import ConvexHull

    P1, P2 = core_points(a1), core_points(a2)
    return float((-ConvexHull((P1[:, None] - P2[None]).reshape(-1, 3)).equations[:, 3]).min())


def check_certificate(a1, a2, d, n, x1, x2, tol):
    """(d, n, x₁, x₂) certify themselves: n is unit, x₁ is shape 1's farthest point along n and x₂ shape 2's along
    −n (their support points, radii included), and x₂ − x₁ = d n."""
    (c1, par1, R1, p1, V1), (c2, par2, R2, p2, V2) = a1, a2
    r1 = par1[0] if c1 in (SPHERE, CAPSULE) else 0.0
    r2 = par2[0] if c2 in (SPHERE, CAPSULE) else 0.0
    assert abs(np.linalg.norm(n) - 1) <= 1e-12
    s1 = np.array(support(c1, par1, R1, p1, V1, *n)) + r1 * n
    s2 = np.array(support(c2, par2, R2, p2, V2, *(-n))) - r2 * n
    assert abs(n @ (s1 - x1)) <= tol and abs(n @ (s2 - x2)) <= tol
    assert np.abs(x2 - x1 - d * n).max() <= tol


@pytest.mark.parametrize(("code1", "code2"), [(BOX, BOX), (CAPSULE, BOX), (MESH, BOX), (MESH, MESH),
                                              (SPHERE, MESH)])  # fmt: skip
def test_gjk_epa_agree_with_coal_on_polytopes(code1, code2):
    """2,000 placements a pair (10,000 in all; from a tenth to nine tenths overlap).  Exact: every answer is its own
    certificate to 1e-9 m (apart, a separating plane at the distance d between the witness points: d is the
    distance), and an overlap's depth agrees to 1e-9 m with the exact one (the hull of the vertices' differences;
    every 40th mesh pair: qhull on 10⁴ points).  Beside coal: the signed distance to 2e-6 m (coal's GJK and EPA stop
    at their default tolerance 1e-6), the normal to 1e-2 apart (coal's follows its witness points, as loosely).
    No NaN."""
    rng = np.random.default_rng(100 * code1 + code2)
    meshes = solo_meshes()
    w = np.zeros(NARROW_WORK)
    worst_d, worst_n, worst_hull, overlapping = 0.0, 0.0, 0.0, 0
    for k in range(N):
        s1, s2 = random_shape(rng, code1, meshes), random_shape(rng, code2, meshes)
        R1, R2 = Rotation.random(2, random_state=rng).as_matrix()
        (a1, reach1), (a2, reach2) = args(s1, R1, np.zeros(3)), args(s2, R2, np.zeros(3))
        p1, p2 = (rng.uniform(-0.35, 0.35, 3) * (reach1 + reach2) for _ in range(2))  # about half of them overlap
        a1, a2 = a1[:3] + (p1,) + a1[4:], a2[:3] + (p2,) + a2[4:]
        d, n, x1, x2 = convex_distance(*a1, *a2, reach1 + reach2, w)
        n, x1, x2 = np.array(n), np.array(x1), np.array(x2)
        assert np.isfinite([d, *n, *x1, *x2]).all()
        check_certificate(a1, a2, d, n, x1, x2, 1e-9)
        dc, nc = coal_signed_distance(s1, coal.Transform3s(R1, p1), s2, coal.Transform3s(R2, p2))
        worst_d = max(worst_d, abs(d - dc))
        if d > 1e-3:  # apart, away from touching, where a face, an edge and a vertex can share the nearest point
            worst_n = max(worst_n, min(np.abs(n - nc).max(), 1.0))
        radii = sum(a[1][0] for a in (a1, a2) if a[0] in (SPHERE, CAPSULE))
        if d < -radii and (MESH not in (code1, code2) or k % 40 == 0):  # the cores overlap: their exact depth
            worst_hull = max(worst_hull, abs(d + hull_depth(a1, a2) + radii))
        overlapping += d < 0
    assert worst_d <= 2e-6 and worst_hull <= 1e-9, (worst_d, worst_hull)
    assert worst_n <= 1e-2, worst_n  # coal's normal, from witness points its GJK stops on at 1e-6
    assert N / 10 <= overlapping <= 9 * N / 10  # both overlapping and separated placements


def cylinder_point(r, h, x):
    """The signed distance of the point x (cylinder frame) to the cylinder of radius r and half length h."""
    dr, dz = np.hypot(x[0], x[1]) - r, abs(x[2]) - h
    return max(dr, dz) if dr <= 0 and dz <= 0 else np.hypot(max(dr, 0.0), max(dz, 0.0))


def test_cylinders_against_a_closed_form_and_coal():
    """A sphere against a cylinder: to 1e-9 m of the closed form (a point's signed distance to the cylinder, less
    r), deep, grazing and outside; cylinder–cylinder and box–cylinder, whose curved side GJK and EPA approach
    iteratively: to 5e-6 m of coal at its default tolerance 1e-6; every answer its own certificate to 1e-7 m (EPA
    ends on a polytope's face within 1e-12 of the curved side, whose support point is a little off its own)."""
    rng = np.random.default_rng(7)
    w = np.zeros(NARROW_WORK)
    worst = 0.0
    for _ in range(N):
        cyl, ball = random_shape(rng, CYLINDER, []), random_shape(rng, SPHERE, [])
        R, p, c = Rotation.random(random_state=rng).as_matrix(), rng.uniform(-0.3, 0.3, 3), rng.uniform(-0.3, 0.3, 3)
        (a1, reach1), (a2, reach2) = args(ball, np.eye(3), c), args(cyl, R, p)
        d, n, x1, x2 = convex_distance(*a1, *a2, reach1 + reach2, w)
        check_certificate(a1, a2, d, np.array(n), np.array(x1), np.array(x2), 1e-7)
        exact = cylinder_point(cyl.radius, cyl.length / 2, R.T @ (c - p)) - ball.radius
        worst = max(worst, abs(d - exact))
    assert worst <= 1e-9, worst
    for code in (CYLINDER, BOX):
        worst = 0.0
        for _ in range(N // 2):
            s1, s2 = random_shape(rng, code, []), random_shape(rng, CYLINDER, [])
            R1, R2 = Rotation.random(2, random_state=rng).as_matrix()
            p1, p2 = rng.uniform(-0.25, 0.25, 3), rng.uniform(-0.25, 0.25, 3)
            (a1, reach1), (a2, reach2) = args(s1, R1, p1), args(s2, R2, p2)
            d, n, x1, x2 = convex_distance(*a1, *a2, reach1 + reach2, w)
            check_certificate(a1, a2, d, np.array(n), np.array(x1), np.array(x2), 1e-7)
            dc, _ = coal_signed_distance(s1, coal.Transform3s(R1, p1), s2, coal.Transform3s(R2, p2))
            worst = max(worst, abs(d - dc))
        assert worst <= 5e-6, (code, worst)


def patch(code1, par1, R1, p1, code2, par2, R2, p2, margin=0.01):
    w, points, depths, F = np.zeros(PAIR_WORK), np.zeros((4, 3)), np.zeros(4), np.zeros((3, 3))
    k = pair_patch(code1, np.array(par1, float), R1, np.array(p1, float), NONE, code2, np.array(par2, float), R2,
                   np.array(p2, float), NONE, 1.0, margin, w, points, depths, F)  # fmt: skip
    return points[:k], depths[:k], F[:, 2]


def test_patches_of_faces_on_faces():
    """On a slab's top face (z = 0.1), 0.1 mm deep: a box turned 30° gives its four bottom corners; a box over the
    slab's edge the corners of the overlap; a capsule lying flat its segment's two ends; a cylinder on its end four
    rim points; a box on one edge that edge's two ends; a sphere one point.  Points midway, depths −1e-4."""
    eye, slab = np.eye(3), ([0.5, 0.5, 0.1], np.zeros(3))
    deep = 1e-4
    turn = Rotation.from_euler("z", 30, degrees=True).as_matrix()
    pts, dep, n = patch(BOX, slab[0], eye, slab[1], BOX, [0.1] * 3, turn, [0.1, 0, 0.2 - deep])
    corners = np.array([[0.1, 0, 0.1]]) + np.array([[sx, sy, 0] for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]) @ (
        0.1 * turn.T)  # fmt: skip
    corners[:, 2] = 0.1 - deep / 2
    assert len(pts) == 4 and np.allclose(n, [0, 0, 1], atol=1e-12) and np.allclose(dep, -deep, atol=1e-12)
    assert max(np.abs(corners - x).max(axis=1).min() for x in pts) <= 1e-12
    pts, dep, _ = patch(BOX, slab[0], eye, slab[1], BOX, [0.1] * 3, eye, [0.45, 0, 0.2 - deep])
    assert len(pts) == 4 and np.allclose(sorted(set(np.round(pts[:, 0], 12))), [0.35, 0.5])
    lying = Rotation.from_euler("y", 90, degrees=True).as_matrix()
    pts, dep, _ = patch(BOX, slab[0], eye, slab[1], CAPSULE, [0.05, 0.2, 0], lying, [0, 0, 0.15 - deep])
    assert len(pts) == 2 and np.allclose(sorted(pts[:, 0]), [-0.2, 0.2], atol=1e-12) and np.allclose(dep, -deep)
    pts, dep, _ = patch(BOX, slab[0], eye, slab[1], CYLINDER, [0.05, 0.2, 0], eye, [0, 0, 0.3 - deep])
    assert len(pts) == 4 and np.allclose(np.hypot(pts[:, 0], pts[:, 1]), 0.05) and np.allclose(dep, -deep)
    edge = Rotation.from_euler("y", 45, degrees=True).as_matrix()
    pts, dep, _ = patch(BOX, slab[0], eye, slab[1], BOX, [0.1] * 3, edge, [0, 0, 0.1 + 0.1 * np.sqrt(2) - deep])
    assert len(pts) == 2 and np.allclose(sorted(pts[:, 1]), [-0.1, 0.1], atol=1e-12) and np.allclose(dep, -deep)
    pts, dep, _ = patch(BOX, slab[0], eye, slab[1], SPHERE, [0.05, 0, 0], eye, [0.2, 0.1, 0.15 - deep])
    assert len(pts) == 1 and np.allclose(pts[0], [0.2, 0.1, 0.1 - deep / 2]) and np.allclose(dep, -deep)


def test_a_hull_face_on_a_line_is_an_edge():
    """A hull whose lowest vertices lie on an arc in a vertical plane (a tessellated rounded edge: seen along the
    normal, on one line) resting on a slab: the feature is that edge, from its two ends, not a face of no area (whose
    plane was 0/0); its points finite, their depths within the arc's sagitta of the deepest."""
    x = np.linspace(-0.1, 0.1, 7)
    sag = 1e-4
    arc = np.c_[x, np.zeros_like(x), sag * (x / 0.1) ** 2]
    top = np.array([[sx, sy, 0.1] for sx in (-0.1, 0.1) for sy in (-0.05, 0.05)])
    hull = dp.Mesh(vertices=np.vstack([arc, top]))
    V = hull.support_vertices()
    assert len(V) == 11  # qhull keeps every arc point
    deep = 1e-4
    w, points, depths, F = np.zeros(PAIR_WORK), np.zeros((4, 3)), np.zeros(4), np.zeros((3, 3))
    k = pair_patch(BOX, np.array([0.5, 0.5, 0.1]), np.eye(3), np.zeros(3), NONE, MESH, np.zeros(3), np.eye(3),
                   np.array([0.0, 0, 0.1 - deep]), V, 1.0, 0.01, w, points, depths, F)  # fmt: skip
    assert k == 2 and np.isfinite(points[:k]).all() and np.isfinite(depths[:k]).all()
    assert np.allclose(sorted(points[:k, 0]), [-0.1, 0.1], atol=1e-12) and np.allclose(F[:, 2], [0, 0, 1])
    assert np.all(np.abs(depths[:k] + deep) <= sag + 1e-12), depths[:k]


def box_stack(n: int, size: float = 0.2, gap: float = 0.01):
    """n boxes of 1 kg and edge ``size``, each dropped from ``gap`` above the one below, shifted by 1 cm in x and
    turned by 2° about z each (no two faces aligned)."""
    b = dp.ModelBuilder(f"{n}-box stack")
    for k in range(n):
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * size**2 / 12, link=f"box{k}")
        b.add_collision(f"box{k}", dp.Box((size, size, size)), friction=0.8)
    m = b.build()
    q = dp.neutral(m)
    for k in range(n):
        q[7 * k : 7 * k + 3] = 0.01 * k, 0.0, size / 2 + k * (size + gap)
        q[7 * k + 3 : 7 * k + 7] = Rotation.from_euler("z", 2 * k, degrees=True).as_quat()
    return m, q


def test_a_five_box_stack_rests():
    """Five boxes dropped 1 cm onto each other and the ground rest after 2 s at dt = 1 ms: each at its height to
    1e-4 m (penetration ≤ 1e-4 m), tilted less than 0.01°, no drift in x, y; each pair holds four contacts that
    carry the weight above it."""
    m, q = box_stack(5)
    tr = dp.simulate(m, q, np.zeros(m.nv), 2.0, 1e-3, ground=dp.Ground(friction=0.8), progress=False,
                     record_every=100)  # fmt: skip
    Q = np.array(tr.q)
    for k in range(5):
        assert abs(Q[-1, 7 * k + 2] - (0.1 + 0.2 * k)) <= 1e-4
        tilt = 2 * np.degrees(np.arcsin(np.linalg.norm(Q[-1, 7 * k + 3 : 7 * k + 5])))
        assert tilt <= 0.01 and np.abs(Q[-1, 7 * k : 7 * k + 2] - q[7 * k : 7 * k + 2]).max() <= 1e-4
    c = tr.contacts[-2]
    for k in range(4):  # the pair (box k, box k + 1) carries the weight of the 4 − k boxes above
        rows = [i for i, pair in enumerate(c["collisions"]) if pair[1] == f"box{k + 1}_collision_{k + 1}"]
        assert len(rows) == 4 and abs(c["forces"][rows, 2].sum() - 9.81 * (4 - k)) <= 1e-6 * 9.81 * (4 - k)


def test_a_box_slides_on_a_box_and_stops():
    """A 10 cm box thrown at 1 m/s on a table fixed to the world, μ = 0.3: it stops after v₀²/(2 μ g) − v₀ dt/2
    (the time-stepping closed form; 0.3% below the continuous one at dt = 1 ms) to 1%, without tipping."""
    b = dp.ModelBuilder("slide")
    b.add_collision(0, dp.Box((2.0, 1.0, 0.2)), placement=(np.eye(3), np.array([0.5, 0.0, -0.1])), friction=0.3)
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * 0.01 / 12, link="box")
    b.add_collision("box", dp.Box((0.1, 0.1, 0.1)), friction=0.3)
    m = b.build()
    q, v = dp.neutral(m), np.zeros(6)
    q[2], v[0] = 0.05, 1.0
    tr = dp.simulate(m, q, v, 1.0, 1e-3, contact=dp.ContactSettings(), progress=False, record_every=100)
    stop = 1.0 / (2 * 0.3 * 9.81) - 1.0 * 1e-3 / 2
    assert abs(tr.q[-1][0] - stop) <= 0.01 * stop and abs(tr.v[-1][0]) <= 1e-9
    assert abs(tr.q[-1][2] - 0.05) <= 1e-4 and np.abs(tr.q[-1][3:6]).max() <= 1e-6


def test_a_capsule_rolls_down_a_box_incline():
    """A capsule lying across a 10° incline (a box fixed to the world) rolls without slipping: after 1 s at
    dt = 0.25 ms, ω r = v to 1% and the distance to 1% of ½ g sin θ t² / (1 + I/(m r²)).  (At dt = 1 ms the
    distance is 1.9% long: the free flyer's SE(3) step turns the body about the contact line, sinking it by
    r (ω dt)²/2 a step, which the gap correction then lifts.)"""
    theta, r, length, mass = np.radians(10), 0.05, 0.2, 1.0
    slope = Rotation.from_euler("y", -theta).as_matrix()
    b = dp.ModelBuilder("incline")
    b.add_collision(0, dp.Box((4.0, 1.0, 0.2)), placement=(slope, slope @ np.array([0, 0, -0.1])), friction=1.0)
    axial, across = 0.5 * mass * r**2, mass * (3 * r**2 + length**2) / 12
    b.add_body(0, joint="free-flyer", mass=mass, inertia=np.diag([across, axial, across]), link="capsule")
    b.add_collision("capsule", dp.Capsule(r, length), placement=(Rotation.from_euler("x", 90, degrees=True).as_matrix(),
                                                                   np.zeros(3)), friction=1.0)  # fmt: skip
    m = b.build()
    q = dp.neutral(m)
    q[:3], q[3:7] = slope[:, 2] * r, Rotation.from_matrix(slope).as_quat()
    tr = dp.simulate(m, q, np.zeros(6), 1.0, 2.5e-4, contact=dp.ContactSettings(), progress=False, record_every=400)
    down = -(tr.q[-1][:3] - q[:3]) @ slope[:, 0]
    expected = 0.5 * 9.81 * np.sin(theta) / (1 + axial / (mass * r**2))
    assert abs(down - expected) <= 0.01 * expected
    speed, spin = np.linalg.norm(tr.v[-1][:3]), abs(tr.v[-1][4])
    assert abs(spin * r - speed) <= 0.01 * speed


def test_touching_faces_give_the_face_normal():
    """A box resting on a box, the gap between their faces within ±1e-9 m (the cores touch: GJK hands EPA a
    simplex whose faces pass within rounding of the origin), turned and shifted at random, or two equal boxes
    aligned to rounding (a resting stack): the normal is the face's to 1e-9 and the distance the gap to 1e-12 m, on
    2,000 placements."""
    rng = np.random.default_rng(11)
    w = np.zeros(NARROW_WORK)
    h = np.array([0.1, 0.1, 0.1])
    worst_n, worst_d = 0.0, 0.0
    for k in range(N):
        aligned = k % 2  # half of them two equal boxes exactly over each other, but for rounding (their CSO's face
        R2 = Rotation.from_rotvec(rng.uniform(-1e-12, 1e-12, 3) if aligned else  # holds the origin in its middle)
                                  [0.0, 0.0, rng.uniform(0, 2 * np.pi)]).as_matrix()  # fmt: skip
        gap = rng.uniform(-1e-9, 1e-9) if not aligned or k % 4 == 1 else rng.uniform(-1e-12, 1e-12)
        p2 = np.array([*rng.uniform(-0.15, 0.15, 2) * (1e-10 if aligned else 1.0), 0.2 + gap])
        d, n, _, _ = convex_distance(BOX, h, np.eye(3), np.zeros(3), NONE, BOX, h, R2, p2, NONE, 0.35, w)
        worst_n, worst_d = max(worst_n, np.abs(np.array(n) - [0, 0, 1]).max()), max(worst_d, abs(d - gap))
    assert worst_n <= 1e-9 and worst_d <= 1e-12, (worst_n, worst_d)


def test_more_pair_points_than_the_scene_holds_is_an_error():
    """A box resting on a table fixed to the world (no ground) gives 4 points: with ``pair_contacts=2`` the run stops
    with an error that says which setting to raise (never a silently dropped contact); with the default it rests."""
    m, q = box_on_table()
    with pytest.raises(ValueError, match="more contact points than ContactSettings.pair_contacts holds; raise it"):
        dp.simulate(m, q, np.zeros(6), 0.01, 1e-3, contact=dp.ContactSettings(pair_contacts=2), progress=False)
    tr = dp.simulate(m, q, np.zeros(6), 0.01, 1e-3, contact=dp.ContactSettings(), progress=False)
    assert len(tr.contacts[-2]["depths"]) == 4 and abs(tr.q[-1][2] - 0.05) <= 1e-6


def test_a_second_run_of_a_scene_repeats_the_first():
    """``dp.simulate`` keeps a model's last stepper for the next run of the same scene (warm starts, GJK directions
    and the sweep's order reset): the second run of the stack equals the first bit for bit, and one on another
    ground differs."""
    m, q = box_stack(3)
    grounds = (dp.Ground(friction=0.8), dp.Ground(friction=0.8), dp.Ground(friction=0.8, height=0.001))
    runs = [dp.simulate(m, q, np.zeros(m.nv), 0.3, 1e-3, ground=g, progress=False, record_every=10) for g in grounds]
    assert np.array_equal(runs[0].q, runs[1].q) and np.array_equal(runs[0].v, runs[1].v)
    assert not np.array_equal(runs[0].q, runs[2].q)


def test_a_batch_of_stacks_runs_each_as_simulate_does():
    """``simulate_batch`` takes scenes with shape pairs (the pairs are in its compiled loop): three 3-box stacks from
    different starts end where ``dp.simulate`` ends each, bit for bit."""
    m, q = box_stack(3)
    q0s = np.stack([q, q, q])
    q0s[1, 0] += 0.01
    q0s[2, 2::7] += 0.005
    ground = dp.Ground(friction=0.8)
    batch = dp.simulate_batch(m, q0s, t_final=0.3, dt=1e-3, ground=ground, record_every=100)
    for i in range(3):
        tr = dp.simulate(m, q0s[i], np.zeros(m.nv), 0.3, 1e-3, ground=ground, progress=False, record_every=100)
        assert np.array_equal(batch["q"][i], tr.q)
