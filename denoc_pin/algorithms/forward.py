"""Recursive O(n) forward dynamics through the UDUᵀ decomposition of the GIM.

Shah, Saha & Dutt eq. (18)–(23) and Table 3 for trees of kinematic modules; Agarwal et al.
A.1–A.8 for the serial case.  The GIM is never formed: block reverse Gaussian elimination
gives U and D implicitly through the articulated mass matrices M̂_k, Ψ̂_k, Ψ_k and Î_k, and
U D Uᵀ q̈ = φ is solved by one backward and one forward recursion.
"""

from __future__ import annotations

from numba import njit

from ..core.layout import FMA, data_views, model_views
from ..core.spatial import (
    add_symmetric_of,
    add_transferred_wrench,
    add_transferred_wrench_of,
    congruence_of,
    mass_matrix_into,
    mass_matrix_of,
    propagate_twist,
    propagated_twist,
    rank_one_downdate,
    spd_inverse_into,
    sum_of,
    symmetric_of,
    symmetric_times,
    transferred_wrench,
)

__all__: list[str] = []


# A call rather than inlined code (numba copies an inlined function's IR with all its variables for every block,
# which lengthens its callers' compiles): the closed-loop solve calls it once for all its columns.
@njit(cache=True, fastmath=FMA)
def udut_solve(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, phi, eta, mu, ddq, phi_hat):
    """Solve U D Uᵀ q̈ = φ for m right-hand sides (Table 3, A.8).

    phi, ddq: (nv, m); eta, mu: (njoints, m, 6) workspaces for η_k and μ_k.  They may be one
    array: step 2 writes μ_k only where step 1's η_k is spent.  phi_hat: (≥ zmax,) workspace for φ̂_k.
    """
    eta[:, :, :] = 0.0
    for i in range(len(module_ptr) - 2, -1, -1):  # Step 1, backward recursion: U φ̂ = φ and D φ̃ = φ̂.
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            b = parents[k]
            for col in range(phi.shape[1]):
                eliminate_rhs(k, b, idx_v[k], nvs[k], E, r, S, Psi, I_hat_inv, phi, ddq, col, eta[k, col], eta[b, col],
                              phi_hat)  # fmt: skip
    udut_forward(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, mu, ddq)
    return 0


