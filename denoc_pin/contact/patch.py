"""A shape pair's contact patch in compiled code: up to ``PAIR_POINTS`` points sharing one normal, so that a box resting
on a box, a capsule lying on a face or a cylinder standing on its end does not rock on one point.

From the pair's normal n (shape 1 to shape 2, ``narrow_phase.pair_distance``): each core's **support feature** along
n (shape 2's along −n) — a vertex, an edge (two points), or a face (its corners; a cylinder's end: ``RIM`` points on
its rim; a hull's face: its vertices in order round it) — where a feature is the set of the core's points within
``FEATURE_SIN`` (the sine of an angle) of the support plane.  In the plane ⟂ n the smaller feature is clipped by the
face (Sutherland–Hodgman; a segment by a segment's span when they run parallel); at each clipped point u the gap
between the two features along n is its signed distance, d(u) = h₂(u) − h₁(u) − r₁ − r₂ (h: a feature's height
along n at u; r: the cores' radii), and the points with d < margin become contacts, midway between the surfaces.
Past PAIR_POINTS, the extremes along the patch's four diagonals ±t₁ ± t₂ are kept; the points come in the order of
their angle round the patch's centre (a point's place keys its warm start).  A vertex on either side, or
two edges that cross, leave the one nearest-point contact.  This is the reference-face clipping of box–box
detection (Ericson, *Real-Time Collision Detection*, 2005, §5.2.1 for the features; Sutherland and Hodgman,
"Reentrant polygon clipping", CACM 17(1), 1974).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.shapes import BOX, CAPSULE, CYLINDER, MESH
from .convex import NARROW_WORK, convex_distance, core_radius
from .narrow_phase import UNSUPPORTED, frame_of, pair_distance

__all__ = ["FEATURE_SIN", "PAIR_POINTS", "PAIR_WORK", "RIM", "pair_patch"]

PAIR_POINTS = 4
"""The most contact points of one shape pair."""
FEATURE_SIN = 0.02
"""A face (or an edge) is a core's support feature along n when it is within this sine of ⟂ n (about 1.1°)."""
RIM = 8
"""Points on a cylinder's rim standing for its end face."""
FEATURE_POINTS = 16
"""The most points of one feature (a hull's face with more is thinned evenly round it)."""
SLIVER = 1e-6
"""A hull's face whose area is at most SLIVER × its largest radius² lies on a line: it is taken as an edge."""
_CLIP = 2 * (FEATURE_POINTS + 2)

_F1 = NARROW_WORK  # the two features (world points), then two 2-D polygons the clipping alternates between
_F2 = _F1 + 3 * FEATURE_POINTS
_C1 = _F2 + 3 * FEATURE_POINTS
_C2 = _C1 + 2 * _CLIP
_HULL = _C2 + 2 * _CLIP  # a hull's face before it is ordered: (x, y, z, angle) per vertex
_HULL_MAX = 64
PAIR_WORK = _HULL + 4 * _HULL_MAX
"""The floats ``pair_patch`` works in (GJK/EPA's ``NARROW_WORK`` first)."""


@njit(cache=True, inline="always")
def _world(R, p, s0, s1, s2):
    return (p[0] + R[0, 0] * s0 + R[0, 1] * s1 + R[0, 2] * s2, p[1] + R[1, 0] * s0 + R[1, 1] * s1 + R[1, 2] * s2,
            p[2] + R[2, 0] * s0 + R[2, 1] * s1 + R[2, 2] * s2)  # fmt: skip


@njit(cache=True, inline="always")
def _put(w, base, k, x):
    w[base + 3 * k], w[base + 3 * k + 1], w[base + 3 * k + 2] = x[0], x[1], x[2]


