"""Analytical derivatives of the recursive dynamics: Table 1 differentiated (docs/derivatives.md).

Two kernels.  ``inverse_dynamics_derivatives_world`` sums the directions below over subtrees in the base frame, a few
dot products per (body, ancestor) pair; it serves every model whose joints' p_k are fixed in their bodies.
``inverse_dynamics_derivatives_step`` takes one direction at a time in the body frames, and serves the universal
joint, whose first axis turns with its parent.  ``derivatives_entry`` runs either after Table 1, and the forward
dynamics' derivatives from them.

Derivatives with respect to q are taken in the tangent space, q ⊕ ε e_j, as Pinocchio's are: a unit change of
the j-th tangent coordinate of joint J moves body J's frame, and its whole subtree with it, by the twist
ξ = p_J[:, j] ε expressed in frame J (for every joint kind: p_J is the body-frame motion subspace of ``jcalc``).
Nothing else moves, so one direction changes the forward recursion of Table 1 only on J's subtree and the
backward recursion only there and on J's ancestors: a direction costs O(size of J's subtree + depth of J), all
of them O(n·d) for a tree of depth d (O(n²) on a chain).

The recursion is written in the spatial form of Table 1: t_k = [ω_k; ȯ_k] (eq. 5) and a_k = ṫ_k − [0; ω_k × ȯ_k]
(the twist-rate less the transport term: the spatial acceleration, which A_{k,β} carries like a twist), so that

    t_k = A_{k,β} t_β + p_k θ̇_k,   a_k = A_{k,β} a_β + p_k θ̈_k + ṗ_k θ̇_k + t_k ×ₘ p_k θ̇_k
    w_k = M_k a_k + t_k ×* M_k t_k − w^E_k,   w̃_k = w_k + Σ_c A_{c,k}ᵀ w̃_c,   τ_k = p_kᵀ w̃_k

(eq. 1, 5, 7 and Table 1; ×ₘ and ×* the motion and force cross products, w_k the same Newton–Euler wrench as
``spatial.newton_euler``'s).  A change ξ of frame J changes A_{J,β} to (1 − ξ×ₘ) A_{J,β} and A_{J,β}ᵀ to
A_{J,β}ᵀ (1 + ξ×*), and p_J where it depends on q (a universal joint, ``joints.dS_dq``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..core.dense import cholesky_inverse
from ..core.joints import dpdot_qdot, dS_dq, subspaces_fixed_in_bodies
from ..core.layout import FMA, HEAD_NJ, HEAD_NV, HEAD_Z, borrow, data_views, model_views
from ..core.memory import copy_into
from ..core.spatial import (
    add_transferred_wrench,
    add_transformed_rigid_inertia,
    force_cross,
    motion_cross,
    propagated_twist,
    rigid_inertia_into,
    rigid_inertia_times,
    transferred_wrench,
)
from ..kernel_cache import compile_on_first_use
from .composite import lt_solve
from .forward import udut_solve
from .inverse import inverse_dynamics_step
from .kinematics import world_poses_into
from .protocol import MAT, MATS, MB, MF, MI, VEC, Entry, borrowed, on_model_buffer
from .tree_entries import aba_entry, crba_entry, gim_forward_entry, rnea_entry

__all__ = ["DENSE_PRODUCT", "DERIVATIVES"]

DENSE_PRODUCT = 200
"""Up to this nv, GIM⁻¹ and −GIM⁻¹ ∂τ/∂· are formed densely (LAPACK and BLAS, O(nv³)); above, by Table 3 column by
column (O(n) a column, O(n²) in all)."""


@njit(cache=True, inline="always")
def inertia_times(m, d, Io, x0, x1, x2, x3, x4, x5):
    """M_k x (eq. 2b) for a motion x = [ω; v]: [I_o ω + m d × v; m v − m d × ω]."""
    return rigid_inertia_times(
        m, m * d[0], m * d[1], m * d[2], Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2],
        x0, x1, x2, x3, x4, x5,
    )  # fmt: skip


@njit(cache=True, inline="always")
def wrench_change(m, d, Io, t, h, dt, da):
    """δw_k = M_k δa_k + δt_k ×* (M_k t_k) + t_k ×* (M_k δt_k): the change of the Newton–Euler wrench (h = M_k t_k)."""
    i0, i1, i2, i3, i4, i5 = inertia_times(m, d, Io, da[0], da[1], da[2], da[3], da[4], da[5])
    j0, j1, j2, j3, j4, j5 = inertia_times(m, d, Io, dt[0], dt[1], dt[2], dt[3], dt[4], dt[5])
    f0, f1, f2, f3, f4, f5 = force_cross(dt[0], dt[1], dt[2], dt[3], dt[4], dt[5], h[0], h[1], h[2], h[3], h[4], h[5])
    g0, g1, g2, g3, g4, g5 = force_cross(t[0], t[1], t[2], t[3], t[4], t[5], j0, j1, j2, j3, j4, j5)
    return i0 + f0 + g0, i1 + f1 + g1, i2 + f2 + g2, i3 + f3 + g3, i4 + f4 + g4, i5 + f5 + g5


@njit(cache=True, inline="always")
def spatial_acceleration(t, tdot, out):
    """out = a_k = ṫ_k − [0; ω_k × ȯ_k]: the body-frame spatial acceleration from Table 1's twist rate ṫ_k (the
    classical acceleration of the origin, [ω̇; ö]) and t_k = [ω; ȯ]."""
    out[0], out[1], out[2] = tdot[0], tdot[1], tdot[2]
    out[3] = tdot[3] - (t[1] * t[5] - t[2] * t[4])
    out[4] = tdot[4] - (t[2] * t[3] - t[0] * t[5])
    out[5] = tdot[5] - (t[0] * t[4] - t[1] * t[3])


@njit(cache=True, inline="always")
def joint_direction(kinds, S, axes2, J, j, wrt_v, v, a, ivJ, tJ, sJ, xt, xa, dtJ, daJ):
    """δt_J and δa_J, in frame J, of one direction (J, j) into dtJ, daJ (6 each): a unit change of the j-th tangent
    coordinate of joint J (``wrt_v`` False) or of its rate (True); tJ = t_J, sJ = p_J θ̇_J, xt = A_{J,β} t_β and
    xa = A_{J,β} a_β (module docstring).  Every body of J's subtree then changes by the same twists carried down."""
    x0, x1, x2, x3, x4, x5 = S[J, 0, j], S[J, 1, j], S[J, 2, j], S[J, 3, j], S[J, 4, j], S[J, 5, j]
    g0, g1, g2 = dpdot_qdot(kinds, S, axes2, J, j, wrt_v, v, ivJ)  # δ(ṗ_J θ̇_J)
    if wrt_v:  # δθ̇_J = e_j: δt_J = p_J e_j, δa_J = δ(ṗ θ̇) + δt_J ×ₘ p_J θ̇_J + t_J ×ₘ p_J e_j
        n0, n1, n2, n3, n4, n5 = x0, x1, x2, x3, x4, x5
        y0, y1, y2, y3, y4, y5 = motion_cross(tJ[0], tJ[1], tJ[2], tJ[3], tJ[4], tJ[5], x0, x1, x2, x3, x4, x5)
    else:  # ξ = p_J e_j: δt_J = −ξ ×ₘ A t_β + δp_J θ̇_J, δa_J = −ξ ×ₘ A a_β + δp_J θ̈_J + δ(ṗ θ̇)
        #        + δt_J ×ₘ p_J θ̇_J + t_J ×ₘ δp_J θ̇_J
        c0, c1, c2 = dS_dq(kinds, S, axes2, J, j)  # δp_J[:, 0] (angular rows)
        vJ0, aJ0 = v[ivJ], a[ivJ]
        n0, n1, n2, n3, n4, n5 = motion_cross(x0, x1, x2, x3, x4, x5, xt[0], xt[1], xt[2], xt[3], xt[4], xt[5])
        n0, n1, n2 = c0 * vJ0 - n0, c1 * vJ0 - n1, c2 * vJ0 - n2
        n3, n4, n5 = -n3, -n4, -n5
        y0, y1, y2, y3, y4, y5 = motion_cross(x0, x1, x2, x3, x4, x5, xa[0], xa[1], xa[2], xa[3], xa[4], xa[5])
        u0, u1, u2, u3, u4, u5 = motion_cross(tJ[0], tJ[1], tJ[2], tJ[3], tJ[4], tJ[5], c0 * vJ0, c1 * vJ0, c2 * vJ0,
                                              0.0, 0.0, 0.0)  # fmt: skip
        y0, y1, y2 = c0 * aJ0 - y0 + u0, c1 * aJ0 - y1 + u1, c2 * aJ0 - y2 + u2
        y3, y4, y5 = u3 - y3, u4 - y4, u5 - y5
    m0, m1, m2, m3, m4, m5 = motion_cross(n0, n1, n2, n3, n4, n5, sJ[0], sJ[1], sJ[2], sJ[3], sJ[4], sJ[5])
    dtJ[0], dtJ[1], dtJ[2], dtJ[3], dtJ[4], dtJ[5] = n0, n1, n2, n3, n4, n5
    daJ[0], daJ[1], daJ[2] = y0 + m0 + g0, y1 + m1 + g1, y2 + m2 + g2
    daJ[3], daJ[4], daJ[5] = y3 + m3, y4 + m4, y5 + m5


