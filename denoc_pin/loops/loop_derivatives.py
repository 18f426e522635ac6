"""Analytical derivatives of the closed-loop forward dynamics (Schiehlen eq. 19–20 differentiated;
docs/derivatives.md#closed-loops).

The closed mechanism's accelerations and reactions solve

    ID(q, q̇, q̈) = τ + J(q)ᵀ λ,     c(q, q̇, q̈) = J q̈ + J̇ q̇ + 2 k_d J q̇ + k_p² r(q) = 0          (eq. 19)

with ID the tree's inverse dynamics (Table 1).  A change of any input x ∈ {q, q̇, τ} then changes them by

    GIM δq̈ − Jᵀ δλ = δτ − (∂ID/∂q − ∂(Jᵀλ)/∂q) δq − ∂ID/∂q̇ δq̇,    J δq̈ = −∂c/∂q δq − ∂c/∂q̇ δq̇

the reaction system of eq. 20 with other right-hand sides: δλ = B δx, N_c δx = Bᵀ(−∂c) − Yᵀ(the tree's change),
δq̈ = GIM⁻¹(…) + Y δx, with the same basis B of J's range, Y = GIM⁻¹ Jᵀ B and N_c = Bᵀ J Y as the dynamics.

∂ID/∂q and ∂ID/∂q̇ are the tree's derivatives (``algorithms.derivatives``).  ``loop_derivatives`` gives the rest:
∂c/∂q, ∂c/∂q̇ and ∂(Jᵀλ)/∂q, from how one direction (J, j) moves the two cut points.  In the base frame, with V_b,
A_b the twist and spatial acceleration of body b, V_J that of joint J's body, ξ = the direction's screw and
W, Y its changes δt_J, δa_J (``joint_direction``) carried to the base frame, every body b of J's subtree changes by

    δV_b = ξ ×ₘ V_b + W,   δA_b = ξ ×ₘ A_b + Y + W ×ₘ (V_b − V_J),   and moves rigidly by ξ          (q)
    δV_b = W,              δA_b = Y + W ×ₘ (V_b − V_J)                                             (q̇)

and the rows of c, the residual r and the reaction wrenches follow by the chain rule through the cut's own
formulas (``loop_kinematics.loop_rows``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from ..algorithms.derivatives import (
    factored_forward,
    forward_from_inverse,
    joint_direction,
    spatial_acceleration,
    to_world,
    tree_derivatives,
)
from ..algorithms.inverse import inverse_dynamics_step
from ..algorithms.protocol import CB, MAT, MB, MF, MI, VEC, Entry, borrowed, on_model_buffer
from ..core import cuts as ck
from ..core.dense import cholesky_in_place, cholesky_solve_rows, symmetric_product_into
from ..core.joints import dS_dq
from ..core.layout import FMA, HEAD_NV, LW_M, LW_RANK, borrow, data_views, leading, loop_views, model_views
from ..core.memory import copy_into
from ..core.spatial import (
    add3,
    cross3,
    dot3,
    log3,
    motion_cross,
    mtv3,
    mv3,
    propagated_twist,
    sub3,
)
from .loop_entries import CFD, cfd_solve
from .loop_kinematics import cut_count, cut_frames, selected

__all__ = ["CFD_DERIVATIVES", "loop_derivatives"]

ZERO3 = (0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def scaled3(a, s):
    return a[0] * s, a[1] * s, a[2] * s


@njit(cache=True, inline="always")
def row6(a, i):
    """Row i of an (n, 6) array as six numbers: a row slice of a local array takes a reference (two atomic updates)
    each time it is made."""
    return a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5]


@njit(cache=True, inline="always")
def in_c1(Rc1, e1, x, dx):
    """δ(Rc1ᵀ x) = Rc1ᵀ (δx − ε₁ × x): the change of a world vector's C1 components, C1 turned by ε₁."""
    return mtv3(Rc1, sub3(dx, cross3(e1, x)))


