"""Kinematics on the flat buffers: the pieces (E_k, r_k) of A_{k,β} and p_k (eq. 7b) for every body, and the
world poses they compose to.  What each joint kind contributes is ``core.joints``'s."""

from __future__ import annotations

from numba import njit

from ..core.joints import joint_kinematics, pdot_qdot
from ..core.layout import FMA, data_views, model_views
from ..core.spatial import propagated_twist

__all__: list[str] = []


@njit(cache=True, fastmath=FMA)
def kinematics_entry(mi, mf, ws, q):
    """joint_kinematics of q into the flat workspace ws: a step on the flat buffers (core/layout.py)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    joint_kinematics(
        mv.kinds, mv.idx_q, mv.axes, mv.axes2, mv.pitches, mv.placement_rotation, mv.unrotated,
        mv.placement_translation, q,
        dv.E, dv.r, dv.S, dv.joint_rotations, mv.module_bodies,
    )  # fmt: skip


@njit(cache=True, fastmath=FMA)
def kinematics_of(mi, mf, ws, q, bodies):
    """joint_kinematics of q for ``bodies`` alone (a frame's support, root last) into ws: a call of the frame
    kernels', so that they do not each copy joint_kinematics' IR (the package's longest inlined function)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    joint_kinematics(
        mv.kinds, mv.idx_q, mv.axes, mv.axes2, mv.pitches, mv.placement_rotation, mv.unrotated,
        mv.placement_translation, q,
        dv.E, dv.r, dv.S, dv.joint_rotations, bodies,
    )  # fmt: skip


@njit(cache=True, inline="always")
def world_poses_into(parents, E, r, R, o):
    """R_k = R_β E_kᵀ and o_k = o_β + R_β r_k: every body's orientation and origin in the base frame, from the
    kinematics in (E, r).  R[0] = 1, o[0] = 0."""
    base_pose_into(R, o)
    for k in range(1, len(parents)):
        world_pose_of(k, parents, E, r, R, o)


@njit(cache=True, inline="always")
def base_pose_into(R, o):
    """R[0] = 1, o[0] = 0: the base frame is the world frame."""
    R[0, :, :] = 0.0
    o[0, :] = 0.0
    for c in range(3):
        R[0, c, c] = 1.0


@njit(cache=True, inline="always")
def world_pose_of(k, parents, E, r, R, o):
    """R_k = R_β E_kᵀ, o_k = o_β + R_β r_k of body k, its parent's done."""
    b = parents[k]
    for c in range(3):
        o[k, c] = o[b, c] + R[b, c, 0] * r[k, 0] + R[b, c, 1] * r[k, 1] + R[b, c, 2] * r[k, 2]
        for d in range(3):
            R[k, c, d] = R[b, c, 0] * E[k, d, 0] + R[b, c, 1] * E[k, d, 1] + R[b, c, 2] * E[k, d, 2]


@njit(cache=True, inline="always")
def twist_and_rate(kinds, parents, idx_v, nvs, axes2, E, r, S, v, a, with_a, t, tdot, k):
    """t_k and ṫ_k of body k from its parent's (eq. 5, 7 and Table 1, step 1), written into t[k], tdot[k] and
    returned as twelve numbers (ω_k, ȯ_k, ω̇_k, ö_k): the one forward motion recursion, of inverse dynamics and
    of forward kinematics alike.  q̈ = a if ``with_a``, else zero and a is not read (forward dynamics' step 1)."""
    b = parents[k]
    iv = idx_v[k]
    z = nvs[k]
    Ek = E[k]
    rk = r[k]
    # p_k θ̇_k and p_k θ̈_k as scalars (z columns of 6): no temporaries in the loop
    p0 = p1 = p2 = p3 = p4 = p5 = 0.0
    a0 = a1 = a2 = a3 = a4 = a5 = 0.0
    for d in range(z):
        vd = v[iv + d]
        p0 += S[k, 0, d] * vd
        p1 += S[k, 1, d] * vd
        p2 += S[k, 2, d] * vd
        p3 += S[k, 3, d] * vd
        p4 += S[k, 4, d] * vd
        p5 += S[k, 5, d] * vd
        if with_a:  # without, the zeros below stay constants (3% of a 100,000-DOF forward dynamics)
            ad = a[iv + d]
            a0 += S[k, 0, d] * ad
            a1 += S[k, 1, d] * ad
            a2 += S[k, 2, d] * ad
            a3 += S[k, 3, d] * ad
            a4 += S[k, 4, d] * ad
            a5 += S[k, 5, d] * ad
    tb, tdb = t[b], tdot[b]
    # t_k = A_{k,β} t_β + p_k θ̇_k                                   (eq. 5, 7)
    wb0, wb1, wb2, u0, u1, u2 = propagated_twist(Ek, rk, tb[0], tb[1], tb[2], tb[3], tb[4], tb[5])
    w0, w1, w2 = wb0 + p0, wb1 + p1, wb2 + p2  # ω_k (wb: ω_β in frame k)
    u0, u1, u2 = u0 + p3, u1 + p4, u2 + p5  # ȯ_k
    # ṫ_k = A_{k,β} ṫ_β + Ȧ_{k,β} t_β + Ω_k p_k θ̇_k + p_k θ̈_k        (Table 1, step 1)
    d0, d1, d2, l0, l1, l2 = propagated_twist(Ek, rk, tdb[0], tdb[1], tdb[2], tdb[3], tdb[4], tdb[5])
    ob0, ob1, ob2 = tb[0], tb[1], tb[2]  # ω_β
    # Ȧ_{k,β} t_β: centripetal acceleration E (ω_β × (ω_β × r)) of o_k
    x0 = ob1 * rk[2] - ob2 * rk[1]
    x1 = ob2 * rk[0] - ob0 * rk[2]
    x2 = ob0 * rk[1] - ob1 * rk[0]
    c0 = ob1 * x2 - ob2 * x1
    c1 = ob2 * x0 - ob0 * x2
    c2 = ob0 * x1 - ob1 * x0
    # Ω_k p_k θ̇_k (+ the ω_β × e θ̇ part of Ȧ for sliding origins), + p_k θ̈_k
    d0 += w1 * p2 - w2 * p1 + a0
    d1 += w2 * p0 - w0 * p2 + a1
    d2 += w0 * p1 - w1 * p0 + a2
    s0, s1, s2 = w0 + wb0, w1 + wb1, w2 + wb2
    l0 += Ek[0, 0] * c0 + Ek[0, 1] * c1 + Ek[0, 2] * c2 + s1 * p5 - s2 * p4 + a3
    l1 += Ek[1, 0] * c0 + Ek[1, 1] * c1 + Ek[1, 2] * c2 + s2 * p3 - s0 * p5 + a4
    l2 += Ek[2, 0] * c0 + Ek[2, 1] * c1 + Ek[2, 2] * c2 + s0 * p4 - s1 * p3 + a5
    g0, g1, g2 = pdot_qdot(kinds, S, axes2, k, v, iv)  # + ṗ_k θ̇_k (angular rows; zero but for universal)
    d0, d1, d2 = d0 + g0, d1 + g1, d2 + g2
    tk, tdk = t[k], tdot[k]
    tk[0], tk[1], tk[2], tk[3], tk[4], tk[5] = w0, w1, w2, u0, u1, u2
    tdk[0], tdk[1], tdk[2], tdk[3], tdk[4], tdk[5] = d0, d1, d2, l0, l1, l2
    return w0, w1, w2, u0, u1, u2, d0, d1, d2, l0, l1, l2
