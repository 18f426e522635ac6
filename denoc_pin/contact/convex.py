"""Convex shape against convex shape in compiled code: GJK for the distance of separated shapes, EPA for the depth of
overlapping ones, on the shapes' support functions (Gilbert, Johnson, Keerthi, "A fast procedure for computing the
distance between complex objects in three-dimensional space", IEEE J. Robotics and Automation 4(2), 1988; van den
Bergen, "Proximity queries and penetration depth computation on 3D game objects", GDC 2001; the sub-simplex searches
of Ericson, *Real-Time Collision Detection*, 2005, §5.1.5 and §5.1.6).

A shape is its **core** inflated by a radius: a sphere is a point and r, a capsule its segment and r, a box, a
cylinder and a mesh's convex hull themselves and 0.  GJK finds the nearest points of the cores in the Minkowski
difference C = A − B; cores farther apart than ``TOUCH`` × (the pair's size) have d = ‖x₁ − x₂‖ − r₁ − r₂ along
n = (x₂ − x₁)/‖·‖ (GJK stops as soon as a plane separates them by more than the caller's ``far``, and starts from the
pair's last direction when it has one); otherwise EPA expands GJK's last simplex into a polytope of C until the face
nearest the origin is a face of C to within ``EPA_TOLERANCE`` (exact for a box or a hull; a cylinder's curved side to
the tolerance the vertex budget ``EPA_VERTICES`` reaches), and d = −depth − r₁ − r₂ along that face's normal.

A shape is passed as (code, params, R, p, V): its code (``core.shapes``), its three parameters (``COLLISION_ROW``),
its world rotation and origin, and for a mesh its hull vertices in its own frame (else an empty (0, 3) array).  The
searches work in ``work``, a float buffer of ``NARROW_WORK`` entries (a ``ContactWork``'s ``narrow``): nothing is
allocated a pair.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE

__all__ = ["EPA_TOLERANCE", "EPA_VERTICES", "NARROW_WORK", "TOUCH", "convex_distance", "core_radius", "support"]

GJK_ITERATIONS = 128
"""The most GJK iterations (a polytope pair ends in far fewer; a cylinder's curved side converges linearly)."""
GJK_RESTARTS = 4
"""How often GJK starts again from its nearest point v alone when rounding stalls a thin simplex (curved shapes)."""
GJK_TOLERANCE = 1e-11
"""GJK stops when ‖v‖² − v·w ≤ GJK_TOLERANCE ‖v‖²: the distance's upper and lower bounds agree to that ratio."""
TOUCH = 1e-6
"""Cores nearer than TOUCH × (the pair's size) are taken as touching and handed to EPA (a normal from witness points
that close would be noise)."""
EPA_VERTICES = 64
"""The most vertices of EPA's polytope."""
EPA_FACES = 128
"""The most faces of EPA's polytope (faces of removed ones are reused)."""
EPA_TOLERANCE = 1e-12
"""EPA stops when the support along the nearest face's normal is within EPA_TOLERANCE × (the pair's size) of it."""

# the work buffer: the GJK simplex (W = A − B, A, B: 4 points each), EPA's vertices, faces (indices, unit normals,
# distances, alive flags) and horizon edges
_W, _A, _B, _L = 0, 12, 24, 36
_EW = 40
_EA = _EW + 3 * EPA_VERTICES
_EB = _EA + 3 * EPA_VERTICES
_FI = _EB + 3 * EPA_VERTICES
_FN = _FI + 3 * EPA_FACES
_FD = _FN + 3 * EPA_FACES
_FL = _FD + EPA_FACES
_ED = _FL + EPA_FACES
NARROW_WORK = _ED + 2 * 3 * EPA_FACES
"""The floats ``convex_distance`` works in."""


@njit(cache=True)
def core_radius(code, par):
    """The radius a shape's core is inflated by: a sphere's and a capsule's r, else 0."""
    if code == SPHERE or code == CAPSULE:
        return par[0]
    return 0.0


@njit(cache=True)
def support(code, par, R, p, V, d0, d1, d2):
    """The point of the shape's core farthest along the world direction d (a support point), world."""
    l0 = R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2  # d in the shape frame
    l1 = R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2
    l2 = R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2
    s0 = s1 = s2 = 0.0
    if code == BOX:
        s0 = par[0] if l0 >= 0.0 else -par[0]
        s1 = par[1] if l1 >= 0.0 else -par[1]
        s2 = par[2] if l2 >= 0.0 else -par[2]
    elif code == CAPSULE:
        s2 = par[1] if l2 >= 0.0 else -par[1]
    elif code == CYLINDER:
        rho = np.sqrt(l0 * l0 + l1 * l1)
        if rho > 0.0:
            s0, s1 = par[0] * l0 / rho, par[0] * l1 / rho
        s2 = par[1] if l2 >= 0.0 else -par[1]
    elif code == MESH:
        best = -np.inf
        for k in range(V.shape[0]):
            x = V[k, 0] * l0 + V[k, 1] * l1 + V[k, 2] * l2
            if x > best:
                best, s0, s1, s2 = x, V[k, 0], V[k, 1], V[k, 2]
    return (p[0] + R[0, 0] * s0 + R[0, 1] * s1 + R[0, 2] * s2, p[1] + R[1, 0] * s0 + R[1, 1] * s1 + R[1, 2] * s2,
            p[2] + R[2, 0] * s0 + R[2, 1] * s1 + R[2, 2] * s2)  # fmt: skip


@njit(cache=True, inline="always")
def _dot(w, i, j):
    """W_i · W_j of points i and j of the flat point list w."""
    return w[3 * i] * w[3 * j] + w[3 * i + 1] * w[3 * j + 1] + w[3 * i + 2] * w[3 * j + 2]


@njit(cache=True)
def _keep(w, lam, idx, k):
    """Keep points idx[0 … k−1] of the simplex (W, A, B at w[_W], w[_A], w[_B]) as points 0 … k−1, with their
    barycentric weights lam[0 … k−1] (already in idx's order) into w[_L …]; copied through EPA's (idle) vertex
    rows, since a kept point may land where another is read from."""
    for m in range(k):
        for i in range(3):
            s = 3 * idx[m] + i
            w[_EW + 9 * m + i], w[_EW + 9 * m + 3 + i], w[_EW + 9 * m + 6 + i] = w[_W + s], w[_A + s], w[_B + s]
    for m in range(k):
        for i in range(3):
            w[_W + 3 * m + i], w[_A + 3 * m + i], w[_B + 3 * m + i] = (
                w[_EW + 9 * m + i], w[_EW + 9 * m + 3 + i], w[_EW + 9 * m + 6 + i])  # fmt: skip
        w[_L + m] = lam[m]
    return k


@njit(cache=True)
def _triangle(w, a, b, c):
    """The origin's nearest point on triangle (W_a, W_b, W_c) (Ericson §5.1.5): (k, idx, lam): the sub-simplex that
    holds it and its barycentric weights."""
    ab = (w[3 * b] - w[3 * a], w[3 * b + 1] - w[3 * a + 1], w[3 * b + 2] - w[3 * a + 2])
    ac = (w[3 * c] - w[3 * a], w[3 * c + 1] - w[3 * a + 1], w[3 * c + 2] - w[3 * a + 2])
    pa = (-w[3 * a], -w[3 * a + 1], -w[3 * a + 2])
    d1 = ab[0] * pa[0] + ab[1] * pa[1] + ab[2] * pa[2]
    d2 = ac[0] * pa[0] + ac[1] * pa[1] + ac[2] * pa[2]
    if d1 <= 0.0 and d2 <= 0.0:
        return 1, (a, b, c), (1.0, 0.0, 0.0)
    pb = (-w[3 * b], -w[3 * b + 1], -w[3 * b + 2])
    d3 = ab[0] * pb[0] + ab[1] * pb[1] + ab[2] * pb[2]
    d4 = ac[0] * pb[0] + ac[1] * pb[1] + ac[2] * pb[2]
    if d3 >= 0.0 and d4 <= d3:
        return 1, (b, a, c), (1.0, 0.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3)
        return 2, (a, b, c), (1.0 - t, t, 0.0)
    pc = (-w[3 * c], -w[3 * c + 1], -w[3 * c + 2])
    d5 = ab[0] * pc[0] + ab[1] * pc[1] + ab[2] * pc[2]
    d6 = ac[0] * pc[0] + ac[1] * pc[1] + ac[2] * pc[2]
    if d6 >= 0.0 and d5 <= d6:
        return 1, (c, a, b), (1.0, 0.0, 0.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        return 2, (a, c, b), (1.0 - t, t, 0.0)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 2, (b, c, a), (1.0 - t, t, 0.0)
    s = va + vb + vc
    return 3, (a, b, c), (va / s, vb / s, vc / s)


@njit(cache=True, inline="always")
def _outside(w, a, b, c, d):
    """Whether the origin and W_d lie on opposite sides of the plane of (W_a, W_b, W_c) (Ericson §5.1.6), or the
    four points are flat."""
    u = (w[3 * b] - w[3 * a], w[3 * b + 1] - w[3 * a + 1], w[3 * b + 2] - w[3 * a + 2])
    t = (w[3 * c] - w[3 * a], w[3 * c + 1] - w[3 * a + 1], w[3 * c + 2] - w[3 * a + 2])
    m = (u[1] * t[2] - u[2] * t[1], u[2] * t[0] - u[0] * t[2], u[0] * t[1] - u[1] * t[0])
    sp = -(m[0] * w[3 * a] + m[1] * w[3 * a + 1] + m[2] * w[3 * a + 2])
    sd = m[0] * (w[3 * d] - w[3 * a]) + m[1] * (w[3 * d + 1] - w[3 * a + 1]) + m[2] * (w[3 * d + 2] - w[3 * a + 2])
    if sd * sd < 1e-30 * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) ** 1.5:
        return True
    return sp * sd < 0.0


@njit(cache=True)
def _nearest(w, n):
    """Reduce the simplex of n points to the smallest one holding the origin's nearest point, with its weights;
    returns its number of points (4: the origin is inside the tetrahedron)."""
    W = w[_W:_A]
    if n == 1:
        w[_L] = 1.0
        return 1
    if n == 2:
        e0, e1, e2 = W[3] - W[0], W[4] - W[1], W[5] - W[2]
        ee = e0 * e0 + e1 * e1 + e2 * e2
        t = -(W[0] * e0 + W[1] * e1 + W[2] * e2) / ee if ee > 0.0 else 0.0
        if t <= 0.0:
            return _keep(w, (1.0, 0.0, 0.0), (0, 1, 2), 1)
        if t >= 1.0:
            return _keep(w, (1.0, 0.0, 0.0), (1, 0, 2), 1)
        return _keep(w, (1.0 - t, t, 0.0), (0, 1, 2), 2)
    if n == 3:
        k, idx, lam = _triangle(W, 0, 1, 2)
        return _keep(w, lam, idx, k)
    best, bk, bidx, blam = np.inf, 0, (0, 1, 2), (1.0, 0.0, 0.0)
    inside = True
    for a, b, c, d in ((0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0)):
        if _outside(W, a, b, c, d):
            inside = False
            k, idx, lam = _triangle(W, a, b, c)
            x0 = x1 = x2 = 0.0
            for m in range(k):
                x0 += lam[m] * W[3 * idx[m]]
                x1 += lam[m] * W[3 * idx[m] + 1]
                x2 += lam[m] * W[3 * idx[m] + 2]
            dd = x0 * x0 + x1 * x1 + x2 * x2
            if dd < best:
                best, bk, bidx, blam = dd, k, idx, lam
    if inside:
        return 4
    return _keep(w, blam, bidx, bk)


@njit(cache=True, inline="always")
def _combine(w, base, n):
    """Σ λ_i P_i of the simplex's points at w[base …]."""
    x0 = x1 = x2 = 0.0
    for m in range(n):
        x0 += w[_L + m] * w[base + 3 * m]
        x1 += w[_L + m] * w[base + 3 * m + 1]
        x2 += w[_L + m] * w[base + 3 * m + 2]
    return x0, x1, x2


@njit(cache=True)
def _add_point(w, n, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, d0, d1, d2):
    """Point n of the simplex: a = s_A(d), b = s_B(−d), W = a − b."""
    a = support(c1, par1, R1, p1, V1, d0, d1, d2)
    b = support(c2, par2, R2, p2, V2, -d0, -d1, -d2)
    for i in range(3):
        w[_A + 3 * n + i], w[_B + 3 * n + i], w[_W + 3 * n + i] = a[i], b[i], a[i] - b[i]


@njit(cache=True)
def gjk(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, far, w, axis):
    """GJK on the cores of shapes 1 and 2: (n, dist): the simplex left in ``w`` (n points; 4: the origin inside)
    and the cores' distance, 0 when they touch (within TOUCH × scale); as soon as a plane separates them by more
    than ``far``, that lower bound (+∞ > dist > far: the narrow phase needs no more of a pair beyond its margin).
    axis (3,): the direction v to start from (zero: the centres'), left holding the last v (a step's pairs move
    little, so that last step's v mostly separates them again at once)."""
    v0, v1, v2 = axis[0], axis[1], axis[2]
    warm = v0 * v0 + v1 * v1 + v2 * v2
    if warm == 0.0:
        v0, v1, v2 = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    if v0 * v0 + v1 * v1 + v2 * v2 == 0.0:
        v0 = 1.0
    _add_point(w, 0, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, -v0, -v1, -v2)
    w[_L] = 1.0
    if warm > 0.0:  # C's point least along the warm axis: still beyond far along it, the pair is done
        vw = v0 * w[_W] + v1 * w[_W + 1] + v2 * w[_W + 2]
        if vw > 0.0 and vw * vw > far * far * warm:
            return 1, vw / np.sqrt(warm)
    n = 1
    v0, v1, v2 = w[_W], w[_W + 1], w[_W + 2]
    touch = (TOUCH * scale) ** 2
    restarts = GJK_RESTARTS
    for _ in range(GJK_ITERATIONS):
        vv = v0 * v0 + v1 * v1 + v2 * v2
        if vv <= touch:
            return n, 0.0
        xa, xb = _combine(w, _A, n), _combine(w, _B, n)  # v = xa − xb, kept should the step stall
        _add_point(w, n, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, -v0, -v1, -v2)
        vw = v0 * w[_W + 3 * n] + v1 * w[_W + 3 * n + 1] + v2 * w[_W + 3 * n + 2]
        if vw > 0.0 and vw * vw > far * far * vv:
            axis[0], axis[1], axis[2] = v0, v1, v2
            return n, vw / np.sqrt(vv)  # the plane ⟂ v separates them by more than far
        if vv - vw <= GJK_TOLERANCE * vv:
            break  # no point of C is nearer the origin along v than ‖v‖ (to the tolerance): v is the nearest
        m = _nearest(w, n + 1)
        stalled = m == 4 and vw > 0.0  # every point beyond the plane v·x = v·w > 0: rounding on a flat simplex
        if m == 4 and not stalled:
            return 4, 0.0
        if not stalled:
            u0, u1, u2 = _combine(w, _W, m)
            stalled = u0 * u0 + u1 * u1 + u2 * u2 >= vv  # no progress: rounding on a thin simplex
        if stalled:
            if restarts == 0:
                n = m if m < 4 else n
                break
            restarts -= 1  # start again from v alone (a point of C, as any convex combination of its points)
            for i in range(3):
                w[_A + i], w[_B + i], w[_W + i] = xa[i], xb[i], xa[i] - xb[i]
            w[_L] = 1.0
            n = 1
            u0, u1, u2 = v0, v1, v2
        else:
            n = m
        v0, v1, v2 = u0, u1, u2
    return n, np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)