@njit(cache=True)
def preorder(parents):
    """(order, first, size): the bodies 1 … nj−1 depth first (each subtree contiguous: order[first[k]:first[k] +
    size[k]] is k's subtree, k first), for any numbering with parents[k] < k."""
    nj = len(parents)
    work = np.empty(4 * nj, dtype=np.int64)
    size, first, nxt, order = work[:nj], work[nj : 2 * nj], work[2 * nj : 3 * nj], work[3 * nj + 1 :]
    size[:] = 1
    for k in range(nj - 1, 0, -1):
        size[parents[k]] += size[k]
    first[0], nxt[0] = -1, 0
    for k in range(1, nj):
        b = parents[k]
        first[k] = nxt[b]
        nxt[b] += size[k]
        nxt[k] = first[k] + 1
        order[first[k]] = k
    return order, first, size


@njit(cache=True, fastmath=FMA)
def inverse_dynamics_derivatives_step(mi, mf, ws, v, a, dq, dv):
    """∂τ/∂q (tangent) into dq and ∂τ/∂q̇ into dv (nv x nv each), Table 1 already run in ws at (q, q̇, q̈ = a)
    (t_k, ṫ_k, w̃_k there, and E_k, r_k, p_k).  One direction (J, j) at a time (module docstring): the changes
    δt_k, δa_k, δw_k on J's subtree, then δw̃ back through it and up J's ancestors, δτ_k = p_kᵀ δw̃_k."""
    mv = model_views(mi, mf)
    dv_ = data_views(ws, mi)
    parents, kinds, idx_v, nvs, axes2 = mv.parents, mv.kinds, mv.idx_v, mv.nvs, mv.axes2
    masses, coms, Io = mv.masses, mv.coms, mv.inertias_origin
    E, r, S, t, tdot, w_tilde = dv_.E, dv_.r, dv_.S, dv_.t, dv_.tdot, dv_.w_tilde
    nj = len(parents)
    order, first, size = preorder(parents)
    acc = np.empty((nj, 6))  # a_k, the spatial accelerations
    sq = np.zeros((nj, 6))  # p_k θ̇_k
    h = np.zeros((nj, 6))  # M_k t_k
    dt = np.zeros((nj, 6))  # δt_k
    da = np.zeros((nj, 6))  # δa_k
    dw = np.zeros((nj, 6))  # δw_k, then δw̃_k
    for c in range(6):
        acc[0, c] = tdot[0, c]
    for k in range(1, nj):
        tk = t[k]
        spatial_acceleration(tk, tdot[k], acc[k])
        for d in range(nvs[k]):
            for c in range(6):
                sq[k, c] += S[k, c, d] * v[idx_v[k] + d]
        h[k, 0], h[k, 1], h[k, 2], h[k, 3], h[k, 4], h[k, 5] = inertia_times(
            masses[k], coms[k], Io[k], tk[0], tk[1], tk[2], tk[3], tk[4], tk[5]
        )
    dq[:, :] = 0.0
    dv[:, :] = 0.0
    for J in range(1, nj):
        b, ivJ, z = parents[J], idx_v[J], nvs[J]
        tJ, sJ = t[J], sq[J]
        # A_{J,β} t_β and A_{J,β} a_β, which a change of frame J turns (−ξ ×ₘ)
        xt = propagated_twist(E[J], r[J], t[b, 0], t[b, 1], t[b, 2], t[b, 3], t[b, 4], t[b, 5])
        xa = propagated_twist(E[J], r[J], acc[b, 0], acc[b, 1], acc[b, 2], acc[b, 3], acc[b, 4], acc[b, 5])
        for j in range(z):
            col = ivJ + j
            for wrt_v in (False, True):
                out = dv if wrt_v else dq
                x0, x1, x2, x3, x4, x5 = S[J, 0, j], S[J, 1, j], S[J, 2, j], S[J, 3, j], S[J, 4, j], S[J, 5, j]
                dtJ, daJ = dt[J], da[J]
                joint_direction(kinds, S, axes2, J, j, wrt_v, v, a, ivJ, tJ, sJ, xt, xa, dtJ, daJ)
                wJ = dw[J]
                wJ[0], wJ[1], wJ[2], wJ[3], wJ[4], wJ[5] = wrench_change(masses[J], coms[J], Io[J], tJ, h[J], dtJ, daJ)
                # J's subtree: δt_k = A_{k,β} δt_β, δa_k = A_{k,β} δa_β + δt_k ×ₘ p_k θ̇_k, δw_k
                for i in range(first[J] + 1, first[J] + size[J]):
                    k = order[i]
                    p = parents[k]
                    tb, ab, dtk, dak, sk = dt[p], da[p], dt[k], da[k], sq[k]
                    e0, e1, e2, e3, e4, e5 = propagated_twist(E[k], r[k], tb[0], tb[1], tb[2], tb[3], tb[4], tb[5])
                    dtk[0], dtk[1], dtk[2], dtk[3], dtk[4], dtk[5] = e0, e1, e2, e3, e4, e5
                    f0, f1, f2, f3, f4, f5 = propagated_twist(E[k], r[k], ab[0], ab[1], ab[2], ab[3], ab[4], ab[5])
                    m0, m1, m2, m3, m4, m5 = motion_cross(e0, e1, e2, e3, e4, e5, sk[0], sk[1], sk[2], sk[3], sk[4],
                                                          sk[5])  # fmt: skip
                    dak[0], dak[1], dak[2] = f0 + m0, f1 + m1, f2 + m2
                    dak[3], dak[4], dak[5] = f3 + m3, f4 + m4, f5 + m5
                    wk = dw[k]
                    wk[0], wk[1], wk[2], wk[3], wk[4], wk[5] = wrench_change(masses[k], coms[k], Io[k], t[k], h[k],
                                                                             dtk, dak)  # fmt: skip
                # back through the subtree: δτ_k = p_kᵀ δw̃_k, δw̃_β += A_{k,β}ᵀ δw̃_k
                for i in range(first[J] + size[J] - 1, first[J], -1):
                    k = order[i]
                    for d in range(nvs[k]):
                        s = 0.0
                        for c in range(6):
                            s += S[k, c, d] * dw[k, c]
                        out[idx_v[k] + d, col] = s
                    add_transferred_wrench(E[k], r[k], dw[k], dw[parents[k]])
                # at J: δτ_J = p_Jᵀ δw̃_J + δp_Jᵀ w̃_J, and A_{J,β}ᵀ (δw̃_J + ξ ×* w̃_J) goes up
                for d in range(z):
                    s = 0.0
                    for c in range(6):
                        s += S[J, c, d] * wJ[c]
                    out[ivJ + d, col] = s
                if not wrt_v:
                    wt = w_tilde[J]
                    c0, c1, c2 = dS_dq(kinds, S, axes2, J, j)
                    out[ivJ, col] += c0 * wt[0] + c1 * wt[1] + c2 * wt[2]
                    f0, f1, f2, f3, f4, f5 = force_cross(x0, x1, x2, x3, x4, x5, wt[0], wt[1], wt[2], wt[3], wt[4],
                                                         wt[5])  # fmt: skip
                    wJ[0] += f0
                    wJ[1] += f1
                    wJ[2] += f2
                    wJ[3] += f3
                    wJ[4] += f4
                    wJ[5] += f5
                # J's ancestors: δw̃_β = A_{J,β}ᵀ δw̃_J, and on up (nothing else changes there)
                k = J
                g0, g1, g2, g3, g4, g5 = dw[J, 0], dw[J, 1], dw[J, 2], dw[J, 3], dw[J, 4], dw[J, 5]
                while parents[k] > 0:
                    g0, g1, g2, g3, g4, g5 = transferred_wrench(E[k], r[k], g0, g1, g2, g3, g4, g5)
                    k = parents[k]
                    ivk = idx_v[k]
                    for d in range(nvs[k]):
                        out[ivk + d, col] = (S[k, 0, d] * g0 + S[k, 1, d] * g1 + S[k, 2, d] * g2 + S[k, 3, d] * g3
                                             + S[k, 4, d] * g4 + S[k, 5, d] * g5)  # fmt: skip
    return 0


