"""The generalized inertia matrix by composite module inertias (Shah, Saha & Dutt, eq. 16–17).

I_{k,j} = p_kᵀ A_{j,k}ᵀ M̃_j p_j for k an ancestor of j (or k = j), with
M̃_k = M_k + Σ_children A_{c,k}ᵀ M̃_c A_{c,k}.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.layout import FMA, borrow, data_views, model_views
from ..core.spatial import add_transformed_rigid_inertia, rigid_inertia_into, rigid_inertia_times, transferred_wrench

__all__ = ["l_solve", "l_solve_rows", "lt_solve", "ltl_factor"]


@njit(cache=True, inline="always")
def composite_inertias(parents, module_ptr, module_bodies, idx_v, nvs, slot, slot_init, masses, coms, Io, E, r, S,
                       M_tilde, B, out):  # fmt: skip
    """M̃_k = M_k + Σ_children A_{c,k}ᵀ M̃_c A_{c,k}, leaves first (eq. 17), and what the GIM needs of each
    M̃_k once it is complete: B_k = M̃_k p_k and the diagonal block I_{k,k} = p_kᵀ B_k (eq. 16).

    A composite of rigid bodies is a rigid body, so M̃_k = [[J, h̃], [−h̃, m 1]] is kept as its 10
    numbers (m, h, J about o_k; ``rigid_inertia_into``).  M̃_k is open only from its first child's
    turn to its own, so it lives in the recycled slots of the articulated inertias (the first 10
    numbers of M_tilde[slot[k]], ``layout.articulated_slots``): the same order, the same lifetimes.
    """
    C = M_tilde.reshape(M_tilde.shape[0], 36)
    for i in range(len(module_ptr) - 2, -1, -1):
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            b = parents[k]
            Ck = C[slot[k]]
            if slot_init[k] & 1:  # a leaf: M̃_k = M_k
                rigid_inertia_into(masses[k], coms[k], Io[k], Ck)
            if slot_init[k] & 2:  # the first child of β opens M̃_β = M_β
                rigid_inertia_into(masses[b], coms[b], Io[b], C[slot[b]])
            m, h0, h1, h2 = Ck[0], Ck[1], Ck[2], Ck[3]
            J00, J01, J02, J11, J12, J22 = Ck[4], Ck[5], Ck[6], Ck[7], Ck[8], Ck[9]
            kv = idx_v[k]
            z = nvs[k]
            if z == 1:  # the same two lines with B_k in registers: most joints are 1-DOF
                a0, a1, a2, l0, l1, l2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0], S[k, 3, 0], S[k, 4, 0], S[k, 5, 0]
                b0, b1, b2, b3, b4, b5 = rigid_inertia_times(m, h0, h1, h2, J00, J01, J02, J11, J12, J22,
                                                             a0, a1, a2, l0, l1, l2)  # fmt: skip
                B[k, 0, 0], B[k, 1, 0], B[k, 2, 0], B[k, 3, 0], B[k, 4, 0], B[k, 5, 0] = b0, b1, b2, b3, b4, b5
                out[kv, kv] = a0 * b0 + a1 * b1 + a2 * b2 + l0 * b3 + l1 * b4 + l2 * b5
            else:
                for d in range(z):  # B_k = M̃_k p_k
                    B[k, 0, d], B[k, 1, d], B[k, 2, d], B[k, 3, d], B[k, 4, d], B[k, 5, d] = rigid_inertia_times(
                        m, h0, h1, h2, J00, J01, J02, J11, J12, J22,
                        S[k, 0, d], S[k, 1, d], S[k, 2, d], S[k, 3, d], S[k, 4, d], S[k, 5, d],
                    )  # fmt: skip
                for d1 in range(z):  # I_{k,k} = p_kᵀ B_k
                    for d2 in range(z):
                        acc = 0.0
                        for c in range(6):
                            acc += S[k, c, d1] * B[k, c, d2]
                        out[kv + d1, kv + d2] = acc
            if b > 0:
                add_transformed_rigid_inertia(E[k], r[k], Ck, C[slot[b]])
    return 0


@njit(cache=True, inline="always")
def ancestor_blocks(parents, idx_v, nvs, E, r, S, B, out):
    """out[b, j] = p_bᵀ A_{j,b}ᵀ B_j for every strict ancestor b of every body j (blocks of nv x nv).

    With B_j = M̃_j p_j these are the GIM's off-diagonal blocks (eq. 16); with B_j = Ψ_j
    they are U's (eq. 18, A.4).  F ← A_{c,b}ᵀ F carries B_j up one body at a time, column by
    column (indexed in place: no views in the walk).
    """
    F = B[0]  # the column block being carried: the base's block of B, which no joint uses (no allocation)
    for j in range(1, len(parents)):
        jv = idx_v[j]
        zj = nvs[j]
        if zj == 1:  # the same walk with F in scalars: a column in registers, not reloaded after each store to out
            f0, f1, f2, f3, f4, f5 = B[j, 0, 0], B[j, 1, 0], B[j, 2, 0], B[j, 3, 0], B[j, 4, 0], B[j, 5, 0]
            c = j
            b = parents[j]
            while b > 0:
                f0, f1, f2, f3, f4, f5 = transferred_wrench(E[c], r[c], f0, f1, f2, f3, f4, f5)
                bv = idx_v[b]
                for e in range(nvs[b]):
                    out[bv + e, jv] = (S[b, 0, e] * f0 + S[b, 1, e] * f1 + S[b, 2, e] * f2 + S[b, 3, e] * f3
                                       + S[b, 4, e] * f4 + S[b, 5, e] * f5)  # fmt: skip
                c = b
                b = parents[b]
            continue
        for c in range(6):
            for d in range(zj):
                F[c, d] = B[j, c, d]
        c = j
        b = parents[j]
        while b > 0:
            Ec, rc = E[c], r[c]
            for d in range(zj):  # F[:, d] ← A_{c,b}ᵀ F[:, d]
                F[0, d], F[1, d], F[2, d], F[3, d], F[4, d], F[5, d] = transferred_wrench(
                    Ec, rc, F[0, d], F[1, d], F[2, d], F[3, d], F[4, d], F[5, d]
                )
            bv = idx_v[b]
            for e in range(nvs[b]):  # the block p_bᵀ F
                for d in range(zj):
                    acc = 0.0
                    for cc in range(6):
                        acc += S[b, cc, e] * F[cc, d]
                    out[bv + e, jv + d] = acc
            c = b
            b = parents[b]
    return 0


@njit(cache=True, fastmath=FMA)  # a call of crba_entry's: inlined, numba copied its IR (15 s) for no speed
def gim_step(mi, mf, ws, out):
    """Composite inertias (eq. 17) and the GIM (eq. 16) into out, with the kinematics already in ws."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    out = borrow(out)  # the hot loops index it: no reference counts
    out[:, :] = 0.0
    # M̃_k in the M̂ slots, B_k = M̃_k p_k in Ψ̂'s place: gim needs no workspace of its own.
    composite_inertias(
        mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, mv.slot, mv.slot_init, mv.masses, mv.coms,
        mv.inertias_origin, dv.E, dv.r, dv.S, dv.M_hat, dv.Psi_hat, out,
    )  # fmt: skip
    ancestor_blocks(mv.parents, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi_hat, out)
    n = out.shape[0]
    for i in range(n):  # the walk filled the upper triangle; the GIM is symmetric
        for k in range(i + 1, n):
            out[k, i] = out[i, k]