@njit(cache=True)
def _tetrahedron(w, n, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale):
    """Grow GJK's touching simplex of n < 4 points to a tetrahedron of C's points (supports along directions off the
    simplex); returns its number of points (< 4: C is flat here)."""
    tol = 1e-10 * scale
    W = w[_W:_A]
    for d in ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0)):
        if n != 1:
            break
        _add_point(w, 1, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, d[0], d[1], d[2])
        if np.sqrt((W[3] - W[0]) ** 2 + (W[4] - W[1]) ** 2 + (W[5] - W[2]) ** 2) > tol:
            n = 2
    if n == 2:
        e = (W[3] - W[0], W[4] - W[1], W[5] - W[2])
        k = 0 if abs(e[0]) <= abs(e[1]) and abs(e[0]) <= abs(e[2]) else (1 if abs(e[1]) <= abs(e[2]) else 2)
        f = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
        u = (e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0])
        t = (e[1] * u[2] - e[2] * u[1], e[2] * u[0] - e[0] * u[2], e[0] * u[1] - e[1] * u[0])
        for d in (u, t, (-u[0], -u[1], -u[2]), (-t[0], -t[1], -t[2])):
            if n != 2:
                break
            _add_point(w, 2, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, d[0], d[1], d[2])
            x = (W[6] - W[0], W[7] - W[1], W[8] - W[2])
            c = (e[1] * x[2] - e[2] * x[1], e[2] * x[0] - e[0] * x[2], e[0] * x[1] - e[1] * x[0])
            if np.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2) > tol * np.sqrt(e[0] ** 2 + e[1] ** 2 + e[2] ** 2):
                n = 3
    if n == 3:
        e = (W[3] - W[0], W[4] - W[1], W[5] - W[2])
        x = (W[6] - W[0], W[7] - W[1], W[8] - W[2])
        m = (e[1] * x[2] - e[2] * x[1], e[2] * x[0] - e[0] * x[2], e[0] * x[1] - e[1] * x[0])
        mm = np.sqrt(m[0] ** 2 + m[1] ** 2 + m[2] ** 2)
        for sgn in (1.0, -1.0):
            if n != 3 or mm == 0.0:
                break
            _add_point(w, 3, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, sgn * m[0], sgn * m[1], sgn * m[2])
            h = (m[0] * (W[9] - W[0]) + m[1] * (W[10] - W[1]) + m[2] * (W[11] - W[2])) / mm
            if abs(h) > tol:
                n = 4
    return n


