"""Kinematics from the DeNOC twist map: frame placements, velocities, accelerations, Jacobians and their time
variation, the centre of mass and the centroidal momentum, compiled and O(n).

The twist of body k is t_k = Σ_j A_{k,j} p_j θ̇_j over the joints j that support it (eq. 5–9): the stacked
body Jacobian is N = N_l N_d, and its block row k holds, in body k's frame, the columns A_{k,j} p_j.  Here the
same columns are formed in the base frame: the world orientation R_j and origin o_j of body j carry p_j = [s; u]
(body j's frame, [ω; v]) to the world column

    a = R_j s,   l = R_j u − a × o_j                          (the twist of the point at the world origin)

which is Pinocchio's ``data.J`` column, and a frame F on body k (origin p_F, rotation R_F) reads it as
a × (p_F − o_j) + R_j u (``local_world_aligned``) or as that rotated by R_Fᵀ (``local``).  A_{k,j} p_j of the
paper is R_kᵀ applied to these, so every reference frame is one rotation or one lever arm away from N.

Every public function passes through one compiled entry (``kinematics_call``), which checks the arrays, runs the
kinematics (E_k, r_k, then R_k, o_k; with q̇ the twists t_k and ṫ_k of Table 1, step 1, gravity left out) and
writes the result ``what`` asks for into a flat array, rows in Pinocchio's order [linear; angular].
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..core.joints import pdot_column
from ..core.layout import (
    FMA,
    FRAME_BODY,
    FRAME_ROTATION,
    FRAME_TRANSLATION,
    HEAD_NQ,
    HEAD_NV,
    all_finite,
    data_views,
    model_views,
)
from ..core.spatial import (
    add_transformed_rigid_inertia,
    cross,
    rigid_inertia_into,
    rigid_inertia_times,
    rot,
    rot_t,
    store_column,
    store_motion,
)
from ..model.status import BAD_FRAME, BAD_LENGTH, NO_MASS, NOT_FINITE
from .kinematics import base_pose_into, kinematics_entry, kinematics_of, twist_and_rate, world_pose_of, world_poses_into
from .protocol import FB, MAT, MB, MF, MI, VEC, Entry, borrowed, on_model_buffer

__all__: list[str] = []

# What a call computes (``kinematics_call``'s ``what``).
(FORWARD, PLACEMENT, PLACEMENTS, VELOCITY, ACCELERATION, CLASSICAL, JACOBIAN, JOINT_JACOBIANS, JACOBIAN_DOT, COM,
 COM_JACOBIAN, MOMENTUM, CENTROIDAL_MAP, CENTROIDAL_MAP_DOT) = range(14)  # fmt: skip
ONE_FRAME = (PLACEMENT, VELOCITY, ACCELERATION, CLASSICAL, JACOBIAN, JACOBIAN_DOT)  # need only the frame's support
NEEDS_V = (VELOCITY, ACCELERATION, CLASSICAL, JACOBIAN_DOT, MOMENTUM, CENTROIDAL_MAP_DOT)
NEEDS_A = (ACCELERATION, CLASSICAL)
# Reference frames, with Pinocchio's values of pin.ReferenceFrame.
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}

_I = types.int64
# The fast entries, one per shape of result (few arguments: each array argument adds to a numba call's cost).
FAST_PLACEMENT = _I(MB, VEC, FB, VEC, _I, MAT)  # (mb, ws, fb, q, frame, out (4, 4))
FAST_COM = _I(MB, VEC, VEC, VEC)  # (mb, ws, q, out (3,)): the centre of mass at q
FAST_HELD_PLACEMENT = _I(MB, VEC, FB, _I, MAT)  # (mb, ws, fb, frame, out (4, 4)): from the placements ws holds
FAST_VECTOR = _I(MB, VEC, _I, FB, VEC, VEC, VEC, _I, _I, VEC)  # (mb, ws, what, fb, q, v, a, frame, ref, out)
FAST_MATRIX = _I(MB, VEC, _I, FB, VEC, VEC, _I, _I, MAT)  # (mb, ws, what, fb, q, v, frame, ref, out (r, nv))
KINEMATICS_CALL = _I(MI, MF, VEC, _I, FB, VEC, VEC, VEC, _I, _I, VEC)  # kinematics_call's, all callers'


@njit(cache=True, inline="always")
def frame_offset(fb, f):
    """p_f: frame f's origin in its body's frame (a row of ``Model.frame_buffer``, ``layout.FRAME_ROW``)."""
    T = FRAME_TRANSLATION
    return fb[f, T], fb[f, T + 1], fb[f, T + 2]


@njit(cache=True, inline="always")
def frame_rotated_t(fb, f, x0, x1, x2):
    """R_fᵀ x: body-frame components into frame f's."""
    R = FRAME_ROTATION
    return (fb[f, R] * x0 + fb[f, R + 3] * x1 + fb[f, R + 6] * x2, fb[f, R + 1] * x0 + fb[f, R + 4] * x1
            + fb[f, R + 7] * x2, fb[f, R + 2] * x0 + fb[f, R + 5] * x1 + fb[f, R + 8] * x2)  # fmt: skip


