"""The generalized inertia matrix by composite module inertias (Shah, Saha & Dutt, eq. 16–17).

I_{k,j} = p_kᵀ A_{j,k}ᵀ M̃_j p_j for k an ancestor of j (or k = j), with
M̃_k = M_k + Σ_children A_{c,k}ᵀ M̃_c A_{c,k}.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import all_finite, data_views, model_views
from ..model import Data, Model, ModelError, check_data, configuration
from ..spatial import add_congruence, add_transferred_wrench, mass_matrix_into, matmul_into, matmul_tn_into
from ._call import BAD_LENGTH, ENTRY_GIM, _kernel_array, _ready, raise_for_status
from .kinematics import kinematics_core

DENSE_LIMIT = 5_000
"""Largest nv for which dense nv x nv results (GIM, GIM⁻¹, U, D) are formed (5,000² doubles: 200 MB).
Beyond it the O(n) recursions are the tool: the GIM's condition number grows like n⁴ on chains."""


def check_dense_size(model: Model, what: str) -> None:
    if model.nv > DENSE_LIMIT:
        raise ModelError(
            f"{what}: model {model.name!r} has nv = {model.nv}; dense nv x nv matrices are formed only up to "
            f"nv = {DENSE_LIMIT} ({model.nv}² doubles would take {model.nv**2 * 8 / 1e9:.1f} GB). "
            "Use forward_dynamics / inverse_dynamics, which are O(n) in time and memory."
        )


@njit(cache=True)
def composite_inertias(parents, module_ptr, module_bodies, masses, coms, Io, E, r, M_tilde):
    """M̃_k = M_k + Σ_children A_{c,k}ᵀ M̃_c A_{c,k}, leaves first (eq. 17); M_k from (m_k, d_k, I_k about o_k)."""
    scratch = np.empty((4, 6, 6))
    M_tilde[0, :, :] = 0.0
    for k in range(1, len(parents)):
        mass_matrix_into(masses[k], coms[k], Io[k], M_tilde[k])
    for i in range(len(module_ptr) - 2, -1, -1):
        for j in range(module_ptr[i + 1] - 1, module_ptr[i] - 1, -1):
            k = module_bodies[j]
            b = parents[k]
            if b > 0:
                add_congruence(E[k], r[k], M_tilde[k], M_tilde[b], scratch)
    return 0


@njit(cache=True)
def ancestor_blocks(parents, idx_v, nvs, E, r, S, B, out):
    """out[b, j] = p_bᵀ A_{j,b}ᵀ B_j for every strict ancestor b of every body j (blocks of nv x nv).

    With B_j = M̃_j p_j these are the GIM's off-diagonal blocks (eq. 16); with B_j = Ψ_j
    they are U's (eq. 18, A.4).  F ← A_{c,b}ᵀ F carries B_j up one body at a time.
    """
    F = np.zeros((6, 6))
    G = np.zeros(6)
    col = np.zeros(6)
    for j in range(1, len(parents)):
        jv = idx_v[j]
        zj = nvs[j]
        F[:, :zj] = B[j, :, :zj]
        c = j
        b = parents[j]
        while b > 0:
            for d in range(zj):
                G[:] = 0.0
                col[:] = F[:, d]
                add_transferred_wrench(E[c], r[c], col, G)
                F[:, d] = G
            bv = idx_v[b]
            matmul_tn_into(S[b, :, : nvs[b]], F[:, :zj], out[bv : bv + nvs[b], jv : jv + zj])
            c = b
            b = parents[b]
    return 0


@njit(cache=True)
def gim_kernel(parents, idx_v, nvs, E, r, S, M_tilde, B, out):
    """The GIM from composite inertias (eq. 16): I_{j,j} = p_jᵀ M̃_j p_j, then the ancestors' blocks."""
    for j in range(1, len(parents)):
        jv = idx_v[j]
        zj = nvs[j]
        matmul_into(M_tilde[j], S[j, :, :zj], B[j, :, :zj])
        matmul_tn_into(S[j, :, :zj], B[j, :, :zj], out[jv : jv + zj, jv : jv + zj])
    ancestor_blocks(parents, idx_v, nvs, E, r, S, B, out)
    # The walk filled the upper triangle; the GIM is symmetric.
    n = out.shape[0]
    for i in range(n):
        for k in range(i + 1, n):
            out[k, i] = out[i, k]
    return 0


@njit(ENTRY_GIM, cache=True)
def crba_entry(mi, mf, ws, M_tilde, q, out):
    """Kinematics, composite inertias (eq. 17) and the GIM (eq. 16) into out; 1 if q is not finite,
    BAD_LENGTH if q has the wrong length."""
    if len(q) != mi[4]:
        return BAD_LENGTH
    if not all_finite(q):
        return 1
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    kinematics_core(mv, dv, q)
    composite_inertias(
        mv.parents, mv.module_ptr, mv.module_bodies, mv.masses, mv.coms, mv.inertias_origin, dv.E, dv.r, M_tilde
    )
    out[:, :] = 0.0
    gim_kernel(mv.parents, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, M_tilde, dv.Psi_hat, out)
    return 0


def gim(model: Model, data: Data, q) -> np.ndarray:
    """The full symmetric generalized inertia matrix I(q) (eq. 13, 16–17); ``pinocchio.crba``.

    O(n·depth) work; refused above ``DENSE_LIMIT`` DOF.  Returns a new (nv, nv) array
    (also left in ``data.gim``).
    """
    if getattr(data, "model", None) is model:
        out, M_tilde = data._dense.get("gim"), data._dense.get("M_tilde")  # allocated by the first call
        if out is not None and M_tilde is not None:
            try:  # the fast path (_call.py): a ready q straight to the kernel
                if crba_entry(model._mi, model._mf, data._ws, M_tilde, q, out) == 0:
                    return out.copy()
            except TypeError:
                pass
    else:
        check_data(model, data)
    check_dense_size(model, "gim")
    if not _ready(q, model.nq):
        q = _kernel_array(configuration(model, q))
    out = data.gim
    raise_for_status(model, crba_entry(model._mi, model._mf, data._ws, data.M_tilde, q, out), q, None, None, "")
    return out.copy()
