"""The adaptive Dormand–Prince pairs 5(4) and 8(5,3) compiled with the dynamics: no Python call per stage.

The state, its chart and the right-hand side are those of ``simulate``'s adaptive methods (its module docstring):
y = (δ, v, w) about a chart point q_c, q = q_c ⊕ δ, and

    δ̇ = J_r(δ)⁻¹ v,   v̇ = FD(q, v, τ),   ẇ = τ·v.

The method is scipy's ``RK45`` and ``DOP853`` step for step (Hairer, Nørsett & Wanner, Solving ODEs I, II.4–II.6):
the same tableaux, read from scipy's classes rather than copied; the same error norms (RMS; DOP853's blend of its 5th-
and 3rd-order estimates); the same step control (safety 0.9, growth between 0.2 and 10, no growth after a
rejection) and first step; the same dense output (RK45's quartic, DOP853's 7th-degree interpolant from three more
stages, formed here only for a step that holds a recorded instant).  The chart moves when a rotation in δ exceeds
``RECHART_ANGLE``, restarting the method with the last step's size, as the scipy path does.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..algorithms.energy import ENERGY, energy_core
from ..algorithms.protocol import Entry
from ..algorithms.tree_entries import aba_entry
from ..core.layout import data_views, loop_views, model_views
from ..core.lie_groups import dexp_inv_kernel, integrate_kernel
from ..model.status import TOO_SMALL_STEP
from .stages import stage_accel

__all__ = ["Tableau", "tableau"]

SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 10.0  # scipy's step control (scipy.integrate._ivp.rk)


class Tableau(NamedTuple):
    """One pair's coefficients, padded to one layout.  S stages, S_ext with the dense output's extra ones.

    A (S_ext, S_ext), C (S_ext,): the stages (DOP853's rows past S: its dense output's); B (S,): the solution;
    E, E3 (S + 1,): the error estimates (E3 zero for RK45); P: RK45's interpolant (S + 1, 4), or DOP853's D (4, S_ext).
    """

    dop: bool
    n_stages: int
    exponent: float  # −1 / (the error estimator's order + 1)
    order: int  # the error estimator's order: the first step's
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    E: np.ndarray
    E3: np.ndarray
    P: np.ndarray


def tableau(method: str) -> Tableau:
    """The coefficients of scipy's ``RK45`` ("rk45") or ``DOP853`` ("dop853")."""
    # scipy.integrate is imported here, at the first adaptive run: at import it would add about 40 MB to every process
    from scipy.integrate import DOP853, RK45

    if method == "rk45":
        S = RK45.n_stages
        A = np.zeros((S + 1, S + 1))
        A[:S, : S - 1] = RK45.A
        C = np.r_[RK45.C, 1.0]
        E3 = np.zeros(S + 1)
        return Tableau(False, S, -1.0 / (RK45.error_estimator_order + 1), RK45.error_estimator_order, A,
                       np.array(RK45.B, float), C, np.array(RK45.E, float), E3, np.array(RK45.P, float))  # fmt: skip
    S, ext = DOP853.n_stages, DOP853.n_stages + 1 + len(DOP853.C_EXTRA)
    A = np.zeros((ext, ext))
    A[:S, :S] = DOP853.A
    A[S + 1 :, :] = DOP853.A_EXTRA
    C = np.r_[DOP853.C, 1.0, DOP853.C_EXTRA]
    return Tableau(True, S, -1.0 / (DOP853.error_estimator_order + 1), DOP853.error_estimator_order, A,
                   np.array(DOP853.B, float), C, np.array(DOP853.E5, float), np.array(DOP853.E3, float),
                   np.array(DOP853.D, float))  # fmt: skip


@njit(cache=True)
def _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y, tau, q, out, st):
    """out = f(y) = (J_r(δ)⁻¹ v, FD(q_c ⊕ δ, v, τ), τ·v), q_c ⊕ δ into q; counts the call and the largest |v| in
    st.  The forward dynamics' status (NOT_FINITE for a state that is not finite)."""
    mv = model_views(mi, mf)
    nv = len(tau)
    x, v = y[:nv], y[nv : 2 * nv]
    st[4] += 1.0
    for c in range(nv):
        if abs(v[c]) > st[5]:
            st[5], st[6] = abs(v[c]), c
    integrate_kernel(mv.kinds, mv.idx_q, mv.idx_v, chart, x, 1.0, q)
    s = stage_accel(mi, mf, ws, cb, lw, kp, kd, q, v, tau)
    if s:
        return s
    dexp_inv_kernel(mv.kinds, mv.idx_v, mv.nvs, x, v, out[:nv])
    ddq = data_views(ws, mi).ddq
    w = 0.0
    for c in range(nv):
        out[nv + c] = ddq[c]
        w += tau[c] * v[c]
    out[2 * nv] = w
    return 0