@njit(cache=True, inline="always")
def frame_in_world(fb, f, oR, op, F):
    """Frame f's body k, and its world pose into F (3, 4) = [R_F | p_F]: R_F = R_k R_f, p_F = o_k + R_k p_f."""
    k, R, T = int(fb[f, FRAME_BODY]), FRAME_ROTATION, FRAME_TRANSLATION
    for c in range(3):
        for d in range(3):
            F[c, d] = oR[k, c, 0] * fb[f, R + d] + oR[k, c, 1] * fb[f, R + 3 + d] + oR[k, c, 2] * fb[f, R + 6 + d]
        F[c, 3] = op[k, c] + oR[k, c, 0] * fb[f, T] + oR[k, c, 1] * fb[f, T + 1] + oR[k, c, 2] * fb[f, T + 2]
    return k


@njit(cache=True, inline="always")
def world_twist(oR, op, t, k):
    """Body k's twist in the world frame: ω = R_k ω_k and the velocity of the point at the world origin,
    R_k ȯ_k − ω × o_k (Pinocchio's ``data.ov``)."""
    w0, w1, w2 = rot(oR[k], t[k, 0], t[k, 1], t[k, 2])
    u0, u1, u2 = rot(oR[k], t[k, 3], t[k, 4], t[k, 5])
    x0, x1, x2 = cross(w0, w1, w2, op[k, 0], op[k, 1], op[k, 2])
    return w0, w1, w2, u0 - x0, u1 - x1, u2 - x2


@njit(cache=True, inline="always")
def world_column(oR, op, S, j, d):
    """Column d of p_j in the world frame (a, l): a = R_j s, l = R_j u − a × o_j."""
    a0, a1, a2 = rot(oR[j], S[j, 0, d], S[j, 1, d], S[j, 2, d])
    u0, u1, u2 = rot(oR[j], S[j, 3, d], S[j, 4, d], S[j, 5, d])
    x0, x1, x2 = cross(a0, a1, a2, op[j, 0], op[j, 1], op[j, 2])
    return a0, a1, a2, u0 - x0, u1 - x1, u2 - x2


@njit(cache=True, inline="always")
def in_reference(ref, F, a0, a1, a2, l0, l1, l2):
    """A world motion (a; l about the world origin) as frame F sees it in ``ref``: unchanged (world); its
    linear part moved to p_F (local_world_aligned); that, rotated by R_Fᵀ (local)."""
    if ref == WORLD:
        return a0, a1, a2, l0, l1, l2
    x0, x1, x2 = cross(a0, a1, a2, F[0, 3], F[1, 3], F[2, 3])
    l0, l1, l2 = l0 + x0, l1 + x1, l2 + x2
    if ref == LOCAL_WORLD_ALIGNED:
        return a0, a1, a2, l0, l1, l2
    a0, a1, a2 = rot_t(F, a0, a1, a2)
    l0, l1, l2 = rot_t(F, l0, l1, l2)
    return a0, a1, a2, l0, l1, l2


@njit(cache=True, inline="always")
def column_rate(kinds, axes2, oR, op, S, v, idx_v, j, d, W):
    """d/dt of world column d of p_j (ȧ, l̇) = V_j × (a, l) + R_j ṗ_j: the column turns with body j, whose
    world twist W = (ω, v) is given, and a universal joint's first column also turns in its body."""
    a0, a1, a2, l0, l1, l2 = world_column(oR, op, S, j, d)
    s0, s1, s2 = pdot_column(kinds, S, axes2, j, d, v, idx_v[j])
    g0, g1, g2 = rot(oR[j], s0, s1, s2)  # R_j ṗ (angular; the linear part about the world origin: −g × o_j)
    x0, x1, x2 = cross(W[0], W[1], W[2], a0, a1, a2)
    y0, y1, y2 = cross(W[0], W[1], W[2], l0, l1, l2)
    z0, z1, z2 = cross(W[3], W[4], W[5], a0, a1, a2)
    h0, h1, h2 = cross(g0, g1, g2, op[j, 0], op[j, 1], op[j, 2])
    return (a0, a1, a2, l0, l1, l2, x0 + g0, x1 + g1, x2 + g2, y0 + z0 - h0, y1 + z1 - h1, y2 + z2 - h2)