@njit(cache=True)
def _face(w, f, a, b, c):
    """Face f of EPA's polytope on vertices (a, b, c), counter-clockwise seen from outside: its unit normal and its
    distance from the origin.  False for a sliver (its normal is rounding noise): distance +∞, never the nearest."""
    E = w[_EW:_EA]
    u = (E[3 * b] - E[3 * a], E[3 * b + 1] - E[3 * a + 1], E[3 * b + 2] - E[3 * a + 2])
    t = (E[3 * c] - E[3 * a], E[3 * c + 1] - E[3 * a + 1], E[3 * c + 2] - E[3 * a + 2])
    m = (u[1] * t[2] - u[2] * t[1], u[2] * t[0] - u[0] * t[2], u[0] * t[1] - u[1] * t[0])
    mm = np.sqrt(m[0] ** 2 + m[1] ** 2 + m[2] ** 2)
    w[_FI + 3 * f], w[_FI + 3 * f + 1], w[_FI + 3 * f + 2] = a, b, c
    w[_FL + f] = 1.0
    if mm <= 1e-9 * (u[0] ** 2 + u[1] ** 2 + u[2] ** 2 + t[0] ** 2 + t[1] ** 2 + t[2] ** 2):
        w[_FN + 3 * f], w[_FN + 3 * f + 1], w[_FN + 3 * f + 2] = 0.0, 0.0, 0.0
        w[_FD + f] = np.inf
        return False
    for i in range(3):
        w[_FN + 3 * f + i] = m[i] / mm
    w[_FD + f] = (m[0] * E[3 * a] + m[1] * E[3 * a + 1] + m[2] * E[3 * a + 2]) / mm
    return True