@njit(cache=True, inline="always")
def to_world(R, o, x0, x1, x2, x3, x4, x5, force):
    """A motion [ω; v] (force [n; f] with ``force``) in body k's frame at o_k, in the base frame at its origin:
    [R ω; R v + o × R ω] ([R n + o × R f; R f])."""
    a0, a1, a2 = R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2, R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2, \
        R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2  # fmt: skip
    b0, b1, b2 = R[0, 0] * x3 + R[0, 1] * x4 + R[0, 2] * x5, R[1, 0] * x3 + R[1, 1] * x4 + R[1, 2] * x5, \
        R[2, 0] * x3 + R[2, 1] * x4 + R[2, 2] * x5  # fmt: skip
    if force:
        return (a0 + o[1] * b2 - o[2] * b1, a1 + o[2] * b0 - o[0] * b2, a2 + o[0] * b1 - o[1] * b0, b0, b1, b2)
    return (a0, a1, a2, b0 + o[1] * a2 - o[2] * a1, b1 + o[2] * a0 - o[0] * a2, b2 + o[0] * a1 - o[1] * a0)


@njit(cache=True, inline="always")
def rigid_times(C, x0, x1, x2, x3, x4, x5):
    """M x for the rigid inertia C = (m, h, J upper triangle) of ``spatial.rigid_inertia_into`` (one body or a
    composite of bodies, in one frame)."""
    return rigid_inertia_times(C[0], C[1], C[2], C[3], C[4], C[5], C[6], C[7], C[8], C[9], x0, x1, x2, x3, x4, x5)