@njit(cache=True, inline="always")
def rate_in_reference(ref, F, Wk, a0, a1, a2, l0, l1, l2, da0, da1, da2, dl0, dl1, dl2):
    """d/dt of a world column as frame F (on a body of world twist Wk) sees it in ``ref`` (``in_reference``):
    local_world_aligned adds ȧ × p_F + a × ṗ_F, ṗ_F = v + ω × p_F; local is R_Fᵀ (ẋ − ω × x) of that."""
    if ref == WORLD:
        return da0, da1, da2, dl0, dl1, dl2
    p0, p1, p2 = F[0, 3], F[1, 3], F[2, 3]
    x0, x1, x2 = cross(Wk[0], Wk[1], Wk[2], p0, p1, p2)
    v0, v1, v2 = Wk[3] + x0, Wk[4] + x1, Wk[5] + x2  # ṗ_F
    y0, y1, y2 = cross(da0, da1, da2, p0, p1, p2)
    z0, z1, z2 = cross(a0, a1, a2, v0, v1, v2)
    dl0, dl1, dl2 = dl0 + y0 + z0, dl1 + y1 + z1, dl2 + y2 + z2
    if ref == LOCAL_WORLD_ALIGNED:
        return da0, da1, da2, dl0, dl1, dl2
    m0, m1, m2 = cross(a0, a1, a2, p0, p1, p2)
    l0, l1, l2 = l0 + m0, l1 + m1, l2 + m2  # the local_world_aligned column
    x0, x1, x2 = cross(Wk[0], Wk[1], Wk[2], a0, a1, a2)
    y0, y1, y2 = cross(Wk[0], Wk[1], Wk[2], l0, l1, l2)
    da0, da1, da2 = rot_t(F, da0 - x0, da1 - x1, da2 - x2)
    dl0, dl1, dl2 = rot_t(F, dl0 - y0, dl1 - y1, dl2 - y2)
    return da0, da1, da2, dl0, dl1, dl2


@njit(cache=True, inline="always")
def frame_velocity_of(ref, fb, f, oR, op, t):
    """Frame f's twist in ``ref`` (Pinocchio's getFrameVelocity): ω and the velocity of its origin, from t_k."""
    k = int(fb[f, FRAME_BODY])
    w0, w1, w2 = t[k, 0], t[k, 1], t[k, 2]
    if ref == WORLD:
        return world_twist(oR, op, t, k)
    p0, p1, p2 = frame_offset(fb, f)
    x0, x1, x2 = cross(w0, w1, w2, p0, p1, p2)
    u0, u1, u2 = t[k, 3] + x0, t[k, 4] + x1, t[k, 5] + x2  # ȯ_k + ω_k × p_f, body frame
    if ref == LOCAL_WORLD_ALIGNED:
        w0, w1, w2 = rot(oR[k], w0, w1, w2)
        u0, u1, u2 = rot(oR[k], u0, u1, u2)
    else:  # R_fᵀ (body-frame components into the frame's)
        w0, w1, w2 = frame_rotated_t(fb, f, w0, w1, w2)
        u0, u1, u2 = frame_rotated_t(fb, f, u0, u1, u2)
    return w0, w1, w2, u0, u1, u2


@njit(cache=True, inline="always")
def frame_acceleration_of(ref, fb, f, oR, op, t, tdot):
    """Frame f's spatial acceleration in ``ref`` (Pinocchio's getFrameAcceleration): body k's is
    (ω̇_k, ö_k − ω_k × ȯ_k), moved to the frame's origin and axes like a twist."""
    k = int(fb[f, FRAME_BODY])
    x0, x1, x2 = cross(t[k, 0], t[k, 1], t[k, 2], t[k, 3], t[k, 4], t[k, 5])
    b0, b1, b2 = tdot[k, 0], tdot[k, 1], tdot[k, 2]
    c0, c1, c2 = tdot[k, 3] - x0, tdot[k, 4] - x1, tdot[k, 5] - x2
    if ref == WORLD:
        w0, w1, w2 = rot(oR[k], b0, b1, b2)
        u0, u1, u2 = rot(oR[k], c0, c1, c2)
        y0, y1, y2 = cross(w0, w1, w2, op[k, 0], op[k, 1], op[k, 2])
        return w0, w1, w2, u0 - y0, u1 - y1, u2 - y2
    p0, p1, p2 = frame_offset(fb, f)
    y0, y1, y2 = cross(b0, b1, b2, p0, p1, p2)
    c0, c1, c2 = c0 + y0, c1 + y1, c2 + y2
    if ref == LOCAL_WORLD_ALIGNED:
        w0, w1, w2 = rot(oR[k], b0, b1, b2)
        u0, u1, u2 = rot(oR[k], c0, c1, c2)
        return w0, w1, w2, u0, u1, u2
    w0, w1, w2 = frame_rotated_t(fb, f, b0, b1, b2)
    u0, u1, u2 = frame_rotated_t(fb, f, c0, c1, c2)
    return w0, w1, w2, u0, u1, u2