@njit(cache=True, inline="always")
def point_motion(V, A, p):
    """(ω, ṗ, α, p̈) of the point p of a body with twist V and spatial acceleration A (base frame, at its origin):
    ṗ = v + ω × p, p̈ = a + α × p + ω × ṗ."""
    om, al = (V[0], V[1], V[2]), (A[0], A[1], A[2])
    pd = add3((V[3], V[4], V[5]), cross3(om, p))
    pdd = add3(add3((A[3], A[4], A[5]), cross3(al, p)), cross3(om, pd))
    return om, pd, al, pdd


@njit(cache=True, inline="always")
def point_change(dV, dA, p, om, pd, al, dp):
    """(δω, δṗ, δα, δp̈) of ``point_motion`` for changes δV, δA of the body's motion and δp of the point."""
    dom, dal = (dV[0], dV[1], dV[2]), (dA[0], dA[1], dA[2])
    dpd = add3(add3((dV[3], dV[4], dV[5]), cross3(dom, p)), cross3(om, dp))
    dpdd = add3(add3(add3((dA[3], dA[4], dA[5]), cross3(dal, p)), cross3(al, dp)),
                add3(cross3(dom, pd), cross3(om, dpd)))  # fmt: skip
    return dom, dpd, dal, dpdd


@njit(cache=True, inline="always")
def body_change(in_subtree, wrt_v, xi, W, Y, V, A, VJ, p):
    """(δV, δA, δp) of a body (twist V, acceleration A, a point p of it) for one direction of joint J (module
    docstring): zero outside J's subtree."""
    if not in_subtree:
        z6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return z6, z6, ZERO3
    c = motion_cross(W[0], W[1], W[2], W[3], W[4], W[5], V[0] - VJ[0], V[1] - VJ[1], V[2] - VJ[2], V[3] - VJ[3],
                     V[4] - VJ[4], V[5] - VJ[5])  # fmt: skip
    if wrt_v:
        dA = (Y[0] + c[0], Y[1] + c[1], Y[2] + c[2], Y[3] + c[3], Y[4] + c[4], Y[5] + c[5])
        return W, dA, ZERO3
    xv = motion_cross(xi[0], xi[1], xi[2], xi[3], xi[4], xi[5], V[0], V[1], V[2], V[3], V[4], V[5])
    xa = motion_cross(xi[0], xi[1], xi[2], xi[3], xi[4], xi[5], A[0], A[1], A[2], A[3], A[4], A[5])
    dV = (xv[0] + W[0], xv[1] + W[1], xv[2] + W[2], xv[3] + W[3], xv[4] + W[4], xv[5] + W[5])
    dA = (xa[0] + Y[0] + c[0], xa[1] + Y[1] + c[1], xa[2] + Y[2] + c[2], xa[3] + Y[3] + c[3], xa[4] + Y[4] + c[4],
          xa[5] + Y[5] + c[5])  # fmt: skip
    return dV, dA, add3((xi[3], xi[4], xi[5]), cross3((xi[0], xi[1], xi[2]), p))


@njit(cache=True, inline="always")
def log_change(lg, d):
    """δ log R = J_l(φ)⁻¹ d for δR = [d ×] R, φ = log R: J_l⁻¹ = 1 − ½ [φ ×] + (1 − (θ/2) cot(θ/2))/θ² [φ ×]²."""
    th = math.sqrt(dot3(lg, lg))
    k = 1.0 / 12.0 + th * th / 720.0 if th < 1e-4 else (1.0 - 0.5 * th / math.tan(0.5 * th)) / (th * th)
    c1 = cross3(lg, d)
    c2 = cross3(lg, c1)
    return d[0] - 0.5 * c1[0] + k * c2[0], d[1] - 0.5 * c1[1] + k * c2[1], d[2] - 0.5 * c1[2] + k * c2[2]


