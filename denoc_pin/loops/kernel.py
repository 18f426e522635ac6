"""Loop kinematics from the tree's workspace (E, r, S after the kinematics; t, ṫ after Table 1): the Jacobian
rows J, the residual r(q) and J̇ q̇ of every cut joint (conventions: ``denoc_pin.loops``)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..algorithms.kinematics import kinematics_entry, world_poses_into
from ..core.cuts import CUT_FIXED, CUT_POINT_ON_LINE, CUT_PRISMATIC, CUT_REVOLUTE, CUT_SPHERICAL, CUT_UNIVERSAL
from ..core.joints import CONTINUOUS
from ..core.spatial import cross3, log3, mtv3, mv3
from ..model import Data, Model, ModelError, check_data, configuration

__all__ = ["RANK_RTOL", "independent_rows", "independent_svd", "loop_jacobian", "loop_residual"]

RANK_RTOL = 1e-6
"""Constraint directions whose singular value in J is below RANK_RTOL × the largest are redundant: a loop described
twice over (a planar mechanism in 3-D), or up to a file's rounded angles (Cassie's legs: 3e-11 at the file's pose,
about 1e-9 elsewhere, while their smallest true direction is 7e-4).  ``assemble`` does not chase the residual along
them, ``constrained_forward_dynamics`` solves the other rows, ``constrained_inverse_dynamics`` does not ask q̈ to
meet them."""


def independent_svd(J: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(U_r, s_r, V_rᵀ): J's singular triplets whose singular values are at least ``RANK_RTOL`` × the largest."""
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    r = int((s > RANK_RTOL * s[0]).sum()) if s.size and s[0] > 0 else 0
    return U[:, :r], s[:r], Vt[:r]


def independent_rows(J: np.ndarray) -> np.ndarray:
    """U_r (m, r): the constraint directions that count (``independent_svd``)."""
    return independent_svd(J)[0]