@njit(cache=True, fastmath=FMA)
def subtree_inertias(parents, masses, coms, Io, oR, op, t, with_v, ms, hs, Is, dhs, dIs, Ic, W):
    """Per body k, its subtree's mass ms, first moment hs = Σ m c (world) and rotational inertia Is about the world
    origin (world axes); with q̇ also ḣs and İs.  Index 0 sums every body but the base (Pinocchio's count)."""
    nj = len(parents)
    ms[:] = 0.0
    hs[:] = 0.0
    Is[:] = 0.0
    dhs[:] = 0.0
    dIs[:] = 0.0
    for k in range(1, nj):
        m, d = masses[k], coms[k]
        c0, c1, c2 = rot(oR[k], d[0], d[1], d[2])
        c0, c1, c2 = c0 + op[k, 0], c1 + op[k, 1], c2 + op[k, 2]  # the centre of mass c_k, world
        dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        for x in range(3):
            for y in range(3):
                Ic[x, y] = Io[k, x, y] - m * ((dd if x == y else 0.0) - d[x] * d[y])  # about c_k, body axes
        for u in range(3):  # Ic R_kᵀ, row by row in place
            i0, i1, i2 = Ic[u, 0], Ic[u, 1], Ic[u, 2]
            for y in range(3):
                Ic[u, y] = i0 * oR[k, y, 0] + i1 * oR[k, y, 1] + i2 * oR[k, y, 2]
        for x in range(3):  # W = R_k (Ic R_kᵀ)
            for y in range(3):
                W[x, y] = oR[k, x, 0] * Ic[0, y] + oR[k, x, 1] * Ic[1, y] + oR[k, x, 2] * Ic[2, y]
        cc = c0 * c0 + c1 * c1 + c2 * c2
        c = (c0, c1, c2)
        ms[k] += m
        hs[k, 0] += m * c0
        hs[k, 1] += m * c1
        hs[k, 2] += m * c2
        for x in range(3):
            for y in range(3):
                Is[k, x, y] += W[x, y] + m * ((cc if x == y else 0.0) - c[x] * c[y])
        if with_v:
            w0, w1, w2 = rot(oR[k], t[k, 0], t[k, 1], t[k, 2])
            x0, x1, x2 = cross(t[k, 0], t[k, 1], t[k, 2], d[0], d[1], d[2])
            e0, e1, e2 = rot(oR[k], t[k, 3] + x0, t[k, 4] + x1, t[k, 5] + x2)  # ċ_k, world
            dhs[k, 0] += m * e0
            dhs[k, 1] += m * e1
            dhs[k, 2] += m * e2
            ce = c0 * e0 + c1 * e1 + c2 * e2
            e = (e0, e1, e2)
            w = (w0, w1, w2)
            for x in range(3):  # d/dt (R Ic Rᵀ) = ω× W − W ω×;  d/dt m(|c|² 1 − c cᵀ)
                x1_, x2_ = (x + 1) % 3, (x + 2) % 3
                for y in range(3):
                    wW = w[x1_] * W[x2_, y] - w[x2_] * W[x1_, y]
                    y1_, y2_ = (y + 1) % 3, (y + 2) % 3
                    Ww = w[y1_] * W[y2_, x] - w[y2_] * W[y1_, x]  # −W ω× = (ω× W)ᵀ, W symmetric
                    dIs[k, x, y] += wW + Ww + m * ((2.0 * ce if x == y else 0.0) - e[x] * c[y] - c[x] * e[y])
    for k in range(nj - 1, 0, -1):  # children before parents: each subtree into its parent's
        b = parents[k]
        ms[b] += ms[k]
        for x in range(3):
            hs[b, x] += hs[k, x]
            dhs[b, x] += dhs[k, x]
            for y in range(3):
                Is[b, x, y] += Is[k, x, y]
                dIs[b, x, y] += dIs[k, x, y]


