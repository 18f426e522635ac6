"""The reaction solve of closed loops: Schiehlen eq. (19)–(20) on the tree's UDUᵀ factors, in place on the loop
workspace (``layout.LOOP_FLOATS``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..algorithms.composite import l_solve_rows, lt_solve
from ..algorithms.forward import udut_solve
from ..core.dense import (
    cholesky_in_place,
    cholesky_solve,
    eigen_solve,
    jacobi_eigen,
    pivoted_cholesky,
    symmetric_product_into,
)
from ..core.layout import FMA, LW_RANK, data_views, leading, loop_views, model_views
from ..core.memory import copy_into
from .loop_kinematics import RANK_RTOL

__all__ = ["reaction_step"]


@njit(cache=True, fastmath=FMA)
def reaction_step(mi, mf, ws, lw, v, kp, kd, rcond, factored):
    """Schiehlen eq. (19)–(20) on the tree's UDUᵀ factors in ws, or (``factored``) on the GIM's factor L in the loop
    workspace's H (GIM = Lᵀ L); J, r, J̇ q̇ and q̈₀ in the loop workspace:

    the rank rule picks a basis B of J's range (the identity when J has full row rank; where it has not, the
    columns of J Jᵀ's pivoted Cholesky factor L; where those pivots are in doubt, J's left singular vectors
    above RANK_RTOL), then Y = GIM⁻¹ Jᵀ B by the recursions of Table 3 (or L⁻¹ L⁻ᵀ Jᵀ B, two sweeps of the
    λ-paths), N_c = Bᵀ J Y,
    N_c x = Bᵀ γ − Bᵀ J q̈₀, λ = B x and q̈ = q̈₀ + Y x into ws's q̈.  λ lies in J's range: the minimum-norm
    reactions (their part along redundant directions is statically indeterminate).  Returns the rank, and leaves it
    in lw (``LW_RANK``)."""
    mv, dv, lv = model_views(mi, mf), data_views(ws, mi), loop_views(lw, mi)
    J, a0, a, lam, gamma = lv.J, lv.ddq0, dv.ddq, lv.lam, lv.gamma
    m, nv = J.shape
    for i in range(m):
        jv = 0.0
        for k in range(nv):
            jv += J[i, k] * v[k]
        gamma[i] = -lv.Jdv[i] - 2.0 * kd * jv - kp * kp * lv.res[i]  # γ: r̈ + 2 kd ṙ + kp² r = 0
    # The rank rule (``RANK_RTOL``): pivots of J Jᵀ far from its threshold decide; otherwise J's singular values.
    symmetric_product_into(J.T, J.T, lv.G)
    r, clear = pivoted_cholesky(lv.G, lv.order, RANK_RTOL, 1e-2 * RANK_RTOL * RANK_RTOL, 1e4 * RANK_RTOL * RANK_RTOL)
    identity = clear and r == m
    B = leading(lv.B, (m, r))
    if not clear:  # J's singular values decide (LAPACK: the one path that allocates)
        U, sv, _ = np.linalg.svd(J)
        r = 0
        while r < len(sv) and sv[r] > RANK_RTOL * sv[0]:
            r += 1
        B = leading(lv.B, (m, r))
        B[:, :] = U[:, :r]
    elif not identity:
        for i in range(m):
            row = int(lv.order[i])
            for j in range(r):
                B[row, j] = lv.G[i, j] if i >= j else 0.0
    copy_into(a, a0)
    lam[:] = 0.0
    lw[LW_RANK] = r
    if r == 0:
        return 0
    JT, Y = leading(lv.JT, (nv, r)), leading(lv.Y, (nv, r))
    N, rhs, x = leading(lv.N, (r, r)), leading(lv.rhs, (r,)), leading(lv.x, (r,))
    for i in range(r):  # (Bᵀ J)ᵀ and Bᵀ γ
        if identity:
            for k in range(nv):
                JT[k, i] = J[i, k]
            rhs[i] = gamma[i]
        else:
            for k in range(nv):
                s = 0.0
                for j in range(m):
                    s += B[j, i] * J[j, k]
                JT[k, i] = s
            s = 0.0
            for j in range(m):
                s += B[j, i] * gamma[j]
            rhs[i] = s
    # Y = GIM⁻¹ Jᵀ B (eq. 19)
    if factored:
        for k in range(nv):
            for i in range(r):
                Y[k, i] = JT[k, i]
        lt_solve(lv.H, mv.dof_parent, Y)
        l_solve_rows(lv.H, mv.dof_parent, Y)
    else:
        eta = leading(lv.eta, (len(mv.parents), r, 6))
        udut_solve(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi,
                   dv.I_hat_inv, JT, eta, eta, Y, lv.phi_hat)  # fmt: skip
    for i in range(r):
        s = rhs[i]
        for k in range(nv):
            s -= JT[k, i] * a0[k]
        rhs[i] = s  # Bᵀ (γ − J q̈₀)
    symmetric_product_into(JT, Y, N)  # N_c (eq. 20)
    if not cholesky_in_place(N, rcond):  # N_c singular though J is not: its eigenvalues above rcond
        symmetric_product_into(JT, Y, N)
        V = leading(lv.V, (r, r))
        jacobi_eigen(N, V)
        eigen_solve(N, V, rhs, rcond, x)
    else:
        cholesky_solve(N, rhs, x)
    for k in range(nv):
        s = a[k]
        for i in range(r):
            s += Y[k, i] * x[i]
        a[k] = s  # q̈ = q̈₀ + Y x (eq. 19)
    for j in range(m):  # λ = B x
        if identity:
            lam[j] = x[j]
            continue
        s = 0.0
        for i in range(r):
            s += B[j, i] * x[i]
        lam[j] = s
    return r
