"""Recursive O(n) forward dynamics through the UDUᵀ decomposition of the GIM.

Shah, Saha & Dutt eq. (18)–(23) and Table 3 for trees of kinematic modules; Agarwal et al.
A.1–A.8 for the serial case.  The GIM is never formed: block reverse Gaussian elimination
gives U and D implicitly through the articulated mass matrices M̂_k, Ψ̂_k, Ψ_k and Î_k, and
U D Uᵀ q̈ = φ is solved by one backward and one forward recursion.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import FMA, all_finite, data_views, model_views, split_model, stamped_for
from ..model import Data, Model, ModelError, check_data, configuration
from ..spatial import (
    add_symmetric_of,
    add_transferred_wrench,
    add_transferred_wrench_of,
    congruence_of,
    mass_matrix_into,
    mass_matrix_of,
    propagate_twist,
    propagated_twist,
    spd_inverse_into,
    sum_of,
    symmetric_of,
)
from ._call import BAD_LENGTH, ENTRY_STATE, FAST_STATE, NOT_STAMPED, raise_for_status, set_fext, states
from .composite import ancestor_blocks, check_dense_size
from .inverse import rnea_entry
from .kinematics import kinematics_entry


@njit(cache=True, inline="always")
def udut_factor(parents, module_ptr, module_bodies, nvs, slot, slot_init, masses, coms, Io, E, r, S, M_hat, Psi_hat,
                Psi, I_hat, I_hat_inv):  # fmt: skip
    """Articulated mass matrices and the blocks of U and D (eq. 19–21; A.4–A.7).

    M_k enters as (m_k, d_k, I_k about o_k).  Inside a module each body is its parent's only child
    and is eliminated just before it, so A_{k,β}ᵀ Φ_k M̂_k A_{k,β} goes to β in registers (W, the 21
    numbers of ``spatial.congruence_of``).  What goes to the last body of a module, from the first
    bodies of its child modules, is summed in M_hat[slot[β]] (``layout.articulated_slots``).
    Returns 0, or the body index k whose Î_k is not positive definite (singular GIM).
    """
    W = (0.0,) * 21
    for i in range(len(module_ptr) - 2, -1, -1):
        carried = False  # whether W holds the contribution of k's only child
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            z = nvs[k]
            b = parents[k]
            carry = j > module_ptr[i]  # β is the next body eliminated and k is its only child
            Mk = M_hat[slot[k]]
            if z == 1:  # the same equations with scalar Î_k: most joints are 1-DOF; M̂_k, Ψ̂_k, Ψ_k in registers
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
                # Ψ̂_k = M̂_k p_k, Î_k = p_kᵀ Ψ̂_k                                  (eq. 19, A.4–A.5)
                h0 = A00 * s0 + A01 * s1 + A02 * s2 + B00 * s3 + B01 * s4 + B02 * s5
                h1 = A01 * s0 + A11 * s1 + A12 * s2 + B10 * s3 + B11 * s4 + B12 * s5
                h2 = A02 * s0 + A12 * s1 + A22 * s2 + B20 * s3 + B21 * s4 + B22 * s5
                h3 = B00 * s0 + B10 * s1 + B20 * s2 + C00 * s3 + C01 * s4 + C02 * s5
                h4 = B01 * s0 + B11 * s1 + B21 * s2 + C01 * s3 + C11 * s4 + C12 * s5
                h5 = B02 * s0 + B12 * s1 + B22 * s2 + C02 * s3 + C12 * s4 + C22 * s5
                Ik = s0 * h0 + s1 * h1 + s2 * h2 + s3 * h3 + s4 * h4 + s5 * h5
                I_hat[k, 0, 0] = Ik
                if not Ik > 0.0:
                    return k
                inv = 1.0 / Ik
                I_hat_inv[k, 0, 0] = inv
                g0, g1, g2, g3, g4, g5 = h0 * inv, h1 * inv, h2 * inv, h3 * inv, h4 * inv, h5 * inv  # Ψ_k
                ph, ps = Psi_hat[k], Psi[k]
                ph[0, 0], ph[1, 0], ph[2, 0], ph[3, 0], ph[4, 0], ph[5, 0] = h0, h1, h2, h3, h4, h5
                ps[0, 0], ps[1, 0], ps[2, 0], ps[3, 0], ps[4, 0], ps[5, 0] = g0, g1, g2, g3, g4, g5
                if b > 0:  # A_{k,β}ᵀ (M̂_k − Ψ̂_k Ψ_kᵀ) A_{k,β}, to M̂_β          (eq. 20–21, A.6–A.7)
                    W = congruence_of(E[k], r[k], (
                        A00 - h0 * g0, A01 - h0 * g1, A02 - h0 * g2, A11 - h1 * g1, A12 - h1 * g2, A22 - h2 * g2,
                        B00 - h0 * g3, B01 - h0 * g4, B02 - h0 * g5,
                        B10 - h1 * g3, B11 - h1 * g4, B12 - h1 * g5,
                        B20 - h2 * g3, B21 - h2 * g4, B22 - h2 * g5,
                        C00 - h3 * g3, C01 - h3 * g4, C02 - h3 * g5, C11 - h4 * g4, C12 - h4 * g5, C22 - h5 * g5,
                    ))  # fmt: skip
            else:  # multi-DOF joints: Î_k is z_k x z_k
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
                if b > 0:
                    # A_{k,β}ᵀ Φ_k M̂_k A_{k,β} to M̂_β,  Φ_k M̂_k = M̂_k − Ψ̂_k Ψ_kᵀ  (eq. 20–21, A.6–A.7)
                    # Φ_k M̂_k overwrites M̂_k in its slot: k is eliminated, its slot is released.
                    for c in range(6):
                        for e in range(6):
                            acc = Mk[c, e]
                            for d in range(z):
                                acc -= Psi_hat[k, c, d] * Psi[k, e, d]
                            Mk[c, e] = acc
                    W = congruence_of(E[k], r[k], symmetric_of(Mk))
            if b > 0 and not carry:  # k starts its module: β ends another and sums its children in its slot
                if slot_init[k] & 2:  # the first child of β to be eliminated opens M̂_β = M_β
                    mass_matrix_into(masses[b], coms[b], Io[b], M_hat[slot[b]])
                add_symmetric_of(W, M_hat[slot[b]])
            carried = carry
    return 0


@njit(cache=True, inline="always")
def udut_solve(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, phi, eta, mu, ddq):
    """Solve U D Uᵀ q̈ = φ for m right-hand sides (Table 3, A.8).

    phi, ddq: (nv, m); eta, mu: (njoints, m, 6) workspaces for η_k and μ_k.  They may be one
    array: step 2 writes μ_k only where step 1's η_k is spent.
    """
    m = phi.shape[1]
    phi_hat = np.empty(6)
    eta[:, :, :] = 0.0
    # Step 1, backward recursion: U φ̂ = φ and D φ̃ = φ̂.
    for i in range(len(module_ptr) - 2, -1, -1):
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            b = parents[k]
            iv = idx_v[k]
            z = nvs[k]
            for col in range(m):
                et = eta[k, col]  # holds η̃_k = Σ_children A_{c,k}ᵀ η_c on entry
                if z == 1:  # the same three lines in scalars (η_k itself is only passed on)
                    e0, e1, e2, e3, e4, e5 = et[0], et[1], et[2], et[3], et[4], et[5]
                    ph = phi[iv, col] - (S[k, 0, 0] * e0 + S[k, 1, 0] * e1 + S[k, 2, 0] * e2 + S[k, 3, 0] * e3
                                         + S[k, 4, 0] * e4 + S[k, 5, 0] * e5)  # fmt: skip
                    ddq[iv, col] = I_hat_inv[k, 0, 0] * ph
                    if b > 0:  # η̃_β += A_{k,β}ᵀ η_k, η_k = η̃_k + Ψ_k φ̂_k
                        add_transferred_wrench_of(
                            E[k], r[k], e0 + Psi[k, 0, 0] * ph, e1 + Psi[k, 1, 0] * ph, e2 + Psi[k, 2, 0] * ph,
                            e3 + Psi[k, 3, 0] * ph, e4 + Psi[k, 4, 0] * ph, e5 + Psi[k, 5, 0] * ph, eta[b, col],
                        )  # fmt: skip
                    continue
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
                    add_transferred_wrench(E[k], r[k], et, eta[b, col])
    # Step 2, forward recursion: Uᵀ q̈ = φ̃.
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
def factor_step(mi, mf, ws):
    """udut_factor on the flat buffers, with the kinematics already in ws."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    return udut_factor(
        mv.parents, mv.module_ptr, mv.module_bodies, mv.nvs, mv.slot, mv.slot_init, mv.masses, mv.coms,
        mv.inertias_origin, dv.E, dv.r, dv.S, dv.M_hat, dv.Psi_hat, dv.Psi, dv.I_hat, dv.I_hat_inv,
    )  # fmt: skip