@njit(cache=True, fastmath=FMA)
def composite_map(com_only, parents, idx_v, nvs, masses, coms, Io, E, r, S, oR, op, out):
    """A_G (or, with ``com_only``, J_com) from the composite inertias M̃_k of eq. (17), body frames, leaves first:
    each column M̃_k p_k is the momentum of body k's subtree for that joint rate, about o_k (as the GIM's B_k), then
    carried into the world about its origin, and at the end about the centre of mass, which M̃_0 gives."""
    nj = len(parents)
    C = np.empty((nj, 10))  # M̃_k as 10 numbers (m, h, J about o_k: ``rigid_inertia_into``)
    C[0, :] = 0.0  # the base's own mass is not counted (Pinocchio's count)
    for k in range(1, nj):
        rigid_inertia_into(masses[k], coms[k], Io[k], C[k])
    n = len(out) // (3 if com_only else 6)
    for k in range(nj - 1, 0, -1):  # children first: M̃_k is complete when k's turn comes
        Ck = C[k]
        for d in range(nvs[k]):
            b0, b1, b2, f0, f1, f2 = rigid_inertia_times(Ck[0], Ck[1], Ck[2], Ck[3], Ck[4], Ck[5], Ck[6], Ck[7], Ck[8],
                                                         Ck[9], S[k, 0, d], S[k, 1, d], S[k, 2, d], S[k, 3, d],
                                                         S[k, 4, d], S[k, 5, d])  # fmt: skip
            f0, f1, f2 = rot(oR[k], f0, f1, f2)  # linear momentum, world axes
            n0, n1, n2 = rot(oR[k], b0, b1, b2)
            x0, x1, x2 = cross(op[k, 0], op[k, 1], op[k, 2], f0, f1, f2)
            col = idx_v[k] + d
            if com_only:
                out[col], out[n + col], out[2 * n + col] = f0, f1, f2
            else:  # angular momentum about the world origin for now
                store_column(out, n, col, n0 + x0, n1 + x1, n2 + x2, f0, f1, f2)
        add_transformed_rigid_inertia(E[k], r[k], Ck, C[parents[k]])  # into the parent's frame (the base's = world)
    M = C[0, 0]
    if not M > 0.0:
        return NO_MASS
    if com_only:
        for i in range(len(out)):
            out[i] /= M
        return 0
    G0, G1, G2 = C[0, 1] / M, C[0, 2] / M, C[0, 3] / M
    for col in range(n):  # about the centre of mass: n − G × f (rows: linear 0–2, angular 3–5)
        f0, f1, f2 = out[col], out[n + col], out[2 * n + col]
        x0, x1, x2 = cross(G0, G1, G2, f0, f1, f2)
        out[3 * n + col] -= x0
        out[4 * n + col] -= x1
        out[5 * n + col] -= x2
    return 0


@njit(cache=True, fastmath=FMA)
def com_of(parents, masses, coms, oR, op, t, tdot, with_v, with_a, out):
    """Centre of mass, and with q̇ (q̈) its velocity (acceleration), world (Pinocchio's centerOfMass): out[0:3],
    [3:6], [6:9] (out: 3 long is enough without q̇).  NO_MASS if the model has none."""
    M = 0.0
    for i in range(len(out)):
        out[i] = 0.0
    for k in range(1, len(parents)):
        m, d = masses[k], coms[k]
        M += m
        c0, c1, c2 = rot(oR[k], d[0], d[1], d[2])
        out[0] += m * (op[k, 0] + c0)
        out[1] += m * (op[k, 1] + c1)
        out[2] += m * (op[k, 2] + c2)
        if with_v:
            w0, w1, w2 = t[k, 0], t[k, 1], t[k, 2]
            x0, x1, x2 = cross(w0, w1, w2, d[0], d[1], d[2])
            e0, e1, e2 = rot(oR[k], t[k, 3] + x0, t[k, 4] + x1, t[k, 5] + x2)
            out[3] += m * e0
            out[4] += m * e1
            out[5] += m * e2
            if with_a:  # ö + ω̇ × d + ω × (ω × d)
                y0, y1, y2 = cross(tdot[k, 0], tdot[k, 1], tdot[k, 2], d[0], d[1], d[2])
                z0, z1, z2 = cross(w0, w1, w2, x0, x1, x2)
                g0, g1, g2 = rot(oR[k], tdot[k, 3] + y0 + z0, tdot[k, 4] + y1 + z1, tdot[k, 5] + y2 + z2)
                out[6] += m * g0
                out[7] += m * g1
                out[8] += m * g2
    if not M > 0.0:
        return NO_MASS
    for i in range(len(out)):
        out[i] /= M
    return 0