@njit(cache=True, inline="always")
def _combine(y, h, coef, K, s, out):
    """out = y + h Σ_{j<s} coef[j] K[j] (a stage's point, or the solution)."""
    for c in range(len(y)):
        acc = 0.0
        for j in range(s):
            acc += coef[j] * K[j, c]
        out[c] = y[c] + h * acc


@njit(cache=True, inline="always")
def _rms(x) -> float:
    acc = 0.0
    for c in range(len(x)):
        acc += x[c] * x[c]
    return math.sqrt(acc / len(x))


@njit(cache=True)
def _first_step(mi, mf, ws, cb, lw, kp, kd, chart, y, f, tau, t_end_len, order, rtol, atol, q, work, st):
    """scipy's ``select_initial_step`` (Hairer, Nørsett & Wanner II.4): from |y|, |f| and one more evaluation."""
    n = len(y)
    scale, y1, f1 = work[0], work[1], work[2]
    for c in range(n):
        scale[c] = atol + abs(y[c]) * rtol
        y1[c] = y[c] / scale[c]
    d0 = _rms(y1)
    for c in range(n):
        y1[c] = f[c] / scale[c]
    d1 = _rms(y1)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, t_end_len)
    for c in range(n):
        y1[c] = y[c] + h0 * f[c]
    s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y1, tau, q, f1, st)
    if s:
        return -float(s)
    for c in range(n):
        y1[c] = (f1[c] - f[c]) / scale[c]
    d2 = _rms(y1) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1))
    return min(100.0 * h0, h1, t_end_len)


@njit(cache=True)
def _dense(dop, S, At, C, P, mi, mf, ws, cb, lw, kp, kd, chart, tau, q, y_old, y, f, K, F, h, x, fresh, out, st):
    """The solution at t_old + x h inside the last step into out (scipy's ``RkDenseOutput``, ``Dop853DenseOutput``).
    DOP853 first evaluates its three extra stages and its interpolant F (7, n), once a step (``fresh``)."""
    n = len(y)
    if not dop:  # y_old + h Σ_k (Kᵀ P)_k x^(k+1)
        for c in range(n):
            acc, xp = 0.0, 1.0
            for k in range(P.shape[1]):
                xp *= x
                pk = 0.0
                for j in range(P.shape[0]):
                    pk += K[j, c] * P[j, k]
                acc += pk * xp
            out[c] = y_old[c] + h * acc
        return 0
    if fresh:
        for s_ in range(S + 1, len(C)):
            _combine(y_old, h, At[s_], K, s_, out)
            s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, out, tau, q, K[s_], st)
            if s:
                return s
        for c in range(n):
            dy = y[c] - y_old[c]
            F[0, c] = dy
            F[1, c] = h * K[0, c] - dy
            F[2, c] = 2.0 * dy - h * (f[c] + K[0, c])
            for r in range(P.shape[0]):
                acc = 0.0
                for j in range(P.shape[1]):
                    acc += P[r, j] * K[j, c]
                F[3 + r, c] = h * acc
    for c in range(n):
        acc = 0.0
        for i in range(F.shape[0]):  # Horner's scheme in x and 1 − x, from the last row
            acc += F[F.shape[0] - 1 - i, c]
            acc *= x if i % 2 == 0 else 1.0 - x
        out[c] = acc + y_old[c]
    return 0


@njit(cache=True, inline="always")
def _rotated_too_far(y, rot, limit) -> bool:
    for r in range(len(rot)):
        acc = 0.0
        for c in range(rot[r, 0], rot[r, 1]):
            acc += y[c] * y[c]
        if math.sqrt(acc) > limit:
            return True
    return False