@njit(cache=True)
def loop_kernel(parents, idx_v, nvs, E, r, S, t, tdot, Rw, ow, li, lf, with_bias, J, res, Jdv):
    """J (rows of Δ = J q̇), residual r and, if ``with_bias``, the rows of Δ̇ of every cut joint.

    Inputs are the tree's workspace: E, r, S after kinematics, and t, ṫ of Table 1.  Δ̇ = J q̈ + J̇ q̇
    for the q̈ that Table 1 used: J̇ q̇ when it ran with q̈ = 0.  Table 1 adds −g to every
    acceleration (gravity as base acceleration): it cancels in the differences ω̇₂ − ω̇₁ and p̈₂ − p̈₁.
    """
    nv = J.shape[1]
    world_poses_into(parents, E, r, Rw, ow)  # the placements of forward_kinematics, into data.oR, data.op
    W = np.zeros((6, nv))
    for ci in range(li.shape[0]):
        b1, b2, kind, row0 = li[ci, 0], li[ci, 1], li[ci, 2], li[ci, 3]
        f = lf[ci]
        R1, p1, R2, p2 = f[0:9].reshape(3, 3), f[9:12], f[12:21].reshape(3, 3), f[21:24]
        ax, ax2, B1, B2 = f[24:27], f[27:30], f[30:33], f[33:36]
        sel = f[36:72].reshape(6, 6).copy()
        Rc1, Rc2 = Rw[b1] @ R1, Rw[b2] @ R2
        pc1, pc2 = ow[b1] + mv3(Rw[b1], p1), ow[b2] + mv3(Rw[b2], p2)
        R12 = Rc1.T @ Rc2
        u2 = mv3(R12, ax2)
        m = (
            6
            if kind == CUT_FIXED
            else 5
            if kind <= CUT_PRISMATIC
            else 4
            if kind == CUT_UNIVERSAL
            else 3
            if kind == CUT_SPHERICAL
            else 2
        )
        if kind == CUT_UNIVERSAL:  # the blocked rotation is about n = (R₁₂ axis2) × axis, which turns
            sel[0, 0:3] = cross3(u2, ax)
        # Δ = Rc1ᵀ [ω₂ − ω₁; ṗ₂ − ṗ₁] = W q̇ through the world Jacobians of the two points
        W[:, :] = 0.0
        for side in range(2):
            sign = -1.0 if side == 0 else 1.0
            j = b1 if side == 0 else b2
            pc = pc1 if side == 0 else pc2
            while j > 0:
                rho = pc - ow[j]
                for d in range(nvs[j]):
                    om = mv3(Rw[j], S[j, 0:3, d])
                    vv = mv3(Rw[j], S[j, 3:6, d]) + cross3(om, rho)
                    col = idx_v[j] + d
                    for c in range(3):
                        W[c, col] += sign * om[c]
                        W[3 + c, col] += sign * vv[c]
                j = parents[j]
        for col in range(nv):
            wa = mtv3(Rc1, W[0:3, col])
            wl = mtv3(Rc1, W[3:6, col])
            for i in range(m):
                J[row0 + i, col] = (sel[i, 0] * wa[0] + sel[i, 1] * wa[1] + sel[i, 2] * wa[2] + sel[i, 3] * wl[0]
                                    + sel[i, 4] * wl[1] + sel[i, 5] * wl[2])  # fmt: skip
        # residual: angular rows (rotation error), then linear rows (C1→C2 in C1)
        e = mtv3(Rc1, pc2 - pc1)
        i = row0
        if kind == CUT_FIXED or kind == CUT_PRISMATIC:
            lg = log3(R12)
            res[i : i + 3] = lg
            i += 3
        elif kind == CUT_REVOLUTE:
            u = mv3(R12, ax)
            res[i] = -(B2[0] * u[0] + B2[1] * u[1] + B2[2] * u[2])
            res[i + 1] = B1[0] * u[0] + B1[1] * u[1] + B1[2] * u[2]
            i += 2
        elif kind == CUT_UNIVERSAL:
            res[i] = ax[0] * u2[0] + ax[1] * u2[1] + ax[2] * u2[2]
            i += 1
        if kind == CUT_PRISMATIC or kind == CUT_POINT_ON_LINE:
            res[i] = B1[0] * e[0] + B1[1] * e[1] + B1[2] * e[2]
            res[i + 1] = B2[0] * e[0] + B2[1] * e[1] + B2[2] * e[2]
        else:
            res[i : i + 3] = e
        if not with_bias:
            continue
        # J̇ q̇ = d/dt of the rows of Δ with q̈ = 0; C1 turns, so d/dt (Rc1ᵀ x) = Rc1ᵀ ẋ − ω₁ × (Rc1ᵀ x)
        oms = np.zeros((2, 3))
        vels = np.zeros((2, 3))
        als = np.zeros((2, 3))
        accs = np.zeros((2, 3))
        for side in range(2):
            b = b1 if side == 0 else b2
            rho = (pc1 if side == 0 else pc2) - ow[b]
            om, vo = mv3(Rw[b], t[b, 0:3]), mv3(Rw[b], t[b, 3:6])
            al, ao = mv3(Rw[b], tdot[b, 0:3]), mv3(Rw[b], tdot[b, 3:6])
            oms[side], vels[side] = om, vo + cross3(om, rho)
            als[side], accs[side] = al, ao + cross3(al, rho) + cross3(om, cross3(om, rho))
        w1 = mtv3(Rc1, oms[0])
        d_om = mtv3(Rc1, oms[1] - oms[0])
        d_v = mtv3(Rc1, vels[1] - vels[0])
        dd_a = mtv3(Rc1, als[1] - als[0]) - cross3(w1, d_om)
        dd_l = mtv3(Rc1, accs[1] - accs[0]) - cross3(w1, d_v)
        for i in range(m):
            Jdv[row0 + i] = (sel[i, 0] * dd_a[0] + sel[i, 1] * dd_a[1] + sel[i, 2] * dd_a[2] + sel[i, 3] * dd_l[0]
                             + sel[i, 4] * dd_l[1] + sel[i, 5] * dd_l[2])  # fmt: skip
        if kind == CUT_UNIVERSAL:  # ṅ = (Δω × u₂) × axis
            nd = cross3(cross3(d_om, u2), ax)
            Jdv[row0] += nd[0] * d_om[0] + nd[1] * d_om[1] + nd[2] * d_om[2]
    return 0