@njit(cache=True, fastmath=FMA)
def kinematics_call(mi, mf, ws, what, fb, q, v, a, frame, ref, out):
    """The kinematics at (q[, q̇[, q̈]]) into ws, and the quantity ``what`` (of frame ``frame`` in reference
    ``ref``) into out, flat, rows in Pinocchio's order.  v, a: length nv, or 0 when not given.  A status: OK,
    NOT_FINITE, BAD_LENGTH, BAD_FRAME, NO_MASS."""
    nv = mi[HEAD_NV]
    if len(q) != mi[HEAD_NQ] or len(v) not in (0, nv) or len(a) not in (0, nv) or (len(a) and not len(v)):
        return BAD_LENGTH
    if not 0 <= frame < fb.shape[0]:
        return BAD_FRAME
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return NOT_FINITE
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    with_v, with_a = len(v) > 0, len(a) > 0
    oR, op, S, t, tdot = dv.oR, dv.op, dv.S, dv.t, dv.tdot
    if what in ONE_FRAME:  # the kinematics of the frame's support alone: its body and their ancestors
        path, n, j = dv.path.view(np.int64), 0, int(fb[frame, FRAME_BODY])  # int64 bit patterns in the float buffer
        while j > 0:
            path[n] = j
            n += 1
            j = mv.parents[j]
        kinematics_of(mi, mf, ws, q, path[:n])
        base_pose_into(oR, op)
        t[0, :] = 0.0
        tdot[0, :] = 0.0  # no gravity: Pinocchio's data.a
        for i in range(n - 1, -1, -1):  # root first
            k = path[i]
            world_pose_of(k, mv.parents, dv.E, dv.r, oR, op)
            if with_v:
                twist_and_rate(
                    mv.kinds, mv.parents, mv.idx_v, mv.nvs, mv.axes2, dv.E, dv.r, S, v, a, with_a, t, tdot, k
                )
    else:
        kinematics_entry(mi, mf, ws, q)
        world_poses_into(mv.parents, dv.E, dv.r, oR, op)  # R_k, o_k (Pinocchio's oMi)
        if with_v:
            t[0, :] = 0.0
            tdot[0, :] = 0.0
            for k in range(1, len(mv.parents)):
                twist_and_rate(
                    mv.kinds, mv.parents, mv.idx_v, mv.nvs, mv.axes2, dv.E, dv.r, S, v, a, with_a, t, tdot, k
                )
    F = dv.frame_pose
    if what == FORWARD:
        return 0
    if what == PLACEMENT or what == PLACEMENTS:
        lo, hi = (frame, frame + 1) if what == PLACEMENT else (0, fb.shape[0])
        for f in range(lo, hi):
            frame_in_world(fb, f, oR, op, F)
            i = 16 * (f - lo)
            for c in range(3):
                for d in range(4):
                    out[i + 4 * c + d] = F[c, d]
            out[i + 12], out[i + 13], out[i + 14], out[i + 15] = 0.0, 0.0, 0.0, 1.0
        return 0
    if what == VELOCITY:
        w0, w1, w2, u0, u1, u2 = frame_velocity_of(ref, fb, frame, oR, op, t)
        store_motion(out, 0, w0, w1, w2, u0, u1, u2)
        return 0
    if what == ACCELERATION or what == CLASSICAL:
        w0, w1, w2, u0, u1, u2 = frame_acceleration_of(ref, fb, frame, oR, op, t, tdot)
        if what == CLASSICAL:  # + ω × v of the frame's twist in the same reference (getFrameClassicalAcceleration)
            o0, o1, o2, s0, s1, s2 = frame_velocity_of(ref, fb, frame, oR, op, t)
            x0, x1, x2 = cross(o0, o1, o2, s0, s1, s2)
            u0, u1, u2 = u0 + x0, u1 + x1, u2 + x2
        store_motion(out, 0, w0, w1, w2, u0, u1, u2)
        return 0
    idx_v, nvs, parents = mv.idx_v, mv.nvs, mv.parents
    if what == JACOBIAN or what == JOINT_JACOBIANS or what == JACOBIAN_DOT:
        for i in range(len(out)):
            out[i] = 0.0
        if what == JOINT_JACOBIANS:  # every body's columns, world (Pinocchio's data.J)
            for j in range(1, len(parents)):
                for d in range(nvs[j]):
                    a0, a1, a2, l0, l1, l2 = world_column(oR, op, S, j, d)
                    store_column(out, nv, idx_v[j] + d, a0, a1, a2, l0, l1, l2)
            return 0
        k = frame_in_world(fb, frame, oR, op, F)
        W, Wk = dv.twist, dv.frame_twist
        if what == JACOBIAN_DOT:
            Wk[0], Wk[1], Wk[2], Wk[3], Wk[4], Wk[5] = world_twist(oR, op, t, k)
        j = k
        while j > 0:  # the joints that support body k: the nonzero columns of block row k of N_l N_d
            if what == JACOBIAN_DOT:
                W[0], W[1], W[2], W[3], W[4], W[5] = world_twist(oR, op, t, j)
            for d in range(nvs[j]):
                col = idx_v[j] + d
                if what == JACOBIAN:
                    a0, a1, a2, l0, l1, l2 = world_column(oR, op, S, j, d)
                    a0, a1, a2, l0, l1, l2 = in_reference(ref, F, a0, a1, a2, l0, l1, l2)
                else:
                    a0, a1, a2, l0, l1, l2, da0, da1, da2, dl0, dl1, dl2 = column_rate(
                        mv.kinds, mv.axes2, oR, op, S, v, idx_v, j, d, W
                    )
                    a0, a1, a2, l0, l1, l2 = rate_in_reference(
                        ref, F, Wk, a0, a1, a2, l0, l1, l2, da0, da1, da2, dl0, dl1, dl2
                    )
                store_column(out, nv, col, a0, a1, a2, l0, l1, l2)
            j = parents[j]
        return 0
    if what == COM:
        return com_of(parents, mv.masses, mv.coms, oR, op, t, tdot, with_v, with_a, out)
    nj = len(parents)
    if what == CENTROIDAL_MAP or what == COM_JACOBIAN:
        return composite_map(what == COM_JACOBIAN, parents, idx_v, nvs, mv.masses, mv.coms, mv.inertias_origin,
                             dv.E, dv.r, S, oR, op, out)  # fmt: skip
    # The centroidal momentum and the map's time variation, from the subtrees' inertias in the world frame.
    block = np.empty(25 * nj)  # one allocation for the five per-body arrays
    ms, hs, Is = block[:nj], block[nj : 4 * nj].reshape(nj, 3), block[4 * nj : 13 * nj].reshape(nj, 3, 3)
    dhs, dIs = block[13 * nj : 16 * nj].reshape(nj, 3), block[16 * nj :].reshape(nj, 3, 3)
    Ic, Wm = dv.inertia_sum, dv.inertia_rate
    subtree_inertias(parents, mv.masses, mv.coms, mv.inertias_origin, oR, op, t, with_v, ms, hs, Is, dhs, dIs, Ic, Wm)
    M = ms[0]
    if not M > 0.0:
        return NO_MASS
    G0, G1, G2 = hs[0, 0] / M, hs[0, 1] / M, hs[0, 2] / M
    if what == MOMENTUM:  # Σ of the bodies' momenta, about the centre of mass (h_G = A_G q̇)
        L0 = L1 = L2 = K0 = K1 = K2 = 0.0
        for k in range(1, nj):
            m, d = mv.masses[k], mv.coms[k]
            Io = mv.inertias_origin[k]
            w0, w1, w2, u0, u1, u2 = t[k, 0], t[k, 1], t[k, 2], t[k, 3], t[k, 4], t[k, 5]
            # M_k t_k about o_k, body frame (eq. 2b): [I_o ω + m d × ȯ; m (ȯ − d × ω)]
            x0, x1, x2 = cross(d[0], d[1], d[2], u0, u1, u2)
            y0, y1, y2 = cross(d[0], d[1], d[2], w0, w1, w2)
            n0, n1, n2 = rot(Io, w0, w1, w2)
            n0, n1, n2 = rot(oR[k], n0 + m * x0, n1 + m * x1, n2 + m * x2)
            f0, f1, f2 = rot(oR[k], m * (u0 - y0), m * (u1 - y1), m * (u2 - y2))
            z0, z1, z2 = cross(op[k, 0] - G0, op[k, 1] - G1, op[k, 2] - G2, f0, f1, f2)
            L0, L1, L2 = L0 + f0, L1 + f1, L2 + f2
            K0, K1, K2 = K0 + n0 + z0, K1 + n1 + z1, K2 + n2 + z2
        store_motion(out, 0, K0, K1, K2, L0, L1, L2)
        return 0
    vG0, vG1, vG2 = dhs[0, 0] / M, dhs[0, 1] / M, dhs[0, 2] / M
    for i in range(len(out)):
        out[i] = 0.0
    Wj = dv.twist
    for j in range(1, nj):  # the map's time variation (MOMENTUM returned above)
        m, h, I_, dh, dI = ms[j], hs[j], Is[j], dhs[j], dIs[j]
        Wj[0], Wj[1], Wj[2], Wj[3], Wj[4], Wj[5] = world_twist(oR, op, t, j)
        for d in range(nvs[j]):
            col = idx_v[j] + d
            a0, a1, a2, l0, l1, l2, da0, da1, da2, dl0, dl1, dl2 = column_rate(
                mv.kinds, mv.axes2, oR, op, S, v, idx_v, j, d, Wj
            )
            # the subtree's momentum for this column: m l + a × h (linear), I a + h × l (angular, world origin)
            x0, x1, x2 = cross(a0, a1, a2, h[0], h[1], h[2])
            f0, f1, f2 = m * l0 + x0, m * l1 + x1, m * l2 + x2
            # d/dt: ḟ = m l̇ + ȧ × h + a × ḣ;  ṅ = İ a + I ȧ + ḣ × l + h × l̇;  then ṅ − Ġ × f − G × ḟ
            x0, x1, x2 = cross(da0, da1, da2, h[0], h[1], h[2])
            y0, y1, y2 = cross(a0, a1, a2, dh[0], dh[1], dh[2])
            g0, g1, g2 = m * dl0 + x0 + y0, m * dl1 + x1 + y1, m * dl2 + x2 + y2
            e0, e1, e2 = rot(dI, a0, a1, a2)
            b0, b1, b2 = rot(I_, da0, da1, da2)
            x0, x1, x2 = cross(dh[0], dh[1], dh[2], l0, l1, l2)
            y0, y1, y2 = cross(h[0], h[1], h[2], dl0, dl1, dl2)
            e0, e1, e2 = e0 + b0 + x0 + y0, e1 + b1 + x1 + y1, e2 + b2 + x2 + y2
            x0, x1, x2 = cross(vG0, vG1, vG2, f0, f1, f2)
            y0, y1, y2 = cross(G0, G1, G2, g0, g1, g2)
            store_column(out, nv, col, e0 - x0 - y0, e1 - x1 - y1, e2 - x2 - y2, g0, g1, g2)
    return 0