@njit(cache=True)
def dp_kernel(dop, S, exponent, order, At, B, C, E, E3, P, mi, mf, ws, cb, lw, kp, kd, tau, rot, limit, rtol, atol,
              t_out, row_end, chart, y, f, st, K, work, Q, V, A, KE, PE, W, LAM):  # fmt: skip
    """Steps of the pair (``tableau``) from the state in (chart, y, f, st) until the instants t_out[: row_end] are
    recorded (Q, V, A, KE, PE, W, and λ into LAM for loops); the state is left for the next call.

    st (11,): t, the next step's |h|, the last step's |h|, accepted steps, FD calls, the largest |v| met and its index,
    the next row, started, the chart to check, the dense output formed.  rot (R, 2): the rotation slices of δ whose
    norm may reach ``limit`` (RECHART_ANGLE) before the chart moves.  K (S_ext, n), work (15, n): scratch.
    Returns 0, the status of a forward dynamics that failed (NOT_FINITE: a state not finite), or TOO_SMALL_STEP."""
    mv = model_views(mi, mf)
    dv = data_views(ws, mi)
    nv, n = len(tau), len(y)
    q = np.empty(len(chart))
    y_old, y_new, scale, err, f_rec, F = work[3], work[4], work[5], work[6], work[7], work[8:15]
    t_end = t_out[-1]
    near = 1e-12 * max(1.0, abs(t_end))  # an instant this close past the step's end is read in it (as scipy's path)
    rtol = max(rtol, 100.0 * np.finfo(np.float64).eps)  # scipy's floor
    if st[8] == 0.0:  # the start: f(y0), the first step; row 0 is y0 itself
        s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y, tau, q, f, st)
        if s:
            return s
        h = _first_step(mi, mf, ws, cb, lw, kp, kd, chart, y, f, tau, t_end - t_out[0], order, rtol, atol, q, work,
                        st)  # fmt: skip
        if h < 0.0:
            return int(-h)
        st[0], st[1], st[8] = t_out[0], h, 1.0
    row = int(st[7])
    t = st[0]
    while row < row_end:
        if row == 0 or t_out[row] <= t + near:  # an instant inside the last step: its dense output
            if row == 0:
                y_new[:] = y
            else:
                h = st[2]
                s = _dense(dop, S, At, C, P, mi, mf, ws, cb, lw, kp, kd, chart, tau, q, y_old, y, f, K, F, h,
                           (min(t_out[row], t) - (t - h)) / h, st[10] == 0.0, y_new, st)  # fmt: skip
                if s:
                    return s
                st[10] = 1.0
            s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y_new, tau, q, f_rec, st)  # q, q̈ (and λ) at the instant
            if s:
                return s
            Q[row, :] = q
            V[row, :] = y_new[nv : 2 * nv]
            A[row, :] = dv.ddq
            W[row] = y_new[2 * nv]
            if lw is not None:
                LAM[row, :] = loop_views(lw, mi).lam
            KE[row], PE[row] = energy_core(mv, dv, y_new[nv : 2 * nv])
            row += 1
            st[7] = row
            continue
        if st[9] != 0.0:  # the instants of the last step are read: move the chart if a rotation grew too large
            st[9] = 0.0
            if _rotated_too_far(y, rot, limit):
                integrate_kernel(mv.kinds, mv.idx_q, mv.idx_v, chart, y[:nv], 1.0, q)
                chart[:] = q
                y[:nv] = 0.0
                s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y, tau, q, f, st)
                if s:
                    return s
                st[1] = min(st[2], t_end - t)  # a restart with the last step's size, as the scipy path
        # one accepted step (scipy's RungeKutta._step_impl)
        min_step = 10.0 * abs(np.nextafter(t, np.inf) - t)
        h_abs = max(st[1], min_step)
        rejected = False
        while True:
            if h_abs < min_step:
                return TOO_SMALL_STEP
            t_new = min(t + h_abs, t_end)
            h = t_new - t
            h_abs = abs(h)
            K[0, :] = f
            for s_ in range(1, S):
                _combine(y, h, At[s_], K, s_, y_new)
                s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y_new, tau, q, K[s_], st)
                if s:
                    return s
            _combine(y, h, B, K, S, y_new)
            s = _rhs(mi, mf, ws, cb, lw, kp, kd, chart, y_new, tau, q, K[S], st)
            if s:
                return s
            for c in range(n):
                scale[c] = atol + max(abs(y[c]), abs(y_new[c])) * rtol
            if dop:  # DOP853's norm: the 5th-order estimate, damped where the 3rd-order one is small
                e5 = e3 = 0.0
                for c in range(n):
                    a5 = a3 = 0.0
                    for j in range(S + 1):
                        a5 += E[j] * K[j, c]
                        a3 += E3[j] * K[j, c]
                    e5 += (a5 / scale[c]) ** 2
                    e3 += (a3 / scale[c]) ** 2
                error_norm = 0.0 if e5 == 0.0 and e3 == 0.0 else abs(h) * e5 / math.sqrt((e5 + 0.01 * e3) * n)
            else:
                for c in range(n):
                    acc = 0.0
                    for j in range(S + 1):
                        acc += E[j] * K[j, c]
                    err[c] = acc * h / scale[c]
                error_norm = _rms(err)
            if error_norm < 1.0:
                factor = MAX_FACTOR if error_norm == 0.0 else min(MAX_FACTOR, SAFETY * error_norm**exponent)
                if rejected:
                    factor = min(1.0, factor)
                h_abs *= factor
                break
            h_abs *= max(MIN_FACTOR, SAFETY * error_norm**exponent)
            rejected = True
        for c in range(n):
            y_old[c] = y[c]
            y[c] = y_new[c]
            f[c] = K[S, c]
        t = t_new
        st[0], st[1], st[2] = t, h_abs, abs(h)
        st[3] += 1.0
        st[9] = 1.0 if len(rot) else 0.0
        st[10] = 0.0
    return 0


DORMAND_PRINCE = Entry(
    dp_kernel,
    group="adaptive",
    what="the adaptive Dormand–Prince integrators",
    seconds=30,
    after=(aba_entry, ENERGY.kernel),
)