@njit(cache=True)
def feature(code, par, R, p, V, n0, n1, n2, w, base):
    """The support feature of the shape's core along the unit n (module docstring) into w[base …] as world points,
    a face's in order round it; returns their number (1 vertex, 2 edge, ≥ 3 face)."""
    l0 = R[0, 0] * n0 + R[1, 0] * n1 + R[2, 0] * n2  # n in the shape frame
    l1 = R[0, 1] * n0 + R[1, 1] * n1 + R[2, 1] * n2
    l2 = R[0, 2] * n0 + R[1, 2] * n1 + R[2, 2] * n2
    if code == BOX:
        s = (par[0] if l0 >= 0.0 else -par[0], par[1] if l1 >= 0.0 else -par[1], par[2] if l2 >= 0.0 else -par[2])
        flat = (abs(l0) <= FEATURE_SIN, abs(l1) <= FEATURE_SIN, abs(l2) <= FEATURE_SIN)
        nflat = int(flat[0]) + int(flat[1]) + int(flat[2])
        if nflat == 0:
            _put(w, base, 0, _world(R, p, s[0], s[1], s[2]))
            return 1
        if nflat == 1:
            for j in range(2):
                sg = 1.0 if j == 0 else -1.0
                _put(w, base, j, _world(R, p, sg * par[0] if flat[0] else s[0], sg * par[1] if flat[1] else s[1],
                                        sg * par[2] if flat[2] else s[2]))  # fmt: skip
            return 2
        # a face: the two flat axes a, b, corners in order round it
        a = 0 if flat[0] else 1
        b = 2 if flat[2] else 1
        for j, (sa, sb) in enumerate(((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))):
            c0 = sa * par[0] if a == 0 else s[0]
            c1 = sa * par[1] if a == 1 else (sb * par[1] if b == 1 else s[1])
            c2 = sb * par[2] if b == 2 else s[2]
            _put(w, base, j, _world(R, p, c0, c1, c2))
        return 4
    if code == CAPSULE:
        if abs(l2) <= FEATURE_SIN:
            _put(w, base, 0, _world(R, p, 0.0, 0.0, par[1]))
            _put(w, base, 1, _world(R, p, 0.0, 0.0, -par[1]))
            return 2
        _put(w, base, 0, _world(R, p, 0.0, 0.0, par[1] if l2 >= 0.0 else -par[1]))
        return 1
    if code == CYLINDER:
        rho = np.sqrt(l0 * l0 + l1 * l1)
        z = par[1] if l2 >= 0.0 else -par[1]
        if rho <= FEATURE_SIN:  # an end face: RIM points round its rim
            for j in range(RIM):
                a = 2.0 * np.pi * j / RIM
                _put(w, base, j, _world(R, p, par[0] * np.cos(a), par[0] * np.sin(a), z))
            return RIM
        c0, c1 = par[0] * l0 / rho, par[0] * l1 / rho
        if abs(l2) <= FEATURE_SIN:  # the side: the line of the rim's two points
            _put(w, base, 0, _world(R, p, c0, c1, par[1]))
            _put(w, base, 1, _world(R, p, c0, c1, -par[1]))
            return 2
        _put(w, base, 0, _world(R, p, c0, c1, z))
        return 1
    if code == MESH:
        top = -np.inf
        size = 0.0
        for k in range(V.shape[0]):
            top = max(top, V[k, 0] * l0 + V[k, 1] * l1 + V[k, 2] * l2)
            size = max(size, abs(V[k, 0]), abs(V[k, 1]), abs(V[k, 2]))
        k = 0
        for j in range(V.shape[0]):
            if V[j, 0] * l0 + V[j, 1] * l1 + V[j, 2] * l2 >= top - FEATURE_SIN * size and k < _HULL_MAX:
                x = _world(R, p, V[j, 0], V[j, 1], V[j, 2])
                w[_HULL + 4 * k], w[_HULL + 4 * k + 1], w[_HULL + 4 * k + 2] = x[0], x[1], x[2]
                k += 1
        if k <= 2:
            for j in range(k):
                _put(w, base, j, (w[_HULL + 4 * j], w[_HULL + 4 * j + 1], w[_HULL + 4 * j + 2]))
            return k
        return _ordered_face(w, k, n0, n1, n2, base)
    _put(w, base, 0, (p[0], p[1], p[2]))  # a sphere: its centre
    return 1


