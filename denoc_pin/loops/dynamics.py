"""Closed-loop dynamics on the tree's recursions: Schiehlen eq. (17)–(20) forward, the actuated/passive split of
Shah, Saha & Dutt (section 2.2) inverse, and the motion of every joint from the independent ones."""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, types

from .._kernel_cache import compile_on_first_use, prepare
from ..algorithms._plumbing import (
    _MB,
    _MF,
    _MI,
    _VEC,
    NOT_READY,
    NOT_STAMPED,
    aba_entry,
    raise_for_status,
    refused,
    set_fext,
    states,
)
from ..algorithms.api import inverse_dynamics
from ..algorithms.forward import udut_solve
from ..core import cuts as ck
from ..core.layout import FMA, borrow, data_views, leading, loop_views, model_views, split_model, stamped_for
from ..model import Data, Model, ModelError, configuration, vector
from .kernel import (
    RANK_RTOL,
    LoopState,
    cut_count,
    data_for,
    independent_rows,
    kinematics,
    loop_step,
    need_loops,  # fmt: skip
)
from .types import SingularConfigurationError, baumgarte_gains

__all__ = ["complete_motion", "constrained_forward_dynamics", "constrained_inverse_dynamics"]


def min_norm_solve(A: np.ndarray, b: np.ndarray, rcond: float) -> tuple[np.ndarray, int]:
    """Minimum-norm least-squares solution of A x = b by SVD (rank-revealing), and the rank."""
    x, _, rank, _ = np.linalg.lstsq(A, b, rcond=rcond)
    return x, int(rank)


# ---------------------------------------------------------------------------------------
# Small dense solves, compiled and LAPACK-free (the reaction systems have a few dozen rows at most), in place on
# the loop workspace: nothing is allocated per call.
# ---------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def jacobi_eigen(A, V):
    """A = V diag(w) Vᵀ for a symmetric A by cyclic Jacobi rotations, in place: w on A's diagonal."""
    m = A.shape[0]
    V[:, :] = 0.0
    for i in range(m):
        V[i, i] = 1.0
        for j in range(i + 1, m):
            A[i, j] = A[j, i] = 0.5 * (A[i, j] + A[j, i])
    for _ in range(60):
        off = 0.0
        diag = 0.0
        for i in range(m):
            diag += A[i, i] * A[i, i]
            for j in range(i + 1, m):
                off += A[i, j] * A[i, j]
        if off <= 1e-32 * diag or off == 0.0:
            break
        for p in range(m - 1):
            for q in range(p + 1, m):
                apq = A[p, q]
                if apq == 0.0:
                    continue
                theta = (A[q, q] - A[p, p]) / (2.0 * apq)
                t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + np.sqrt(theta * theta + 1.0))
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(m):  # A J
                    akp, akq = A[k, p], A[k, q]
                    A[k, p], A[k, q] = c * akp - s * akq, s * akp + c * akq
                for k in range(m):  # Jᵀ A J
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k], A[q, k] = c * apk - s * aqk, s * apk + c * aqk
                for k in range(m):  # V J
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p], V[k, q] = c * vkp - s * vkq, s * vkp + c * vkq


@njit(cache=True, inline="always")
def eigen_solve(A, V, b, rcond, x):
    """x = A⁺ b from A = V diag(w) Vᵀ (``jacobi_eigen``; w on A's diagonal): the minimum-norm solution, the
    eigenvalues ≤ rcond · max w counting as zero.  Returns the rank."""
    m = A.shape[0]
    wmax = 0.0
    for i in range(m):
        wmax = max(wmax, abs(A[i, i]))
    x[:] = 0.0
    rank = 0
    for i in range(m):
        if A[i, i] > rcond * wmax and A[i, i] > 0.0:
            rank += 1
            y = 0.0
            for k in range(m):
                y += V[k, i] * b[k]
            y /= A[i, i]
            for k in range(m):
                x[k] += V[k, i] * y
    return rank


