"""The explicit DeNOC matrices of section 2 (Shah, Saha & Dutt eq. 3–13), built densely.

Everything here is written in the inertial (world) frame, exactly as the paper writes it:
A_{k,j} = [[1, O], [ã_{k,j}, 1]] with a_{k,j} = o_j − o_k, p_k = [e_k; 0] or [0; e_k], and the
time derivatives Ȧ_{k,j} = [[O, O], [(ȧ_{k,j})~, O]], ṗ_k = Ω_k p_k.  The poses R_k, o_k and the p_k
come from the one kinematics of the package (``forward_kinematics``); the matrices, their products and the GIM
and MCI they define are formed here densely, apart from the compiled recursions (Tables 1 and 3), which makes
them a second route to the dynamics (and a teaching view for small systems); both are tested against Pinocchio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.joints import turns_with_parent
from ..core.spatial import inertia_about_origin, skew
from ..model import Model, ModelError, configuration, vector
from .kinematics_api import forward_kinematics

__all__ = ["DenocMatrices", "denoc_matrices"]

MAX_BODIES = 500
"""denoc_matrices refuses larger models: its 6n x 6n matrices grow as n²."""


@dataclass(frozen=True)
class DenocMatrices:
    """Explicit matrices of eq. (3)–(13) for n bodies (blocks in body order 1..n, [ω; v], world frame).

    N_l: (6n, 6n) block lower-triangular twist-propagation matrix (eq. 10).
    N_d: (6n, nv) block-diagonal joint-rate propagation matrix, blocks p_k (eq. 10).
    N: (6n, nv) = N_l N_d, so that t = N q̇ (eq. 9).
    N_dot: (6n, nv) its time derivative Ṅ = Ṅ_l N_d + N_l Ṅ_d.
    M, Omega, E: (6n, 6n) generalized mass, angular-velocity and coupling matrices (eq. 4).
    t: (6n,) generalized twist [ω_k; ȯ_k] of every body.
    gim: (nv, nv) I = Nᵀ M N (eq. 13).
    mci: (nv, nv) C = Nᵀ (M Ṅ + Ω M E N) (eq. 13).
    gravity: (nv,) generalized gravity force −Nᵀ w_g, so that I q̈ + C q̇ + gravity = τ.
    """

    N_l: np.ndarray
    N_d: np.ndarray
    N: np.ndarray
    N_dot: np.ndarray
    M: np.ndarray
    Omega: np.ndarray
    E: np.ndarray
    t: np.ndarray
    gim: np.ndarray
    mci: np.ndarray
    gravity: np.ndarray


def world_poses(model: Model, q: np.ndarray):
    """Orientation R_k and origin o_k of every body in the world frame, and p_k in world components, from the
    compiled kinematics (``forward_kinematics``).

    Also, per column of p_k, the body whose rotation carries that column (ṗ = ω × p for it):
    body k itself, except the first axis of a universal joint, which is fixed in the parent.
    """
    data = model.create_data()
    forward_kinematics(model, data, q)
    R, o = data.oR.copy(), data.op.copy()
    P, carrier = [np.zeros((6, 0))], [[]]
    for k in range(1, model.njoints):
        n, kind = int(model.nvs[k]), int(model.kinds[k])
        Sk = data.S[k, :, :n]
        P.append(np.vstack([R[k] @ Sk[:3], R[k] @ Sk[3:]]))  # p_k in world components
        carrier.append([int(model.parents[k]) if turns_with_parent(kind, c) else k for c in range(n)])
    return R, o, P, carrier


def denoc_matrices(model: Model, q, v) -> DenocMatrices:
    """The DeNOC matrices N_l, N_d, M, Ω, E and the GIM/MCI they define (eq. 3–13), densely.

    Refuses models with more than ``MAX_BODIES`` bodies.
    """
    n = model.njoints - 1
    if n > MAX_BODIES:
        raise ModelError(
            f"denoc_matrices: model {model.name!r} has {n} bodies; the explicit 6n x 6n matrices are built only up to "
            f"n = {MAX_BODIES} (use the recursive algorithms beyond that)"
        )
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    R, o, P, carrier = world_poses(model, q)

    def blk(k: int) -> slice:  # rows of body k ≥ 1 in the 6n-vectors
        return slice(6 * (k - 1), 6 * k)

    def cols(k: int) -> slice:
        return slice(model.idx_v[k], model.idx_v[k] + model.nvs[k])

    ancestors = [[] for _ in range(n + 1)]  # ancestors[k]: bodies j ≥ 1 on the path to the base, k included
    for k in range(1, n + 1):
        b = model.parents[k]
        ancestors[k] = [k] + (ancestors[b] if b > 0 else [])

    def A(k: int, j: int) -> np.ndarray:
        """A_{k,j} = [[1, O], [ã_{k,j}, 1]], a_{k,j} = o_j − o_k (eq. 7b)."""
        out = np.eye(6)
        out[3:, :3] = skew(o[j] - o[k])
        return out

    N_l = np.zeros((6 * n, 6 * n))
    N_d = np.zeros((6 * n, model.nv))
    for k in range(1, n + 1):
        for j in ancestors[k]:
            N_l[blk(k), blk(j)] = A(k, j)
        N_d[blk(k), cols(k)] = P[k]
    N = N_l @ N_d
    t = N @ v  # t = N_l N_d q̇ (eq. 9)
    omega = [np.zeros(3)] + [t[blk(k)][:3] for k in range(1, n + 1)]
    odot = [np.zeros(3)] + [t[blk(k)][3:] for k in range(1, n + 1)]

    M = np.zeros((6 * n, 6 * n))
    Omega = np.zeros((6 * n, 6 * n))
    E = np.zeros((6 * n, 6 * n))
    N_l_dot = np.zeros((6 * n, 6 * n))
    N_d_dot = np.zeros((6 * n, model.nv))
    w_g = np.zeros(6 * n)
    for k in range(1, n + 1):
        Rk, m = R[k], model.masses[k]
        d = Rk @ model.coms[k]
        I_o = inertia_about_origin(m, d, Rk @ model.inertias[k] @ Rk.T)
        # M_k = [[I_k, m d̃], [−m d̃, m 1]] (eq. 2b)
        M[blk(k), blk(k)] = np.block([[I_o, m * skew(d)], [-m * skew(d), m * np.eye(3)]])
        W = skew(omega[k])
        Omega[blk(k), blk(k)] = np.block([[W, np.zeros((3, 3))], [np.zeros((3, 3)), W]])
        E[blk(k), blk(k)][:3, :3] = np.eye(3)
        for j in ancestors[k][1:]:
            # Ȧ_{k,j} = [[O, O], [(ȯ_j − ȯ_k)~, O]]
            N_l_dot[blk(k), blk(j)][3:, :3] = skew(odot[j] - odot[k])
        # ṗ_k = Ω p_k column by column, Ω of the body that carries the axis (body k, or the parent
        # for a universal joint's first axis)
        for c, body in enumerate(carrier[k]):
            Wc = skew(omega[body])
            N_d_dot[blk(k), model.idx_v[k] + c] = np.r_[Wc @ P[k][:3, c], Wc @ P[k][3:, c]]
        # gravity m g at the centre of mass: moment d × m g about o_k, force m g
        w_g[blk(k)] = np.concatenate([np.cross(d, m * model.gravity), m * model.gravity])
    N_dot = N_l_dot @ N_d + N_l @ N_d_dot
    gim = N.T @ M @ N
    mci = N.T @ (M @ N_dot + Omega @ M @ E @ N)
    return DenocMatrices(
        N_l=N_l, N_d=N_d, N=N, N_dot=N_dot, M=M, Omega=Omega, E=E, t=t, gim=gim, mci=mci, gravity=-N.T @ w_g
    )
