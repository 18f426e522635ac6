"""Shape against shape in compiled code, in closed form: the signed distance of two collision shapes, the unit normal
from the first to the second and the nearest point of each, for the pairs that have one (Ericson, *Real-Time
Collision Detection*, Morgan Kaufmann 2005: §5.1.2 a point's nearest point in a box, §5.1.9 the nearest points of two
segments).

- sphere–sphere: d = ‖c₂ − c₁‖ − r₁ − r₂ along n = (c₂ − c₁) / ‖c₂ − c₁‖;
- sphere–capsule, capsule–capsule: a capsule is the set of points within r of its segment, so each is the
  sphere–sphere of the segments' nearest points (§5.1.9; parallel segments: the middle of their overlap);
- sphere–box: the centre's nearest point in the box (clamped to the half extents, §5.1.2); a centre inside the box
  leaves by the face it is nearest to.

A pair is given as each shape's code (``core.shapes``: SPHERE, BOX, CAPSULE), its parameters (``COLLISION_ROW``'s
params: a sphere's r; a box's half extents; a capsule's r and half length along its z axis) and its world pose (R, p).
``pair_distance`` answers for any order of the supported pairs; other pairs return ``UNSUPPORTED`` (GJK and EPA
answer them, ``convex``).  Allocates nothing: vectors are tuples.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.shapes import BOX, CAPSULE, SPHERE

__all__ = [
    "UNSUPPORTED",
    "capsule_capsule",
    "frame_of",
    "pair_distance",
    "segments_nearest",
    "sphere_box",
    "sphere_sphere",
]

UNSUPPORTED = np.inf
"""``pair_distance``'s distance for a pair it has no closed form for."""


@njit(cache=True)
def frame_of(n, F):
    """The contact frame about the unit normal n into F (3, 3), axes as columns (t₁, t₂, n): t₁ is the world's x (or
    y, for n near x) laid on the plane (``core.shapes.contact_frame``, compiled)."""
    e0, e1 = (1.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0)
    en = e0 * n[0] + e1 * n[1]
    t0, t1, t2 = e0 - en * n[0], e1 - en * n[1], -en * n[2]
    length = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    t0, t1, t2 = t0 / length, t1 / length, t2 / length
    b0, b1, b2 = n[1] * t2 - n[2] * t1, n[2] * t0 - n[0] * t2, n[0] * t1 - n[1] * t0
    F[0, 0], F[1, 0], F[2, 0] = t0, t1, t2
    F[0, 1], F[1, 1], F[2, 1] = b0, b1, b2
    F[0, 2], F[1, 2], F[2, 2] = n[0], n[1], n[2]


@njit(cache=True, inline="always")
def _axis(R):
    """A shape's z axis in the world (a capsule's axis)."""
    return R[0, 2], R[1, 2], R[2, 2]


@njit(cache=True)
def sphere_sphere(c1, r1, c2, r2):
    """(d, n, x₁, x₂) of the spheres (c₁, r₁), (c₂, r₂): signed distance, unit normal from the first to the second,
    the nearest point on each (on its surface).  Concentric spheres take n = e_z."""
    u0, u1, u2 = c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]
    length = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if length > 1e-300:
        n = (u0 / length, u1 / length, u2 / length)
    else:
        n = (0.0, 0.0, 1.0)
    x1 = (c1[0] + r1 * n[0], c1[1] + r1 * n[1], c1[2] + r1 * n[2])
    x2 = (c2[0] - r2 * n[0], c2[1] - r2 * n[1], c2[2] - r2 * n[2])
    return length - r1 - r2, n, x1, x2


@njit(cache=True)
def segments_nearest(p1, e1, h1, p2, e2, h2):
    """(s, t): the parameters of the nearest points p₁ + s e₁, p₂ + t e₂ of the segments s ∈ [−h₁, h₁],
    t ∈ [−h₂, h₂] about their centres along unit directions (Ericson §5.1.9, in centred form); parallel segments:
    the middle of the overlap of their projections."""
    r0, r1, r2 = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    b = e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2]
    c = e1[0] * r0 + e1[1] * r1 + e1[2] * r2
    f = e2[0] * r0 + e2[1] * r1 + e2[2] * r2
    denom = 1.0 - b * b
    if denom > 1e-12:
        s = min(max((b * f - c) / denom, -h1), h1)
    else:  # parallel: the middle of the overlap of segment 2's projection on segment 1 (or the nearer end)
        lo, hi = max(-h1, -c - h2), min(h1, -c + h2)
        s = min(max(0.5 * (lo + hi), -h1), h1)
    t = b * s + f
    if t < -h2 or t > h2:
        t = min(max(t, -h2), h2)
        s = min(max(b * t - c, -h1), h1)
    return s, t


