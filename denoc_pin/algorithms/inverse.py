"""Recursive O(n) inverse dynamics of kinematic modules (Shah, Saha & Dutt, Table 1).

Step 1, forward recursion over modules M_1 … M_s and, inside each, links 1^i … η^i:
twists t_k, twist-rates ṫ_k and Newton-Euler wrenches w_k.  Step 2, backward recursion:
τ = N_dᵀ N_lᵀ w, i.e. w̃_k = w_k + Σ A_{c,k}ᵀ w̃_c and τ_k = p_kᵀ w̃_k.
Gravity enters as an acceleration of the base (note under Table 1).
"""

from __future__ import annotations

from numba import njit

from ..core.joints import pdot_qdot
from ..core.layout import FMA, data_views, model_views
from ..core.spatial import add_transferred_wrench, newton_euler, propagated_twist

__all__: list[str] = []


@njit(cache=True, inline="always")
def inverse_dynamics_kernel(
    parents, kinds, module_ptr, module_bodies, idx_v, nvs, masses, coms, Io, axes2, gravity, E, r, S, v, a, fext,
    with_fext, t, tdot, w_tilde, tau,
):  # fmt: skip
    """Table 1 for a tree of kinematic modules; writes t, tdot, w_tilde and tau.

    M_k enters as (m_k, d_k, I_k about o_k); fext is read only when ``with_fext``."""
    t[0, :] = 0.0
    tdot[0, 0:3] = 0.0
    tdot[0, 3:6] = -gravity  # gravity as the base's acceleration (note under Table 1)
    # Step 1: forward recursion (inter-modular over i, intra-modular over k).
    for i in range(len(module_ptr) - 1):
        for j in range(module_ptr[i], module_ptr[i + 1]):
            k = module_bodies[j]
            b = parents[k]
            iv = idx_v[k]
            z = nvs[k]
            Ek = E[k]
            rk = r[k]
            # p_k θ̇_k and p_k θ̈_k as scalars (z columns of 6): no temporaries in the loop
            p0 = p1 = p2 = p3 = p4 = p5 = 0.0
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            for d in range(z):
                vd, ad = v[iv + d], a[iv + d]
                p0 += S[k, 0, d] * vd
                p1 += S[k, 1, d] * vd
                p2 += S[k, 2, d] * vd
                p3 += S[k, 3, d] * vd
                p4 += S[k, 4, d] * vd
                p5 += S[k, 5, d] * vd
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
            # w_k = M_k ṫ_k + Ω_k M_k E_k t_k − w^E_k, the start of w̃_k      (eq. 1, 11)
            wk = w_tilde[k]
            wk[0], wk[1], wk[2], wk[3], wk[4], wk[5] = newton_euler(
                masses[k], coms[k], Io[k], w0, w1, w2, d0, d1, d2, l0, l1, l2
            )
            if with_fext:
                for c in range(6):
                    w_tilde[k, c] -= fext[k, c]
    # Step 2: backward recursion τ = N_dᵀ N_lᵀ w.
    for i in range(len(module_ptr) - 2, -1, -1):
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            b = parents[k]
            iv = idx_v[k]
            # τ_k = p_kᵀ w̃_k
            for d in range(nvs[k]):
                s = 0.0
                for c in range(6):
                    s += S[k, c, d] * w_tilde[k, c]
                tau[iv + d] = s
            # w̃_β = w_β + Σ_children A_{k,β}ᵀ w̃_k
            if b > 0:
                add_transferred_wrench(E[k], r[k], w_tilde[k], w_tilde[b])
    return 0


@njit(cache=True, fastmath=FMA)
def inverse_dynamics_step(mi, mf, ws, v, a, with_fext):
    """Table 1 on the flat buffers, with the kinematics already in ws."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    inverse_dynamics_kernel(
        mv.parents, mv.kinds, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, mv.masses, mv.coms,
        mv.inertias_origin, mv.axes2, mv.gravity, dv.E, dv.r, dv.S, v, a, dv.fext, with_fext, dv.t, dv.tdot,
        dv.w_tilde, dv.tau,
    )  # fmt: skip
