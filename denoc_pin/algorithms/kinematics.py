"""Joint kinematics: the pieces (E_k, r_k) of A_{k,β} and the joint-motion propagation p_k (eq. 7b).

One branch per joint kind (joint kinds are data).  For joint k with placement (R_p, p_p) in
its parent body and joint motion (R_j, p_j): the body frame sits at R = R_p R_j, r = p_p + R_p p_j
in the parent frame, and E_k = Rᵀ.  p_k holds, column by column, the body-frame twist produced
by a unit rate of each joint velocity, in Pinocchio's order of v.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import FMA, data_views, model_views
from ..model import CONTINUOUS, FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from ..spatial import axis_angle_into, matmul_into, quaternion_rotation_into


@njit(cache=True, inline="always")
def placement_axis_angle_T(P, e, angle, Ek):
    """E_k = (R_p R(e, θ))ᵀ, formed directly: the revolute joints' whole rotation in 27 products."""
    c = np.cos(angle)
    s = np.sin(angle)
    C = 1.0 - c
    x, y, z = e[0], e[1], e[2]
    r00, r01, r02 = c + x * x * C, x * y * C - z * s, x * z * C + y * s
    r10, r11, r12 = y * x * C + z * s, c + y * y * C, y * z * C - x * s
    r20, r21, r22 = z * x * C - y * s, z * y * C + x * s, c + z * z * C
    for i in range(3):
        p0, p1, p2 = P[i, 0], P[i, 1], P[i, 2]
        Ek[0, i] = p0 * r00 + p1 * r10 + p2 * r20
        Ek[1, i] = p0 * r01 + p1 * r11 + p2 * r21
        Ek[2, i] = p0 * r02 + p1 * r12 + p2 * r22


@njit(cache=True, inline="always")
def joint_kinematics(kinds, idx_q, axes, axes2, placement_R, placement_p, q, E, r, S):
    """Fill E[k], r[k] (A_{k,β}) for every body from q, and the one p_k column that depends on q (a universal
    joint's first); the others are constant and set once per Data (``motion_subspaces``)."""
    scratch = np.empty((0, 3, 3))  # for the multi-DOF kinds only, allocated at the first one
    for k in range(1, len(kinds)):
        kind = kinds[k]
        e = axes[k]
        iq = idx_q[k]
        # The 1-DOF kinds first, without temporaries: they are nearly every joint of a robot.
        if kind == REVOLUTE or kind == CONTINUOUS:
            # (cos θ, sin θ) of a continuous joint need not be exactly unit: the angle is what counts.
            angle = q[iq] if kind == REVOLUTE else np.arctan2(q[iq + 1], q[iq])
            placement_axis_angle_T(placement_R[k], e, angle, E[k])
            for c in range(3):
                r[k, c] = placement_p[k, c]
            continue
        if kind == PRISMATIC:
            qk = q[iq]
            for c in range(3):
                for d in range(3):
                    E[k, c, d] = placement_R[k, d, c]
                r[k, c] = (
                    placement_p[k, c]
                    + (placement_R[k, c, 0] * e[0] + placement_R[k, c, 1] * e[1] + placement_R[k, c, 2] * e[2]) * qk
                )
            continue
        if scratch.shape[0] == 0:
            scratch = np.empty((4, 3, 3))
        Rj, R, R1, R2 = scratch[0], scratch[1], scratch[2], scratch[3]
        pj0 = pj1 = pj2 = 0.0
        if kind == FREE_FLYER:
            quaternion_rotation_into(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], Rj)
            pj0, pj1, pj2 = q[iq], q[iq + 1], q[iq + 2]
        elif kind == PLANAR:
            th = np.arctan2(q[iq + 3], q[iq + 2])
            c_, s_ = np.cos(th), np.sin(th)
            Rj[0, 0], Rj[0, 1], Rj[0, 2] = c_, -s_, 0.0
            Rj[1, 0], Rj[1, 1], Rj[1, 2] = s_, c_, 0.0
            Rj[2, 0], Rj[2, 1], Rj[2, 2] = 0.0, 0.0, 1.0
            pj0, pj1 = q[iq], q[iq + 1]
        elif kind == SPHERICAL:
            quaternion_rotation_into(q[iq], q[iq + 1], q[iq + 2], q[iq + 3], Rj)
        else:  # UNIVERSAL: R_j = R(e1, q1) R(e2, q2)
            e2 = axes2[k]
            axis_angle_into(e2, q[iq + 1], R2)
            axis_angle_into(e, q[iq], R1)
            matmul_into(R1, R2, Rj)
            # ω_rel = R2ᵀ e1 q̇1 + e2 q̇2 in the body frame (R2ᵀ e1 turns with q2: see universal_pdot)
            for c in range(3):
                S[k, c, 0] = R2[0, c] * e[0] + R2[1, c] * e[1] + R2[2, c] * e[2]
        matmul_into(placement_R[k], Rj, R)
        for c in range(3):
            r[k, c] = (
                placement_p[k, c] + placement_R[k, c, 0] * pj0 + placement_R[k, c, 1] * pj1 + placement_R[k, c, 2] * pj2
            )
            for d in range(3):
                E[k, c, d] = R[d, c]  # E_k = Rᵀ maps parent-frame components into frame k
    return 0


@njit(cache=True)
def motion_subspaces(kinds, axes, axes2, S):
    """p_k of every joint (eq. 7b), body frame, in Pinocchio's order of v: constant for every kind but
    a universal joint, whose first column R2ᵀ e1 joint_kinematics sets from q.  Called once per Data."""
    S[:, :, :] = 0.0
    for k in range(1, len(kinds)):
        kind, e = kinds[k], axes[k]
        for c in range(3):
            if kind == REVOLUTE or kind == CONTINUOUS:
                S[k, c, 0] = e[c]  # [e_k; 0]
            elif kind == PRISMATIC:
                S[k, 3 + c, 0] = e[c]  # [0; e_k]
            elif kind == FREE_FLYER:
                S[k, 3 + c, c] = 1.0  # v[0:3]: linear velocity of o_k, body frame
                S[k, c, 3 + c] = 1.0  # v[3:6]: angular velocity, body frame
            elif kind == SPHERICAL:
                S[k, c, c] = 1.0
            elif kind == UNIVERSAL:
                S[k, c, 1] = axes2[k, c]  # e2
        if kind == PLANAR:
            S[k, 3, 0] = 1.0
            S[k, 4, 1] = 1.0
            S[k, 2, 2] = 1.0


@njit(cache=True, inline="always")
def universal_pdot(S, axes2, k, v1, v2):
    """ṗ_k q̇_k of universal joint k (angular rows; three numbers): p_k's first column R2ᵀ e1 turns
    with q2 about e2, so ṗ_k q̇_k = q̇1 q̇2 (R2ᵀ e1) × e2."""
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    vv = v1 * v2
    return (s1 * e2 - s2 * e1) * vv, (s2 * e0 - s0 * e2) * vv, (s0 * e1 - s1 * e0) * vv


@njit(cache=True, fastmath=FMA)
def kinematics_entry(mi, mf, ws, q):
    """joint_kinematics of q into the flat workspace ws: a step on the flat buffers (layout.py)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    joint_kinematics(
        mv.kinds, mv.idx_q, mv.axes, mv.axes2, mv.placement_rotation, mv.placement_translation, q, dv.E, dv.r, dv.S
    )
