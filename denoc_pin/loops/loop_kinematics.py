"""Loop kinematics from the tree's workspace (E, r, S after the kinematics; t, ṫ after Table 1): the Jacobian
rows J, the residual r(q) and J̇ q̇ of every cut joint and joint coupling (conventions: ``denoc_pin.loops``).
All of it in one compiled kernel that allocates nothing: its 3-vectors are tuples, its matrices live in the loop
workspace (``Data.lw``)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from ..algorithms.kinematics import kinematics_entry, world_poses_into
from ..algorithms.protocol import CB, MF, MI, VEC
from ..core import cuts as ck  # the cut kinds (CUT_*) and the packed buffer's columns (P_*)
from ..core.joints import GROUP_OF, SO2
from ..core.layout import borrow, data_views, loop_views, model_views
from ..core.spatial import add3, cross3, dot3, log3, matmul_into, matmul_tn_into, mtv3, mv3, sub3
from ..kernel_cache import compile_on_first_use
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


@njit(cache=True, inline="always")
def joint_position_of(kinds, idx_q, q, k):
    """θ of a 1-DOF joint: q itself, or on SO(2) (a continuous joint) the angle atan2(sin, cos)."""
    i = idx_q[k]
    return math.atan2(q[i + 1], q[i]) if GROUP_OF[kinds[k]] == SO2 else q[i]


@njit(cache=True, inline="always")
def cut_count(kind):
    """The rows of a cut of this kind (``core.cuts``)."""
    if kind == ck.CUT_FIXED:
        return 6
    if kind <= ck.CUT_PRISMATIC:
        return 5
    if kind == ck.CUT_UNIVERSAL:
        return 4
    return 3 if kind == ck.CUT_SPHERICAL else 2


@njit(cache=True, inline="always")
def selected(sel, i, a, l):
    """Row i of the selection rows applied to [a; l]."""
    return (sel[i, 0] * a[0] + sel[i, 1] * a[1] + sel[i, 2] * a[2] + sel[i, 3] * l[0] + sel[i, 4] * l[1]
            + sel[i, 5] * l[2])  # fmt: skip


@njit(cache=True, inline="always")
def cut_frames(c, Rw, ow, kind, Rc1, Rc2, R12, sel):
    """A packed cut ``c`` (``core.tables.CUT_ROW``) at the bodies' world placements (Rw, ow): C1's and C2's world
    frames into Rc1, Rc2, C2's orientation in C1 into R12 (R₁₂ = Rc1ᵀ Rc2), its selection rows into sel (a
    universal's first row the blocked rotation's axis n = (R₁₂ axis2) × axis, which turns).  Returns (pc1, pc2,
    axis, axis2, b₁, b₂, u₂ = R₁₂ axis2): the cut points in the world and the axes in C1."""
    b1, b2 = int(c[ck.P_BODY1]), int(c[ck.P_BODY2])
    R1, p1 = c[ck.P_R1 : ck.P_R1 + 9].reshape(3, 3), c[ck.P_P1 : ck.P_P1 + 3]
    R2, p2 = c[ck.P_R2 : ck.P_R2 + 9].reshape(3, 3), c[ck.P_P2 : ck.P_P2 + 3]
    ax, ax2 = c[ck.P_AXIS : ck.P_AXIS + 3], c[ck.P_AXIS2 : ck.P_AXIS2 + 3]
    B1, B2 = c[ck.P_B1 : ck.P_B1 + 3], c[ck.P_B2 : ck.P_B2 + 3]
    for i in range(6):  # the selection rows, read from the cut row in place
        for j in range(6):
            sel[i, j] = c[ck.P_ROWS + 6 * i + j]
    matmul_into(Rw[b1], R1, Rc1)
    matmul_into(Rw[b2], R2, Rc2)
    matmul_tn_into(Rc1, Rc2, R12)
    pc1, pc2 = add3(ow[b1], mv3(Rw[b1], p1)), add3(ow[b2], mv3(Rw[b2], p2))
    u2 = mv3(R12, ax2)
    if kind == ck.CUT_UNIVERSAL:
        n = cross3(u2, ax)
        sel[0, 0], sel[0, 1], sel[0, 2] = n[0], n[1], n[2]
    return pc1, pc2, ax, ax2, B1, B2, u2


@njit(cache=True)  # called once by loop_step: a call, as copying its IR (105 blocks) to inline it lengthens the compile
def loop_rows(parents, kinds, idx_q, idx_v, nvs, E, r, S, t, tdot, Rw, ow, cb, q, with_bias, J, res, Jdv, Rc1, Rc2,
              R12, sel):  # fmt: skip
    """J (rows of Δ = J q̇), residual r and, if ``with_bias``, the rows of Δ̇ of every cut joint and coupling
    (``cb``: ``core.cuts.PACKED``).

    Inputs are the tree's workspace: E, r, S after kinematics, and t, ṫ of Table 1.  Δ̇ = J q̈ + J̇ q̇
    for the q̈ that Table 1 used: J̇ q̇ when it ran with q̈ = 0.  Table 1 adds −g to every
    acceleration (gravity as base acceleration): it cancels in the differences ω̇₂ − ω̇₁ and p̈₂ − p̈₁.
    """
    world_poses_into(parents, E, r, Rw, ow)  # the placements of forward_kinematics, into data.oR, data.op
    cb = borrow(cb)  # the caller's: its cut rows and their slices take no reference (two atomic updates each)
    for ci in range(cb.shape[0]):
        c = cb[ci]
        b1, b2, kind, row0 = int(c[ck.P_BODY1]), int(c[ck.P_BODY2]), int(c[ck.P_KIND]), int(c[ck.P_ROW])
        if kind == ck.CUT_COUPLING:  # θ − m θ_ref − offset = 0: J = e_k − m e_ref, J̇ q̇ = 0 (v holds each θ̇)
            mult = c[ck.P_MULTIPLIER]
            J[row0, :] = 0.0
            J[row0, idx_v[b1]] += 1.0
            J[row0, idx_v[b2]] -= mult
            e = joint_position_of(kinds, idx_q, q, b1) - mult * joint_position_of(kinds, idx_q, q, b2) - c[ck.P_OFFSET]
            if GROUP_OF[kinds[b1]] == SO2:  # an angle on SO(2): the nearest turn
                e -= 2.0 * math.pi * np.rint(e / (2.0 * math.pi))
            res[row0] = e
            if with_bias:
                Jdv[row0] = 0.0
            continue
        m = cut_count(kind)
        pc1, pc2, ax, ax2, B1, B2, u2 = cut_frames(c, Rw, ow, kind, Rc1, Rc2, R12, sel)
        # Δ = Rc1ᵀ [ω₂ − ω₁; ṗ₂ − ṗ₁] = J q̇, through the world Jacobians of the two points: first the joints
        # between C1 and C2, up to their common ancestor
        J[row0 : row0 + m, :] = 0.0
        j1, j2 = b1, b2
        while j1 != j2:  # parents[k] < k: the larger index is never the common ancestor
            if j1 > j2:
                j, sign, pc = j1, -1.0, pc1
                j1 = parents[j1]
            else:
                j, sign, pc = j2, 1.0, pc2
                j2 = parents[j2]
            rho = sub3(pc, ow[j])
            for d in range(nvs[j]):
                om = mv3(Rw[j], (S[j, 0, d], S[j, 1, d], S[j, 2, d]))
                vv = add3(mv3(Rw[j], (S[j, 3, d], S[j, 4, d], S[j, 5, d])), cross3(om, rho))
                wa, wl = mtv3(Rc1, om), mtv3(Rc1, vv)
                col = idx_v[j] + d
                for i in range(m):
                    J[row0 + i, col] += sign * selected(sel, i, wa, wl)
        # above the common ancestor both points turn together: ṗ₂ − ṗ₁ = ω × (p₂ − p₁), ω₂ − ω₁ = 0
        gap, zero = sub3(pc2, pc1), (0.0, 0.0, 0.0)
        j = j1
        while j > 0:
            for d in range(nvs[j]):
                om = mv3(Rw[j], (S[j, 0, d], S[j, 1, d], S[j, 2, d]))
                wl = mtv3(Rc1, cross3(om, gap))
                col = idx_v[j] + d
                for i in range(m):
                    J[row0 + i, col] += selected(sel, i, zero, wl)
            j = parents[j]
        # residual: angular rows (rotation error), then linear rows (C1→C2 in C1)
        e = mtv3(Rc1, sub3(pc2, pc1))
        i = row0
        if kind == ck.CUT_FIXED or kind == ck.CUT_PRISMATIC:
            lg = log3(R12)
            res[i], res[i + 1], res[i + 2] = lg[0], lg[1], lg[2]
            i += 3
        elif kind == ck.CUT_REVOLUTE:
            u = mv3(R12, ax)
            res[i] = -dot3(B2, u)
            res[i + 1] = dot3(B1, u)
            i += 2
        elif kind == ck.CUT_UNIVERSAL:
            res[i] = dot3(ax, u2)
            i += 1
        if kind == ck.CUT_PRISMATIC or kind == ck.CUT_POINT_ON_LINE:
            res[i] = dot3(B1, e)
            res[i + 1] = dot3(B2, e)
        else:
            res[i], res[i + 1], res[i + 2] = e[0], e[1], e[2]
        if not with_bias:
            continue
        # J̇ q̇ = d/dt of the rows of Δ with q̈ = 0; C1 turns, so d/dt (Rc1ᵀ x) = Rc1ᵀ ẋ − ω₁ × (Rc1ᵀ x).
        # Each point's world angular velocity, velocity, angular acceleration and acceleration:
        rho1, rho2 = sub3(pc1, ow[b1]), sub3(pc2, ow[b2])
        om1, om2 = mv3(Rw[b1], t[b1, 0:3]), mv3(Rw[b2], t[b2, 0:3])
        vel1 = add3(mv3(Rw[b1], t[b1, 3:6]), cross3(om1, rho1))
        vel2 = add3(mv3(Rw[b2], t[b2, 3:6]), cross3(om2, rho2))
        al1, al2 = mv3(Rw[b1], tdot[b1, 0:3]), mv3(Rw[b2], tdot[b2, 0:3])
        acc1 = add3(add3(mv3(Rw[b1], tdot[b1, 3:6]), cross3(al1, rho1)), cross3(om1, cross3(om1, rho1)))
        acc2 = add3(add3(mv3(Rw[b2], tdot[b2, 3:6]), cross3(al2, rho2)), cross3(om2, cross3(om2, rho2)))
        w1 = mtv3(Rc1, om1)
        d_om = mtv3(Rc1, sub3(om2, om1))
        d_v = mtv3(Rc1, sub3(vel2, vel1))
        dd_a = sub3(mtv3(Rc1, sub3(al2, al1)), cross3(w1, d_om))
        dd_l = sub3(mtv3(Rc1, sub3(acc2, acc1)), cross3(w1, d_v))
        for i in range(m):
            Jdv[row0 + i] = selected(sel, i, dd_a, dd_l)
        if kind == ck.CUT_UNIVERSAL:  # ṅ = (Δω × u₂) × axis
            Jdv[row0] += dot3(cross3(cross3(d_om, u2), ax), d_om)
    return 0


@njit(cache=True)
def loop_step(mi, mf, ws, cb, lw, q, with_bias):
    """``loop_rows`` on the flat buffers: J, r and (``with_bias``) J̇ q̇ into the loop workspace lw, the tree's
    kinematics (and Table 1 for the bias) already in ws."""
    mv, dv, lv = model_views(mi, mf), data_views(ws, mi), loop_views(lw, mi)
    return loop_rows(mv.parents, mv.kinds, mv.idx_q, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.t, dv.tdot, dv.oR,
                     dv.op, cb, q, with_bias, lv.J, lv.res, lv.Jdv, lv.Rc1, lv.Rc2, lv.R12, lv.sel)  # fmt: skip


# One signature, with_bias a runtime boolean: called with a literal True (the closed-loop dynamics and derivatives), a
# literal False (the contact step) and a bool (LoopState), it compiled three times, with loop_rows inside each.
compile_on_first_use(
    loop_step, types.int64(MI, MF, VEC, CB, VEC, types.Array(types.float64, 1, "C", readonly=True), types.boolean)
)  # q read only: any caller's q converts


class LoopState:
    """Jacobian rows J, residual r and (``with_velocity``) J̇ q̇ of every cut joint and joint coupling, from the
    tree's workspace in ``data`` (kinematics done at q; t and ṫ of Table 1 with q̈ = 0 for the bias)."""

    def __init__(self, model: Model, data: Data, with_velocity: bool, q: np.ndarray):
        if data.lw is None:  # a tree: no rows
            self.J, self.r = np.zeros((0, model.nv)), np.zeros(0)
            self.Jdv = np.zeros(0) if with_velocity else None
            return
        loop_step(model.mi, model.mf, data.ws, model.constraint_buffer, data.lw, np.ascontiguousarray(q, dtype=float),
                  with_velocity)  # fmt: skip
        lp = data.loop
        self.J, self.r = lp.J.copy(), lp.res.copy()
        self.Jdv = lp.Jdv.copy() if with_velocity else None


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