@njit(cache=True)
def epa(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, w):
    """EPA from GJK's tetrahedron (in ``w``): (depth, n, x₁, x₂): the depth of the cores' overlap, the unit normal
    from shape 1 to shape 2 (moving shape 2 by depth n parts them), the deepest points of each core."""
    for i in range(12):  # the tetrahedron's points become the polytope's first 4 vertices
        w[_EW + i], w[_EA + i], w[_EB + i] = w[_W + i], w[_A + i], w[_B + i]
    nv = 4
    for f in range(EPA_FACES):
        w[_FL + f] = 0.0
    for f, (a, b, c, d) in enumerate(((0, 1, 2, 3), (0, 3, 1, 2), (0, 2, 3, 1), (1, 3, 2, 0))):
        _face(w, f, a, b, c)
        side = 0.0
        for i in range(3):
            side += w[_FN + 3 * f + i] * (w[_EW + 3 * d + i] - w[_EW + 3 * a + i])
        if side > 0.0:  # the fourth vertex is in front: turn the face round
            _face(w, f, a, c, b)
    tol = EPA_TOLERANCE * scale
    ia, ib, ic, dmin, m = 0, 1, 2, 0.0, (0.0, 0.0, 1.0)
    top = 4  # one past the highest face slot in use: the scans below stop there
    for _ in range(EPA_VERTICES):
        best, dmin = -1, np.inf
        for f in range(top):
            if w[_FL + f] != 0.0 and w[_FD + f] < dmin:
                best, dmin = f, w[_FD + f]
        if best < 0:
            break
        ia, ib, ic = int(w[_FI + 3 * best]), int(w[_FI + 3 * best + 1]), int(w[_FI + 3 * best + 2])
        m = (w[_FN + 3 * best], w[_FN + 3 * best + 1], w[_FN + 3 * best + 2])
        a = support(c1, par1, R1, p1, V1, m[0], m[1], m[2])
        b = support(c2, par2, R2, p2, V2, -m[0], -m[1], -m[2])
        x = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
        if x[0] * m[0] + x[1] * m[1] + x[2] * m[2] - dmin <= tol or nv == EPA_VERTICES:
            break
        for i in range(3):
            w[_EW + 3 * nv + i], w[_EA + 3 * nv + i], w[_EB + 3 * nv + i] = x[i], a[i], b[i]
        ne = 0  # the horizon: edges of the faces x sees, each kept once (an edge of two seen faces is inside)
        for f in range(top):
            if w[_FL + f] == 0.0:
                continue
            i0 = int(w[_FI + 3 * f])
            seen = 0.0
            for i in range(3):
                seen += w[_FN + 3 * f + i] * (x[i] - w[_EW + 3 * i0 + i])
            if seen <= tol and f != best:  # a face x lies on (to rounding) stays: coplanar faces of C
                continue
            w[_FL + f] = 0.0
            for e in range(3):
                ea, eb = int(w[_FI + 3 * f + e]), int(w[_FI + 3 * f + (e + 1) % 3])
                twin = -1
                for k in range(ne):
                    if int(w[_ED + 2 * k]) == eb and int(w[_ED + 2 * k + 1]) == ea:
                        twin = k
                        break
                if twin >= 0:
                    ne -= 1
                    w[_ED + 2 * twin], w[_ED + 2 * twin + 1] = w[_ED + 2 * ne], w[_ED + 2 * ne + 1]
                elif ne < 3 * EPA_FACES:
                    w[_ED + 2 * ne], w[_ED + 2 * ne + 1] = ea, eb
                    ne += 1
        stop = False  # a face turned round by rounding, a full table: the polytope so far answers (as Bullet's)
        slot = 0
        for k in range(ne):
            while slot < EPA_FACES and w[_FL + slot] != 0.0:
                slot += 1
            if slot == EPA_FACES:
                stop = True
                break
            top = max(top, slot + 1)
            if not _face(w, slot, int(w[_ED + 2 * k]), int(w[_ED + 2 * k + 1]), nv):
                continue  # a sliver: kept for the polytope's edges, never the nearest (its distance is +∞)
            if w[_FD + slot] < dmin - TOUCH * scale:  # nearer than the face it replaces (a convex polytope only
                stop = True  # grows): rounding turned it round; a face through a touching origin may be 1e-12 off
                break
        nv += 1
        if stop:
            break
    # the origin's projection on the nearest face, by its barycentric weights, on each shape; on a flat face of C
    # cut into coplanar triangles the projection may lie in a neighbour of the nearest one: the one that holds it
    E = w[_EW:_EA]
    P = (dmin * m[0], dmin * m[1], dmin * m[2])
    la, lb, lc = _barycentric(E, ia, ib, ic, P)
    if min(la, lb, lc) < -1e-12:
        for f in range(top):
            if w[_FL + f] == 0.0 or abs(w[_FD + f] - dmin) > tol:
                continue
            if w[_FN + 3 * f] * m[0] + w[_FN + 3 * f + 1] * m[1] + w[_FN + 3 * f + 2] * m[2] < 1.0 - 1e-12:
                continue
            fa, fb, fc = int(w[_FI + 3 * f]), int(w[_FI + 3 * f + 1]), int(w[_FI + 3 * f + 2])
            ga, gb, gc = _barycentric(E, fa, fb, fc, P)
            if min(ga, gb, gc) >= -1e-12:
                ia, ib, ic, la, lb, lc = fa, fb, fc, ga, gb, gc
                break
    x1 = (la * w[_EA + 3 * ia] + lb * w[_EA + 3 * ib] + lc * w[_EA + 3 * ic],
          la * w[_EA + 3 * ia + 1] + lb * w[_EA + 3 * ib + 1] + lc * w[_EA + 3 * ic + 1],
          la * w[_EA + 3 * ia + 2] + lb * w[_EA + 3 * ib + 2] + lc * w[_EA + 3 * ic + 2])  # fmt: skip
    x2 = (la * w[_EB + 3 * ia] + lb * w[_EB + 3 * ib] + lc * w[_EB + 3 * ic],
          la * w[_EB + 3 * ia + 1] + lb * w[_EB + 3 * ib + 1] + lc * w[_EB + 3 * ic + 1],
          la * w[_EB + 3 * ia + 2] + lb * w[_EB + 3 * ib + 2] + lc * w[_EB + 3 * ic + 2])  # fmt: skip
    return dmin, m, x1, x2