@njit(cache=True, fastmath=FMA)
def loop_derivatives(mi, mf, ws, cb, lw, v, a, lam, kp, kd, Cq, Cv, G):
    """∂c/∂q (tangent), ∂c/∂q̇ (m x nv) into Cq, Cv and ∂(Jᵀλ)/∂q (nv x nv, λ held) into G, at the state of ws and
    lw: Table 1 run at (q, q̇, q̈ = a) (t, ṫ), J and the world poses of ``loop_step``.  One direction
    at a time over the joints above each cut's two bodies (module docstring), O(m d²) for a depth d."""
    mv, dv, lv = model_views(mi, mf), data_views(ws, mi), loop_views(lw, mi)
    parents, kinds, idx_v, nvs, axes2 = mv.parents, mv.kinds, mv.idx_v, mv.nvs, mv.axes2
    E, r, S, t, tdot, R, o, Jm = dv.E, dv.r, dv.S, dv.t, dv.tdot, dv.oR, dv.op, lv.J
    nj, nv = len(parents), Jm.shape[1]
    motions = np.zeros((4, nj, 6))  # one allocation: t_k and a_k in the base frame, a_k in frame k, p_k θ̇_k
    Vw, Aw, acc, sq = motions[0], motions[1], motions[2], motions[3]
    Sw = np.empty((nv, 6))  # p_k's columns in the base frame
    for c in range(6):
        acc[0, c] = Aw[0, c] = tdot[0, c]
    for k in range(1, nj):
        tk = t[k]
        spatial_acceleration(tk, tdot[k], acc[k])
        Vw[k, 0], Vw[k, 1], Vw[k, 2], Vw[k, 3], Vw[k, 4], Vw[k, 5] = to_world(R[k], o[k], tk[0], tk[1], tk[2], tk[3],
                                                                              tk[4], tk[5], False)  # fmt: skip
        ak = acc[k]
        Aw[k, 0], Aw[k, 1], Aw[k, 2], Aw[k, 3], Aw[k, 4], Aw[k, 5] = to_world(R[k], o[k], ak[0], ak[1], ak[2], ak[3],
                                                                              ak[4], ak[5], False)  # fmt: skip
        for d in range(nvs[k]):
            for c in range(6):
                sq[k, c] += S[k, c, d] * v[idx_v[k] + d]
            Sw[idx_v[k] + d, :] = to_world(R[k], o[k], S[k, 0, d], S[k, 1, d], S[k, 2, d], S[k, 3, d], S[k, 4, d],
                                           S[k, 5, d], False)  # fmt: skip
    mark = np.zeros(nj, dtype=np.int64)
    changes = np.empty((2, 6))
    dtJ, daJ = changes[0], changes[1]
    Rc1, Rc2, R12, sel = lv.Rc1, lv.Rc2, lv.R12, lv.sel  # loop_step's scratch, its rows done
    Cq[:, :] = 0.0
    Cv[:, :] = 0.0
    G[:, :] = 0.0
    cb = borrow(cb)  # the caller's: its cut rows and their slices take no reference
    kp2, kd2 = kp * kp, 2.0 * kd
    for ci in range(cb.shape[0]):
        c = cb[ci]
        b1, b2, kind, row0 = int(c[ck.P_BODY1]), int(c[ck.P_BODY2]), int(c[ck.P_KIND]), int(c[ck.P_ROW])
        if kind == ck.CUT_COUPLING:  # c = J q̈ + 2 kd J q̇ + kp² r with J constant and ∂r/∂q = J
            for k in range(nv):
                Cq[row0, k] = kp2 * Jm[row0, k]
                Cv[row0, k] = kd2 * Jm[row0, k]
            continue
        m = cut_count(kind)
        univ = kind == ck.CUT_UNIVERSAL
        pc1, pc2, ax, ax2, B1, B2, u2 = cut_frames(c, R, o, kind, Rc1, Rc2, R12, sel)
        U2, Ur = mv3(Rc2, ax2), mv3(Rc2, ax)  # the universal's second axis, and C2's copy of the axis, in the world
        lg = log3(R12)
        V1, A1, V2, A2 = row6(Vw, b1), row6(Aw, b1), row6(Vw, b2), row6(Aw, b2)
        om1, pd1, al1, pdd1 = point_motion(V1, A1, pc1)
        om2, pd2, al2, pdd2 = point_motion(V2, A2, pc2)
        w1 = mtv3(Rc1, om1)
        d_om, d_v = mtv3(Rc1, sub3(om2, om1)), mtv3(Rc1, sub3(pd2, pd1))
        dd_a = sub3(mtv3(Rc1, sub3(al2, al1)), cross3(w1, d_om))
        g_u = cross3(cross3(d_om, u2), ax)  # the universal's ṅ = (Δω × u₂) × axis
        # the reaction selᵀ λ (C1) as base-frame wrenches on link2 (W2) and link1 (W1 = its opposite)
        nc, fc = ZERO3, ZERO3
        for i in range(m):
            li = lam[row0 + i]
            nc = add3(nc, (sel[i, 0] * li, sel[i, 1] * li, sel[i, 2] * li))
            fc = add3(fc, (sel[i, 3] * li, sel[i, 4] * li, sel[i, 5] * li))
        nw, fw = mv3(Rc1, nc), mv3(Rc1, fc)
        W2n, W1n = add3(nw, cross3(pc2, fw)), add3(nw, cross3(pc1, fw))
        k = b1
        while k > 0:
            mark[k] |= 1
            k = parents[k]
        k = b2
        while k > 0:
            mark[k] |= 2
            k = parents[k]
        for side in range(2):
            J = b1 if side == 0 else b2
            while J > 0:
                flags = mark[J]
                if side == 1 and flags & 1:
                    break  # on both paths: done with b1's
                in1, in2 = (flags & 1) != 0, (flags & 2) != 0
                bJ, ivJ = parents[J], idx_v[J]
                tb, ab, VJ, sJ = t[bJ], row6(acc, bJ), row6(Vw, J), row6(sq, J)
                xt = propagated_twist(E[J], r[J], tb[0], tb[1], tb[2], tb[3], tb[4], tb[5])
                xa = propagated_twist(E[J], r[J], ab[0], ab[1], ab[2], ab[3], ab[4], ab[5])
                for j in range(nvs[J]):
                    col = ivJ + j
                    xi = (Sw[col, 0], Sw[col, 1], Sw[col, 2], Sw[col, 3], Sw[col, 4], Sw[col, 5])
                    xw = (xi[0], xi[1], xi[2])
                    for wrt_v in (False, True):
                        joint_direction(kinds, S, axes2, J, j, wrt_v, v, a, ivJ, t[J], sJ, xt, xa, dtJ, daJ)
                        W = to_world(R[J], o[J], dtJ[0], dtJ[1], dtJ[2], dtJ[3], dtJ[4], dtJ[5], False)
                        Y = to_world(R[J], o[J], daJ[0], daJ[1], daJ[2], daJ[3], daJ[4], daJ[5], False)
                        dV1, dA1, dp1 = body_change(in1, wrt_v, xi, W, Y, V1, A1, VJ, pc1)
                        dV2, dA2, dp2 = body_change(in2, wrt_v, xi, W, Y, V2, A2, VJ, pc2)
                        dom1, dpd1, dal1, dpdd1 = point_change(dV1, dA1, pc1, om1, pd1, al1, dp1)
                        dom2, dpd2, dal2, dpdd2 = point_change(dV2, dA2, pc2, om2, pd2, al2, dp2)
                        e1 = xw if in1 and not wrt_v else ZERO3  # the turn of C1, and of C2
                        e2 = xw if in2 and not wrt_v else ZERO3
                        dw1 = in_c1(Rc1, e1, om1, dom1)
                        dd_om = in_c1(Rc1, e1, sub3(om2, om1), sub3(dom2, dom1))
                        dd_v = in_c1(Rc1, e1, sub3(pd2, pd1), sub3(dpd2, dpd1))
                        ddd_a = sub3(sub3(in_c1(Rc1, e1, sub3(al2, al1), sub3(dal2, dal1)), cross3(dw1, d_om)),
                                     cross3(w1, dd_om))  # fmt: skip
                        ddd_l = sub3(sub3(in_c1(Rc1, e1, sub3(pdd2, pdd1), sub3(dpdd2, dpdd1)), cross3(dw1, d_v)),
                                     cross3(w1, dd_v))  # fmt: skip
                        xa_ = add3(ddd_a, scaled3(dd_om, kd2))
                        xl_ = add3(ddd_l, scaled3(dd_v, kd2))
                        out = Cv if wrt_v else Cq
                        for i in range(m):
                            out[row0 + i, col] = selected(sel, i, xa_, xl_)
                        du2 = in_c1(Rc1, e1, U2, cross3(e2, U2))
                        dn = cross3(du2, ax)
                        if univ:  # n turns: δn · (Δ̇_a + 2 kd Δ_a) + δ(ṅ · Δω)
                            dg = cross3(add3(cross3(dd_om, u2), cross3(d_om, du2)), ax)
                            out[row0, col] += (dot3(dn, add3(dd_a, scaled3(d_om, kd2))) + dot3(dg, d_om)
                                               + dot3(g_u, dd_om))  # fmt: skip
                        if wrt_v:
                            continue
                        # kp² δr: angular rows, then linear ones (kernel.loop_rows' residual)
                        i = row0
                        if kind == ck.CUT_FIXED or kind == ck.CUT_PRISMATIC:
                            dl = log_change(lg, mtv3(Rc1, sub3(e2, e1)))
                            Cq[i, col] += kp2 * dl[0]
                            Cq[i + 1, col] += kp2 * dl[1]
                            Cq[i + 2, col] += kp2 * dl[2]
                            i += 3
                        elif kind == ck.CUT_REVOLUTE:
                            du = in_c1(Rc1, e1, Ur, cross3(e2, Ur))
                            Cq[i, col] -= kp2 * dot3(B2, du)
                            Cq[i + 1, col] += kp2 * dot3(B1, du)
                            i += 2
                        elif univ:
                            Cq[i, col] += kp2 * dot3(ax, du2)
                            i += 1
                        de = in_c1(Rc1, e1, sub3(pc2, pc1), sub3(dp2, dp1))
                        if kind == ck.CUT_PRISMATIC or kind == ck.CUT_POINT_ON_LINE:
                            Cq[i, col] += kp2 * dot3(B1, de)
                            Cq[i + 1, col] += kp2 * dot3(B2, de)
                        else:
                            Cq[i, col] += kp2 * de[0]
                            Cq[i + 1, col] += kp2 * de[1]
                            Cq[i + 2, col] += kp2 * de[2]
                        # δ(Jᵀλ): the wrenches' change (C1 turns with link1, the points move with their links) ...
                        dnc = scaled3(dn, lam[row0]) if univ else ZERO3
                        dfw = cross3(e1, fw)
                        dnw = add3(cross3(e1, nw), mv3(Rc1, dnc))
                        dW2n = add3(add3(dnw, cross3(dp2, fw)), cross3(pc2, dfw))
                        dW1n = add3(add3(dnw, cross3(dp1, fw)), cross3(pc1, dfw))
                        # ... and the columns' ξ_k ×ₘ change below J (with δp_J of a universal at J), on both paths
                        for sd in range(2):
                            K = b1 if sd == 0 else b2
                            sgn = -1.0 if sd == 0 else 1.0
                            Wn, Wf = (W1n, fw) if sd == 0 else (W2n, fw)
                            dWn = dW1n if sd == 0 else dW2n
                            below = in1 if sd == 0 else in2
                            while K > 0:
                                for kk in range(nvs[K]):
                                    sk = row6(Sw, idx_v[K] + kk)
                                    val = dot3((sk[0], sk[1], sk[2]), dWn) + dot3((sk[3], sk[4], sk[5]), dfw)
                                    if below:
                                        ds = motion_cross(xi[0], xi[1], xi[2], xi[3], xi[4], xi[5], sk[0], sk[1], sk[2],
                                                          sk[3], sk[4], sk[5])  # fmt: skip
                                        if K == J and kk == 0:
                                            g0, g1, g2 = dS_dq(kinds, S, axes2, J, j)
                                            dsw = to_world(R[J], o[J], g0, g1, g2, 0.0, 0.0, 0.0, False)
                                            ds = (ds[0] + dsw[0], ds[1] + dsw[1], ds[2] + dsw[2], ds[3] + dsw[3],
                                                  ds[4] + dsw[4], ds[5] + dsw[5])  # fmt: skip
                                        val += dot3((ds[0], ds[1], ds[2]), Wn) + dot3((ds[3], ds[4], ds[5]), Wf)
                                    G[idx_v[K] + kk, col] += sgn * val
                                if K == J:
                                    below = False
                                K = parents[K]
                J = parents[J]
        k = b1
        while k > 0:
            mark[k] = 0
            k = parents[k]
        k = b2
        while k > 0:
            mark[k] = 0
            k = parents[k]
    return 0


