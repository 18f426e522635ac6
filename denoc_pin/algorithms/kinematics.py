"""Kinematics on the flat buffers: the pieces (E_k, r_k) of A_{k,β} and p_k (eq. 7b) for every body, and the
world poses they compose to.  What each joint kind contributes is ``core.joints``'s."""

from __future__ import annotations

from numba import njit

from ..core.joints import joint_kinematics
from ..core.layout import FMA, data_views, model_views

__all__: list[str] = []


@njit(cache=True, fastmath=FMA)
def kinematics_entry(mi, mf, ws, q):
    """joint_kinematics of q into the flat workspace ws: a step on the flat buffers (core/layout.py)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    joint_kinematics(
        mv.kinds, mv.idx_q, mv.axes, mv.axes2, mv.pitches, mv.placement_rotation, mv.placement_translation, q,
        dv.E, dv.r, dv.S,
    )  # fmt: skip


@njit(cache=True, inline="always")
def world_poses_into(parents, E, r, R, o):
    """R_k = R_β E_kᵀ and o_k = o_β + R_β r_k: every body's orientation and origin in the base frame, from the
    kinematics in (E, r).  R[0] = 1, o[0] = 0."""
    R[0, :, :] = 0.0
    o[0, :] = 0.0
    for c in range(3):
        R[0, c, c] = 1.0
    for k in range(1, len(parents)):
        b = parents[k]
        for c in range(3):
            o[k, c] = o[b, c] + R[b, c, 0] * r[k, 0] + R[b, c, 1] * r[k, 1] + R[b, c, 2] * r[k, 2]
            for d in range(3):
                R[k, c, d] = R[b, c, 0] * E[k, d, 0] + R[b, c, 1] * E[k, d, 1] + R[b, c, 2] * E[k, d, 2]
