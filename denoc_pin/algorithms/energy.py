"""Kinetic and potential energy in O(n) (Pinocchio's computeKineticEnergy / computePotentialEnergy)."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..core.layout import data_views, model_views
from ..core.spatial import mass_matrix_into
from ..model import Data, Model, check_data, configuration, vector
from .kinematics import kinematics_entry, twist_and_rate, world_poses_into
from .protocol import MF, MI, VEC, Entry, kernel_array

__all__ = ["energy"]


@njit(cache=True)
def energy_core(mv, dv, v):
    """(kinetic, potential) with the kinematics of q already in the workspace views dv.

    Kinetic: ½ Σ t_kᵀ M_k t_k with the body twists t_k = [ω; ȯ] (M_k about the body origin, eq. 2b).
    Potential: −Σ m_k g · c_k with c_k the centre of mass in the base frame.
    """
    parents, gravity = mv.parents, mv.gravity
    masses, coms, Io = mv.masses, mv.coms, mv.inertias_origin
    E, r, S, t, tdot, R, o = dv.E, dv.r, dv.S, dv.t, dv.tdot, dv.oR, dv.op
    Mk = np.empty((6, 6))
    nj = len(parents)
    world_poses_into(parents, E, r, R, o)  # the placements of forward_kinematics
    t[0, :] = 0.0
    tdot[0, :] = 0.0
    kinetic = 0.0
    potential = 0.0
    for k in range(1, nj):
        # t_k = A_{k,β} t_β + p_k θ̇_k (eq. 5): the kinematics' one recursion (its ṫ_k, with q̈ = 0, unused here)
        twist_and_rate(mv.kinds, parents, mv.idx_v, mv.nvs, mv.axes2, E, r, S, v, v, False, t, tdot, k)
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


ENERGY = Entry(
    energy_entry,
    types.UniTuple(types.float64, 2)(MI, MF, VEC, VEC, VEC),
    states=("q", "v"),
    group="energy",
    what="kinetic and potential energy",
    seconds=10,
)


def energy(model: Model, data: Data, q, v) -> tuple[float, float]:
    """(kinetic, potential) energy at (q, v), in O(n): ½ q̇ᵀ I(q) q̇ from the body twists and
    −Σ m_k g·c_k (Pinocchio's computeKineticEnergy / computePotentialEnergy)."""
    check_data(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    v = np.ascontiguousarray(vector(v, model.nv, "v"))
    try:
        kinetic, potential = energy_entry(model.mi, model.mf, data.ws, q, v)
    except TypeError:  # a read-only q or v (the kernel takes writable arrays): copies, rather than a check a call
        kinetic, potential = energy_entry(model.mi, model.mf, data.ws, kernel_array(q), kernel_array(v))
    return float(kinetic), float(potential)