@njit(cache=True, inline="always")
def dot6(x, i, c, y0, y1, y2, y3, y4, y5):
    """x[i, :, c] · y."""
    return x[i, 0, c] * y0 + x[i, 1, c] * y1 + x[i, 2, c] * y2 + x[i, 3, c] * y3 + x[i, 4, c] * y4 + x[i, 5, c] * y5


@njit(cache=True)
def inverse_dynamics_derivatives_world(mi, mf, ws, v, a, dq, dv, M):
    """∂τ/∂q (tangent), ∂τ/∂q̇ and the GIM into dq, dv, M, Table 1 already run in ws, in O(n·d) with a few dot
    products per (body, ancestor) pair: the directions of ``inverse_dynamics_derivatives_step`` summed over subtrees
    in the base frame, where a change ξ of joint J moves every quantity of J's subtree without a transform.

    In the base frame (t_k, a_k, the Newton–Euler wrench w_k and the composite w̃_k of Table 1 carried there, M_k the
    body's inertia there, u = t_β and b = a_β of J's parent β, η = ξ ×ₘ u), the change of w_k is
    δw_k = ξ ×* w_k + M_k (η ×ₘ u − ξ ×ₘ b) − B_k η for q and B_k s + M_k ((t_J + u) ×ₘ s) for q̇ (s = p_J e_j),
    with B_k η = M_k (η ×ₘ t_k) + η ×* M_k t_k + t_k ×* M_k η.  For t_k = [ω; u], M_k = (m, h, J) and M_k t_k =
    [h_n; h_f], B_k = [[B_ωω, 0], [−2 [h_f ×], 0]] with B_ωω = −(J [ω×] + (J [ω×])ᵀ + u hᵀ + h uᵀ) + 2 (h·u) 1 −
    [h_n ×]: a linear η changes nothing (Jacobi's identity), so B_k is 12 numbers.  Summed over a subtree they need
    only the composites M̃_i (eq. 17, the CRBA's) and B̃_i; the term ξ ×* w̃_i cancels against δp_i = ξ ×ₘ p_i in
    δτ_i = δ(p_iᵀ w̃_i), so δτ_i = P_iᵀ (η ×ₘ u − ξ ×ₘ b) − Q_iᵀ η_ω for i in J's subtree, P_i = M̃_i p_i, Q_i the
    angular rows of B̃_iᵀ p_i (its linear rows are 0), and p_iᵀ δw̃_J above J.  The GIM is I_{iJ} = P_iᵀ p_J
    (eq. 16).  For joints whose p_k is fixed in the body (every kind but the universal joint, whose first axis turns
    with the parent: ``inverse_dynamics_derivatives_step`` serves it)."""
    # one allocation for the work arrays (each np.zeros of a call costs about 0.1 µs), held here while world_pass
    # indexes them
    buf = np.zeros(world_layout(mi[HEAD_NJ], mi[HEAD_Z])[4])
    world_pass(mi, mf, ws, v, a, dq, dv, M, buf)


@njit(cache=True, inline="always")
def world_layout(nj, z):
    """world_pass's work arrays in its buffer: (n6, nz, o2, o3, size), t_k, a_k, w̃_k from 0 in steps of n6, p_k and
    P_k from 4 n6 in steps of nz, Q_k after them, M̃_k at o2, B̃_k after it, the small scratch at o3."""
    n6, nz = nj * 6, nj * 6 * z
    o2 = 4 * n6 + 2 * nz + nj * 3 * z
    o3 = o2 + nj * 22
    return n6, nz, o2, o3, o3 + 25