@njit(cache=True)
def symmetric_pinv_solve(A, b, rcond):
    """x = A⁺ b for a symmetric positive semi-definite A (``jacobi_eigen``, ``eigen_solve``); (x, rank)."""
    A = A.copy()
    V = np.empty_like(A)
    x = np.empty(A.shape[0])
    jacobi_eigen(A, V)
    return x, eigen_solve(A, V, b, rcond, x)


@njit(cache=True, inline="always")
def cholesky_in_place(A, rcond):
    """A = L Lᵀ, L into A's lower triangle; False if a pivot is ≤ rcond × A's largest diagonal (A singular to
    that accuracy)."""
    m = A.shape[0]
    dmax = 0.0
    for i in range(m):
        dmax = max(dmax, A[i, i])
    for k in range(m):
        d = A[k, k]
        for p in range(k):
            d -= A[k, p] * A[k, p]
        if not d > rcond * dmax:
            return False
        d = np.sqrt(d)
        A[k, k] = d
        for i in range(k + 1, m):
            s = A[i, k]
            for p in range(k):
                s -= A[i, p] * A[k, p]
            A[i, k] = s / d
    return True


@njit(cache=True, inline="always")
def cholesky_solve(L, b, x):
    """x = (L Lᵀ)⁻¹ b for L in the lower triangle."""
    m = L.shape[0]
    for i in range(m):
        s = b[i]
        for p in range(i):
            s -= L[i, p] * x[p]
        x[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for p in range(i + 1, m):
            s -= L[p, i] * x[p]
        x[i] = s / L[i, i]


@njit(cache=True, inline="always")
def symmetric_product_into(A, B, out):
    """out = Aᵀ B for a product known to be symmetric (J Jᵀ, N_c): the lower triangle, mirrored."""
    n, r = A.shape
    for i in range(r):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += A[k, i] * B[k, j]
            out[i, j] = out[j, i] = s


@njit(cache=True, inline="always")
def pivoted_cholesky(G, order, sure_redundant, sure_independent):
    """Π G Πᵀ = L Lᵀ with diagonal pivoting, G symmetric positive semi-definite (J Jᵀ): L (m x rank) into G's lower
    trapezoid in pivot order, ``order`` the rows in that order.  It stops at the first pivot ≤ RANK_RTOL² × G's
    largest diagonal: the rank.  Returns (rank, clear): clear is False if a pivot lay between sure_redundant and
    sure_independent (× the largest diagonal), where pivots can misjudge J's singular values."""
    m = G.shape[0]
    dmax = 0.0
    for i in range(m):
        order[i] = i
        dmax = max(dmax, G[i, i])
    if dmax == 0.0:
        return 0, True
    cut = RANK_RTOL * RANK_RTOL * dmax
    clear = True
    for k in range(m):
        p = k
        for i in range(k + 1, m):
            if G[i, i] > G[p, p]:
                p = i
        d = G[p, p]
        if sure_redundant * dmax < d < sure_independent * dmax:
            clear = False
        if d <= cut:
            return k, clear
        if p != k:  # swap rows and columns k, p (L's rows, the trailing block's rows and columns)
            order[k], order[p] = order[p], order[k]
            for c in range(m):
                G[k, c], G[p, c] = G[p, c], G[k, c]
            for c in range(m):
                G[c, k], G[c, p] = G[c, p], G[c, k]
        d = np.sqrt(d)
        G[k, k] = d
        for i in range(k + 1, m):
            G[i, k] /= d
        for i in range(k + 1, m):
            for j in range(k + 1, i + 1):
                G[i, j] -= G[i, k] * G[j, k]
                G[j, i] = G[i, j]
    return m, clear


@njit(cache=True, fastmath=FMA)
def reaction_step(mi, mf, ws, lw, v, kp, kd, rcond):
    """Schiehlen eq. (19)–(20) on the tree's UDUᵀ factors, J, r, J̇ q̇ and q̈₀ in the loop workspace:

    the rank rule picks a basis B of J's range (the identity when J has full row rank; where it has not, the
    columns of J Jᵀ's pivoted Cholesky factor L; where those pivots are in doubt, J's left singular vectors
    above RANK_RTOL), then Y = GIM⁻¹ Jᵀ B by the recursions of Table 3, N_c = Bᵀ J Y,
    N_c x = Bᵀ γ − Bᵀ J q̈₀, λ = B x and q̈ = q̈₀ + Y x into ws's q̈.  λ lies in J's range: the minimum-norm
    reactions (their part along redundant directions is statically indeterminate).  Returns the rank."""
    mv, dv, lv = model_views(mi, mf), data_views(ws, mi), loop_views(lw, mi)
    J, a0, a, lam, gamma = lv.J, lv.ddq0, dv.ddq, lv.lam, lv.gamma
    m, nv = J.shape
    for i in range(m):
        jv = 0.0
        for k in range(nv):
            jv += J[i, k] * v[k]
        gamma[i] = -lv.Jdv[i] - 2.0 * kd * jv - kp * kp * lv.res[i]  # γ: r̈ + 2 kd ṙ + kp² r = 0
    # The rank rule (``RANK_RTOL``): pivots of J Jᵀ far from its threshold decide; otherwise J's singular values.
    symmetric_product_into(J.T, J.T, lv.G)
    r, clear = pivoted_cholesky(lv.G, lv.order, 1e-2 * RANK_RTOL * RANK_RTOL, 1e4 * RANK_RTOL * RANK_RTOL)
    identity = clear and r == m
    B = leading(lv.B, (m, r))
    if not clear:  # J's singular values decide (LAPACK: the one path that allocates)
        U, sv, _ = np.linalg.svd(J)
        r = 0
        while r < len(sv) and sv[r] > RANK_RTOL * sv[0]:
            r += 1
        B = leading(lv.B, (m, r))
        B[:, :] = U[:, :r]
    elif not identity:
        for i in range(m):
            row = int(lv.order[i])
            for j in range(r):
                B[row, j] = lv.G[i, j] if i >= j else 0.0
    a[:] = a0
    lam[:] = 0.0
    if r == 0:
        return 0
    JT, Y = leading(lv.JT, (nv, r)), leading(lv.Y, (nv, r))
    N, rhs, x = leading(lv.N, (r, r)), leading(lv.rhs, (r,)), leading(lv.x, (r,))
    for i in range(r):  # (Bᵀ J)ᵀ and Bᵀ γ
        if identity:
            for k in range(nv):
                JT[k, i] = J[i, k]
            rhs[i] = gamma[i]
        else:
            for k in range(nv):
                s = 0.0
                for j in range(m):
                    s += B[j, i] * J[j, k]
                JT[k, i] = s
            s = 0.0
            for j in range(m):
                s += B[j, i] * gamma[j]
            rhs[i] = s
    eta = leading(lv.eta, (len(mv.parents), r, 6))
    # Y = GIM⁻¹ Jᵀ B (eq. 19)
    udut_solve(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi, dv.I_hat_inv,
               JT, eta, eta, Y, lv.scratch[63:69])  # fmt: skip
    for i in range(r):
        s = rhs[i]
        for k in range(nv):
            s -= JT[k, i] * a0[k]
        rhs[i] = s  # Bᵀ (γ − J q̈₀)
    symmetric_product_into(JT, Y, N)  # N_c (eq. 20)
    if not cholesky_in_place(N, rcond):  # N_c singular though J is not: its eigenvalues above rcond
        symmetric_product_into(JT, Y, N)
        V = leading(lv.V, (r, r))
        jacobi_eigen(N, V)
        eigen_solve(N, V, rhs, rcond, x)
    else:
        cholesky_solve(N, rhs, x)
    for k in range(nv):
        s = a[k]
        for i in range(r):
            s += Y[k, i] * x[i]
        a[k] = s  # q̈ = q̈₀ + Y x (eq. 19)
    for j in range(m):  # λ = B x
        if identity:
            lam[j] = x[j]
            continue
        s = 0.0
        for i in range(r):
            s += B[j, i] * x[i]
        lam[j] = s
    return r


RCOND = 1e-14
"""The default ``rcond`` of ``constrained_forward_dynamics`` (and of the simulation's compiled stages)."""
BAD_GAINS = -4  # the status of cfd_entry given Baumgarte gains or an rcond that are not finite and non-negative


@njit(cache=True, inline="always")
def constraint_rows(cb):
    """The number of constraint rows of a packed buffer (``core.cuts.PACKED``)."""
    if cb.shape[0] == 0:
        return 0
    last = cb[cb.shape[0] - 1]
    kind = int(last[ck.P_KIND])
    return int(last[ck.P_ROW]) + (1 if kind == ck.CUT_COUPLING else cut_count(kind))


@njit(cache=True)
def cfd_entry(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, with_fext):
    """Schiehlen eq. (17)–(20) in one compiled call: the tree's forward dynamics (q̈₀, the UDUᵀ factors, t and ṫ
    with q̈ = 0), the loop rows (J, r, J̇ q̇) and the reaction solve; q̈ into ws, λ into lw.  A status as
    raise_for_status reads it, or BAD_LENGTH, NOT_STAMPED (lw not made for these constraints), BAD_GAINS."""
    if not (0.0 <= kp < np.inf and 0.0 <= kd < np.inf and 0.0 <= rcond < np.inf):
        return BAD_GAINS
    if lw[0] != constraint_rows(cb):
        return NOT_STAMPED
    status = aba_entry(mi, mf, ws, q, v, tau, with_fext)
    if status:
        return status
    loop_views(lw, mi).ddq0[:] = data_views(ws, mi).ddq
    loop_step(mi, mf, ws, cb, lw, q, True)
    reaction_step(mi, mf, ws, lw, v, kp, kd, rcond)
    return 0


_CB = types.Array(types.float64, 2, "C", readonly=True)  # model.constraint_buffer
_F = types.float64
CFD_ENTRY = types.int64(_MI, _MF, _VEC, _CB, _VEC, _VEC, _VEC, _VEC, _F, _F, _F, types.boolean)
CFD_FAST = types.int64(_MB, _VEC, _CB, _VEC, _VEC, _VEC, _VEC, types.float64, types.float64, types.float64)


@njit(cache=True)
def cfd_fast(mb, ws, cb, lw, q, v, tau, kp, kd, rcond):
    """cfd_entry without external forces (the fast path), compiled for CFD_FAST alone at the first call."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return cfd_entry(mi, mf, ws, cb, lw, q, v, tau, kp, kd, rcond, False)


@njit(cache=True)
def _cfd_rows(mi, mf, ws, cb, lw, Q, V, T, kp, kd, rcond, with_fext, A, L, lo, hi):
    """Rows lo … hi−1 of a batch on private copies of the workspaces (as ``_plumbing._run_rows``)."""
    return _cfd_rows_on(mi, mf, ws.copy(), cb, lw.copy(), borrow(Q), borrow(V), borrow(T), kp, kd, rcond, with_fext,
                        borrow(A), borrow(L), lo, hi)  # fmt: skip


@njit(cache=True)
def _cfd_rows_on(mi, mf, ws, cb, lw, Q, V, T, kp, kd, rcond, with_fext, A, L, lo, hi):
    dv, lv = data_views(ws, mi), loop_views(lw, mi)
    status = 0
    for i in range(lo, hi):
        s = cfd_entry(mi, mf, ws, cb, lw, Q[i], V[i], T[i], kp, kd, rcond, with_fext)
        if s:
            status = s
        A[i, :] = dv.ddq
        L[i, :] = lv.lam
    return status


@njit(cache=True, parallel=True)
def cfd_batch(nchunks, mi, mf, ws, cb, lw, Q, V, T, kp, kd, rcond, with_fext, A, L):
    """cfd_entry for every row of a batch, cut into ``nchunks`` pieces over the threads; the worst status."""
    B = Q.shape[0]
    status = np.zeros(nchunks, dtype=np.int64)
    for c in numba.prange(nchunks):
        status[c] = _cfd_rows(mi, mf, ws, cb, lw, Q, V, T, kp, kd, rcond, with_fext, A, L, c * B // nchunks,
                              (c + 1) * B // nchunks)  # fmt: skip
    return status.max()


# Compiled at their first use, each for one signature (``compile_on_first_use``): most users never close a loop, and
# cfd_entry takes about half a minute to compile; the fast entry, the batches and the simulation share it.
compile_on_first_use(cfd_entry, CFD_ENTRY, after=(aba_entry,))
compile_on_first_use(cfd_fast, CFD_FAST, exact=True, after=(cfd_entry,))


def constrained_forward_dynamics(
    model: Model, data: Data, q, v, tau, fext=None, baumgarte=(0.0, 0.0), rcond: float = RCOND
) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q̈ (nv,) and reactions λ (n_constraints,) of the closed mechanism; a batch q (B, nq), v, tau
    (B, nv) gives (B, nv) and (B, n_constraints), computed on all cores.

    Schiehlen eq. (17)–(20): q̈₀ = GIM⁻¹ (τ − h) by the tree's recursive forward dynamics
    (Table 3), Y = GIM⁻¹ Jᵀ by the same UDUᵀ factors (no GIM, no inverse is formed), then the
    reaction system N_c λ = γ − J q̈₀ with N_c = J Y and q̈ = q̈₀ + Y λ: one compiled call that allocates nothing
    (``reaction_step``).

    baumgarte = (kp, kd): the constraint is imposed as r̈ + 2 kd ṙ + kp² r = 0, i.e.
    γ = −J̇ q̇ − 2 kd J q̇ − kp² r (kp, kd ≥ 0, in 1/s; (0, 0) imposes J q̈ + J̇ q̇ = 0 only).

    Redundant constraints (a planar mechanism described in 3-D has a rank-deficient J; Cassie's legs have one
    row redundant up to the file's rounding) follow the rank rule of ``assemble`` (J's singular values below
    ``RANK_RTOL`` of the largest): the reaction system is solved on a basis of J's range, so the accelerations
    are unique and λ is the minimum-norm set of reactions that produces them (the reactions along redundant
    directions are statically indeterminate, so any other split is as valid).  ``rcond``: N_c on that basis
    is positive definite, with a condition number up to about RANK_RTOL⁻² × the GIM's; should its Cholesky factor
    meet a pivot below rcond × its largest diagonal (a GIM too ill-conditioned), its eigenvalues below rcond × the
    largest count as zero.
    λ: reaction of link1 on link2 in C1 ([N·m] angular rows, [N] linear rows); see the module doc.
    """
    if fext is None:
        try:
            kp, kd = baumgarte
            status = cfd_fast(model.mb, data.ws, model.constraint_buffer, data.lw, q, v, tau, kp, kd, rcond)
        except (TypeError, AttributeError, ValueError) as refusal:
            status = _refused(refusal, model, data, q, v, tau, baumgarte, rcond)
        if status == 0:
            return data.ddq.copy(), data.loop.lam.copy()
    return _cfd_checked(model, data, q, v, tau, fext, baumgarte, rcond)


def _refused(refusal: Exception, model, data, q, v, tau, baumgarte, rcond) -> int:
    """NOT_READY if cfd_fast refused an argument not in the kernels' form, else the refusal (a bug) again."""
    floats = type(rcond) is float and type(baumgarte) is tuple and all(type(g) is float for g in baumgarte)
    if type(model) is not Model or type(data) is not Data or data.lw is None or not floats or len(baumgarte) != 2:
        return NOT_READY
    return refused(refusal, model, data, q, v, tau)


def _cfd_checked(model: Model, data: Data, q, v, tau, fext, baumgarte, rcond):
    what = "constrained_forward_dynamics"
    need_loops(model, what)
    kp, kd = baumgarte_gains(baumgarte)
    try:
        rcond = float(rcond)
    except (TypeError, ValueError):
        rcond = math.nan
    if not 0.0 <= rcond < math.inf:
        raise ValueError(f"{what}: rcond must be a finite non-negative number, got {rcond!r}")
    q, v, tau, B = states(model, data, q, v, tau, "tau")
    set_fext(model, data, fext)
    args = (model.mi, model.mf, data.ws, model.constraint_buffer, data.lw)
    if B is None:
        status = cfd_entry(*args, q, v, tau, kp, kd, rcond, not data.fext_is_zero)
        raise_for_status(model, status, q, v, tau, "tau")
        return data.ddq.copy(), data.loop.lam.copy()
    A, L = np.empty((B, model.nv)), np.empty((B, model.n_constraints))
    nchunks = max(1, min(B, numba.get_num_threads()))
    prepare(cfd_entry)  # before cfd_batch compiles
    status = cfd_batch(nchunks, *args, q, v, tau, kp, kd, rcond, not data.fext_is_zero, A, L)
    raise_for_status(model, status, q, v, tau, "tau")
    return A, L


def _one_state(q, v, x, xname: str, what: str) -> None:
    for arr, name in ((q, "q"), (v, "v"), (x, xname)):
        if np.ndim(arr) != 1:
            raise ValueError(f"{what} takes one state: {name} must be 1-D, got shape {np.shape(arr)} (no batches here)")


def dof_of(model: Model, names, what: str) -> np.ndarray:
    if isinstance(names, str):
        raise ValueError(f"{what} must be a list of joint names, got the string {names!r}")
    cols = []
    for name in names:
        k = model.joint_id(name)
        if k == 0:
            raise ModelError(f"{what}: {name!r} is the base, not a joint")
        cols.extend(range(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k])))
    return np.array(sorted(set(cols)), dtype=np.int64)


