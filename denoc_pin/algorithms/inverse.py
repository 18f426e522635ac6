"""Recursive O(n) inverse dynamics of kinematic modules (Shah, Saha & Dutt, Table 1).

Step 1, forward recursion over modules M_1 … M_s and, inside each, links 1^i … η^i:
twists t_k, twist-rates ṫ_k and Newton-Euler wrenches w_k.  Step 2, backward recursion:
τ = N_dᵀ N_lᵀ w, i.e. w̃_k = w_k + Σ A_{c,k}ᵀ w̃_c and τ_k = p_kᵀ w̃_k.
Gravity enters as an acceleration of the base (note under Table 1).
"""

from __future__ import annotations

from numba import njit

from ..core.layout import FMA, data_views, model_views
from ..core.spatial import add_transferred_wrench, newton_euler
from .kinematics import twist_and_rate

__all__: list[str] = []


@njit(cache=True, fastmath=FMA)
def inverse_dynamics_step(mi, mf, ws, v, a, with_fext, step2):
    """Table 1 for a tree of kinematic modules on the flat buffers, the kinematics already in ws; writes t, tdot,
    w_tilde and tau.  ``step2`` False stops after step 1, w_k in w_tilde: forward dynamics goes on with its own
    backward pass (``forward.factor_step``).

    M_k enters as (m_k, d_k, I_k about o_k); fext is read only when ``with_fext``.  Both steps are written out
    here rather than inlined from kernels on named arrays: numba copies an inlined function's IR once per block
    with all its variables, at every level of inlining."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    parents, kinds, module_ptr, module_bodies = mv.parents, mv.kinds, mv.module_ptr, mv.module_bodies
    idx_v, nvs, masses, coms, Io, axes2 = mv.idx_v, mv.nvs, mv.masses, mv.coms, mv.inertias_origin, mv.axes2
    E, r, S, fext, t, tdot, w_tilde, tau = dv.E, dv.r, dv.S, dv.fext, dv.t, dv.tdot, dv.w_tilde, dv.tau
    # t_0 = 0 and ṫ_0 = (0, −g): gravity as the base's acceleration (note under Table 1)
    t[0, :] = 0.0
    tdot[0, 0:3] = 0.0
    for c in range(3):
        tdot[0, 3 + c] = -mv.gravity[c]
    # Step 1: forward recursion (inter-modular over i, intra-modular over k).
    for i in range(len(module_ptr) - 1):
        for j in range(module_ptr[i], module_ptr[i + 1]):
            k = module_bodies[j]
            # t_k, ṫ_k from t_β, ṫ_β                                            (eq. 5, 7; Table 1, step 1)
            w0, w1, w2, u0, u1, u2, d0, d1, d2, l0, l1, l2 = twist_and_rate(
                kinds, parents, idx_v, nvs, axes2, E, r, S, v, a, step2, t, tdot, k
            )
            # w_k = M_k ṫ_k + Ω_k M_k E_k t_k − w^E_k, the start of w̃_k      (eq. 1, 11)
            wk = w_tilde[k]
            wk[0], wk[1], wk[2], wk[3], wk[4], wk[5] = newton_euler(
                masses[k], coms[k], Io[k], w0, w1, w2, d0, d1, d2, l0, l1, l2
            )
            if with_fext:
                for c in range(6):
                    wk[c] -= fext[k, c]
    if not step2:
        return
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