@njit(cache=True, fastmath=FMA)
def world_pass(mi, mf, ws, v, a, dq, dv, M, buf):
    """``inverse_dynamics_derivatives_world`` on its work arrays in buf, zeros on entry."""
    mv = model_views(mi, mf)
    d_ = data_views(ws, mi)
    parents, idx_v, nvs = mv.parents, mv.idx_v, mv.nvs
    masses, coms, Io = mv.masses, mv.coms, mv.inertias_origin
    E, r, S, t, tdot, w_tilde, R, o = d_.E, d_.r, d_.S, d_.t, d_.tdot, d_.w_tilde, d_.oR, d_.op
    nj, z = len(parents), S.shape[2]
    world_poses_into(parents, E, r, R, o)
    order, first, size = preorder(parents)
    n6, nz, o2, o3, _ = world_layout(nj, z)
    buf = borrow(buf)  # the caller's: the work arrays' rows below take no reference (two atomic updates each)
    nu = buf[:n6].reshape((nj, 6))  # t_k, base frame
    acc = buf[n6 : 2 * n6].reshape((nj, 6))  # a_k, base frame
    F = buf[2 * n6 : 3 * n6].reshape((nj, 6))  # w̃_k, base frame
    Sw = buf[4 * n6 : 4 * n6 + nz].reshape((nj, 6, z))  # p_k, base frame
    P = buf[4 * n6 + nz : 4 * n6 + 2 * nz].reshape((nj, 6, z))  # M̃_k p_k
    Q = buf[4 * n6 + 2 * nz : o2].reshape((nj, 3, z))  # B̃_kᵀ p_k, angular rows
    C = buf[o2 : o2 + nj * 10].reshape((nj, 10))  # M̃_k, base frame, as (m, h, J)
    B = buf[o2 + nj * 10 : o3].reshape((nj, 12))  # B̃_k as (B_ωω row by row, h_f): its blocks that are not 0
    Rt, Cb, ak = buf[o3 : o3 + 9].reshape((3, 3)), buf[o3 + 9 : o3 + 19], buf[o3 + 19 : o3 + 25]
    dq[:, :] = 0.0
    dv[:, :] = 0.0
    M[:, :] = 0.0
    for c in range(6):
        acc[0, c] = tdot[0, c]
    for k in range(1, nj):
        Rk, ok, tk, td = R[k], o[k], t[k], tdot[k]
        nu[k, 0], nu[k, 1], nu[k, 2], nu[k, 3], nu[k, 4], nu[k, 5] = to_world(
            Rk, ok, tk[0], tk[1], tk[2], tk[3], tk[4], tk[5], False
        )
        spatial_acceleration(tk, td, ak)
        acc[k, 0], acc[k, 1], acc[k, 2], acc[k, 3], acc[k, 4], acc[k, 5] = to_world(
            Rk, ok, ak[0], ak[1], ak[2], ak[3], ak[4], ak[5], False
        )
        wt = w_tilde[k]
        F[k, 0], F[k, 1], F[k, 2], F[k, 3], F[k, 4], F[k, 5] = to_world(
            Rk, ok, wt[0], wt[1], wt[2], wt[3], wt[4], wt[5], True
        )
        for d in range(nvs[k]):
            Sw[k, 0, d], Sw[k, 1, d], Sw[k, 2, d], Sw[k, 3, d], Sw[k, 4, d], Sw[k, 5, d] = to_world(
                Rk, ok, S[k, 0, d], S[k, 1, d], S[k, 2, d], S[k, 3, d], S[k, 4, d], S[k, 5, d], False
            )
        # M_k in the base frame: (m, h, J) of the body moved by (R_kᵀ, o_k), as eq. 17 moves a child to its parent
        rigid_inertia_into(masses[k], coms[k], Io[k], Cb)
        for i in range(3):
            for j in range(3):
                Rt[i, j] = Rk[j, i]
        add_transformed_rigid_inertia(Rt, ok, Cb, C[k])
        # B_k = [[B_ωω, 0], [−2 [h_f ×], 0]] (docstring): B_ωω = −(A + Aᵀ + u hᵀ + h uᵀ) + 2 (h·u) 1 − [h_n ×],
        # A = J [ω×] (its columns w2 J₁ − w1 J₂, w0 J₂ − w2 J₀, w1 J₀ − w0 J₁), h_n, h_f = M_k t_k
        Ck = C[k]
        w0, w1, w2, u0, u1, u2 = nu[k, 0], nu[k, 1], nu[k, 2], nu[k, 3], nu[k, 4], nu[k, 5]
        c0, c1, c2 = Ck[1], Ck[2], Ck[3]
        J00, J01, J02, J11, J12, J22 = Ck[4], Ck[5], Ck[6], Ck[7], Ck[8], Ck[9]
        A00, A10, A20 = w2 * J01 - w1 * J02, w2 * J11 - w1 * J12, w2 * J12 - w1 * J22
        A01, A11, A21 = w0 * J02 - w2 * J00, w0 * J12 - w2 * J01, w0 * J22 - w2 * J02
        A02, A12, A22 = w1 * J00 - w0 * J01, w1 * J01 - w0 * J11, w1 * J02 - w0 * J12
        hu = 2.0 * (c0 * u0 + c1 * u1 + c2 * u2)
        h0, h1, h2, h3, h4, h5 = rigid_times(Ck, w0, w1, w2, u0, u1, u2)
        Bk = B[k]
        Bk[0] = hu - 2.0 * (A00 + u0 * c0)
        Bk[4] = hu - 2.0 * (A11 + u1 * c1)
        Bk[8] = hu - 2.0 * (A22 + u2 * c2)
        s01 = -(A01 + A10 + u0 * c1 + c0 * u1)
        s02 = -(A02 + A20 + u0 * c2 + c0 * u2)
        s12 = -(A12 + A21 + u1 * c2 + c1 * u2)
        Bk[1], Bk[3] = s01 + h2, s01 - h2  # − [h_n ×]
        Bk[2], Bk[6] = s02 - h1, s02 + h1
        Bk[5], Bk[7] = s12 + h0, s12 - h0
        Bk[9], Bk[10], Bk[11] = h3, h4, h5
    # composites M̃_k and B̃_k (children after parents: parents[k] < k), then P_k and Q_k
    for k in range(nj - 1, 0, -1):
        b = parents[k]
        if b > 0:
            for c in range(10):
                C[b, c] += C[k, c]
            for c in range(12):
                B[b, c] += B[k, c]
        for d in range(nvs[k]):
            P[k, 0, d], P[k, 1, d], P[k, 2, d], P[k, 3, d], P[k, 4, d], P[k, 5, d] = rigid_times(
                C[k], Sw[k, 0, d], Sw[k, 1, d], Sw[k, 2, d], Sw[k, 3, d], Sw[k, 4, d], Sw[k, 5, d]
            )
            # Q = B̃ᵀ p, angular rows: B_ωωᵀ p_ω + 2 h_f × p_v
            Bk = B[k]
            x0, x1, x2, x3, x4, x5 = Sw[k, 0, d], Sw[k, 1, d], Sw[k, 2, d], Sw[k, 3, d], Sw[k, 4, d], Sw[k, 5, d]
            Q[k, 0, d] = Bk[0] * x0 + Bk[3] * x1 + Bk[6] * x2 + 2.0 * (Bk[10] * x5 - Bk[11] * x4)
            Q[k, 1, d] = Bk[1] * x0 + Bk[4] * x1 + Bk[7] * x2 + 2.0 * (Bk[11] * x3 - Bk[9] * x5)
            Q[k, 2, d] = Bk[2] * x0 + Bk[5] * x1 + Bk[8] * x2 + 2.0 * (Bk[9] * x4 - Bk[10] * x3)
    for J in range(1, nj):
        bJ, ivJ = parents[J], idx_v[J]
        u0, u1, u2, u3, u4, u5 = nu[bJ, 0], nu[bJ, 1], nu[bJ, 2], nu[bJ, 3], nu[bJ, 4], nu[bJ, 5]
        b0, b1, b2, b3, b4, b5 = acc[bJ, 0], acc[bJ, 1], acc[bJ, 2], acc[bJ, 3], acc[bJ, 4], acc[bJ, 5]
        for j in range(nvs[J]):
            col = ivJ + j
            x0, x1, x2, x3, x4, x5 = Sw[J, 0, j], Sw[J, 1, j], Sw[J, 2, j], Sw[J, 3, j], Sw[J, 4, j], Sw[J, 5, j]
            # q: η = ξ ×ₘ u, g = η ×ₘ u − ξ ×ₘ b
            e0, e1, e2, e3, e4, e5 = motion_cross(x0, x1, x2, x3, x4, x5, u0, u1, u2, u3, u4, u5)
            g0, g1, g2, g3, g4, g5 = motion_cross(e0, e1, e2, e3, e4, e5, u0, u1, u2, u3, u4, u5)
            c0, c1, c2, c3, c4, c5 = motion_cross(x0, x1, x2, x3, x4, x5, b0, b1, b2, b3, b4, b5)
            g0, g1, g2, g3, g4, g5 = g0 - c0, g1 - c1, g2 - c2, g3 - c3, g4 - c4, g5 - c5
            # q̇: s = ξ, g' = (t_J + u) ×ₘ s
            k0, k1, k2 = nu[J, 0] + u0, nu[J, 1] + u1, nu[J, 2] + u2
            k3, k4, k5 = nu[J, 3] + u3, nu[J, 4] + u4, nu[J, 5] + u5
            p0, p1, p2, p3, p4, p5 = motion_cross(k0, k1, k2, k3, k4, k5, x0, x1, x2, x3, x4, x5)
            for ii in range(first[J], first[J] + size[J]):
                i = order[ii]
                iv = idx_v[i]
                for c in range(nvs[i]):
                    Pg = dot6(P, i, c, g0, g1, g2, g3, g4, g5)
                    dq[iv + c, col] = Pg - (Q[i, 0, c] * e0 + Q[i, 1, c] * e1 + Q[i, 2, c] * e2)
                    dv[iv + c, col] = (
                        Q[i, 0, c] * x0 + Q[i, 1, c] * x1 + Q[i, 2, c] * x2 + dot6(P, i, c, p0, p1, p2, p3, p4, p5)
                    )
                    Mij = dot6(P, i, c, x0, x1, x2, x3, x4, x5)
                    M[iv + c, col] = Mij
                    M[col, iv + c] = Mij
            if bJ == 0:
                continue
            # above J: δw̃_J = ξ ×* w̃_J + M̃_J g − B̃_J η (q), B̃_J s + M̃_J g' (q̇)
            FJ = F[J]
            y0, y1, y2, y3, y4, y5 = force_cross(x0, x1, x2, x3, x4, x5, FJ[0], FJ[1], FJ[2], FJ[3], FJ[4], FJ[5])
            m0, m1, m2, m3, m4, m5 = rigid_times(C[J], g0, g1, g2, g3, g4, g5)
            z0, z1, z2, z3, z4, z5 = rigid_times(C[J], p0, p1, p2, p3, p4, p5)
            # B̃_J η = [B_ωω η_ω; −2 h_f × η_ω], B̃_J s likewise
            Bj = B[J]
            f0, f1, f2 = Bj[9], Bj[10], Bj[11]
            y0 += m0 - (Bj[0] * e0 + Bj[1] * e1 + Bj[2] * e2)
            y1 += m1 - (Bj[3] * e0 + Bj[4] * e1 + Bj[5] * e2)
            y2 += m2 - (Bj[6] * e0 + Bj[7] * e1 + Bj[8] * e2)
            y3 += m3 + 2.0 * (f1 * e2 - f2 * e1)
            y4 += m4 + 2.0 * (f2 * e0 - f0 * e2)
            y5 += m5 + 2.0 * (f0 * e1 - f1 * e0)
            z0 += Bj[0] * x0 + Bj[1] * x1 + Bj[2] * x2
            z1 += Bj[3] * x0 + Bj[4] * x1 + Bj[5] * x2
            z2 += Bj[6] * x0 + Bj[7] * x1 + Bj[8] * x2
            z3 -= 2.0 * (f1 * x2 - f2 * x1)
            z4 -= 2.0 * (f2 * x0 - f0 * x2)
            z5 -= 2.0 * (f0 * x1 - f1 * x0)
            i = bJ
            while i > 0:
                iv = idx_v[i]
                for c in range(nvs[i]):
                    dq[iv + c, col] = dot6(Sw, i, c, y0, y1, y2, y3, y4, y5)
                    dv[iv + c, col] = dot6(Sw, i, c, z0, z1, z2, z3, z4, z5)
                i = parents[i]
    return 0