@njit(cache=True)
def vector_fast(mb, ws, what, fb, q, v, a, frame, ref, out):
    """kinematics_call on the model buffer (the fast path); v, a empty where ``what`` needs none."""
    return on_model_buffer(kinematics_call, mb, ws, (what, fb, q, v, a, frame, ref, out))


@njit(cache=True)
def placement_fast(mb, ws, fb, q, frame, out):
    """One frame's placement (4, 4) (the fast path)."""
    return on_model_buffer(kinematics_call, mb, ws, (PLACEMENT, fb, q, q[:0], q[:0], frame, 0, out.reshape(-1)))


@njit(cache=True, fastmath=FMA)
def com_position(mi, mf, ws, q, out):
    """The centre of mass at q into out (3,): the kinematics (R_k, o_k) and com_of, nothing else — kinematics_call's
    COM without its other quantities' checks and branches.  A status: OK, BAD_LENGTH, NOT_FINITE, NO_MASS."""
    if len(q) != mi[HEAD_NQ]:
        return BAD_LENGTH
    if not all_finite(q):
        return NOT_FINITE
    kinematics_entry(mi, mf, ws, q)
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    world_poses_into(mv.parents, dv.E, dv.r, dv.oR, dv.op)  # R_k, o_k
    return com_of(mv.parents, mv.masses, mv.coms, dv.oR, dv.op, dv.t, dv.tdot, False, False, out)


