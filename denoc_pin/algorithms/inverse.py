"""Recursive O(n) inverse dynamics of kinematic modules (Shah, Saha & Dutt, Table 1).

Step 1, forward recursion over modules M_1 … M_s and, inside each, links 1^i … η^i:
twists t_k, twist-rates ṫ_k and Newton-Euler wrenches w_k.  Step 2, backward recursion:
τ = N_dᵀ N_lᵀ w, i.e. w̃_k = w_k + Σ A_{c,k}ᵀ w̃_c and τ_k = p_kᵀ w̃_k.
Gravity enters as an acceleration of the base (note under Table 1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import UNIVERSAL, Data, Model, check_data, configuration, external_forces, vector
from ..spatial import add_transferred_wrench, newton_euler_wrench, propagate_twist
from .kinematics import run_kinematics


@njit(cache=True)
def inverse_dynamics_kernel(
    parents, kinds, module_ptr, module_bodies, idx_v, nvs, M, gravity, E, r, S, Sdot_coef, v, a, fext, t, tdot, w,
    w_tilde, tau,
):  # fmt: skip
    """Table 1 for a tree of kinematic modules; writes t, tdot, w, w_tilde and tau."""
    t[0, :] = 0.0
    tdot[0, 0:3] = 0.0
    tdot[0, 3:6] = -gravity  # gravity as the base's acceleration (note under Table 1)
    pqd = np.empty(6)  # p_k θ̇_k
    wb = np.empty(3)  # ω_β in frame k
    tmp = np.empty(3)
    # Step 1: forward recursion (inter-modular over i, intra-modular over k).
    for i in range(len(module_ptr) - 1):
        for j in range(module_ptr[i], module_ptr[i + 1]):
            k = module_bodies[j]
            b = parents[k]
            iv = idx_v[k]
            z = nvs[k]
            Ek = E[k]
            rk = r[k]
            for c in range(6):
                s = 0.0
                for d in range(z):
                    s += S[k, c, d] * v[iv + d]
                pqd[c] = s
            # t_k = A_{k,β} t_β + p_k θ̇_k                                   (eq. 5, 7)
            propagate_twist(Ek, rk, t[b], t[k])
            for c in range(3):
                wb[c] = t[k, c]
            for c in range(6):
                t[k, c] += pqd[c]
            # ṫ_k = A_{k,β} ṫ_β + Ȧ_{k,β} t_β + Ω_k p_k θ̇_k + p_k θ̈_k        (Table 1, step 1)
            propagate_twist(Ek, rk, tdot[b], tdot[k])
            ob = t[b, 0:3]
            # Ȧ_{k,β} t_β: centripetal acceleration E (ω_β × (ω_β × r)) of o_k
            tmp[0] = ob[1] * rk[2] - ob[2] * rk[1]
            tmp[1] = ob[2] * rk[0] - ob[0] * rk[2]
            tmp[2] = ob[0] * rk[1] - ob[1] * rk[0]
            c0 = ob[1] * tmp[2] - ob[2] * tmp[1]
            c1 = ob[2] * tmp[0] - ob[0] * tmp[2]
            c2 = ob[0] * tmp[1] - ob[1] * tmp[0]
            for c in range(3):
                tdot[k, 3 + c] += Ek[c, 0] * c0 + Ek[c, 1] * c1 + Ek[c, 2] * c2
            # Ω_k p_k θ̇_k (+ the ω_β × e θ̇ part of Ȧ for sliding origins)
            ok = t[k, 0:3]
            tdot[k, 0] += ok[1] * pqd[2] - ok[2] * pqd[1]
            tdot[k, 1] += ok[2] * pqd[0] - ok[0] * pqd[2]
            tdot[k, 2] += ok[0] * pqd[1] - ok[1] * pqd[0]
            s0 = ok[0] + wb[0]
            s1 = ok[1] + wb[1]
            s2 = ok[2] + wb[2]
            tdot[k, 3] += s1 * pqd[5] - s2 * pqd[4]
            tdot[k, 4] += s2 * pqd[3] - s0 * pqd[5]
            tdot[k, 5] += s0 * pqd[4] - s1 * pqd[3]
            for c in range(6):
                s = 0.0
                for d in range(z):
                    s += S[k, c, d] * a[iv + d]
                tdot[k, c] += s
            if kinds[k] == UNIVERSAL:
                # ṗ_k θ̇_k: the universal joint's first axis turns with its second angle
                for c in range(6):
                    tdot[k, c] += Sdot_coef[k, c] * v[iv] * v[iv + 1]
            # w_k = M_k ṫ_k + Ω_k M_k E_k t_k − w^E_k                         (eq. 1, 11)
            newton_euler_wrench(M[k], t[k], tdot[k], w[k])
            for c in range(6):
                w[k, c] -= fext[k, c]
                w_tilde[k, c] = w[k, c]
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


def _run(model: Model, data: Data, q, v, a, fext) -> np.ndarray:
    """Kinematics plus Table 1 on validated arrays; leaves data.tau filled."""
    run_kinematics(model, data, q)
    inverse_dynamics_kernel(
        model.parents, model.kinds, model.module_ptr, model.module_bodies, model.idx_v, model.nvs, model.M,
        model.gravity, data.E, data.r, data.S, data.Sdot_coef, v, a, fext, data.t, data.tdot, data.w, data.w_tilde,
        data.tau,
    )  # fmt: skip
    return data.tau


def _fext_array(model: Model, data: Data, fext) -> np.ndarray:
    if fext is None:
        data.fext[:] = 0.0
        return data.fext
    return external_forces(model, fext)


def inverse_dynamics(model: Model, data: Data, q, v, a, fext=None) -> np.ndarray:
    """Joint torques τ(q, q̇, q̈) by the recursive DeNOC algorithm (Table 1); ``pinocchio.rnea``.

    q: (nq,), v: (nv,), a: (nv,) in Pinocchio's layout.  fext: None, an (njoints, 6) array
    of [linear, angular] forces in each joint frame, or a list of ``pinocchio.Force``.
    Returns τ as a new (nv,) array (also left in ``data.tau``).
    """
    check_data(model, data)
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    a = vector(a, model.nv, "a")
    return _run(model, data, q, v, a, _fext_array(model, data, fext)).copy()


def nonlinear_effects(model: Model, data: Data, q, v) -> np.ndarray:
    """h(q, q̇) = C(q, q̇) q̇ + gravity term: inverse dynamics with q̈ = 0; ``pinocchio.nonLinearEffects``."""
    check_data(model, data)
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    return _run(model, data, q, v, data.zeros_v, _fext_array(model, data, None)).copy()