@njit(cache=True, fastmath=FMA)
def solve_step(mi, mf, ws):
    """q̈ = (U D Uᵀ)⁻¹ φ for the factors and φ in ws, into ws's q̈ (η and μ share one array)."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    nj, nv = len(mv.parents), len(dv.ddq)
    eta = dv.eta.reshape(nj, 1, 6)
    udut_solve(
        mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi, dv.I_hat_inv,
        dv.phi.reshape(nv, 1), eta, eta, dv.ddq.reshape(nv, 1),
    )  # fmt: skip


@njit(cache=True)
def factor_entry(mi, mf, ws, q):
    """Kinematics and the UDUᵀ factors at q; returns 1 if q is not finite, 2 + k if Î_k is singular."""
    if not all_finite(q):
        return 1
    kinematics_entry(mi, mf, ws, q)
    k = factor_step(mi, mf, ws)
    return 2 + k if k else 0


@njit(ENTRY_STATE, cache=True)
def aba_entry(mi, mf, ws, q, v, tau, with_fext):
    """q̈ = GIM⁻¹ (τ − h) on the flat buffers (layout.py): φ from Table 1 with q̈ = 0, then the
    UDUᵀ recursions of Table 3.  A status as raise_for_status reads it, or BAD_LENGTH if q, v or
    tau has the wrong length."""
    if len(q) != mi[4] or len(v) != mi[1] or len(tau) != mi[1]:
        return BAD_LENGTH
    dv = data_views(ws, mi)
    h, phi, ddq = dv.tau, dv.phi, dv.ddq
    if not all_finite(tau):
        return 1
    ddq[:] = 0.0  # the zero acceleration of note 1 under Table 3
    status = rnea_entry(mi, mf, ws, q, v, ddq, with_fext)
    if status:
        return status
    for i in range(len(h)):
        phi[i] = tau[i] - h[i]  # φ = τ − C q̇ − gravity (A.1)
    k = factor_step(mi, mf, ws)
    if k:
        return 2 + k
    solve_step(mi, mf, ws)
    return 0


@njit(FAST_STATE, cache=True)
def aba_fast(mb, ws, q, v, tau):
    """aba_entry without external forces, for a workspace stamped for model buffer mb (the fast path)."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return aba_entry(mi, mf, ws, q, v, tau, False)


