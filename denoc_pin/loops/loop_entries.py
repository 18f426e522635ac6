"""The composition of the closed-loop forward dynamics, one compiled entry (as ``algorithms.tree_entries`` for the
tree): the tree's forward dynamics (q̈₀, the GIM's factor or the UDUᵀ factors, t and ṫ with q̈ = 0), the loop rows
(J, r, J̇ q̇; ``loop_kinematics.loop_step``) and the reaction solve (``reaction.reaction_step``), declared once as
``CFD`` (``algorithms.protocol.Entry``)."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..algorithms.protocol import CB, MB, MF, MI, VEC, Entry, borrowed, on_model_buffer
from ..algorithms.tree_entries import ABA, gim_forward_entry
from ..core import cuts as ck
from ..core.layout import LW_M, data_views, loop_views
from ..core.memory import copy_into
from ..model.status import BAD_GAINS, NOT_STAMPED
from .loop_kinematics import cut_count, loop_step
from .reaction import reaction_step

__all__ = ["CFD", "RCOND", "cfd_entry", "cfd_solve", "constraint_rows"]


RCOND = 1e-14
"""The default ``rcond`` of ``constrained_forward_dynamics`` (and of the simulation's compiled stages)."""


@njit(cache=True, inline="always")
def constraint_rows(cb):
    """The number of constraint rows of a packed buffer (``core.cuts.PACKED``)."""
    if cb.shape[0] == 0:
        return 0
    last = cb[cb.shape[0] - 1]
    kind = int(last[ck.P_KIND])
    return int(last[ck.P_ROW]) + (1 if kind == ck.CUT_COUPLING else cut_count(kind))


@njit(cache=True)
def cfd_solve(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext):
    """Schiehlen eq. (17)–(20): the tree's forward dynamics (q̈₀, t and ṫ with q̈ = 0), by the GIM's factor L in
    the loop workspace's H where it has room (``layout.loop_factor_order``: a small model, where the factor pays),
    else by Table 3 (its UDUᵀ factors in ws); the loop rows (J, r, J̇ q̇) and the reaction solve on the same
    factors; q̈ into ws, λ into lw.  (status, factored): a status as raise_for_status reads it, or BAD_LENGTH,
    NOT_STAMPED (lw not made for these constraints), BAD_GAINS; and whether H holds L."""
    if not (0.0 <= kp < np.inf and 0.0 <= kd < np.inf and 0.0 <= rcond < np.inf):
        return BAD_GAINS, False
    if lw[LW_M] != constraint_rows(cb):
        return NOT_STAMPED, False
    lv = loop_views(lw, mi)
    status, factored = gim_forward_entry(mi, mf, ws, q, v, tau, with_fext, lv.H)
    if status:
        return status, False
    copy_into(lv.ddq0, data_views(ws, mi).ddq)
    loop_step(mi, mf, ws, cb, lw, q, True)
    reaction_step(mi, mf, ws, lw, v, kp, kd, rcond, factored)
    return 0, factored


@njit(cache=True)
def cfd_entry(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext):
    """``cfd_solve`` in one compiled call; its status."""
    return cfd_solve(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext)[0]


@njit(cache=True)
def cfd_fast(mb, ws, cb, lw, q, v, tau, kp, kd, rcond):
    """cfd_entry without external forces, on the model buffer (the fast path)."""
    return on_model_buffer(cfd_entry, mb, ws, (cb, lw, q, v, tau, kp, kd, rcond, False))


@njit(cache=True, nogil=True)
def cfd_rows(mi, mf, ws, lw, fixed, Q, V, T, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch (``protocol.run_chunks``): q̈ into out, λ into out2; fixed = (cb, kp, kd, rcond,
    with_fext)."""
    Q, V, T, out, out2 = borrowed(Q, V, T, out, out2)
    cb, kp, kd, rcond, with_fext = fixed
    ddq, lam, status = data_views(ws, mi).ddq, loop_views(lw, mi).lam, 0
    for i in range(lo, hi):
        s = cfd_entry(mi, mf, ws, cb, lw, Q[i], V[i], T[i], kp, kd, rcond, with_fext)
        status = s if s else status
        copy_into(out[i], ddq)
        copy_into(out2[i], lam)
    return status


# Compiled at its first use: most users never close a loop, and cfd_entry takes about half a minute to compile; the
# fast entry, the batches and the simulation share it.
_F = types.float64
CFD = Entry(cfd_entry, types.int64(MI, MF, VEC, CB, VEC, VEC, VEC, VEC, _F, _F, _F, types.boolean),
            cfd_fast, types.int64(MB, VEC, CB, VEC, VEC, VEC, VEC, _F, _F, _F), cfd_rows, ("q", "v", "tau"),
            ("nv", "n_constraints"), after=(ABA.kernel,), group="closed_loops",
            what="the closed-loop dynamics (Schiehlen eq. 17-20)", seconds=60,
            fixed=types.Tuple((CB, _F, _F, _F, types.boolean)),  # (cb, kp, kd, rcond, with_fext)
            rows_group="closed_loop_batches", loops=True)  # fmt: skip