@njit(cache=True)
def gim_inverse_times(mi, mf, ws, X, chunk):
    """X ← GIM⁻¹ X in place (X: nv x m) by the UDUᵀ factors in ws (Table 3 on ``chunk`` columns at a time, so that
    the η_k, μ_k workspaces stay njoints x chunk x 6)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    nv, m, nj = X.shape[0], X.shape[1], len(mv.parents)
    for c0 in range(0, m, chunk):
        w = min(chunk, m - c0)
        B = np.empty((nv, w))
        eta = np.empty((nj, w, 6))
        for i in range(nv):
            for j in range(w):
                B[i, j] = X[i, c0 + j]
        # the solve reads φ_k before it writes q̈_k of the same rows, and η before μ: one array for each pair
        udut_solve(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi,
                   dv.I_hat_inv, B, eta, eta, B, dv.phi_hat)  # fmt: skip
        for i in range(nv):
            for j in range(w):
                X[i, c0 + j] = B[i, j]


@njit(cache=True)
def table3_forward(mi, mf, ws, d1, d2, d3):
    """d3 = GIM⁻¹ by Table 3 on the identity (the UDUᵀ factors in ws), then d1, d2 ← −GIM⁻¹ d1, −GIM⁻¹ d2: by dense
    products up to ``DENSE_PRODUCT`` DOF, by Table 3 on their columns above (O(n) per column)."""
    nv = d1.shape[0]
    chunk = min(nv, 32)
    for i in range(nv):
        for j in range(nv):
            d3[i, j] = 1.0 if i == j else 0.0
    gim_inverse_times(mi, mf, ws, d3, chunk)
    for i in range(nv):  # symmetric to rounding: symmetrised, as gim_inverse
        for j in range(i + 1, nv):
            d3[i, j] = d3[j, i] = 0.5 * (d3[i, j] + d3[j, i])
    if nv <= DENSE_PRODUCT:  # BLAS products
        d1[:, :] = -np.dot(d3, d1)
        d2[:, :] = -np.dot(d3, d2)
        return
    gim_inverse_times(mi, mf, ws, d1, chunk)
    gim_inverse_times(mi, mf, ws, d2, chunk)
    for i in range(nv):
        for j in range(nv):
            d1[i, j] = -d1[i, j]
            d2[i, j] = -d2[i, j]


SMALL_INVERSE = 48
"""Up to this nv, the forward derivatives factor the GIM = Lᵀ L for q̈ and GIM⁻¹ (plain loops on the tree's
sparsity: no copies, no workspace queries), or, should a pivot fail, invert it by ``dense.cholesky_inverse``; above,
LAPACK's inverse, whose blocked kernels win there."""