def factor(model: Model, data: Data, q: np.ndarray) -> None:
    """Kinematics and UDUᵀ factors at q into data; a clear error when singular."""
    raise_for_status(model, factor_entry(model._mi, model._mf, data._ws, q), q, None, None, "")


def check_not_singular(model: Model, where: str) -> None:
    """Refuse a model whose GIM is singular everywhere: a movable joint that moves no mass.

    First structurally (a subtree with zero mass and zero inertia, e.g. a massless leaf
    link), then by the UDUᵀ pivots Î_k at a generic (seeded random) configuration.
    """
    nj = model.njoints
    subtree = (model.masses > 0) | np.any(model.inertias != 0, axis=(1, 2))
    for k in range(nj - 1, 0, -1):
        subtree[model.parents[k]] |= subtree[k]
    for k in range(1, nj):
        if not subtree[k]:
            leaves = [model.link_names[c] for c in range(k, nj) if _is_in_subtree(model, c, k)]
            raise ModelError(
                f"{where}: joint {model.names[k]!r} moves only massless links ({', '.join(map(repr, leaves))}), so the "
                "generalized inertia matrix is singular; give the link an <inertial> or make the joint fixed"
            )
    data = model.create_data()
    rng = np.random.default_rng(12345)
    q = rng.uniform(-np.pi, np.pi, model.nq)
    status = factor_entry(model._mi, model._mf, data._ws, q)
    if status:
        k = status - 2
        raise ModelError(
            f"{where}: joint {model.names[k]!r} moves no inertia about its axis at a generic configuration, so the "
            "generalized inertia matrix is singular"
        )


def _is_in_subtree(model: Model, k: int, root: int) -> bool:
    while k > root:
        k = model.parents[k]
    return k == root


