"""Joint kinematics: the pieces (E_k, r_k) of A_{k,β} and the joint-motion propagation p_k (eq. 7b)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import CONTINUOUS, REVOLUTE
from ..spatial import axis_angle, matmul_into


@njit(cache=True)
def joint_kinematics(kinds, idx_q, axes, placement_R, placement_p, q, E, r, S):
    """Fill E[k], r[k] (A_{k,β}) and S[k] (p_k, body frame) for every body from q."""
    R = np.empty((3, 3))
    for k in range(1, len(kinds)):
        kind = kinds[k]
        e = axes[k]
        iq = idx_q[k]
        S[k, :, :] = 0.0
        if kind == REVOLUTE or kind == CONTINUOUS:
            if kind == REVOLUTE:
                angle = q[iq]
            else:
                # (cos θ, sin θ) need not be exactly unit: the angle is what counts.
                angle = np.arctan2(q[iq + 1], q[iq])
            matmul_into(placement_R[k], axis_angle(e, angle), R)
            r[k, :] = placement_p[k]
            # p_k = [e_k; 0] for a revolute joint (eq. 7b)
            S[k, 0:3, 0] = e
        else:  # prismatic, the only other kind so far
            R[:, :] = placement_R[k]
            for c in range(3):
                r[k, c] = (
                    placement_p[k, c]
                    + (placement_R[k, c, 0] * e[0] + placement_R[k, c, 1] * e[1] + placement_R[k, c, 2] * e[2]) * q[iq]
                )
            # p_k = [0; e_k] for a prismatic joint (eq. 7b)
            S[k, 3:6, 0] = e
        E[k, :, :] = R.T  # E_k maps parent-frame components into frame k
    return 0