class LoopState:
    """Jacobian rows J, residual r and (``with_velocity``) J̇ q̇ of every cut joint and joint coupling, from the
    tree's workspace in ``data`` (kinematics done at q; t and ṫ of Table 1 with q̈ = 0 for the bias)."""

    def __init__(self, model: Model, data: Data, with_velocity: bool, q: np.ndarray):
        nc = model.n_constraints
        self.J = np.zeros((nc, model.nv))
        self.r = np.empty(nc)
        self.Jdv = np.empty(nc) if with_velocity else None
        li, lf = model.cut_buffers
        loop_kernel(model.parents, model.idx_v, model.nvs, data.E, data.r, data.S, data.t, data.tdot, data.oR, data.op,
                    li, lf, with_velocity, self.J, self.r, self.Jdv if with_velocity else self.r)  # fmt: skip
        if model.coupled:
            coupling_rows(model, q, self.J, self.r, self.Jdv)


def joint_position(model: Model, q: np.ndarray, k: int) -> float:
    """θ of a 1-DOF joint: q itself, or a continuous joint's angle atan2(sin, cos)."""
    i = int(model.idx_q[k])
    return math.atan2(q[i + 1], q[i]) if model.kinds[k] == CONTINUOUS else float(q[i])


def coupling_rows(model: Model, q: np.ndarray, J: np.ndarray, r: np.ndarray, Jdv: np.ndarray | None) -> None:
    """The coupling rows, after the cuts': θ − m θ_ref − offset = 0, so J = e_k − m e_ref and J̇ q̇ = 0 (v holds
    each joint's rate θ̇, a continuous joint's too)."""
    row = model.n_constraints - len(model.coupled)
    for c in model.coupled:
        J[row, model.idx_v[c.body]] += 1.0
        J[row, model.idx_v[c.reference]] -= c.multiplier
        e = joint_position(model, q, c.body) - c.multiplier * joint_position(model, q, c.reference) - c.offset
        if model.kinds[c.body] == CONTINUOUS:  # an angle: the nearest turn
            e = math.remainder(e, 2.0 * math.pi)
        r[row] = e
        if Jdv is not None:
            Jdv[row] = 0.0
        row += 1


def kinematics(model: Model, data: Data, q: np.ndarray) -> None:
    """The tree's kinematics at q into data."""
    kinematics_entry(model.mi, model.mf, data.ws, q)


def need_loops(model: Model, what: str) -> None:
    if not model.n_constraints:
        raise ModelError(f"{what}: model {model.name!r} has no loop joints or couplings (model.loops and "
                         "model.couplings are empty)")  # fmt: skip


def loop_residual(model: Model, q, data: Data | None = None) -> np.ndarray:
    """Position error r(q) of every cut joint, stacked in ``model.loops`` order (n_constraints,).

    Linear rows [m] are the components of C1→C2 in C1; angular rows [rad] the rotation error
    (module docstring).  Zero exactly when every loop is closed.
    """
    data = data_for(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    kinematics(model, data, q)
    return LoopState(model, data, False, q).r


def loop_jacobian(model: Model, q, data: Data | None = None) -> np.ndarray:
    """Constraint Jacobian J (n_constraints, nv): J q̇ = the blocked components of the relative twist
    of C2 w.r.t. C1, in C1, [ω; v] rows as in the module docstring; ṙ = J q̇ on the constraint manifold."""
    data = data_for(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    kinematics(model, data, q)
    return LoopState(model, data, False, q).J


def data_for(model: Model, data: Data | None) -> Data:
    if data is None:
        return model.create_data()
    check_data(model, data)
    return data