@njit(cache=True)
def _barycentric(E, a, b, c, P):
    """Barycentric weights of P's projection on the plane of triangle (E_a, E_b, E_c) (negative outside it), as
    ratios of signed areas along the triangle's normal (a thin triangle's normal equations lose the digits)."""
    u = (E[3 * b] - E[3 * a], E[3 * b + 1] - E[3 * a + 1], E[3 * b + 2] - E[3 * a + 2])
    t = (E[3 * c] - E[3 * a], E[3 * c + 1] - E[3 * a + 1], E[3 * c + 2] - E[3 * a + 2])
    m = (u[1] * t[2] - u[2] * t[1], u[2] * t[0] - u[0] * t[2], u[0] * t[1] - u[1] * t[0])
    mm = m[0] * m[0] + m[1] * m[1] + m[2] * m[2]
    if mm == 0.0:
        return 1.0, 0.0, 0.0
    ra = (E[3 * a] - P[0], E[3 * a + 1] - P[1], E[3 * a + 2] - P[2])
    rb = (E[3 * b] - P[0], E[3 * b + 1] - P[1], E[3 * b + 2] - P[2])
    rc = (E[3 * c] - P[0], E[3 * c + 1] - P[1], E[3 * c + 2] - P[2])
    la = (m[0] * (rb[1] * rc[2] - rb[2] * rc[1]) + m[1] * (rb[2] * rc[0] - rb[0] * rc[2])
          + m[2] * (rb[0] * rc[1] - rb[1] * rc[0])) / mm  # fmt: skip
    lb = (m[0] * (rc[1] * ra[2] - rc[2] * ra[1]) + m[1] * (rc[2] * ra[0] - rc[0] * ra[2])
          + m[2] * (rc[0] * ra[1] - rc[1] * ra[0])) / mm  # fmt: skip
    return la, lb, 1.0 - la - lb


