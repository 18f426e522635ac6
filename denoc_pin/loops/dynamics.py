"""Closed-loop dynamics on the tree's recursions: Schiehlen eq. (17)–(20) forward, the actuated/passive split of
Shah, Saha & Dutt (section 2.2) inverse, and the motion of every joint from the independent ones."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..algorithms._plumbing import _MAT, _MB, _VEC, aba_entry
from ..algorithms.api import forward_dynamics, inverse_dynamics
from ..algorithms.forward import udut_solve
from ..core.layout import data_views, model_views, split_model, stamped_for
from ..core.spatial import matmul_into
from ..model import Data, Model, ModelError, configuration, vector
from .kernel import RANK_RTOL, LoopState, data_for, independent_rows, kinematics, loop_kernel, need_loops
from .types import SingularConfigurationError, baumgarte_gains

__all__ = ["complete_motion", "constrained_forward_dynamics", "constrained_inverse_dynamics"]


def min_norm_solve(A: np.ndarray, b: np.ndarray, rcond: float) -> tuple[np.ndarray, int]:
    """Minimum-norm least-squares solution of A x = b by SVD (rank-revealing), and the rank."""
    x, _, rank, _ = np.linalg.lstsq(A, b, rcond=rcond)
    return x, int(rank)


@njit(cache=True)
def symmetric_pinv_solve(A, b, rcond):
    """x = A⁺ b for a symmetric positive semi-definite A (the minimum-norm solution), by the cyclic
    Jacobi eigen-decomposition A = V diag(w) Vᵀ; eigenvalues ≤ rcond · max w count as zero.
    Returns (x, rank).  Compiled and LAPACK-free: the reaction systems here are small."""
    m = A.shape[0]
    A = 0.5 * (A + A.T)
    V = np.eye(m)
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
    wmax = 0.0
    for i in range(m):
        wmax = max(wmax, abs(A[i, i]))
    x = np.zeros(m)
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
    return x, rank


@njit(cache=True)
def independent_count(J, rtol):
    """How many of J's singular values are at least ``rtol`` × the largest: the eigenvalues of J Jᵀ against rtol²
    (compiled and LAPACK-free, the per-call check of ``constrained_forward_dynamics``; rtol ≥ 1e-7 keeps rtol² well
    above the eigenvalues' rounding, 1e-16 of the largest)."""
    return symmetric_pinv_solve(J @ J.T, np.zeros(J.shape[0]), rtol * rtol)[1]


@njit(cache=True)
def reaction_kernel(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, J, Jdv, res, v, a0, kp,
                    kd, rcond, a, lam):  # fmt: skip
    """Schiehlen eq. (19)–(20) on the tree's UDUᵀ factors: Y = GIM⁻¹ Jᵀ by the recursions of Table 3,
    N_c = J Y, N_c λ = γ − J q̈₀ (minimum norm), q̈ = q̈₀ + Y λ.  Returns the rank of N_c."""
    m, nv = J.shape
    nj = len(parents)
    JT = np.empty((nv, m))
    for i in range(m):
        for k in range(nv):
            JT[k, i] = J[i, k]
    Y = np.empty((nv, m))
    udut_solve(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, JT, np.empty((nj, m, 6)),
               np.empty((nj, m, 6)), Y)  # fmt: skip
    Nc = np.empty((m, m))
    matmul_into(J, Y, Nc)  # Schiehlen's reaction matrix N_c (eq. 20)
    rhs = np.empty(m)
    for i in range(m):
        jv = 0.0
        ja = 0.0
        for k in range(nv):
            jv += J[i, k] * v[k]
            ja += J[i, k] * a0[k]
        rhs[i] = -Jdv[i] - 2.0 * kd * jv - kp * kp * res[i] - ja  # γ − J q̈₀
    x, rank = symmetric_pinv_solve(Nc, rhs, rcond)
    for i in range(m):
        lam[i] = x[i]
    for k in range(nv):
        s = a0[k]
        for i in range(m):
            s += Y[k, i] * x[i]
        a[k] = s
    return rank


_LI = types.Array(types.int64, 2, "C", readonly=True)  # model.cut_buffers
_LF = types.Array(types.float64, 2, "C", readonly=True)
CFD_FAST = types.int64(_MB, _VEC, _LI, _LF, _VEC, _VEC, _VEC, types.float64, types.float64, types.float64, _MAT, _VEC,
                       _VEC, _VEC, _VEC)  # fmt: skip


@njit(CFD_FAST, cache=True)
def cfd_fast(mb, ws, li, lf, q, v, tau, kp, kd, rcond, J, Jdv, res, a, lam):
    """Schiehlen eq. (17)–(20) in one compiled call for a model whose constraints are cuts only: the tree's
    forward dynamics (q̈₀, the UDUᵀ factors, t and ṫ with q̈ = 0), the loop kernel (J, r, J̇ q̇), the reaction
    solve.  Returns the rank of N_c, or a negative status (the Python path then takes over); q̈₀ stays in the
    workspace's ddq for a second solve."""
    if not stamped_for(ws, mb):
        return -2
    mi, mf = split_model(mb)
    status = aba_entry(mi, mf, ws, q, v, tau, False)
    if status != 0:
        return -1
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    loop_kernel(mv.parents, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.t, dv.tdot, dv.oR, dv.op, li, lf, True, J, res,
                Jdv)  # fmt: skip
    a0 = dv.ddq  # q̈₀, read-only below: the reaction solve writes q̈ into a
    return reaction_kernel(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi,
                           dv.I_hat_inv, J, Jdv, res, v, a0, kp, kd, rcond, a, lam)  # fmt: skip


def constrained_forward_dynamics(
    model: Model, data: Data, q, v, tau, fext=None, baumgarte=(0.0, 0.0), rcond: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q̈ (nv,) and cut-joint reactions λ (n_constraints,) of the closed mechanism.

    Schiehlen eq. (17)–(20): q̈₀ = GIM⁻¹ (τ − h) by the tree's recursive forward dynamics
    (Table 3), Y = GIM⁻¹ Jᵀ by the same UDUᵀ factors (no GIM, no inverse is formed), then the
    reaction system N_c λ = γ − J q̈₀ with N_c = J Y and q̈ = q̈₀ + Y λ.

    baumgarte = (kp, kd): the constraint is imposed as r̈ + 2 kd ṙ + kp² r = 0, i.e.
    γ = −J̇ q̇ − 2 kd J q̇ − kp² r (kp, kd ≥ 0, in 1/s; (0, 0) imposes J q̈ + J̇ q̇ = 0 only).

    Redundant constraints (a planar mechanism described in 3-D has a rank-deficient J; Cassie's legs have one
    row redundant up to the file's rounding) are found by the symmetric reaction system's eigenvalues (below
    ``rcond`` × the largest); then the rank is decided on J's singular values (``independent_rows``, the rule
    of ``assemble``) and the independent rows U_rᵀ J are solved: the accelerations are unique and λ = U_r λ_r
    is the minimum-norm set of reactions that produces them; the reactions along redundant directions are
    statically indeterminate, so any other split is as valid.
    λ: reaction of link1 on link2 in C1 ([N·m] angular rows, [N] linear rows); see the module doc.
    """
    need_loops(model, "constrained_forward_dynamics")
    _one_state(q, v, tau, "tau", "constrained_forward_dynamics")
    kp, kd = baumgarte_gains(baumgarte)
    m = model.n_constraints
    a, lam, rank = np.empty(model.nv), np.empty(m), -1
    if fext is None and not model.coupled:  # the fast path: one compiled call
        J, Jdv, r = np.empty((m, model.nv)), np.empty(m), np.empty(m)
        li, lf = model.cut_buffers
        try:
            rank = cfd_fast(model.mb, data.ws, li, lf, q, v, tau, kp, kd, float(rcond), J, Jdv, r, a, lam)
        except (TypeError, AttributeError):  # not float64 arrays, or not a Data: the checked path below
            rank = -1
        if rank == m:
            data.ddq[:] = a
            return a, lam
    if rank < 0:  # the checked path: external forces, couplings, or arguments to check and convert
        forward_dynamics(model, data, q, v, tau, fext)  # q̈₀ into data.ddq; the UDUᵀ factors, t and ṫ (q̈ = 0)
        st = LoopState(model, data, True, np.asarray(q, dtype=float))
        J, Jdv, r = st.J, st.Jdv, st.r
    a0 = data.ddq.copy()
    v = np.ascontiguousarray(v, dtype=float)

    def solve(J, Jdv, r, lam, rcond):
        return reaction_kernel(model.parents, model.module_ptr, model.module_bodies, model.idx_v, model.nvs, data.E,
                               data.r, data.S, data.Psi, data.I_hat_inv, J, Jdv, r, v, a0, kp, kd, rcond, a,
                               lam)  # fmt: skip

    if rank < 0:
        rank = solve(J, Jdv, r, lam, float(rcond))
    if rank < m and not independent_count(J, RANK_RTOL) == rank == independent_count(J, 1e-8):
        # The rank is J's (``independent_rows``), as for assemble and the inverse problem, not N_c's, whose
        # eigenvalues also carry the masses.  Where J has no singular value between 1e-8 and RANK_RTOL of the largest
        # (redundant to rounding, as a planar loop in 3-D) and N_c drops as many, both drop the same directions and
        # the solve stands; otherwise the independent rows U_rᵀ J are solved, λ = U_r λ_r.
        U = independent_rows(J)
        lam_r = np.empty(U.shape[1])
        solve(np.ascontiguousarray(U.T @ J), U.T @ Jdv, U.T @ r, lam_r, 1e-14)
        lam = U @ lam_r
    data.ddq[:] = a
    return a, lam


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