@njit(cache=True)
def dense_forward(d1, d2, d3):
    """The GIM in d3 (nv ≤ ``DENSE_PRODUCT``): d3 ← GIM⁻¹ (Cholesky up to ``SMALL_INVERSE`` DOF, LAPACK above; as
    accurate as any route: cond(GIM) ε), then d1, d2 ← −GIM⁻¹ d1, −GIM⁻¹ d2 (``negated_products``)."""
    nv = d1.shape[0]
    work = np.empty((nv, nv))
    if not (nv <= SMALL_INVERSE and cholesky_inverse(d3, work)):
        d3[:, :] = np.linalg.inv(d3)
        for i in range(nv):
            for j in range(i + 1, nv):
                d3[i, j] = d3[j, i] = 0.5 * (d3[i, j] + d3[j, i])
    negated_products(d1, d2, d3, work)


@njit(cache=True)
def negated_products(d1, d2, d3, work):
    """d1, d2 ← −d3 d1, −d3 d2 by BLAS products into one scratch: at these sizes faster than Table 3 on 3 nv
    columns."""
    nv = d1.shape[0]
    for d in (d1, d2):
        np.dot(d3, d, work)
        for i in range(nv):
            for j in range(nv):
                d[i, j] = -work[i, j]


@njit(cache=True)
def factored_forward(lam, d1, d2, d3, H):
    """d3 ← GIM⁻¹ = L⁻¹ L⁻ᵀ = Yᵀ Y, Y = L⁻ᵀ (the factor of ``gim_forward_entry`` in H, λ = ``dof_parent``; H is
    scratch after), then d1, d2 ← −GIM⁻¹ d1, −GIM⁻¹ d2 (``negated_products``): BLAS products, faster here than two
    sweeps of the λ-paths on each of d1, d2 (short rows)."""
    nv = d1.shape[0]
    for i in range(nv):
        for j in range(nv):
            d3[i, j] = 1.0 if i == j else 0.0
    lt_solve(H, lam, d3)
    np.dot(d3.T, d3, H)
    for i in range(nv):  # symmetric to the last bit, as Pinocchio's Minv
        for j in range(i + 1, nv):
            H[i, j] = H[j, i]
    negated_products(d1, d2, H, d3)
    for i in range(nv):
        for j in range(nv):
            d3[i, j] = H[i, j]