def constrained_inverse_dynamics(
    model: Model, data: Data, q, v, a, actuated=None, fext=None, rcond: float = 1e-10, atol: float = 1e-8
) -> tuple[np.ndarray, np.ndarray]:
    """Actuator torques τ (nv,; zero on passive joints) and reactions λ that produce q̈ = ``a``.

    actuated: joint names; None: every joint not in ``model.passive`` (``model.with_passive``).

    The tree's inverse dynamics (Table 1) gives τ_tree = GIM q̈ + h, the torque the open tree
    would need; in the closed mechanism it is shared between the actuated joints A and the cut
    joints: S_A τ_A + Jᵀ λ = τ_tree (Shah, Saha & Dutt section 2.2: the actuated joints and the
    reactions are solved together).  ``a`` must satisfy the loops' J q̈ + J̇ q̇ = 0 (ValueError
    otherwise, beyond ``atol`` relative).

    Raises :class:`SingularConfigurationError` if the actuated joints cannot produce ``a``
    (too few or badly placed actuators, or a singular configuration), or if their torques are
    not unique because the loop's reactions can absorb them (a singular configuration).
    Redundant actuation (more actuated DOF than the mechanism has) gets the minimum-norm
    (τ_A, λ); redundant constraints get the minimum-norm λ.
    """
    need_loops(model, "constrained_inverse_dynamics")
    _one_state(q, v, a, "a", "constrained_inverse_dynamics")
    if actuated is None:
        actuated = [n for n in model.names[1:] if n not in model.passive]
    cols = dof_of(model, actuated, "actuated")
    a = vector(a, model.nv, "a")
    tau_tree = inverse_dynamics(model, data, q, v, a, fext)
    # ṫ now holds the accelerations of q̈ = a, so the kernel's "bias" is J q̈ + J̇ q̇ itself
    st = LoopState(model, data, True, np.asarray(q, dtype=float))
    J = st.J
    viol = st.Jdv
    U = independent_rows(J)  # not along redundant directions: q̈ need not meet them
    viol = U @ (U.T @ viol)
    scale = np.abs(J).max() * np.abs(a).max() + np.abs(viol - J @ a).max() + 1.0
    if np.abs(viol).max() > atol * scale:
        raise ValueError(
            f"a violates the loop constraints: |J q̈ + J̇ q̇| = {np.abs(viol).max():.3g} (scale {scale:.3g}); "
            "closed-loop accelerations must satisfy the loops (e.g. from constrained_forward_dynamics with "
            "baumgarte=(0, 0))"
        )
    nA, m, nv = cols.size, J.shape[0], model.nv
    K = np.zeros((nv, nA + m))
    K[cols, np.arange(nA)] = 1.0
    K[:, nA:] = J.T
    U, s, Vt = np.linalg.svd(K, full_matrices=True)
    tol = rcond * (s[0] if s.size else 0.0)
    rank = int((s > tol).sum())
    x = Vt[:rank].T @ ((U[:, :rank].T @ tau_tree) / s[:rank])
    resid = np.abs(K @ x - tau_tree).max()
    if resid > 1e-8 * (np.abs(tau_tree).max() + 1.0):
        names = [model.names[k] for k in range(1, model.njoints) if model.idx_v[k] in cols]
        raise SingularConfigurationError(
            f"the actuated joints {names} cannot produce these accelerations: the torque left over after the loop "
            f"reactions is {resid:.3g} (too few or badly placed actuators, or a singular configuration of the "
            "mechanism)"
        )
    mobility = nv - np.linalg.matrix_rank(J, tol=rcond * max(np.abs(J).max(), 1e-300) * max(J.shape))
    null = Vt[rank:, :nA]
    if null.size and np.abs(null).max() > 1e-6 and nA <= mobility:
        raise SingularConfigurationError(
            "the actuator torques are not unique here: the loop reactions can absorb a torque of the actuated joints "
            "(a singular configuration of the closed mechanism)"
        )
    tau = np.zeros(nv)
    tau[cols] = x[:nA]
    return tau, x[nA:]