@njit(cache=True, inline="always")
def eliminate_rhs(k, b, iv, z, E, r, S, Psi, I_hat_inv, phi, ddq, col, et, eb, phi_hat):
    """Table 3, step 1 for body k and column col: φ̂_k = φ_k − p_kᵀ η̃_k, φ̃_k = Î_k⁻¹ φ̂_k into ddq, and
    η̃_β += A_{k,β}ᵀ η_k with η_k = η̃_k + Ψ_k φ̂_k.  et holds η̃_k (and then η_k), eb is η̃_β."""
    if z == 1:  # the same three lines in scalars (η_k itself is only passed on)
        e0, e1, e2, e3, e4, e5 = et[0], et[1], et[2], et[3], et[4], et[5]
        ph = phi[iv, col] - (S[k, 0, 0] * e0 + S[k, 1, 0] * e1 + S[k, 2, 0] * e2 + S[k, 3, 0] * e3
                             + S[k, 4, 0] * e4 + S[k, 5, 0] * e5)  # fmt: skip
        ddq[iv, col] = I_hat_inv[k, 0, 0] * ph
        if b > 0:  # η̃_β += A_{k,β}ᵀ η_k, η_k = η̃_k + Ψ_k φ̂_k
            add_transferred_wrench_of(
                E[k], r[k], e0 + Psi[k, 0, 0] * ph, e1 + Psi[k, 1, 0] * ph, e2 + Psi[k, 2, 0] * ph,
                e3 + Psi[k, 3, 0] * ph, e4 + Psi[k, 4, 0] * ph, e5 + Psi[k, 5, 0] * ph, eb,
            )  # fmt: skip
        return
    if z == 2:  # the same in scalars for a 2-DOF joint: φ̂_k = (p0, p1)
        e0, e1, e2, e3, e4, e5 = et[0], et[1], et[2], et[3], et[4], et[5]
        p0 = phi[iv, col] - (S[k, 0, 0] * e0 + S[k, 1, 0] * e1 + S[k, 2, 0] * e2 + S[k, 3, 0] * e3
                             + S[k, 4, 0] * e4 + S[k, 5, 0] * e5)  # fmt: skip
        p1 = phi[iv + 1, col] - (S[k, 0, 1] * e0 + S[k, 1, 1] * e1 + S[k, 2, 1] * e2 + S[k, 3, 1] * e3
                                 + S[k, 4, 1] * e4 + S[k, 5, 1] * e5)  # fmt: skip
        ddq[iv, col] = I_hat_inv[k, 0, 0] * p0 + I_hat_inv[k, 0, 1] * p1
        ddq[iv + 1, col] = I_hat_inv[k, 1, 0] * p0 + I_hat_inv[k, 1, 1] * p1
        if b > 0:
            P = Psi[k]
            add_transferred_wrench_of(
                E[k], r[k], e0 + P[0, 0] * p0 + P[0, 1] * p1, e1 + P[1, 0] * p0 + P[1, 1] * p1,
                e2 + P[2, 0] * p0 + P[2, 1] * p1, e3 + P[3, 0] * p0 + P[3, 1] * p1,
                e4 + P[4, 0] * p0 + P[4, 1] * p1, e5 + P[5, 0] * p0 + P[5, 1] * p1, eb,
            )  # fmt: skip
        return
    # φ̂_k = φ_k − p_kᵀ η̃_k
    for d in range(z):
        s = phi[iv + d, col]
        for c in range(6):
            s -= S[k, c, d] * et[c]
        phi_hat[d] = s
    # φ̃_k = Î_k⁻¹ φ̂_k
    for d in range(z):
        s = 0.0
        for e in range(z):
            s += I_hat_inv[k, d, e] * phi_hat[e]
        ddq[iv + d, col] = s
    # η_k = Ψ_k φ̂_k + η̃_k
    for c in range(6):
        s = 0.0
        for d in range(z):
            s += Psi[k, c, d] * phi_hat[d]
        et[c] += s
    # η̃_β += A_{k,β}ᵀ η_k
    if b > 0:
        add_transferred_wrench(E[k], r[k], et, eb)
    return