@njit(cache=True)
def convex_distance(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, w, far=np.inf, axis=None):
    """(d, n, x₁, x₂) of two convex shapes (module docstring): signed distance (< 0: penetration), unit normal from
    shape 1 to shape 2, the nearest (deepest) point of each on its surface.  scale: the pair's size (the sum of the
    bounding radii), for the tolerances; w: NARROW_WORK floats; far: shapes found farther apart than that return
    d = +∞ as soon as GJK separates them (n, x₁, x₂ then unset); axis: GJK's first direction, left holding −n (the
    pair's warm start, ``gjk``)."""
    if axis is None:
        axis = np.zeros(3)
    r1, r2 = core_radius(c1, par1), core_radius(c2, par2)
    n, dist = gjk(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, far + r1 + r2, w, axis)
    if dist > far + r1 + r2:
        z = (0.0, 0.0, 0.0)
        return np.inf, z, z, z
    if dist > 0.0:
        x1, x2 = _combine(w, _A, n), _combine(w, _B, n)
        dist = np.sqrt((x2[0] - x1[0]) ** 2 + (x2[1] - x1[1]) ** 2 + (x2[2] - x1[2]) ** 2)  # = ‖v‖ to rounding
        m = ((x2[0] - x1[0]) / dist, (x2[1] - x1[1]) / dist, (x2[2] - x1[2]) / dist)
        d = dist
    else:
        if n < 4:
            n = _tetrahedron(w, n, c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale)
        if n < 4:  # C is flat here (two flat meshes): the cores touch; the normal from the centres
            x1, x2 = _combine(w, _A, 1), _combine(w, _B, 1)
            u = (p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2])
            uu = np.sqrt(u[0] ** 2 + u[1] ** 2 + u[2] ** 2)
            m = (u[0] / uu, u[1] / uu, u[2] / uu) if uu > 0.0 else (0.0, 0.0, 1.0)
            d = 0.0
        else:
            depth, m, x1, x2 = epa(c1, par1, R1, p1, V1, c2, par2, R2, p2, V2, scale, w)
            d = -depth
    x1 = (x1[0] + r1 * m[0], x1[1] + r1 * m[1], x1[2] + r1 * m[2])
    x2 = (x2[0] - r2 * m[0], x2[1] - r2 * m[1], x2[2] - r2 * m[2])
    axis[0], axis[1], axis[2] = -m[0], -m[1], -m[2]  # v = x₁ − x₂ points against n
    return d - r1 - r2, m, x1, x2