def complete_motion(model: Model, q, joints, v_joints, a_joints=None, data: Data | None = None):
    """Velocities and accelerations of every joint from those of ``joints`` (the mechanism's
    independent coordinates, e.g. its actuated joints), at a closed configuration q.

    J q̇ = 0 and J q̈ + J̇ q̇ = 0 (Schiehlen eq. 18–19) are solved for the other joints' rates.
    v_joints, a_joints: (n,) in the order of the joints' DOF in v.  Returns (v, a) (nv,) each
    (a is None when a_joints is None).  Raises :class:`SingularConfigurationError` if ``joints``
    do not determine the motion (too few, or a singular configuration) or over-determine it.
    """
    need_loops(model, "complete_motion")
    data = data_for(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    cols = dof_of(model, joints, "joints")
    rest = np.setdiff1d(np.arange(model.nv), cols)
    v = np.zeros(model.nv)
    v[cols] = vector(v_joints, cols.size, "v_joints")
    kinematics(model, data, q)
    J = LoopState(model, data, False, q).J
    Jr = J[:, rest]
    if np.linalg.matrix_rank(Jr, tol=1e-10 * max(np.abs(J).max(), 1e-300) * max(J.shape)) < rest.size:
        raise SingularConfigurationError(
            f"the joints {list(joints)} do not determine the motion of the mechanism here (too few independent "
            "joints, or a singular configuration)"
        )

    def solve_rest(rhs: np.ndarray, what: str) -> np.ndarray:
        x, _ = min_norm_solve(Jr, -rhs, 1e-12)
        if np.abs(Jr @ x + rhs).max() > 1e-9 * (np.abs(rhs).max() + 1.0):
            raise SingularConfigurationError(
                f"the {what} given for joints {list(joints)} are not compatible with the loops: these joints are not "
                "independent (the mechanism has fewer degrees of freedom)"
            )
        return x

    v[rest] = solve_rest(J[:, cols] @ v[cols], "velocities")
    if a_joints is None:
        return v, None
    a = np.zeros(model.nv)
    a[cols] = vector(a_joints, cols.size, "a_joints")
    inverse_dynamics(model, data, q, v, np.zeros(model.nv))  # t and ṫ with q̈ = 0, for J̇ q̇
    st = LoopState(model, data, True, q)
    a[rest] = solve_rest(J[:, cols] @ a[cols] + st.Jdv, "accelerations")
    return v, a