@njit(cache=True, inline="always")
def udut_forward(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, mu, ddq):
    """Table 3, step 2, forward recursion: Uᵀ q̈ = φ̃ with φ̃ in ddq on entry (nv, m); mu (njoints, m, 6) for μ_k."""
    m = ddq.shape[1]
    mu[0, :, :] = 0.0
    for i in range(len(module_ptr) - 1):
        for j in range(module_ptr[i], module_ptr[i + 1]):
            k = module_bodies[j]
            b = parents[k]
            iv = idx_v[k]
            z = nvs[k]
            for col in range(m):
                mk = mu[k, col]
                if z == 1:  # the same three lines in scalars
                    mb = mu[b, col]
                    m0, m1, m2, m3, m4, m5 = propagated_twist(E[k], r[k], mb[0], mb[1], mb[2], mb[3], mb[4], mb[5])
                    a_k = ddq[iv, col] - (Psi[k, 0, 0] * m0 + Psi[k, 1, 0] * m1 + Psi[k, 2, 0] * m2
                                          + Psi[k, 3, 0] * m3 + Psi[k, 4, 0] * m4 + Psi[k, 5, 0] * m5)  # fmt: skip
                    ddq[iv, col] = a_k
                    mk[0] = m0 + S[k, 0, 0] * a_k
                    mk[1] = m1 + S[k, 1, 0] * a_k
                    mk[2] = m2 + S[k, 2, 0] * a_k
                    mk[3] = m3 + S[k, 3, 0] * a_k
                    mk[4] = m4 + S[k, 4, 0] * a_k
                    mk[5] = m5 + S[k, 5, 0] * a_k
                    continue
                if z == 2:  # the same in scalars for a 2-DOF joint
                    mb, P, Sk = mu[b, col], Psi[k], S[k]
                    m0, m1, m2, m3, m4, m5 = propagated_twist(E[k], r[k], mb[0], mb[1], mb[2], mb[3], mb[4], mb[5])
                    a0 = ddq[iv, col] - (P[0, 0] * m0 + P[1, 0] * m1 + P[2, 0] * m2 + P[3, 0] * m3 + P[4, 0] * m4
                                         + P[5, 0] * m5)  # fmt: skip
                    a1 = ddq[iv + 1, col] - (P[0, 1] * m0 + P[1, 1] * m1 + P[2, 1] * m2 + P[3, 1] * m3
                                             + P[4, 1] * m4 + P[5, 1] * m5)  # fmt: skip
                    ddq[iv, col], ddq[iv + 1, col] = a0, a1
                    mk[0] = m0 + Sk[0, 0] * a0 + Sk[0, 1] * a1
                    mk[1] = m1 + Sk[1, 0] * a0 + Sk[1, 1] * a1
                    mk[2] = m2 + Sk[2, 0] * a0 + Sk[2, 1] * a1
                    mk[3] = m3 + Sk[3, 0] * a0 + Sk[3, 1] * a1
                    mk[4] = m4 + Sk[4, 0] * a0 + Sk[4, 1] * a1
                    mk[5] = m5 + Sk[5, 0] * a0 + Sk[5, 1] * a1
                    continue
                # μ̃_k = A_{k,β} μ_β
                propagate_twist(E[k], r[k], mu[b, col], mk)
                # q̈_k = φ̃_k − Ψ_kᵀ μ̃_k
                for d in range(z):
                    s = ddq[iv + d, col]
                    for c in range(6):
                        s -= Psi[k, c, d] * mk[c]
                    ddq[iv + d, col] = s
                # μ_k = p_k q̈_k + μ̃_k
                for c in range(6):
                    s = 0.0
                    for d in range(z):
                        s += S[k, c, d] * ddq[iv + d, col]
                    mk[c] += s
    return 0


