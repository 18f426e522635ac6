"""The compiled RK4 loop of ``simulate`` (the method: ``simulate``'s module docstring): ``rk4_stage``, the one
place a stage is written, and ``rk4_kernel``, nsteps of it under a constant τ, declared as the entries ``RK4`` (a
tree) and ``RK4_LOOPS`` (a closed mechanism)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..algorithms.energy import energy_core
from ..algorithms.protocol import Entry
from ..algorithms.tree_entries import aba_entry
from ..core.layout import data_views, loop_views, model_views
from ..core.lie_groups import dexp_inv_kernel, integrate_kernel
from ..loops.loop_entries import cfd_entry
from .stages import stage_accel

__all__ = ["RK4", "RK4_LOOPS", "rk4_kernel", "rk4_stage"]


@njit(cache=True)
def rk4_stage(i, kinds, idx_q, idx_v, nvs, dt, q, v, a, tau, x, qs, vs, K, Ks, As, P):
    """Stage i = 1 … 4 of the RK4 step from (q, v) (``simulate``'s module docstring), the one place it is written.

    In: the stage point's chart coordinates x = δ_i and velocity vs = v_i, and a = a_i, tau = τ_i there.
    K_i = J_r(δ_i)⁻¹ v_i; Ks, As and P accumulate K_i, a_i and τ_i·v_i with the weights 1, 2, 2, 1.  Out: the
    next stage point δ_{i+1} = c_i dt K_i in x, q ⊕ δ_{i+1} in qs and v + c_i dt a_i in vs (c = ½, ½, 1); after
    stage 4 the step's end q' = q ⊕ dt Ks / 6 in qs and v' = v + dt As / 6 in vs.  Returns P; the work of τ
    over the step is dt P / 6."""
    dexp_inv_kernel(kinds, idx_v, nvs, x, vs, K)
    w = 1.0 if i == 1 or i == 4 else 2.0
    for c in range(len(v)):
        P += w * tau[c] * vs[c]
        if i == 1:
            Ks[c] = K[c]
            As[c] = a[c]
        else:
            Ks[c] += w * K[c]
            As[c] += w * a[c]
    if i == 4:
        for c in range(len(v)):
            K[c] = Ks[c] / 6.0
            vs[c] = v[c] + dt * As[c] / 6.0
        integrate_kernel(kinds, idx_q, idx_v, q, K, dt, qs)
        return P
    h = 0.5 * dt if i < 3 else dt
    for c in range(len(v)):
        x[c] = h * K[c]
        vs[c] = v[c] + h * a[c]
    integrate_kernel(kinds, idx_q, idx_v, q, x, 1.0, qs)
    return P


@njit(cache=True, nogil=True)  # nogil: simulate_batch runs a tree's RK4 runs on threads
def rk4_kernel(mi, mf, ws, cb, lw, kp, kd, q0, v0, tau, dt, nsteps, stride, Q, V, A, KE, PE, W, LAM, info):
    """nsteps RK4 steps (``rk4_stage``) from (q0, v0) under a constant τ, recording every ``stride``-th state
    (row 0 is the start), the work of τ and, for a model with loops, the reactions λ into LAM (``cfd_entry`` with
    Baumgarte's kp, kd; cb and lw: the model's constraint buffer and the loop workspace, both None for a tree).
    Returns 0, or the kernel status (1 non-finite state, 2 + k singular at body k) of the step that failed.
    info (3,): the step reached (on failure, the first step whose state is not finite), and the largest
    |v| of the states before it with its index in v — what a user needs to choose dt."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    kinds, idx_q, idx_v, nvs = mv.kinds, mv.idx_q, mv.idx_v, mv.nvs
    ddq = dv.ddq
    nv = len(v0)
    q = q0.copy()
    v = v0.copy()
    qs = np.empty(len(q0))
    vs, a1, x, K, Ks, As = np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv)
    work = 0.0
    row = 0
    for i in range(nsteps + 1):
        info[0] = i
        s = stage_accel(mi, mf, ws, cb, lw, kp, kd, q, v, tau)  # a_1 = FD(q, v)
        if s:
            return s
        for c in range(nv):
            if abs(v[c]) > info[1]:
                info[1] = abs(v[c])
                info[2] = c
        for c in range(nv):
            a1[c] = ddq[c]
        if i % stride == 0:
            Q[row, :] = q
            V[row, :] = v
            A[row, :] = a1
            if lw is not None:
                LAM[row, :] = loop_views(lw, mi).lam
            KE[row], PE[row] = energy_core(mv, dv, v)
            W[row] = work
            row += 1
        if i == nsteps:
            break
        x[:] = 0.0
        vs[:] = v
        P = rk4_stage(1, kinds, idx_q, idx_v, nvs, dt, q, v, a1, tau, x, qs, vs, K, Ks, As, 0.0)
        for stage in range(2, 5):
            s = stage_accel(mi, mf, ws, cb, lw, kp, kd, qs, vs, tau)
            if s:
                info[0] = i + 1  # the state of step i + 1 is the first one that cannot be formed
                return s
            P = rk4_stage(stage, kinds, idx_q, idx_v, nvs, dt, q, v, ddq, tau, x, qs, vs, K, Ks, As, P)
        q[:] = qs
        v[:] = vs
        work += dt * P / 6.0
    return 0


# Compiled for its caller's buffers: a tree's (no loop buffers: its kernel holds no closed-loop code) or a closed
# mechanism's.
RK4 = Entry(rk4_kernel, group="simulation", what="the RK4 simulation loop", seconds=15, after=(aba_entry,))
RK4_LOOPS = Entry(rk4_kernel, group="closed_loop_simulation", what="the RK4 loop of a closed mechanism", seconds=15,
                  after=(cfd_entry,), loops=True)  # fmt: skip