@njit(cache=True)
def cfd_derivatives_entry(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext, d1, d2, d3, l1, l2, l3):
    """The closed-loop forward dynamics and its derivatives at one state: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ (nv x nv) into d1,
    d2, d3 and ∂λ/∂q, ∂λ/∂q̇, ∂λ/∂τ (m x nv) into l1, l2, l3; q̈ into ws and λ into lw as ``cfd_entry`` leaves
    them.  A status of ``cfd_entry``'s kinds.  The steps (module docstring): ``cfd_entry``'s solve, keeping the
    rank, basis B, Jᵀ B and Y = GIM⁻¹ Jᵀ B of its rank rule and the loop rows' J; Table 1 at q̈; the tree's
    derivatives, with G = ∂(Jᵀλ)/∂q taken from ∂τ/∂q before −GIM⁻¹ turns them into the tree's acceleration changes;
    the reaction system on them, every column at once."""
    status, factored = cfd_solve(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext)
    if status:
        return status
    dv, lv = data_views(ws, mi), loop_views(lw, mi)
    rank = int(lw[LW_RANK])  # the rank rule's, left by reaction_step with B, Jᵀ B and Y = GIM⁻¹ Jᵀ B
    m, nv = lv.J.shape
    identity = rank == m  # the reactions' basis B (λ = B x) is the identity: its products are skipped
    Bm, JB, Y = leading(lv.B, (m, rank)), leading(lv.JT, (nv, rank)), leading(lv.Y, (nv, rank))
    a, lam = dv.ddq.copy(), lv.lam.copy()
    inverse_dynamics_step(mi, mf, ws, v, a, with_fext, True)  # Table 1 at q̈, on the kinematics cfd_entry left
    with_gim = tree_derivatives(mi, mf, ws, q, v, a, d1, d2, d3, True)
    Cq, Cv, G = np.empty((m, nv)), np.empty((m, nv)), np.empty((nv, nv))
    loop_derivatives(mi, mf, ws, cb, lw, v, a, lam, kp, kd, Cq, Cv, G)  # J and the world poses of cfd_entry
    for i in range(nv):
        for j in range(nv):
            d1[i, j] -= G[i, j]
    # the tree's: −GIM⁻¹ (∂ID/∂q − G), −GIM⁻¹ ∂ID/∂q̇, GIM⁻¹ (from the solve's factor L where it took one)
    if factored:
        factored_forward(model_views(mi, mf).dof_parent, d1, d2, d3, lv.H)
    else:
        forward_from_inverse(mi, mf, ws, d1, d2, d3, with_gim)
    # x = N_c⁻¹ (−Bᵀ (C + J D)), D = [∂q̈₀/∂q, ∂q̈₀/∂q̇, ∂q̈₀/∂τ] the tree's, C = [∂c/∂q, ∂c/∂q̇, 0] (eq. 20)
    x = np.zeros((rank, 3 * nv))
    for blk in range(3):
        D = d1 if blk == 0 else (d2 if blk == 1 else d3)
        C = Cq if blk == 0 else Cv
        o = blk * nv
        for i in range(rank):
            for k in range(nv):
                jb = JB[k, i]
                for j in range(nv):
                    x[i, o + j] -= jb * D[k, j]
            if blk == 2:
                continue
            if identity:
                for j in range(nv):
                    x[i, o + j] -= C[i, j]
                continue
            for k in range(m):
                bk = Bm[k, i]
                for j in range(nv):
                    x[i, o + j] -= bk * C[k, j]
    N = leading(lv.N, (rank, rank))
    symmetric_product_into(JB, Y, N)  # N_c = Bᵀ J GIM⁻¹ Jᵀ B (eq. 20)
    if cholesky_in_place(N, 0.0):  # positive definite on the basis
        cholesky_solve_rows(N, x)
    elif rank:  # not to rounding (a GIM too ill-conditioned): LU
        symmetric_product_into(JB, Y, N)
        x[:, :] = np.linalg.solve(N, x)
    # q̈ changes by Y x (the reactions' share), λ by B x
    for blk in range(3):
        D = d1 if blk == 0 else (d2 if blk == 1 else d3)
        dl = l1 if blk == 0 else (l2 if blk == 1 else l3)
        o = blk * nv
        for i in range(rank):
            for k in range(nv):
                y = Y[k, i]
                for j in range(nv):
                    D[k, j] += y * x[i, o + j]
        if identity:  # λ = x
            for k in range(m):
                for j in range(nv):
                    dl[k, j] = x[k, o + j]
            continue
        for k in range(m):
            for j in range(nv):
                s = 0.0
                for i in range(rank):
                    s += Bm[k, i] * x[i, o + j]
                dl[k, j] = s
    copy_into(dv.ddq, a)
    copy_into(lv.lam, lam)
    return 0