@njit(cache=True, fastmath=FMA)
def ltl_factor(H, lam):
    """GIM = Lᵀ L in place, L lower triangular in H's lower triangle (Featherstone's LTL factorization, Rigid Body
    Dynamics Algorithms, 2008, §6.5): the DOFs leaves first, each updating only the entries of its λ-path, so a tree
    fills nothing: O(n d²) for depth d.  λ: ``Model.dof_parent``.  Returns −1, or the first DOF (from the leaves)
    whose pivot is not positive (the GIM not positive definite to rounding)."""
    H = borrow(H)
    for k in range(H.shape[0] - 1, -1, -1):
        if not H[k, k] > 0.0:
            return k
        a = np.sqrt(H[k, k])
        H[k, k] = a
        i = lam[k]
        while i >= 0:
            H[k, i] /= a
            i = lam[i]
        i = lam[k]
        while i >= 0:  # H_ij −= L_ki L_kj for i, j on k's path
            c = H[k, i]
            j = i
            while j >= 0:
                H[i, j] -= c * H[k, j]
                j = lam[j]
            i = lam[i]
    return -1


@njit(cache=True, fastmath=FMA)
def lt_solve(H, lam, X):
    """X ← L⁻ᵀ X (X: n x m) for the factor of ``ltl_factor``: Lᵀ Y = X, the DOFs leaves first, each row scaled and
    then taken from the rows of its λ-path (whole rows: m independent multiply-adds)."""
    H, X = borrow(H), borrow(X)
    m = X.shape[1]
    for i in range(H.shape[0] - 1, -1, -1):
        r = 1.0 / H[i, i]
        for c in range(m):
            X[i, c] *= r
        j = lam[i]
        while j >= 0:
            f = H[i, j]
            for c in range(m):
                X[j, c] -= f * X[i, c]
            j = lam[j]


@njit(cache=True, fastmath=FMA)
def l_solve(H, lam, x):
    """x ← L⁻¹ x (x: n) for the factor of ``ltl_factor``: L y = x, root first, each DOF from its λ-path."""
    for i in range(H.shape[0]):
        s = x[i]
        j = lam[i]
        while j >= 0:
            s -= H[i, j] * x[j]
            j = lam[j]
        x[i] = s / H[i, i]


@njit(cache=True, fastmath=FMA)
def l_solve_rows(H, lam, X):
    """X ← L⁻¹ X (X: n x m) for the factor of ``ltl_factor``: ``l_solve`` on every column at once, root first, each
    row taken from the rows of its λ-path (whole rows: m independent multiply-adds)."""
    H, X = borrow(H), borrow(X)
    m = X.shape[1]
    for i in range(H.shape[0]):
        j = lam[i]
        while j >= 0:
            f = H[i, j]
            for c in range(m):
                X[i, c] -= f * X[j, c]
            j = lam[j]
        r = 1.0 / H[i, i]
        for c in range(m):
            X[i, c] *= r