@njit(cache=True)
def capsule_capsule(p1, e1, h1, r1, p2, e2, h2, r2):
    """(d, n, x₁, x₂) of two capsules (centre, unit axis, half length, radius): the spheres at the segments' nearest
    points."""
    s, t = segments_nearest(p1, e1, h1, p2, e2, h2)
    c1 = (p1[0] + s * e1[0], p1[1] + s * e1[1], p1[2] + s * e1[2])
    c2 = (p2[0] + t * e2[0], p2[1] + t * e2[1], p2[2] + t * e2[2])
    return sphere_sphere(c1, r1, c2, r2)


@njit(cache=True)
def sphere_box(c, r, R, p, h):
    """(d, n, x₁, x₂) of the sphere (c, r) and the box of half extents h at (R, p), n from the sphere to the box
    (Ericson §5.1.2): the centre's nearest point in the box; a centre inside leaves by its nearest face."""
    v0, v1, v2 = c[0] - p[0], c[1] - p[1], c[2] - p[2]
    l0 = R[0, 0] * v0 + R[1, 0] * v1 + R[2, 0] * v2  # the centre in the box's frame
    l1 = R[0, 1] * v0 + R[1, 1] * v1 + R[2, 1] * v2
    l2 = R[0, 2] * v0 + R[1, 2] * v1 + R[2, 2] * v2
    q0, q1, q2 = min(max(l0, -h[0]), h[0]), min(max(l1, -h[1]), h[1]), min(max(l2, -h[2]), h[2])
    inside = q0 == l0 and q1 == l1 and q2 == l2
    if inside:  # leave by the nearest face: the box's outward normal m there, the point on that face
        k, depth = 0, h[0] - abs(l0)
        if h[1] - abs(l1) < depth:
            k, depth = 1, h[1] - abs(l1)
        if h[2] - abs(l2) < depth:
            k, depth = 2, h[2] - abs(l2)
        side = 1.0 if (l0, l1, l2)[k] >= 0.0 else -1.0
        m = (side * R[0, k], side * R[1, k], side * R[2, k])
        f = (side * h[0] if k == 0 else l0, side * h[1] if k == 1 else l1, side * h[2] if k == 2 else l2)
        d = -depth - r
    else:
        w0, w1, w2 = l0 - q0, l1 - q1, l2 - q2  # from the box's nearest point to the centre, box frame
        length = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        m = ((R[0, 0] * w0 + R[0, 1] * w1 + R[0, 2] * w2) / length, (R[1, 0] * w0 + R[1, 1] * w1 + R[1, 2] * w2)
             / length, (R[2, 0] * w0 + R[2, 1] * w1 + R[2, 2] * w2) / length)  # fmt: skip
        f = (q0, q1, q2)
        d = length - r
    x2 = (p[0] + R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2], p[1] + R[1, 0] * f[0] + R[1, 1] * f[1]
          + R[1, 2] * f[2], p[2] + R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2])  # fmt: skip
    n = (-m[0], -m[1], -m[2])  # from the sphere to the box: against the box's outward normal
    x1 = (c[0] + r * n[0], c[1] + r * n[1], c[2] + r * n[2])
    return d, n, x1, x2


@njit(cache=True)
def _ordered(code1, par1, R1, p1, code2, par2, R2, p2):
    """(d, n, x₁, x₂) with the first shape the one of lower code (SPHERE < BOX < CAPSULE … by the table below)."""
    if code1 == SPHERE and code2 == SPHERE:
        return sphere_sphere(p1, par1[0], p2, par2[0])
    if code1 == SPHERE and code2 == CAPSULE:
        e = _axis(R2)
        s, _ = segments_nearest(p2, e, par2[1], p1, (0.0, 0.0, 1.0), 0.0)
        c2 = (p2[0] + s * e[0], p2[1] + s * e[1], p2[2] + s * e[2])
        return sphere_sphere(p1, par1[0], c2, par2[0])
    if code1 == CAPSULE and code2 == CAPSULE:
        return capsule_capsule(p1, _axis(R1), par1[1], par1[0], p2, _axis(R2), par2[1], par2[0])
    if code1 == SPHERE and code2 == BOX:
        return sphere_box(p1, par1[0], R2, p2, par2)
    z = (0.0, 0.0, 0.0)
    return UNSUPPORTED, z, z, z


@njit(cache=True)
def pair_distance(code1, par1, R1, p1, code2, par2, R2, p2):
    """(d, n, x₁, x₂) of shape 1 and shape 2 (module docstring): the signed distance (< 0: penetration), the unit
    normal from shape 1 to shape 2, the nearest point on each; d = ``UNSUPPORTED`` for a pair with no closed form
    here.  Either order of a supported pair."""
    swap = (code1 == BOX and code2 == SPHERE) or (code1 == CAPSULE and code2 == SPHERE)
    if swap:
        d, n, x2, x1 = _ordered(code2, par2, R2, p2, code1, par1, R1, p1)
        return d, (-n[0], -n[1], -n[2]), x1, x2
    return _ordered(code1, par1, R1, p1, code2, par2, R2, p2)