@njit(cache=True)
def cfd_derivatives_fast(mb, ws, cb, lw, q, v, tau, kp, kd, rcond, out):
    """cfd_derivatives_entry without external forces, on the model buffer (the fast path); the six results into
    the rows of out (3 nv + 3 m, nv): ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ, then ∂λ/∂q, ∂λ/∂q̇, ∂λ/∂τ, one array to allocate and
    dispatch."""
    nv = out.shape[1]
    m = (out.shape[0] - 3 * nv) // 3
    d1, d2, d3 = out[:nv], out[nv : 2 * nv], out[2 * nv : 3 * nv]
    l1, l2, l3 = out[3 * nv : 3 * nv + m], out[3 * nv + m : 3 * nv + 2 * m], out[3 * nv + 2 * m :]
    return on_model_buffer(cfd_derivatives_entry, mb, ws, (cb, lw, q, v, tau, kp, kd, rcond, False, d1, d2, d3, l1,
                                                            l2, l3))  # fmt: skip


@njit(cache=True, nogil=True)
def cfd_derivatives_rows(mi, mf, ws, lw, fixed, Q, V, T, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch (``protocol.run_chunks``); fixed = (cb, kp, kd, rcond, with_fext); out (B, 3 nv²):
    the three nv x nv matrices of q̈'s, out2 (B, 3 m nv) the three m x nv of λ's."""
    Q, V, T, out, out2 = borrowed(Q, V, T, out, out2)
    cb, kp, kd, rcond, with_fext = fixed
    nv = mi[HEAD_NV]
    m = int(lw[LW_M])
    n2, mn = nv * nv, m * nv
    status = 0
    for i in range(lo, hi):
        o1, o2 = out[i], out2[i]
        s = cfd_derivatives_entry(mi, mf, ws, cb, lw, Q[i], V[i], T[i], kp, kd, rcond, with_fext,
                                  o1[:n2].reshape((nv, nv)), o1[n2 : 2 * n2].reshape((nv, nv)),
                                  o1[2 * n2 :].reshape((nv, nv)), o2[:mn].reshape((m, nv)),
                                  o2[mn : 2 * mn].reshape((m, nv)), o2[2 * mn :].reshape((m, nv)))  # fmt: skip
        status = s if s else status
    return status


_F = types.float64
CFD_DERIVATIVES = Entry(
    cfd_derivatives_entry,
    types.int64(MI, MF, VEC, CB, VEC, VEC, VEC, VEC, _F, _F, _F, types.boolean, MAT, MAT, MAT, MAT, MAT, MAT),
    cfd_derivatives_fast,
    types.int64(MB, VEC, CB, VEC, VEC, VEC, VEC, _F, _F, _F, MAT),
    cfd_derivatives_rows,
    ("q", "v", "tau"),
    after=(CFD.kernel, tree_derivatives),
    group="closed_loop_derivatives",
    what="the closed-loop derivatives (Schiehlen eq. 19-20 differentiated)",
    seconds=90,
    fixed=CFD.fixed,
    rows_group="closed_loop_derivatives",
    loops=True,
    derivatives=True,
)
"""The closed-loop derivatives, declared once (``algorithms.protocol.Entry``); compiled at first use."""