@njit(cache=True)
def _ordered_face(w, k, n0, n1, n2, base):
    """A hull face's k points (in w[_HULL …]) in order of their angle round their mean in the plane ⟂ n, thinned
    evenly to at most FEATURE_POINTS, into w[base …]; returns their number."""
    F = np.empty((3, 3))
    frame_of((n0, n1, n2), F)
    m0 = m1 = m2 = 0.0
    for j in range(k):
        m0 += w[_HULL + 4 * j] / k
        m1 += w[_HULL + 4 * j + 1] / k
        m2 += w[_HULL + 4 * j + 2] / k
    for j in range(k):
        d = (w[_HULL + 4 * j] - m0, w[_HULL + 4 * j + 1] - m1, w[_HULL + 4 * j + 2] - m2)
        w[_HULL + 4 * j + 3] = np.arctan2(d[0] * F[0, 1] + d[1] * F[1, 1] + d[2] * F[2, 1],
                                          d[0] * F[0, 0] + d[1] * F[1, 0] + d[2] * F[2, 0])  # fmt: skip
    for j in range(1, k):  # insertion sort by angle
        i = j
        while i > 0 and w[_HULL + 4 * (i - 1) + 3] > w[_HULL + 4 * i + 3]:
            for c in range(4):
                w[_HULL + 4 * i + c], w[_HULL + 4 * (i - 1) + c] = w[_HULL + 4 * (i - 1) + c], w[_HULL + 4 * i + c]
            i -= 1
    out = min(k, FEATURE_POINTS)
    area = reach = 0.0  # the thinned face's area in the plane ⟂ n (shoelace) and its largest radius
    for j in range(out):
        a, b = (j * k) // out, (((j + 1) % out) * k) // out
        da = (w[_HULL + 4 * a] - m0, w[_HULL + 4 * a + 1] - m1, w[_HULL + 4 * a + 2] - m2)
        db = (w[_HULL + 4 * b] - m0, w[_HULL + 4 * b + 1] - m1, w[_HULL + 4 * b + 2] - m2)
        ua, va = _uv(da, F)
        ub, vb = _uv(db, F)
        area += 0.5 * (ua * vb - ub * va)
        reach = max(reach, ua * ua + va * va)
    if abs(area) <= SLIVER * reach:  # its points (nearly) on a line: an edge, from its two ends
        a = b = 0
        far = -1.0
        for j in range(k):  # the point farthest from the mean, then the point farthest from it
            d = (w[_HULL + 4 * j] - m0) ** 2 + (w[_HULL + 4 * j + 1] - m1) ** 2 + (w[_HULL + 4 * j + 2] - m2) ** 2
            if d > far:
                a, far = j, d
        far = -1.0
        for j in range(k):
            d = ((w[_HULL + 4 * j] - w[_HULL + 4 * a]) ** 2 + (w[_HULL + 4 * j + 1] - w[_HULL + 4 * a + 1]) ** 2
                 + (w[_HULL + 4 * j + 2] - w[_HULL + 4 * a + 2]) ** 2)  # fmt: skip
            if d > far:
                b, far = j, d
        _put(w, base, 0, (w[_HULL + 4 * a], w[_HULL + 4 * a + 1], w[_HULL + 4 * a + 2]))
        _put(w, base, 1, (w[_HULL + 4 * b], w[_HULL + 4 * b + 1], w[_HULL + 4 * b + 2]))
        return 2
    for j in range(out):
        src = (j * k) // out
        _put(w, base, j, (w[_HULL + 4 * src], w[_HULL + 4 * src + 1], w[_HULL + 4 * src + 2]))
    return out


@njit(cache=True)
def _height(w, base, k, u0, u1, F):
    """The height along n (F's third column) of a feature's surface over the in-plane point (u₀, u₁)."""
    n = (F[0, 2], F[1, 2], F[2, 2])
    if k == 1:
        return w[base] * n[0] + w[base + 1] * n[1] + w[base + 2] * n[2]
    if k == 2:
        a = (w[base], w[base + 1], w[base + 2])
        b = (w[base + 3], w[base + 4], w[base + 5])
        a0, a1 = _uv(a, F)
        b0, b1 = _uv(b, F)
        e0, e1 = b0 - a0, b1 - a1
        ee = e0 * e0 + e1 * e1
        t = min(max(((u0 - a0) * e0 + (u1 - a1) * e1) / ee, 0.0), 1.0) if ee > 0.0 else 0.5
        ha = a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
        hb = b[0] * n[0] + b[1] * n[1] + b[2] * n[2]
        return (1.0 - t) * ha + t * hb
    m0 = m1 = m2 = 0.0  # the face's plane: Newell's normal m through its first point
    for j in range(k):
        i = (j + 1) % k
        y0, y1, y2 = w[base + 3 * j], w[base + 3 * j + 1], w[base + 3 * j + 2]
        z0, z1, z2 = w[base + 3 * i], w[base + 3 * i + 1], w[base + 3 * i + 2]
        m0 += (y1 - z1) * (y2 + z2)
        m1 += (y2 - z2) * (y0 + z0)
        m2 += (y0 - z0) * (y1 + z1)
    mn = m0 * n[0] + m1 * n[1] + m2 * n[2]
    mt1 = m0 * F[0, 0] + m1 * F[1, 0] + m2 * F[2, 0]
    mt2 = m0 * F[0, 1] + m1 * F[1, 1] + m2 * F[2, 1]
    mp = m0 * w[base] + m1 * w[base + 1] + m2 * w[base + 2]
    if not abs(mn) > 0.0:  # the face seen edge-on (feature() keeps no slivers): its highest point
        top = -np.inf
        for j in range(k):
            top = max(top, w[base + 3 * j] * n[0] + w[base + 3 * j + 1] * n[1] + w[base + 3 * j + 2] * n[2])
        return top
    return (mp - u0 * mt1 - u1 * mt2) / mn