@njit(cache=True, fastmath=FMA)
def factor_step(mi, mf, ws, tau, solve):
    """The articulated mass matrices and the blocks of U and D (eq. 19–21; A.4–A.7) on the flat buffers, with the
    kinematics already in ws; returns 0, or the body k whose Î_k is not positive definite (singular GIM).

    M_k enters as (m_k, d_k, I_k about o_k).  Inside a module each body is its parent's only child
    and is eliminated just before it, so A_{k,β}ᵀ Φ_k M̂_k A_{k,β} goes to β in registers (W, the 21
    numbers of ``spatial.congruence_of``).  What goes to the last body of a module, from the first
    bodies of its child modules, is summed in M_hat[slot[β]] (``layout.articulated_slots``).

    With ``solve``, also q̈ = GIM⁻¹ (τ − h) into ws's q̈, Table 1's step 1 (w_k in w_tilde) being in ws too: Table 3's
    step 1 rides along, body by body while its factors are at hand, and carries Table 1's step 2 with it
    (y_k = w̃_k + η̃_k, since φ̂_k = τ_k − p_kᵀ w̃_k − p_kᵀ η̃_k and both go to β by A_{k,β}ᵀ, as in Featherstone's
    ABA); then Table 3's step 2 (``udut_forward``): three passes over the bodies in all instead of six.  Ψ̂_k and Î_k
    of 1- and 2-DOF joints are then not stored: the solve reads Ψ_k and Î_k⁻¹ (1.5% of a 100,000-DOF FD).

    One kernel for both uses (the factorization is the longest compile of the package), written out here rather
    than inlined from a kernel on named arrays: numba copies an inlined function's IR once per block with all its
    variables, a large part of this kernel's compile."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    nj, nv = len(mv.parents), len(dv.ddq)
    parents, module_ptr, module_bodies, idx_v, nvs = mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs
    slot, slot_init, masses, coms, Io = mv.slot, mv.slot_init, mv.masses, mv.coms, mv.inertias_origin
    E, r, S, M_hat, Psi_hat, Psi = dv.E, dv.r, dv.S, dv.M_hat, dv.Psi_hat, dv.Psi
    I_hat, I_hat_inv = dv.I_hat, dv.I_hat_inv
    phi, y, ddq, phi_hat = tau.reshape(len(tau), 1), dv.w_tilde, dv.ddq.reshape(nv, 1), dv.phi_hat  # τ: (nv,) to solve
    W = (0.0,) * 21
    for i in range(len(module_ptr) - 2, -1, -1):
        carried = False  # whether W holds the contribution of k's only child
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            z = nvs[k]
            b = parents[k]
            carry = j > module_ptr[i]  # β is the next body eliminated and k is its only child
            Mk = M_hat[slot[k]]
            if z <= 2:  # 1- and 2-DOF joints (revolute, prismatic, universal) with M̂_k, Ψ̂_k, Ψ_k in registers
                if carried:  # M̂_k = M_k + A_{c,k}ᵀ Φ_c M̂_c A_{c,k}                    (eq. 20, A.6)
                    X = sum_of(mass_matrix_of(masses[k], coms[k], Io[k]), W)
                elif slot_init[k] & 1:  # a leaf: M̂_k = M_k
                    X = mass_matrix_of(masses[k], coms[k], Io[k])
                else:  # the sum in the slot
                    X = symmetric_of(Mk)
                A00, A01, A02, A11, A12, A22 = X[0], X[1], X[2], X[3], X[4], X[5]
                B00, B01, B02, B10, B11, B12, B20, B21, B22 = X[6], X[7], X[8], X[9], X[10], X[11], X[12], X[13], X[14]
                C00, C01, C02, C11, C12, C22 = X[15], X[16], X[17], X[18], X[19], X[20]
                s0, s1, s2, s3, s4, s5 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0], S[k, 3, 0], S[k, 4, 0], S[k, 5, 0]
                # Ψ̂_k = M̂_k p_k (first column), Î_k = p_kᵀ Ψ̂_k                     (eq. 19, A.4–A.5)
                if s3 == 0.0 and s4 == 0.0 and s5 == 0.0:  # a rotation, p_k = [e; 0]: half of M̂_k p_k's products
                    h0 = A00 * s0 + A01 * s1 + A02 * s2
                    h1 = A01 * s0 + A11 * s1 + A12 * s2
                    h2 = A02 * s0 + A12 * s1 + A22 * s2
                    h3 = B00 * s0 + B10 * s1 + B20 * s2
                    h4 = B01 * s0 + B11 * s1 + B21 * s2
                    h5 = B02 * s0 + B12 * s1 + B22 * s2
                    Ik = s0 * h0 + s1 * h1 + s2 * h2
                else:
                    h0, h1, h2, h3, h4, h5 = symmetric_times(X, s0, s1, s2, s3, s4, s5)
                    Ik = s0 * h0 + s1 * h1 + s2 * h2 + s3 * h3 + s4 * h4 + s5 * h5
                ph, ps = Psi_hat[k], Psi[k]
                I_hat[k, 0, 0] = Ik  # Î_k, D of UDUᵀ: the contact step's Delassus matrix reads it after a solve too
                if not solve:  # the factors alone keep Ψ̂_k; the solve reads only Ψ_k
                    ph[0, 0], ph[1, 0], ph[2, 0], ph[3, 0], ph[4, 0], ph[5, 0] = h0, h1, h2, h3, h4, h5
                if not Ik > 0.0:
                    return k
                if z == 1:
                    inv = 1.0 / Ik
                    I_hat_inv[k, 0, 0] = inv
                    g0, g1, g2, g3, g4, g5 = h0 * inv, h1 * inv, h2 * inv, h3 * inv, h4 * inv, h5 * inv  # Ψ_k
                    ps[0, 0], ps[1, 0], ps[2, 0], ps[3, 0], ps[4, 0], ps[5, 0] = g0, g1, g2, g3, g4, g5
                    # Φ_k M̂_k = M̂_k − Ψ̂_k Ψ_kᵀ (eq. 20–21) goes to β below as A_{k,β}ᵀ M̂_k A_{k,β} − a aᵀ/Î_k with
                    # a = A_{k,β}ᵀ Ψ̂_k: the congruence then starts from M̂_k, not after Ψ̂_k, Î_k and its inverse, and
                    # on a chain, where each body waits for its child's W, that shortens the path between bodies.
                    P = X
                else:  # z = 2: Ψ̂_k's second column u from p_k's second column t, and Î_k (2 x 2) inverted
                    t0, t1, t2, t3, t4, t5 = S[k, 0, 1], S[k, 1, 1], S[k, 2, 1], S[k, 3, 1], S[k, 4, 1], S[k, 5, 1]
                    u0, u1, u2, u3, u4, u5 = symmetric_times(X, t0, t1, t2, t3, t4, t5)
                    I12 = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5
                    I22 = t0 * u0 + t1 * u1 + t2 * u2 + t3 * u3 + t4 * u4 + t5 * u5
                    det = Ik * I22 - I12 * I12
                    I_hat[k, 0, 1] = I_hat[k, 1, 0] = I12
                    I_hat[k, 1, 1] = I22
                    if not solve:
                        ph[0, 1], ph[1, 1], ph[2, 1], ph[3, 1], ph[4, 1], ph[5, 1] = u0, u1, u2, u3, u4, u5
                    if not det > 0.0:  # Î_k positive definite: Ik > 0 (above) and det > 0
                        return k
                    i11, i12, i22 = I22 / det, -I12 / det, Ik / det
                    I_hat_inv[k, 0, 0], I_hat_inv[k, 0, 1], I_hat_inv[k, 1, 0], I_hat_inv[k, 1, 1] = i11, i12, i12, i22
                    # Ψ_k = Ψ̂_k Î_k⁻¹: columns g and w                                  (eq. 19, A.5)
                    g0, g1, g2 = h0 * i11 + u0 * i12, h1 * i11 + u1 * i12, h2 * i11 + u2 * i12
                    g3, g4, g5 = h3 * i11 + u3 * i12, h4 * i11 + u4 * i12, h5 * i11 + u5 * i12
                    w0, w1, w2 = h0 * i12 + u0 * i22, h1 * i12 + u1 * i22, h2 * i12 + u2 * i22
                    w3, w4, w5 = h3 * i12 + u3 * i22, h4 * i12 + u4 * i22, h5 * i12 + u5 * i22
                    ps[0, 0], ps[1, 0], ps[2, 0], ps[3, 0], ps[4, 0], ps[5, 0] = g0, g1, g2, g3, g4, g5
                    ps[0, 1], ps[1, 1], ps[2, 1], ps[3, 1], ps[4, 1], ps[5, 1] = w0, w1, w2, w3, w4, w5
                    P = (  # Φ_k M̂_k = M̂_k − Ψ̂_k Ψ_kᵀ                                       (eq. 20–21, A.6–A.7)
                        A00 - h0 * g0 - u0 * w0, A01 - h0 * g1 - u0 * w1, A02 - h0 * g2 - u0 * w2,
                        A11 - h1 * g1 - u1 * w1, A12 - h1 * g2 - u1 * w2, A22 - h2 * g2 - u2 * w2,
                        B00 - h0 * g3 - u0 * w3, B01 - h0 * g4 - u0 * w4, B02 - h0 * g5 - u0 * w5,
                        B10 - h1 * g3 - u1 * w3, B11 - h1 * g4 - u1 * w4, B12 - h1 * g5 - u1 * w5,
                        B20 - h2 * g3 - u2 * w3, B21 - h2 * g4 - u2 * w4, B22 - h2 * g5 - u2 * w5,
                        C00 - h3 * g3 - u3 * w3, C01 - h3 * g4 - u3 * w4, C02 - h3 * g5 - u3 * w5,
                        C11 - h4 * g4 - u4 * w4, C12 - h4 * g5 - u4 * w5, C22 - h5 * g5 - u5 * w5,
                    )  # fmt: skip
            else:  # 3- and 6-DOF joints (spherical, free-flyer, planar): Î_k is z_k x z_k, in memory
                if carried:  # M̂_k = M_k + W, written out for the loops below
                    mass_matrix_into(masses[k], coms[k], Io[k], Mk)
                    add_symmetric_of(W, Mk)
                elif slot_init[k] & 1:  # a leaf: M̂_k = M_k
                    mass_matrix_into(masses[k], coms[k], Io[k], Mk)
                # Ψ̂_k = M̂_k p_k                                                   (eq. 19, A.5)
                for c in range(6):
                    for d in range(z):
                        acc = 0.0
                        for e in range(6):
                            acc += Mk[c, e] * S[k, e, d]
                        Psi_hat[k, c, d] = acc
                # Î_k = p_kᵀ Ψ̂_k                                                  (eq. 19, A.4)
                for d1 in range(z):
                    for d2 in range(z):
                        acc = 0.0
                        for c in range(6):
                            acc += S[k, c, d1] * Psi_hat[k, c, d2]
                        I_hat[k, d1, d2] = acc
                if not spd_inverse_into(I_hat[k], z, I_hat_inv[k]):
                    return k
                # Ψ_k = Ψ̂_k Î_k⁻¹                                                 (eq. 19, A.5)
                for c in range(6):
                    for d in range(z):
                        acc = 0.0
                        for e in range(z):
                            acc += Psi_hat[k, c, e] * I_hat_inv[k, e, d]
                        Psi[k, c, d] = acc
                # Φ_k M̂_k = M̂_k − Ψ̂_k Ψ_kᵀ (eq. 20–21, A.6–A.7) overwrites M̂_k in its slot: k is eliminated, its
                # slot is released.
                for c in range(6):
                    for e in range(6):
                        acc = Mk[c, e]
                        for d in range(z):
                            acc -= Psi_hat[k, c, d] * Psi[k, e, d]
                        Mk[c, e] = acc
                P = symmetric_of(Mk)
            if b > 0:  # A_{k,β}ᵀ Φ_k M̂_k A_{k,β}, to M̂_β: one congruence for every kind of joint (one copy compiles)
                W = congruence_of(E[k], r[k], P)
                if z == 1:  # − a aᵀ/Î_k, a = A_{k,β}ᵀ Ψ̂_k (above)
                    W = rank_one_downdate(W, transferred_wrench(E[k], r[k], h0, h1, h2, h3, h4, h5), inv)
            if solve:  # φ̂_k, φ̃_k and η_k to β (Table 3, step 1) with Ψ_k and Î_k⁻¹ still in cache
                eliminate_rhs(k, b, idx_v[k], z, E, r, S, Psi, I_hat_inv, phi, ddq, 0, y[k], y[b], phi_hat)
            if b > 0 and not carry:  # k starts its module: β ends another and sums its children in its slot
                if slot_init[k] & 2:  # the first child of β to be eliminated opens M̂_β = M_β
                    mass_matrix_into(masses[b], coms[b], Io[b], M_hat[slot[b]])
                add_symmetric_of(W, M_hat[slot[b]])
            carried = carry
    if not solve:
        return 0
    udut_forward(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, dv.eta.reshape(nj, 1, 6), ddq)
    return 0