@njit(cache=True)
def derivatives_entry(mi, mf, ws, q, v, x, with_fext, forward, d1, d2, d3):
    """The dynamics' derivatives at one state into d1, d2, d3 (nv x nv each); a status of ``rnea_entry`` or
    ``aba_entry``.  One kernel for both (each compile links the recursions it calls, the package's longest):

    - inverse (``forward`` False), x = q̈: ∂τ/∂q, ∂τ/∂q̇ after Table 1 (``inverse_dynamics_derivatives_world``, or
      ``inverse_dynamics_derivatives_step`` on a model with a universal joint), and ∂τ/∂q̈ = GIM (eq. 16–17);
    - forward, x = τ: q̈, Table 1 and its derivatives at q̈, then ∂q̈/∂y = −GIM⁻¹ ∂τ/∂y (τ(q, q̇, q̈(q, q̇, τ)) = τ)
      and ∂q̈/∂τ = GIM⁻¹.  Up to ``SMALL_INVERSE`` DOF, q̈ and GIM⁻¹ from one factor GIM = Lᵀ L
      (``gim_forward_entry``, ``factored_forward``); above, q̈ by ``aba_entry`` and GIM⁻¹ by ``dense_forward`` up to
      ``DENSE_PRODUCT`` DOF, ``table3_forward`` beyond.  q̈ stays in ws."""
    nv = d1.shape[0]
    factored = False
    if forward:
        n = nv if nv <= SMALL_INVERSE else 0
        H = np.empty((n, n))  # room for the factor up to SMALL_INVERSE DOF
        status, factored = gim_forward_entry(mi, mf, ws, q, v, x, with_fext, H)
        if status:
            return status
        a = data_views(ws, mi).ddq.copy()
        inverse_dynamics_step(mi, mf, ws, v, a, with_fext, True)  # Table 1 at q̈, on the kinematics left in ws
    else:
        a = x
        status = rnea_entry(mi, mf, ws, q, v, a, with_fext)
        if status:
            return status
    with_gim = tree_derivatives(mi, mf, ws, q, v, a, d1, d2, d3, not forward)
    if not forward:
        return 0
    if factored:
        factored_forward(model_views(mi, mf).dof_parent, d1, d2, d3, H)
    else:
        forward_from_inverse(mi, mf, ws, d1, d2, d3, with_gim)
    copy_into(data_views(ws, mi).ddq, a)
    return 0


@njit(cache=True)
def tree_derivatives(mi, mf, ws, q, v, a, d1, d2, d3, need_gim):
    """∂τ/∂q, ∂τ/∂q̇ into d1, d2 after Table 1 at (q, q̇, q̈ = a): ``inverse_dynamics_derivatives_world`` (with the GIM
    into d3), or on a model with a universal joint ``inverse_dynamics_derivatives_step`` (the GIM by the CRBA if
    ``need_gim``).  Whether the GIM is in d3."""
    if subspaces_fixed_in_bodies(model_views(mi, mf).kinds):  # O(n·d) in the base frame, with the GIM
        inverse_dynamics_derivatives_world(mi, mf, ws, v, a, d1, d2, d3)
        return True
    inverse_dynamics_derivatives_step(mi, mf, ws, v, a, d1, d2)  # an axis turning with the parent: one at a time
    if need_gim:
        crba_entry(mi, mf, ws, q, d3)
    return need_gim


@njit(cache=True)
def forward_from_inverse(mi, mf, ws, d1, d2, d3, with_gim):
    """d1, d2 ← −GIM⁻¹ d1, −GIM⁻¹ d2 and d3 ← GIM⁻¹: ``dense_forward`` on the GIM in d3 (``with_gim``) up to
    ``DENSE_PRODUCT`` DOF, ``table3_forward`` on the UDUᵀ factors in ws otherwise."""
    if with_gim and d1.shape[0] <= DENSE_PRODUCT:
        dense_forward(d1, d2, d3)
    else:
        table3_forward(mi, mf, ws, d1, d2, d3)


@njit(cache=True)
def derivatives_fast(mb, ws, q, v, x, forward, out):
    """derivatives_entry without external forces, on the model buffer (the fast path); the three results into out
    (3, nv, nv): one array to allocate and dispatch (0.4 µs less a call than three)."""
    return on_model_buffer(derivatives_entry, mb, ws, (q, v, x, False, forward, out[0], out[1], out[2]))


@njit(cache=True, nogil=True)
def derivatives_rows(mi, mf, ws, lw, fixed, Q, V, X, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch of derivatives (``protocol.run_chunks``); fixed = (with_fext, forward); out
    (B, 3 nv²): the three nv x nv matrices of each row."""
    Q, V, X, out, out2 = borrowed(Q, V, X, out, out2)
    nv = mi[HEAD_NV]
    n2 = nv * nv
    status = 0
    for i in range(lo, hi):
        row = out[i]
        s = derivatives_entry(mi, mf, ws, Q[i], V[i], X[i], fixed[0], fixed[1], row[:n2].reshape((nv, nv)),
                              row[n2 : 2 * n2].reshape((nv, nv)), row[2 * n2 :].reshape((nv, nv)))  # fmt: skip
        status = s if s else status
    return status


# One signature each, the flags as runtime booleans: typed from their callers with literal flags (True from the
# closed loops' derivatives, a bool from the tree's) each compiled twice.
compile_on_first_use(tree_derivatives, types.boolean(MI, MF, VEC, VEC, VEC, VEC, MAT, MAT, MAT, types.boolean))
compile_on_first_use(forward_from_inverse, types.none(MI, MF, VEC, MAT, MAT, MAT, types.boolean))
DERIVATIVES = Entry(
    derivatives_entry,
    types.int64(MI, MF, VEC, VEC, VEC, VEC, types.boolean, types.boolean, MAT, MAT, MAT),
    derivatives_fast,
    types.int64(MB, VEC, VEC, VEC, VEC, types.boolean, MATS),
    derivatives_rows,
    ("q", "v", "x"),
    after=(aba_entry, rnea_entry, crba_entry, tree_derivatives, forward_from_inverse),
    group="derivatives",
    what="the dynamics' derivatives (Table 1 differentiated)",
    seconds=120,
    fixed=types.Tuple((types.boolean, types.boolean)),  # (with_fext, forward)
    rows_group="derivative_batches",
    derivatives=True,
)
