"""Isobe & Yagi's connectivity matrix and parallel solution scheme of inverse dynamics.

``connectivity_matrix`` builds the member-length (support) matrix pattern by the flow chart of
the paper's Fig. 3, from the parent data alone.  ``inverse_dynamics`` computes torques in the
dimension of force, τ = L T P (eq. 2):

- P: the nodal forces of every link, evaluated independently in absolute Cartesian coordinates
  (the "parallel" part, vectorised over links): the force F_k = m_k (a_Gk − g) and the moment
  N_k = I_k ω̇_k + ω_k × I_k ω_k about the centre of mass that the link's own motion requires;
- T: the transformation of each nodal force to the frame of a supporting joint j, i.e. the wrench
  [(c_k − o_j) × F_k + N_k; F_k] about the joint origin, projected on the joint's motion p_j;
- L: the connectivity (which joint supports which link) and the member lengths c_k − o_j.

The paper leaves the exact L_i, T and P to its reference [4], which is not among the seed
papers; this is a reconstruction from its description, for rigid links.  Its cost is the number
of (joint, supported link) pairs, O(n · depth): O(n²) on a serial chain, against O(n) for the
recursion of Table 1.  Gravity is the model's; external forces are not taken.
"""

from __future__ import annotations

import numpy as np

from ..model import Model, ModelError, configuration, vector
from .dynamics_api import DENSE_LIMIT
from .explicit import world_poses

__all__ = ["connectivity_matrix", "inverse_dynamics"]


def connectivity_matrix(model: Model) -> np.ndarray:
    """(nb, nb) 0/1 matrix: entry [j − 1, k − 1] is 1 when joint j supports link k (bodies 1..nb).

    Dense, so refused above ``DENSE_LIMIT`` bodies like the other dense results.

    Built by the flow chart of Isobe & Yagi's Fig. 3, from ``model.parents`` alone:
    1) from link nb down to 1, place link i in row i, column i;
    2) add row i to the row of its mother link j (skipped when the mother is the base);
    3) repeat until link 1.  Serial structures add up (eq. 4); branches duplicate their rows into the
    branching joint and the joints above it (eq. 6).
    """
    nb = model.njoints - 1
    if nb > DENSE_LIMIT:
        raise ModelError(
            f"connectivity_matrix: model {model.name!r} has {nb} bodies; the dense nb x nb matrix is built only up to "
            f"{DENSE_LIMIT} bodies"
        )
    L = np.zeros((nb, nb), dtype=np.int64)
    for i in range(nb, 0, -1):
        L[i - 1, i - 1] = 1
        mother = int(model.parents[i])
        if mother > 0:
            L[mother - 1] += L[i - 1]
    return L


def _absolute_motion(model: Model, R, o, P, carrier, v, a):
    """World-frame twists t_k = [ω_k; ȯ_k] and twist-rates of every body, as the sums over the
    joints j that support body k of eq. (9) and its time derivative, without forming N:

        t_k = Σ_j A_{k,j} p_j q̇_j,   ṫ_k = Σ_j (A_{k,j} p_j q̈_j + A_{k,j} ṗ_j q̇_j + Ȧ_{k,j} p_j q̇_j)

    with A_{k,j} carrying a twist from o_j to o_k and ṗ_j = ω × p_j for the body carrying the axis.
    O(n · depth), independent of the recursions of Table 1.
    """
    L = connectivity_matrix(model)
    n = model.njoints - 1
    # Per joint j (independent of the body it supports): its twist p_j q̇_j = [w_j; u_j], and the
    # twist-rate terms p_j q̈_j + ṗ_j q̇_j = [alpha_j; beta_j].
    w, u, alpha, beta = np.zeros((4, n + 1, 3))
    for j in range(1, n + 1):
        iv, z = model.idx_v[j], model.nvs[j]
        vj, aj = v[iv : iv + z], a[iv : iv + z]
        w[j], u[j] = P[j][:3] @ vj, P[j][3:] @ vj
        alpha[j], beta[j] = P[j][:3] @ aj, P[j][3:] @ aj
    omega = np.zeros((n + 1, 3))
    odot = np.zeros((n + 1, 3))
    for k in range(1, n + 1):
        js = np.flatnonzero(L[:, k - 1]) + 1  # the joints that support body k
        omega[k] = w[js].sum(axis=0)
        odot[k] = u[js].sum(axis=0) + np.cross(w[js], o[k] - o[js]).sum(axis=0)
    for j in range(1, n + 1):  # ṗ_j q̇_j: each column turns with the body carrying it
        iv, z = model.idx_v[j], model.nvs[j]
        for c in range(z):
            wc = omega[carrier[j][c]]
            alpha[j] += np.cross(wc, P[j][:3, c]) * v[iv + c]
            beta[j] += np.cross(wc, P[j][3:, c]) * v[iv + c]
    omega_dot = np.zeros((n + 1, 3))
    o_ddot = np.zeros((n + 1, 3))
    for k in range(1, n + 1):
        js = np.flatnonzero(L[:, k - 1]) + 1
        omega_dot[k] = alpha[js].sum(axis=0)
        o_ddot[k] = (
            beta[js].sum(axis=0)
            + np.cross(alpha[js], o[k] - o[js]).sum(axis=0)
            + np.cross(w[js], odot[k] - odot[js]).sum(axis=0)
        )
    return omega[1:], odot[1:], omega_dot[1:], o_ddot[1:]


def inverse_dynamics(model: Model, q, v, a) -> np.ndarray:
    """Joint torques by the parallel solution scheme, τ = L T P (Isobe & Yagi eq. 2); ``pinocchio.rnea``.

    A third, independent route to the torques of ``denoc_pin.inverse_dynamics`` (rigid links, no
    external forces).  O(n · depth) work in Python: meant for checking and teaching, not for speed.
    """
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    a = vector(a, model.nv, "a")
    n = model.njoints - 1
    R, o, P_axes, carrier = world_poses(model, q)
    omega, _, omega_dot, o_ddot = _absolute_motion(model, R, o, P_axes, carrier, v, a)
    # P: nodal forces per link, independently and all at once (the parallel part)
    Rb = R[1:]
    d = np.einsum("kij,kj->ki", Rb, model.coms[1:])  # origin → centre of mass, world frame
    c = o[1:] + d  # centres of mass
    a_G = o_ddot + np.cross(omega_dot, d) + np.cross(omega, np.cross(omega, d))
    m = model.masses[1:, None]
    F = m * (a_G - model.gravity)
    I_w = np.einsum("kij,kjl,kml->kim", Rb, model.inertias[1:], Rb)  # R I Rᵀ
    N = np.einsum("kij,kj->ki", I_w, omega_dot) + np.cross(omega, np.einsum("kij,kj->ki", I_w, omega))
    # L T P: for each joint j, the wrenches of the links it supports, about o_j, on its motion p_j
    L = connectivity_matrix(model)
    tau = np.zeros(model.nv)
    for j in range(n):
        supported = np.flatnonzero(L[j])
        lever = c[supported] - o[j + 1]  # member lengths c_k − o_j
        moment = (np.cross(lever, F[supported]) + N[supported]).sum(axis=0)
        force = F[supported].sum(axis=0)
        iv, z = model.idx_v[j + 1], model.nvs[j + 1]
        tau[iv : iv + z] = P_axes[j + 1].T @ np.concatenate([moment, force])
    return tau