def solve(model: Model, data: Data, phi: np.ndarray, eta: np.ndarray, mu: np.ndarray, out: np.ndarray) -> np.ndarray:
    """U D Uᵀ X = φ for the factors in data (m right-hand sides)."""
    udut_solve(
        model.parents, model.module_ptr, model.module_bodies, model.idx_v, model.nvs,
        data.E, data.r, data.S, data.Psi, data.I_hat_inv, phi, eta, mu, out,
    )  # fmt: skip
    return out


def forward_dynamics(model: Model, data: Data, q, v, tau, fext=None) -> np.ndarray:
    """Joint accelerations q̈ = GIM⁻¹ φ, φ = τ − C q̇ − gravity (A.1), in O(n); ``pinocchio.aba``.

    φ comes from inverse dynamics with q̈ = 0 (note 1 of Table 3); then the UDUᵀ recursions.
    One state q (nq,), v, tau (nv,), or a batch (B, nq), (B, nv), (B, nv) computed on all cores.
    Returns q̈ as a new (nv,) array (also left in ``data.ddq``), or (B, nv).
    """
    if fext is None:
        try:  # the fast path (_call.py): ready arrays straight to the kernel
            if aba_fast(model._mb, data._ws, q, v, tau) == 0:
                return data.ddq.copy()
        except (TypeError, AttributeError):
            pass
    q, v, tau, batch = states(model, data, q, v, tau, "tau")
    set_fext(model, data, fext)
    if batch is None:
        status = aba_entry(model._mi, model._mf, data._ws, q, v, tau, not data.fext_is_zero)
        raise_for_status(model, status, q, v, tau, "tau")
        return data.ddq.copy()
    from .batch import batch as run  # a circular import at module level: batch.py uses this module

    out, status = run(True, model, data, q, v, tau)
    raise_for_status(model, status, q, v, tau, "tau")
    return out


def udut(model: Model, data: Data, q) -> tuple[np.ndarray, np.ndarray]:
    """GIM = U D Uᵀ by block reverse Gaussian elimination (eq. 18; A.3–A.4).

    U: (nv, nv) unit upper-triangular, U_{k,j} = p_kᵀ A_{j,k}ᵀ Ψ_j for k an ancestor of j.
    D: (nv, nv) block diagonal with the z_k x z_k blocks Î_k (diagonal for 1-DOF joints).
    """
    check_data(model, data)
    check_dense_size(model, "udut")
    q = np.ascontiguousarray(configuration(model, q))
    factor(model, data, q)
    data.U[:] = 0.0
    data.D[:] = 0.0
    for k in range(1, model.njoints):
        iv, z = model.idx_v[k], model.nvs[k]
        data.U[iv : iv + z, iv : iv + z] = np.eye(z)
        data.D[iv : iv + z, iv : iv + z] = data.I_hat[k, :z, :z]
    ancestor_blocks(model.parents, model.idx_v, model.nvs, data.E, data.r, data.S, data.Psi, data.U)
    return data.U.copy(), data.D.copy()


def gim_inverse(model: Model, data: Data, q) -> np.ndarray:
    """GIM⁻¹ from the UDUᵀ factors: the recursions of Table 3 applied to the identity; ``pinocchio.computeMinverse``.

    O(n²) work and memory (the result is dense); refused above ``DENSE_LIMIT`` DOF.
    """
    check_data(model, data)
    check_dense_size(model, "gim_inverse")
    q = np.ascontiguousarray(configuration(model, q))
    factor(model, data, q)
    nv, nj = model.nv, model.njoints
    # Columns in chunks keep the η/μ workspaces (njoints x chunk x 6) small for large nv.
    chunk = min(nv, 256)
    eye = np.eye(nv)
    for c0 in range(0, nv, chunk):
        c1 = min(nv, c0 + chunk)
        m = c1 - c0
        out = np.empty((nv, m))
        solve(model, data, np.ascontiguousarray(eye[:, c0:c1]), np.empty((nj, m, 6)), np.empty((nj, m, 6)), out)
        data.gim_inv[:, c0:c1] = out
    # The recursions give GIM⁻¹ to rounding; symmetrise like Pinocchio's full matrix.
    data.gim_inv[:] = 0.5 * (data.gim_inv + data.gim_inv.T)
    return data.gim_inv.copy()
