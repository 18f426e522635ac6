"""Contact detection: every collision against the ground plane in compiled code (closed forms); shape–shape pairs
through coal when the compiled narrow phase is turned off.

Against the plane {x : n·x = h} a point x has the signed distance d = n·x − h (negative: penetration).  Each shape
gives the points that can touch first, and a point becomes a contact candidate when d < margin:

- sphere: its lowest point c − r n;
- capsule: the lowest points of its two end caps (both touch when it lies flat);
- box: its eight corners (a face lying flat gives its four corners, one patch of four support points);
- cylinder: on each rim, the lowest point and the three others a quarter turn apart (a flat end face gives four
  points, a cylinder on its side one point a rim, a tilted one the lowest point of its lower rim);
- mesh: the vertices of its convex hull, packed in chunks of ``CHUNK`` inside bounding spheres (a chunk clear of the
  plane costs one test).  Of its candidates, those within ``PATCH_FLAT`` of the deepest and ``PATCH_SPREAD`` of its
  size apart are its patch: a rounded foot rests on its one lowest vertex (its neighbours, microns higher or a
  fraction of a millimetre away on a fine mesh, carry nothing or the same load twice), a face lying flat on its
  corners; past ``PATCH_POINTS`` (a flat sole), the patch is reduced to its
  deepest vertex and its extremes along the four in-plane diagonals, so that a flat sole gives a few rows, not
  hundreds.

Shape–shape pairs are tested in the compiled step (``pipeline``: closed forms, GJK/EPA, a patch of up to 4 points).
With ``ContactStepper(compiled_pairs=False)`` they go through coal instead (``pair_contacts``: ``coal.collide`` and
``coal.computeContactPatch``, reduced the same way; one Python call per pair and step): the tests' referee.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.joints import FREE_FLYER
from ..core.records import contact_work_views
from ..core.shapes import (
    BOX,
    CAPSULE,
    CHUNK,
    COL,
    CYLINDER,
    MESH,
    SPHERE,
    Box,
    Capsule,
    Cylinder,
    Sphere,
    contact_frame,
    may_touch,
)
from ..core.views import (
    COL_BODY,
    COL_BOX_C,
    COL_BOX_H,
    COL_CODE,
    COL_CSTART,
    COL_GROUND,
    COL_P,
    COL_PARAMS,
    COL_R,
    COL_REACH,
    COL_VCOUNT,
    COL_VSTART,
)

__all__ = [
    "PATCH_FLAT",
    "PATCH_POINTS",
    "PATCH_SPREAD",
    "coal_geometry",
    "ground_capacity",
    "ground_contacts",
    "shape_pose",
    "most_vertices",
    "pair_contacts",
    "pair_friction",
    "pairs_that_may_touch",
    "reduce_patch",
]

PATCH_POINTS = 5
"""The most contact points one mesh patch keeps: its deepest vertex and four extremes."""
PATCH_FLAT = 1e-5
"""How much higher than a mesh's deepest candidate (m) a vertex may be and still be one of its patch: a face lying
flat (equal depths to rounding, or tilted by less than PATCH_FLAT over its width), not the next vertex of a curved
foot.  A vertex higher than that joins the patch when it comes within PATCH_FLAT of the deepest."""
PATCH_SPREAD = 0.1
"""A patch's points are at least PATCH_SPREAD times the mesh's largest half extent apart: points closer than that
(the fine tessellation of a foot's sole) would carry the same load twice and make the Delassus matrix singular."""

_POINTS = {SPHERE: 1, CAPSULE: 2, BOX: 8, CYLINDER: 8, MESH: PATCH_POINTS}


def ground_capacity(rows: np.ndarray) -> int:
    """The most ground contacts the packed collisions ``rows`` can give at once."""
    return int(sum(_POINTS[int(r[COL["code"]])] for r in rows if r[COL["ground"]]))


@njit(cache=True, inline="always")
def _add(x0, x1, x2, d, col, feature, hits, k):
    """Candidate k: the point (x0, x1, x2) at signed distance d, of collision ``col``'s feature; returns k + 1."""
    hits.hit_points[k, 0], hits.hit_points[k, 1], hits.hit_points[k, 2] = x0, x1, x2
    hits.hit_depth[k] = d
    hits.hit_collision[k] = col
    hits.hit_feature[k] = feature
    return k + 1


@njit(cache=True)
def _patch(nc, hits, k, n, t1, t2, col, spread):
    """Of the nc candidates in ``hits.cand`` (x, d, feature: the deepest first, then those within PATCH_FLAT of it,
    as ``_near_deepest`` leaves them; ``hits``: a ``ContactWork``'s views), keep the deepest and those at least
    ``spread`` from every point kept; past five of these, the deepest and the extremes along ±t₁ ± t₂."""
    cand = hits.cand
    j = min(nc, 1)
    for i in range(1, nc):
        near = False
        for e in range(j):
            dx, dy, dz = cand[i, 0] - cand[e, 0], cand[i, 1] - cand[e, 1], cand[i, 2] - cand[e, 2]
            if dx * dx + dy * dy + dz * dz < spread * spread:
                near = True
                break
        if not near:
            for a in range(5):
                cand[j, a] = cand[i, a]
            j += 1
    nc = j
    if nc <= 5:
        for i in range(nc):
            k = _add(cand[i, 0], cand[i, 1], cand[i, 2], cand[i, 3], col, int(cand[i, 4]), hits, k)
        return k
    keep = hits.keep
    keep[0] = 0  # the deepest
    for j in range(4):
        a = 1.0 if j < 2 else -1.0
        b = 1.0 if j % 2 == 0 else -1.0
        top = -1
        val = -np.inf
        for i in range(nc):
            s = a * (cand[i, 0] * t1[0] + cand[i, 1] * t1[1] + cand[i, 2] * t1[2])
            s += b * (cand[i, 0] * t2[0] + cand[i, 1] * t2[1] + cand[i, 2] * t2[2])
            if s > val:
                val = s
                top = i
        keep[j + 1] = top
    for j in range(5):
        dup = False
        for i in range(j):
            if keep[i] == keep[j]:
                dup = True
        if not dup:
            i = int(keep[j])
            k = _add(cand[i, 0], cand[i, 1], cand[i, 2], cand[i, 3], col, int(cand[i, 4]), hits, k)
    return k


@njit(cache=True, inline="always")
def _point(n, h, margin, col, feature, hits, k, x0, x1, x2):
    """x a candidate if its signed distance n·x − h is below the margin; returns the candidates' count."""
    d = n[0] * x0 + n[1] * x1 + n[2] * x2 - h
    if d < margin:
        return _add(x0, x1, x2, d, col, feature, hits, k)
    return k


@njit(cache=True)
def shape_pose(row, oR, op, R, p, par):
    """A packed collision's world pose (R, p) = body ∘ shape and its parameters, into R, p, par."""
    b = int(row[COL_BODY])
    for i in range(3):
        s = op[b, i]
        for j in range(3):
            s += oR[b, i, j] * row[COL_P + j]
            R[i, j] = oR[b, i, 0] * row[COL_R + j] + oR[b, i, 1] * row[COL_R + 3 + j] + oR[b, i, 2] * row[COL_R + 6 + j]
        p[i] = s
        par[i] = row[COL_PARAMS + i]


@njit(cache=True, inline="always")
def _near_deepest(cand, nc, flat):
    """cand[:nc] (x, d, vertex) reduced to those with d ≤ flat, the deepest first (the first in vertex order of
    equal depths), the others in vertex order: the order ``_patch`` takes them in, whatever order a sweep found them
    in.  Returns their number."""
    j = 0
    for i in range(nc):  # the near-deepest, in place
        if cand[i, 3] <= flat:
            for a in range(5):
                cand[j, a] = cand[i, a]
            j += 1
    for i in range(1, j):  # insertion sort by vertex (a few entries)
        for e in range(i, 0, -1):
            if cand[e - 1, 4] <= cand[e, 4]:
                break
            for a in range(5):
                cand[e - 1, a], cand[e, a] = cand[e, a], cand[e - 1, a]
    best = 0
    for i in range(j):
        if cand[i, 3] < cand[best, 3]:
            best = i
    for a in range(5):  # the deepest to the front, the others' order kept
        x = cand[best, a]
        for i in range(best, 0, -1):
            cand[i, a] = cand[i - 1, a]
        cand[0, a] = x
    return j


@njit(cache=True)
def ground_contacts(geo, oR, op, n, t1, t2, h, margin, work):
    """The contact candidates of every collision against the plane n·x = h into ``work`` (a ``ContactWork`` buffer):
    world points (on the shape), signed distances, collision indices and feature indices (a corner, rim point or
    vertex: the key of a warm start) in its hit_* fields.  Returns their number k.  geo: a ``ContactGeometry``; oR,
    op: the bodies' world placements.  Allocates nothing."""
    hits = contact_work_views(work)
    rows, verts, chunks = geo.rows, geo.verts, geo.chunks
    k = 0
    for c in range(rows.shape[0]):
        r = rows[c]
        if r[COL_GROUND] == 0.0:
            continue
        code = int(r[COL_CODE])
        # the shape's world placement (R, p) = body ∘ shape, R's columns (R00 R10 R20), (R01 ...), (R02 ...)
        R, p, par = hits.col_R[c], hits.col_p[c], hits.col_par[c]
        shape_pose(r, oR, op, R, p, par)
        p0, p1, p2 = p[0], p[1], p[2]
        R00, R10, R20, R01, R11, R21 = R[0, 0], R[1, 0], R[2, 0], R[0, 1], R[1, 1], R[2, 1]
        R02, R12, R22 = R[0, 2], R[1, 2], R[2, 2]
        a0, a1, a2 = par[0], par[1], par[2]
        if code == SPHERE or code == CAPSULE:  # x = p + s R e₃ − r n, s = 0 or ± the half length
            for e in range(1 if code == SPHERE else 2):
                s = 0.0 if code == SPHERE else (a1 if e == 0 else -a1)
                k = _point(n, h, margin, c, e, hits, k, p0 + s * R02 - a0 * n[0], p1 + s * R12 - a0 * n[1],
                           p2 + s * R22 - a0 * n[2])  # fmt: skip
        elif code == BOX:  # the corners p + (±a₀) R e₁ + (±a₁) R e₂ + (±a₂) R e₃
            for e in range(8):
                s0, s1, s2 = a0 if e & 1 else -a0, a1 if e & 2 else -a1, a2 if e & 4 else -a2
                k = _point(n, h, margin, c, e, hits, k, p0 + s0 * R00 + s1 * R01 + s2 * R02,
                           p1 + s0 * R10 + s1 * R11 + s2 * R12, p2 + s0 * R20 + s1 * R21 + s2 * R22)  # fmt: skip
        elif code == CYLINDER:
            na = n[0] * R02 + n[1] * R12 + n[2] * R22
            u0, u1, u2 = n[0] - na * R02, n[1] - na * R12, n[2] - na * R22
            un = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
            if un > 1e-9:
                w0, w1, w2 = -u0 / un, -u1 / un, -u2 / un  # towards the ground, in the rim's plane
            else:
                w0, w1, w2 = R00, R10, R20  # upright: any radius
            v0, v1, v2 = R12 * w2 - R22 * w1, R22 * w0 - R02 * w2, R02 * w1 - R12 * w0  # axis × w
            for e in range(2):
                s = a1 if e == 0 else -a1
                c0, c1, c2 = p0 + s * R02, p1 + s * R12, p2 + s * R22
                k = _point(n, h, margin, c, 4 * e, hits, k, c0 + a0 * w0, c1 + a0 * w1, c2 + a0 * w2)
                k = _point(n, h, margin, c, 4 * e + 1, hits, k, c0 + a0 * v0, c1 + a0 * v1, c2 + a0 * v2)
                k = _point(n, h, margin, c, 4 * e + 2, hits, k, c0 - a0 * w0, c1 - a0 * w1, c2 - a0 * w2)
                k = _point(n, h, margin, c, 4 * e + 3, hits, k, c0 - a0 * v0, c1 - a0 * v1, c2 - a0 * v2)
        else:  # MESH: the hull's vertices, the patch reduced
            if n[0] * p0 + n[1] * p1 + n[2] * p2 - h - r[COL_REACH] >= margin:
                continue  # its bounding sphere is clear of the plane: no vertex can be a candidate
            vs, c0, nv = int(r[COL_VSTART]), int(r[COL_CSTART]), int(r[COL_VCOUNT])
            # n·(p + R u) − h = n·p − h + (Rᵀ n)·u: one dot product a vertex, and a chunk's sphere
            m0 = R00 * n[0] + R10 * n[1] + R20 * n[2]
            m1 = R01 * n[0] + R11 * n[1] + R21 * n[2]
            m2 = R02 * n[0] + R12 * n[1] + R22 * n[2]
            d0 = n[0] * p0 + n[1] * p1 + n[2] * p2 - h
            low = d0 + m0 * r[COL_BOX_C] + m1 * r[COL_BOX_C + 1] + m2 * r[COL_BOX_C + 2]
            low -= abs(m0) * r[COL_BOX_H] + abs(m1) * r[COL_BOX_H + 1] + abs(m2) * r[COL_BOX_H + 2]
            if low >= margin:
                continue  # its bounding box is clear of the plane (tighter than the sphere for a long link)
            # Only the vertices within PATCH_FLAT of the deepest can join the patch (``_patch``): one sweep keeps
            # those within PATCH_FLAT of the deepest so far, from the chunk that held the deepest last time (a chunk
            # whose sphere cannot come within PATCH_FLAT of it is skipped); those the final deepest leaves out drop.
            nchunks = (nv + CHUNK - 1) // CHUNK
            top = min(int(hits.hint[c]), nchunks - 1)
            deepest = margin
            cand = hits.cand
            nc = 0
            for t in range(-1, nchunks):
                j = top if t < 0 else t
                if t == top:
                    continue
                s = chunks[c0 + j]
                if d0 + m0 * s[0] + m1 * s[1] + m2 * s[2] - s[3] > deepest + PATCH_FLAT:
                    continue
                for i in range(j * CHUNK, min(j * CHUNK + CHUNK, nv)):
                    u0, u1, u2 = verts[vs + i, 0], verts[vs + i, 1], verts[vs + i, 2]
                    d = d0 + m0 * u0 + m1 * u1 + m2 * u2
                    if d < margin and d <= deepest + PATCH_FLAT:
                        if d < deepest:
                            deepest, hits.hint[c] = d, j
                        cand[nc, 0] = p0 + R00 * u0 + R01 * u1 + R02 * u2
                        cand[nc, 1] = p1 + R10 * u0 + R11 * u1 + R12 * u2
                        cand[nc, 2] = p2 + R20 * u0 + R21 * u1 + R22 * u2
                        cand[nc, 3] = d
                        cand[nc, 4] = i
                        nc += 1
            nc = _near_deepest(cand, nc, deepest + PATCH_FLAT)
            k = _patch(nc, hits, k, n, t1, t2, c, PATCH_SPREAD * max(a0, a1, a2))
    return k


def most_vertices(rows: np.ndarray) -> int:
    """The most support vertices of one packed collision (the size of ``ContactWork.cand``), at least 1."""
    return max([1] + [int(r[COL["vcount"]]) for r in rows])


def reduce_patch(points: np.ndarray, depths: np.ndarray, t1, t2) -> np.ndarray:
    """Indices of at most ``PATCH_POINTS`` points of a patch: its deepest, and its extremes along ±t₁ ± t₂."""
    if len(points) <= PATCH_POINTS:
        return np.arange(len(points))
    keep = [int(np.argmin(depths))]
    for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        keep.append(int(np.argmax(points @ (a * np.asarray(t1) + b * np.asarray(t2)))))
    return np.array(sorted(set(keep)))


def pairs_that_may_touch(model) -> list[tuple[int, int]]:
    """The pairs (i < j) of the model's collisions that may touch: by their bits (``may_touch``; a free flyer's
    body may touch its parent, the world), and the model's explicit pairs (``Model.collision_pairs``) of shapes on
    two bodies."""
    cols = model.collisions
    loose = {k for k in range(1, model.njoints) if model.kinds[k] == FREE_FLYER}
    excluded = set(model.excluded_collisions)
    index = {c.name: i for i, c in enumerate(cols)}
    explicit = {tuple(sorted((index[a], index[b]))) for a, b, _ in model.collision_pairs}
    return [(i, j) for i in range(len(cols)) for j in range(i + 1, len(cols))
            if ((i, j) in explicit and cols[i].body != cols[j].body)
            or may_touch(cols[i], cols[j], model.parents, loose, excluded)]  # fmt: skip


def pair_friction(model, pairs) -> np.ndarray:
    """μ of each pair (i, j) of collision indices: an explicit pair's own (``Model.collision_pairs``), else the
    larger of its two collisions' (MuJoCo's rule)."""
    cols = model.collisions
    own = {(a, b): mu for a, b, mu in model.collision_pairs}
    out = np.zeros(len(pairs))
    for r, (i, j) in enumerate(pairs):
        a, b = sorted((cols[i].name, cols[j].name))
        out[r] = own.get((a, b), max(cols[i].friction, cols[j].friction))
    return out


class PairDetector:
    """The pairs of a model's collisions that may touch (``may_touch``): all of them in the compiled narrow phase
    (``compiled``), or with ``compiled=False`` all through coal (``pairs``, their coal shapes made once): coal is the
    tests' referee and an option."""

    def __init__(self, model, margin: float, compiled: bool = True):
        import coal

        self.coal = coal
        cols = model.collisions
        pairs = pairs_that_may_touch(model)
        self.compiled = pairs if compiled else []
        """The pairs the compiled narrow phase answers (``patch.pair_patch``: every shape), in the step."""
        self.pairs = [] if compiled else pairs
        """The pairs coal answers, in Python between steps."""
        used = sorted({i for p in self.pairs for i in p})
        self.shapes = {i: coal_geometry(cols[i].shape) for i in used}
        self.request = coal.CollisionRequest()
        self.request.security_margin = float(margin)
        self.request.num_max_contacts = 1
        self.patch_request = coal.ContactPatchRequest()


def coal_geometry(shape):
    """The coal geometry of a collision shape: its primitive, or a mesh's convex hull (what the contacts touch)."""
    import coal

    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, Box):
        return coal.Box(*shape.size)
    if isinstance(shape, Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    V = np.asarray(shape.vertices, dtype=float)
    from scipy.spatial import ConvexHull

    hull = ConvexHull(V)
    points = coal.StdVec_Vec3s()  # coal's container for a list of points (it takes no (n, 3) array)
    points.extend(V[hull.vertices].astype(float))
    return coal.Convex.convexHull(points, False, None)


def pair_contacts(det: PairDetector, model, oR, op):
    """Contacts between collisions: a list of (i, j, x (world point), n (from i to j), d (signed distance), feature)."""
    coal = det.coal
    cols = model.collisions
    out = []
    poses = {}
    for i in det.shapes:
        c = cols[i]
        R = oR[c.body] @ c.rotation
        p = oR[c.body] @ c.translation + op[c.body]
        poses[i] = coal.Transform3s(R, p)
    for i, j in det.pairs:
        res = coal.CollisionResult()
        coal.collide(det.shapes[i], poses[i], det.shapes[j], poses[j], det.request, res)
        if not res.isCollision():
            continue
        contact = res.getContact(0)
        n = np.array(contact.normal, dtype=float)
        d = float(contact.penetration_depth)
        patch_res = coal.ContactPatchResult(det.patch_request)
        coal.computeContactPatch(det.shapes[i], poses[i], det.shapes[j], poses[j], res, det.patch_request, patch_res)
        pts = []
        if patch_res.numContactPatches() > 0:
            patch = patch_res.getContactPatch(0)
            pts = [np.array(patch.getPoint(k), dtype=float) for k in range(patch.size())]
        if not pts:
            pts = [np.array(contact.pos, dtype=float)]
        P = np.array(pts)
        F = contact_frame(n)
        for f, k in enumerate(reduce_patch(P, np.full(len(P), d), F[:, 0], F[:, 1])):
            out.append((i, j, P[k], n, d, f))
    return out