@njit(cache=True)
def com_fast(mb, ws, q, out):
    """The centre of mass at q (3,) (the fast path: its call of most balance controllers, four arguments)."""
    return on_model_buffer(com_position, mb, ws, (q, out))


@njit(cache=True)
def held_placement(mi, mf, ws, fb, frame, out):
    """Frame ``frame``'s world placement (4, 4) from its body's placement (R_k, o_k) as ws holds it, left there by
    the last kinematics pass on ws (Pinocchio's ``updateFramePlacement`` reading ``data.oMi``).  A status."""
    if not 0 <= frame < fb.shape[0]:
        return BAD_FRAME
    dv = data_views(ws, mi)
    F = dv.frame_pose
    frame_in_world(fb, frame, dv.oR, dv.op, F)
    for c in range(3):
        for d in range(4):
            out[c, d] = F[c, d]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0
    return 0


@njit(cache=True)
def held_placement_fast(mb, ws, fb, frame, out):
    """``held_placement`` on the model buffer (the fast path)."""
    return on_model_buffer(held_placement, mb, ws, (fb, frame, out))


@njit(cache=True)
def matrix_fast(mb, ws, what, fb, q, v, frame, ref, out):
    """A (rows, nv) result (the fast path); v is empty where ``what`` needs none."""
    return on_model_buffer(kinematics_call, mb, ws, (what, fb, q, v, q[:0], frame, ref, out.reshape(-1)))


@njit(cache=True, nogil=True)
def kinematics_rows(mi, mf, ws, lw, fixed, Q, V, A, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch (``protocol.run_chunks``); fixed = (what, fb, frame, ref), out: the flat results."""
    Q, V, A, out, out2 = borrowed(Q, V, A, out, out2)
    what, fb, frame, ref = fixed
    status = 0
    for i in range(lo, hi):
        s = kinematics_call(mi, mf, ws, what, fb, Q[i], V[i], A[i], frame, ref, out[i])
        status = s if s else status
    return status


# subtree_inertias, composite_map and com_of (once a call each) are calls of their own rather than inlined code: numba
# copies an inlined function's IR with all its variables for every block, which lengthens kinematics_call's compile for
# no speed; likewise the kinematics of a frame's support (kinematics_of).
# kinematics_call compiles once for all its callers, at its first use; a process that never asks for a frame compiles
# and loads none of these.
_FRAMES = {"group": "kinematics", "what": "frames, Jacobians, centroidal quantities", "seconds": 45}
KINEMATICS = Entry(kinematics_call, KINEMATICS_CALL, vector_fast, FAST_VECTOR, kinematics_rows, ("q", "v", "a"),
                   fixed=types.Tuple((types.int64, FB, types.int64, types.int64)),  # (what, fb, frame, ref)
                   rows_group="kinematics_batches", **_FRAMES)  # fmt: skip
PLACEMENT_ENTRY = Entry(kinematics_call, KINEMATICS_CALL, placement_fast, FAST_PLACEMENT, states=("q",), **_FRAMES)
MATRIX_ENTRY = Entry(kinematics_call, KINEMATICS_CALL, matrix_fast, FAST_MATRIX, states=("q", "v"), **_FRAMES)
COM_ENTRY = Entry(kinematics_call, KINEMATICS_CALL, com_fast, FAST_COM, states=("q",), **_FRAMES)
HELD_PLACEMENT_ENTRY = Entry(fast=held_placement_fast, fast_signature=FAST_HELD_PLACEMENT, states=(), **_FRAMES)