@njit(cache=True, inline="always")
def _uv(x, F):
    """x's coordinates along t₁, t₂ (F's first columns)."""
    return x[0] * F[0, 0] + x[1] * F[1, 0] + x[2] * F[2, 0], x[0] * F[0, 1] + x[1] * F[1, 1] + x[2] * F[2, 1]


@njit(cache=True)
def _clip(w, ref, kr, inc, ki, F):
    """The incident feature (k_i ≥ 2 points at w[inc]) clipped by the reference face (k_r ≥ 3 at w[ref]) in the
    plane ⟂ n (Sutherland–Hodgman); the result as 2-D points in w[_C1 …]; returns their number."""
    src, dst = _C1, _C2
    for j in range(ki):
        w[src + 2 * j], w[src + 2 * j + 1] = _uv((w[inc + 3 * j], w[inc + 3 * j + 1], w[inc + 3 * j + 2]), F)
    k = ki
    area = 0.0
    for j in range(kr):
        a0, a1 = _uv((w[ref + 3 * j], w[ref + 3 * j + 1], w[ref + 3 * j + 2]), F)
        i = (j + 1) % kr
        b0, b1 = _uv((w[ref + 3 * i], w[ref + 3 * i + 1], w[ref + 3 * i + 2]), F)
        area += a0 * b1 - a1 * b0
    sign = 1.0 if area >= 0.0 else -1.0
    for j in range(kr):
        if k == 0:
            break
        a0, a1 = _uv((w[ref + 3 * j], w[ref + 3 * j + 1], w[ref + 3 * j + 2]), F)
        i = (j + 1) % kr
        b0, b1 = _uv((w[ref + 3 * i], w[ref + 3 * i + 1], w[ref + 3 * i + 2]), F)
        e0, e1 = b0 - a0, b1 - a1
        out = 0
        for m in range(k):  # keep the inside of edge a→b: sign · (e × (x − a)) ≥ 0
            x0, x1 = w[src + 2 * m], w[src + 2 * m + 1]
            q = (m + 1) % k
            y0, y1 = w[src + 2 * q], w[src + 2 * q + 1]
            sx = sign * (e0 * (x1 - a1) - e1 * (x0 - a0))
            sy = sign * (e0 * (y1 - a1) - e1 * (y0 - a0))
            if sx >= 0.0 and out < _CLIP:
                w[dst + 2 * out], w[dst + 2 * out + 1] = x0, x1
                out += 1
            if (sx >= 0.0) != (sy >= 0.0) and out < _CLIP:
                t = sx / (sx - sy)
                w[dst + 2 * out], w[dst + 2 * out + 1] = x0 + t * (y0 - x0), x1 + t * (y1 - x1)
                out += 1
        k = out
        src, dst = dst, src
    if src != _C1:
        for m in range(2 * k):
            w[_C1 + m] = w[_C2 + m]
    return k


@njit(cache=True)
def _span(w, s1, s2, F):
    """Two parallel segments (at w[s1], w[s2]): the part of the second over the first's span, as its two ends
    (2-D) in w[_C1 …]; returns 2, or 0 when they cross at an angle or do not overlap."""
    a0, a1 = _uv((w[s1], w[s1 + 1], w[s1 + 2]), F)
    b0, b1 = _uv((w[s1 + 3], w[s1 + 4], w[s1 + 5]), F)
    c0, c1 = _uv((w[s2], w[s2 + 1], w[s2 + 2]), F)
    d0, d1 = _uv((w[s2 + 3], w[s2 + 4], w[s2 + 5]), F)
    e0, e1, f0, f1 = b0 - a0, b1 - a1, d0 - c0, d1 - c1
    le, lf = np.sqrt(e0 * e0 + e1 * e1), np.sqrt(f0 * f0 + f1 * f1)
    if le == 0.0 or lf == 0.0 or abs(e0 * f1 - e1 * f0) > FEATURE_SIN * le * lf:
        return 0
    tc = ((c0 - a0) * e0 + (c1 - a1) * e1) / (le * le)  # the second's ends along the first, 0 … 1 its span
    td = ((d0 - a0) * e0 + (d1 - a1) * e1) / (le * le)
    lo, hi = max(min(tc, td), 0.0), min(max(tc, td), 1.0)
    if lo > hi:
        return 0
    for j, t in enumerate((lo, hi)):
        s = (t - tc) / (td - tc) if td != tc else 0.0  # the same point on the second segment
        w[_C1 + 2 * j], w[_C1 + 2 * j + 1] = c0 + s * f0, c1 + s * f1
    return 2


