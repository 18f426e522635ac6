"""Recursive O(n) forward dynamics through the UDUᵀ decomposition of the GIM.

Shah, Saha & Dutt eq. (18)–(23) and Table 3 for trees of kinematic modules; Agarwal et al.
A.1–A.8 for the serial case.  The GIM is never formed: block reverse Gaussian elimination
gives U and D implicitly through the articulated mass matrices M̂_k, Ψ̂_k, Ψ_k and Î_k, and
U D Uᵀ q̈ = φ is solved by one backward and one forward recursion.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import Data, Model, ModelError, check_data, configuration, vector
from ..spatial import (
    add_congruence,
    add_transferred_wrench,
    matmul_into,
    matmul_nt_into,
    matmul_tn_into,
    propagate_twist,
    spd_inverse_into,
)
from . import inverse as _id
from .composite import ancestor_blocks, check_dense_size
from .kinematics import run_kinematics


@njit(cache=True)
def udut_factor(parents, module_ptr, module_bodies, nvs, M, E, r, S, M_hat, Psi_hat, Psi, I_hat, I_hat_inv):
    """Articulated mass matrices and the blocks of U and D (eq. 19–21; A.4–A.7).

    Returns 0, or the body index k whose Î_k is not positive definite (singular GIM).
    """
    M_bar = np.zeros((6, 6))
    for k in range(len(parents)):
        M_hat[k, :, :] = M[k]
    for i in range(len(module_ptr) - 2, -1, -1):
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            z = nvs[k]
            Pk = S[k, :, :z]
            # Ψ̂_k = M̂_k P_k                                                   (eq. 19, A.5)
            matmul_into(M_hat[k], Pk, Psi_hat[k, :, :z])
            # Î_k = P_kᵀ Ψ̂_k                                                  (eq. 19, A.4)
            matmul_tn_into(Pk, Psi_hat[k, :, :z], I_hat[k, :z, :z])
            if not spd_inverse_into(I_hat[k], z, I_hat_inv[k]):
                return k
            # Ψ_k = Ψ̂_k Î_k⁻¹                                                 (eq. 19, A.5)
            matmul_into(Psi_hat[k, :, :z], I_hat_inv[k, :z, :z], Psi[k, :, :z])
            b = parents[k]
            if b > 0:
                # M̂_β += A_{k,β}ᵀ Φ_k M̂_k A_{k,β},  Φ_k M̂_k = M̂_k − Ψ̂_k Ψ_kᵀ  (eq. 20–21, A.6–A.7)
                matmul_nt_into(Psi_hat[k, :, :z], Psi[k, :, :z], M_bar)
                M_bar[:, :] = M_hat[k] - M_bar
                add_congruence(E[k], r[k], M_bar, M_hat[b])
    return 0


@njit(cache=True)
def udut_solve(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, phi, eta, mu, ddq):
    """Solve U D Uᵀ q̈ = φ for m right-hand sides (Table 3, A.8).

    phi, ddq: (nv, m); eta, mu: (njoints, m, 6) workspaces for η_k and μ_k.
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


def factor(model: Model, data: Data) -> None:
    """UDUᵀ factors at the configuration already in data.E/r/S; a clear error when singular."""
    k = udut_factor(
        model.parents, model.module_ptr, model.module_bodies, model.nvs, model.M,
        data.E, data.r, data.S, data.M_hat, data.Psi_hat, data.Psi, data.I_hat, data.I_hat_inv,
    )  # fmt: skip
    if k:
        raise ValueError(
            f"the generalized inertia matrix is singular at this configuration: joint {model.names[k]!r} moves no mass "
            f"(articulated inertia Î_k is not positive definite)"
        )


def check_not_singular(model: Model, where: str) -> None:
    """Refuse a model whose GIM is singular everywhere: a movable joint that moves no mass.

    First structurally (a subtree with zero mass and zero inertia, e.g. a massless leaf
    link), then by the UDUᵀ pivots Î_k at a generic (seeded random) configuration.
    """
    nj = model.njoints
    has_inertia = np.array([model.masses[k] > 0 or np.any(model.inertias[k] != 0) for k in range(nj)])
    subtree = has_inertia.copy()
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
    run_kinematics(model, data, q)
    k = udut_factor(
        model.parents, model.module_ptr, model.module_bodies, model.nvs, model.M,
        data.E, data.r, data.S, data.M_hat, data.Psi_hat, data.Psi, data.I_hat, data.I_hat_inv,
    )  # fmt: skip
    if k:
        raise ModelError(
            f"{where}: joint {model.names[k]!r} moves no inertia about its axis at a generic configuration, so the "
            "generalized inertia matrix is singular"
        )


def _is_in_subtree(model: Model, k: int, root: int) -> bool:
    while k > root:
        k = model.parents[k]
    return k == root


def solve(model: Model, data: Data, phi: np.ndarray, eta: np.ndarray, mu: np.ndarray, out: np.ndarray) -> np.ndarray:
    udut_solve(
        model.parents, model.module_ptr, model.module_bodies, model.idx_v, model.nvs,
        data.E, data.r, data.S, data.Psi, data.I_hat_inv, phi, eta, mu, out,
    )  # fmt: skip
    return out


def forward_dynamics(model: Model, data: Data, q, v, tau, fext=None) -> np.ndarray:
    """Joint accelerations q̈ = GIM⁻¹ φ, φ = τ − C q̇ − gravity (A.1), in O(n); ``pinocchio.aba``.

    φ comes from inverse dynamics with q̈ = 0 (note 1 of Table 3); then the UDUᵀ recursions.
    Returns q̈ as a new (nv,) array (also left in ``data.ddq``).
    """
    check_data(model, data)
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    tau = vector(tau, model.nv, "tau")
    h = _id._run(model, data, q, v, data.zeros_v, _id._fext_array(model, data, fext))
    np.subtract(tau, h, out=data.phi)
    factor(model, data)
    nj = model.njoints
    solve(
        model,
        data,
        data.phi.reshape(-1, 1),
        data.eta.reshape(nj, 1, 6),
        data.mu.reshape(nj, 1, 6),
        data.ddq.reshape(-1, 1),
    )
    return data.ddq.copy()


def udut(model: Model, data: Data, q) -> tuple[np.ndarray, np.ndarray]:
    """GIM = U D Uᵀ by block reverse Gaussian elimination (eq. 18; A.3–A.4).

    U: (nv, nv) unit upper-triangular, U_{k,j} = p_kᵀ A_{j,k}ᵀ Ψ_j for k an ancestor of j.
    D: (nv, nv) block diagonal with the z_k x z_k blocks Î_k (diagonal for 1-DOF joints).
    """
    check_data(model, data)
    check_dense_size(model, "udut")
    q = configuration(model, q)
    run_kinematics(model, data, q)
    factor(model, data)
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
    q = configuration(model, q)
    run_kinematics(model, data, q)
    factor(model, data)
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
