"""Kinetic and potential energy in O(n) (Pinocchio's computeKineticEnergy / computePotentialEnergy)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.layout import data_views, model_views
from ..core.spatial import mass_matrix_into, propagated_twist
from ..model import Data, Model, check_data, configuration, vector
from .kinematics import kinematics_entry, world_poses_into

__all__ = ["energy"]


@njit(cache=True)
def energy_core(mv, dv, v):
    """(kinetic, potential) with the kinematics of q already in the workspace views dv.

    Kinetic: ½ Σ t_kᵀ M_k t_k with the body twists t_k = [ω; ȯ] (M_k about the body origin, eq. 2b).
    Potential: −Σ m_k g · c_k with c_k the centre of mass in the base frame.
    """
    parents, idx_v, nvs, gravity = mv.parents, mv.idx_v, mv.nvs, mv.gravity
    masses, coms, Io = mv.masses, mv.coms, mv.inertias_origin
    E, r, S, t = dv.E, dv.r, dv.S, dv.t
    Mk = np.empty((6, 6))
    nj = len(parents)
    R = np.empty((nj, 3, 3))  # body orientations in the base frame
    o = np.empty((nj, 3))  # body origins in the base frame
    world_poses_into(parents, E, r, R, o)
    for c in range(6):
        t[0, c] = 0.0
    kinetic = 0.0
    potential = 0.0
    for k in range(1, nj):
        b = parents[k]
        iv = idx_v[k]
        tb = t[b]
        # t_k = A_{k,β} t_β + p_k θ̇_k (eq. 5)
        t[k, 0], t[k, 1], t[k, 2], t[k, 3], t[k, 4], t[k, 5] = propagated_twist(
            E[k], r[k], tb[0], tb[1], tb[2], tb[3], tb[4], tb[5]
        )
        for c in range(6):
            for d in range(nvs[k]):
                t[k, c] += S[k, c, d] * v[iv + d]
        mass_matrix_into(masses[k], coms[k], Io[k], Mk)
        for c in range(6):
            Mt = 0.0
            for d in range(6):
                Mt += Mk[c, d] * t[k, d]
            kinetic += 0.5 * t[k, c] * Mt
        for c in range(3):
            ck = o[k, c] + R[k, c, 0] * coms[k, 0] + R[k, c, 1] * coms[k, 1] + R[k, c, 2] * coms[k, 2]
            potential -= masses[k] * gravity[c] * ck
    return kinetic, potential


@njit(cache=True)
def energy_entry(mi, mf, ws, q, v):
    kinematics_entry(mi, mf, ws, q)
    return energy_core(model_views(mi, mf), data_views(ws, mi), v)


def energy(model: Model, data: Data, q, v) -> tuple[float, float]:
    """(kinetic, potential) energy at (q, v), in O(n): ½ q̇ᵀ I(q) q̇ from the body twists and
    −Σ m_k g·c_k (Pinocchio's computeKineticEnergy / computePotentialEnergy)."""
    check_data(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    v = np.ascontiguousarray(vector(v, model.nv, "v"))
    kinetic, potential = energy_entry(model.mi, model.mf, data.ws, q, v)
    return float(kinetic), float(potential)