@njit(cache=True)
def _by_angle(w, k):
    """The k patch records (u₀, u₁, h, d) at w[_C2 …] sorted by their angle round their mean (from −π)."""
    c0 = c1 = 0.0
    for j in range(k):
        c0 += w[_C2 + 4 * j] / k
        c1 += w[_C2 + 4 * j + 1] / k
    for j in range(1, k):
        i = j
        while i > 0 and (np.arctan2(w[_C2 + 4 * (i - 1) + 1] - c1, w[_C2 + 4 * (i - 1)] - c0)
                         > np.arctan2(w[_C2 + 4 * i + 1] - c1, w[_C2 + 4 * i] - c0)):  # fmt: skip
            for c in range(4):
                w[_C2 + 4 * i + c], w[_C2 + 4 * (i - 1) + c] = w[_C2 + 4 * (i - 1) + c], w[_C2 + 4 * i + c]
            i -= 1


@njit(cache=True)
def pair_patch(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, margin, w, points, depths, F, axis=None):
    """The contact patch of shapes 1 and 2 (module docstring): its points (world, ≤ PAIR_POINTS rows of ``points``),
    their signed distances (``depths``) and its frame F (3, 3; columns t₁, t₂, n; n from shape 1 to shape 2).
    Returns the number of points: 0 when the shapes are margin or more apart.  The nearest points come from the
    closed forms (``narrow_phase``) where they exist, else GJK/EPA (``convex``).  w: PAIR_WORK floats; axis: the
    pair's GJK warm start (``convex.gjk``)."""
    d, n, x1, x2 = pair_distance(c1, par1, R1, p1, c2, par2, R2, p2)
    if d == UNSUPPORTED:
        d, n, x1, x2 = convex_distance(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, w, margin, axis)
    if d >= margin:
        return 0
    frame_of(n, F)
    k1 = feature(c1, par1, R1, p1, V1, n[0], n[1], n[2], w, _F1)
    k2 = feature(c2, par2, R2, p2, V2, -n[0], -n[1], -n[2], w, _F2) if k1 > 1 else 1
    k = 0
    if k1 >= 3 and k2 >= 2:
        k = _clip(w, _F1, k1, _F2, k2, F)
    elif k2 >= 3 and k1 >= 2:
        k = _clip(w, _F2, k2, _F1, k1, F)
    elif k1 == 2 and k2 == 2:
        k = _span(w, _F1, _F2, F)
    r1, r2 = core_radius(c1, par1), core_radius(c2, par2)
    kept = 0
    for j in range(k):  # the clipped points' gaps; the ones within the margin, midway between the surfaces
        u0, u1 = w[_C1 + 2 * j], w[_C1 + 2 * j + 1]
        h1, h2 = _height(w, _F1, k1, u0, u1, F), _height(w, _F2, k2, u0, u1, F)
        gap = h2 - h1 - r1 - r2
        if gap >= margin:
            continue
        h = 0.5 * (h1 + r1 + h2 - r2)
        w[_C2 + 4 * kept], w[_C2 + 4 * kept + 1], w[_C2 + 4 * kept + 2], w[_C2 + 4 * kept + 3] = u0, u1, h, gap
        kept += 1
        if kept == _CLIP // 2:
            break
    if kept == 0:  # a vertex, crossing edges, or rounding: the nearest points' one contact
        for a in range(3):
            points[0, a] = 0.5 * (x1[a] + x2[a])
        depths[0] = d
        return 1
    _by_angle(w, kept)  # a canonical order: the warm starts are keyed by a point's place in it
    chosen = 0
    for j in range(kept):
        take = kept <= PAIR_POINTS
        if not take:  # an extreme along one of the diagonals ±t₁ ± t₂
            u0, u1 = w[_C2 + 4 * j], w[_C2 + 4 * j + 1]
            for s0, s1 in ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)):
                best, top = 0, -np.inf
                for i in range(kept):
                    along = s0 * w[_C2 + 4 * i] + s1 * w[_C2 + 4 * i + 1]
                    if along > top:
                        best, top = i, along
                if best == j:
                    take = True
        if take and chosen < PAIR_POINTS:
            u0, u1, h = w[_C2 + 4 * j], w[_C2 + 4 * j + 1], w[_C2 + 4 * j + 2]
            for a in range(3):
                points[chosen, a] = u0 * F[a, 0] + u1 * F[a, 1] + h * F[a, 2]
            depths[chosen] = w[_C2 + 4 * j + 3]
            chosen += 1
    return chosen
