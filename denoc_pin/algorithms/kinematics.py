"""Joint kinematics: the pieces (E_k, r_k) of A_{k,β} and the joint-motion propagation p_k (eq. 7b).

One branch per joint kind (joint kinds are data).  For joint k with placement (R_p, p_p) in
its parent body and joint motion (R_j, p_j): the body frame sits at R = R_p R_j, r = p_p + R_p p_j
in the parent frame, and E_k = Rᵀ.  p_k holds, column by column, the body-frame twist produced
by a unit rate of each joint velocity, in Pinocchio's order of v.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import data_views, model_views
from ..model import CONTINUOUS, FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL
from ..spatial import axis_angle_into, matmul_into, quaternion_rotation_into


@njit(cache=True)
def joint_kinematics(kinds, idx_q, axes, axes2, placement_R, placement_p, q, E, r, S):
    """Fill E[k], r[k] (A_{k,β}) and S[k] (p_k, body frame) for every body from q."""
    Rj = np.empty((3, 3))
    R = np.empty((3, 3))
    R1 = np.empty((3, 3))
    R2 = np.empty((3, 3))
    pj = np.zeros(3)
    ez = np.array([0.0, 0.0, 1.0])
    for k in range(1, len(kinds)):
        kind = kinds[k]
        e = axes[k]
        iq = idx_q[k]
        for c in range(6):
            for d in range(S.shape[2]):
                S[k, c, d] = 0.0
        pj[0] = pj[1] = pj[2] = 0.0
        if kind == REVOLUTE:
            axis_angle_into(e, q[iq], Rj)
            S[k, 0:3, 0] = e  # p_k = [e_k; 0] (eq. 7b)
        elif kind == CONTINUOUS:
            # (cos θ, sin θ) need not be exactly unit: the angle is what counts.
            axis_angle_into(e, np.arctan2(q[iq + 1], q[iq]), Rj)
            S[k, 0:3, 0] = e
        elif kind == PRISMATIC:
            for c in range(3):
                for d in range(3):
                    Rj[c, d] = 1.0 if c == d else 0.0
                pj[c] = e[c] * q[iq]
            S[k, 3:6, 0] = e  # p_k = [0; e_k] (eq. 7b)
        elif kind == FREE_FLYER:
            quaternion_rotation_into(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], Rj)
            for c in range(3):
                pj[c] = q[iq + c]
                S[k, 3 + c, c] = 1.0  # v[0:3]: linear velocity of o_k, body frame
                S[k, c, 3 + c] = 1.0  # v[3:6]: angular velocity, body frame
        elif kind == PLANAR:
            axis_angle_into(ez, np.arctan2(q[iq + 3], q[iq + 2]), Rj)
            pj[0] = q[iq]
            pj[1] = q[iq + 1]
            S[k, 3, 0] = 1.0
            S[k, 4, 1] = 1.0
            S[k, 2, 2] = 1.0
        elif kind == SPHERICAL:
            quaternion_rotation_into(q[iq], q[iq + 1], q[iq + 2], q[iq + 3], Rj)
            for c in range(3):
                S[k, c, c] = 1.0
        else:  # UNIVERSAL: R_j = R(e1, q1) R(e2, q2)
            e2 = axes2[k]
            axis_angle_into(e2, q[iq + 1], R2)
            axis_angle_into(e, q[iq], R1)
            matmul_into(R1, R2, Rj)
            # ω_rel = R2ᵀ e1 q̇1 + e2 q̇2 in the body frame (R2ᵀ e1 turns with q2: see universal_pdot)
            for c in range(3):
                S[k, c, 0] = R2[0, c] * e[0] + R2[1, c] * e[1] + R2[2, c] * e[2]
                S[k, c, 1] = e2[c]
        matmul_into(placement_R[k], Rj, R)
        for c in range(3):
            r[k, c] = (
                placement_p[k, c]
                + placement_R[k, c, 0] * pj[0]
                + placement_R[k, c, 1] * pj[1]
                + placement_R[k, c, 2] * pj[2]
            )
        for c in range(3):
            for d in range(3):
                E[k, c, d] = R[d, c]  # E_k = Rᵀ maps parent-frame components into frame k
    return 0


@njit(cache=True)
def kinematics_core(mv, dv, q):
    """joint_kinematics on the model views mv and workspace views dv (layout.py)."""
    joint_kinematics(
        mv.kinds, mv.idx_q, mv.axes, mv.axes2, mv.placement_rotation, mv.placement_translation, q, dv.E, dv.r, dv.S
    )


@njit(cache=True, inline="always")
def universal_pdot(S, axes2, k, v1, v2, out):
    """out[0:3] += ṗ_k q̇_k of universal joint k: p_k's first column R2ᵀ e1 turns with q2 about e2,
    so ṗ_k q̇_k = q̇1 q̇2 (R2ᵀ e1) × e2 (angular rows only)."""
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    vv = v1 * v2
    out[0] += (s1 * e2 - s2 * e1) * vv
    out[1] += (s2 * e0 - s0 * e2) * vv
    out[2] += (s0 * e1 - s1 * e0) * vv


@njit(cache=True)
def kinematics_entry(mi, mf, ws, q):
    """Kinematics of q into the flat workspace ws."""
    kinematics_core(model_views(mi, mf), data_views(ws, mi), q)
