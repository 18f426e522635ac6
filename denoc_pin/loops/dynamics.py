"""Closed-loop dynamics on the tree's recursions: Schiehlen eq. (17)–(20) forward, the actuated/passive split of
Shah, Saha & Dutt (section 2.2) inverse, and the motion of every joint from the independent ones."""

from __future__ import annotations

import math

import numpy as np

from ..algorithms.dynamics_api import check_dense_size, inverse_dynamics
from ..algorithms.protocol import refused, set_fext, states
from ..core.dense import min_norm_solve
from ..model import Data, Model, ModelError, configuration, vector
from ..model.status import NOT_READY, raise_for_status
from .loop_derivatives import CFD_DERIVATIVES
from .loop_entries import CFD, RCOND
from .loop_kinematics import LoopState, data_for, independent_rows, kinematics, need_loops
from .types import SingularConfigurationError, baumgarte_gains

__all__ = [
    "complete_motion",
    "constrained_forward_dynamics",
    "constrained_forward_dynamics_derivatives",
    "constrained_inverse_dynamics",
]

cfd_fast = CFD.fast  # the fast entries, as module globals
cfd_derivatives_fast = CFD_DERIVATIVES.fast


def constrained_forward_dynamics(
    model: Model, data: Data, q, v, tau, fext=None, baumgarte=(0.0, 0.0), rcond: float = RCOND
) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q̈ (nv,) and reactions λ (n_constraints,) of the closed mechanism; a batch q (B, nq), v, tau
    (B, nv) gives (B, nv) and (B, n_constraints), computed on all cores.

    Schiehlen eq. (17)–(20): q̈₀ = GIM⁻¹ (τ − h) by the tree's recursive forward dynamics
    (Table 3), Y = GIM⁻¹ Jᵀ by the same UDUᵀ factors (no GIM, no inverse is formed), then the
    reaction system N_c λ = γ − J q̈₀ with N_c = J Y and q̈ = q̈₀ + Y λ: one compiled call that allocates nothing
    (``reaction_step``).  Where the GIM's factor pays (up to ``layout.LOOP_FACTOR_DOF`` DOF, ``layout.factor_pays``
    for the model's rows: small mechanisms, Cassie), q̈₀ and Y come instead from GIM = Lᵀ L, two sweeps each.

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
            gains = baumgarte if type(baumgarte) is tuple and len(baumgarte) == 2 else (None,)
            status = refused(refusal, model, data, q, v, tau, floats=(*gains, rcond), loops=True)
        if status == 0:
            return data.ddq.copy(), data.loop.lam.copy()
    return _cfd_checked(model, data, q, v, tau, fext, baumgarte, rcond)


def _cfd_checked(model: Model, data: Data, q, v, tau, fext, baumgarte, rcond):
    what = "constrained_forward_dynamics"
    need_loops(model, what)
    kp, kd = baumgarte_gains(baumgarte)
    rcond = _rcond(rcond, what)
    q, v, tau, B = states(model, data, q, v, tau, "tau")
    set_fext(model, data, fext)
    args = (model.mi, model.mf, data.ws, model.constraint_buffer, data.lw)
    if B is None:
        status = CFD.kernel(*args, q, v, tau, kp, kd, rcond, not data.fext_is_zero)
        raise_for_status(model, status, q, v, tau, "tau")
        return data.ddq.copy(), data.loop.lam.copy()
    fixed = (model.constraint_buffer, kp, kd, rcond, not data.fext_is_zero)
    status, A, L = CFD.run_batch(model, data, fixed, q, v, tau)
    raise_for_status(model, status, q, v, tau, "tau")
    return A, L


def constrained_forward_dynamics_derivatives(
    model: Model, data: Data, q, v, tau, fext=None, baumgarte=(0.0, 0.0), rcond: float = RCOND
) -> tuple[np.ndarray, ...]:
    """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ, ∂λ/∂q, ∂λ/∂q̇, ∂λ/∂τ) of ``constrained_forward_dynamics`` at one state, with the same
    fext, baumgarte and rcond; ``pinocchio.computeConstraintDynamicsDerivatives``, for every cut type and coupling.

    ∂/∂q is taken in the tangent space (q ⊕ δq), off the constraint manifold as on it: the derivatives of the
    function ``constrained_forward_dynamics`` computes (its Baumgarte terms included).  The first three are (nv, nv),
    the last three (n_constraints, nv); q̈ and λ are left in ``data.ddq`` and ``data.loop.lam``.  Schiehlen eq.
    (19)–(20) differentiated (``loops.loop_derivatives``, docs/derivatives.md#closed-loops).  Redundant constraints (the
    rank rule of ``constrained_forward_dynamics``): the derivatives of the system on the basis B of J's range that
    the dynamics solve, B held, so ∂λ lies in J's range as λ does.  A batch q (B, nq), v, tau (B, nv) gives six
    arrays with a leading B, computed on all cores.
    """
    if fext is None:
        try:
            kp, kd = baumgarte
            nv, m = model.nv, model.n_constraints
            out = np.empty((3 * (nv + m), nv))  # the six results' rows, one block (``cfd_derivatives_fast``)
            if data.loop_derivatives_ws is None:
                status = NOT_READY
            else:
                status = cfd_derivatives_fast(model.mb, data.ws, model.constraint_buffer, data.lw, q, v, tau, kp, kd,
                                              rcond, out)  # fmt: skip
        except (TypeError, AttributeError, ValueError) as refusal:
            gains = baumgarte if type(baumgarte) is tuple and len(baumgarte) == 2 else (None,)
            status = refused(refusal, model, data, q, v, tau, floats=(*gains, rcond), loops=True)
        if status == 0:  # views of the block's rows
            n3, n4, n5 = 3 * nv, 3 * nv + m, 3 * nv + 2 * m
            return out[:nv], out[nv : 2 * nv], out[2 * nv : n3], out[n3:n4], out[n4:n5], out[n5:]
    return _cfd_derivatives_checked(model, data, q, v, tau, fext, baumgarte, rcond)


def _cfd_derivatives_checked(model: Model, data: Data, q, v, tau, fext, baumgarte, rcond):
    what = "constrained_forward_dynamics_derivatives"
    need_loops(model, what)
    kp, kd = baumgarte_gains(baumgarte)
    rcond = _rcond(rcond, what)
    q, v, tau, B = states(model, data, q, v, tau, "tau")
    check_dense_size(model, what)
    set_fext(model, data, fext)
    with_fext = not data.fext_is_zero
    outs = data.loop_derivatives()
    if B is None:
        CFD_DERIVATIVES.prepare()  # with the fast entry: the next call takes the fast path
        status = CFD_DERIVATIVES.kernel(model.mi, model.mf, data.ws, model.constraint_buffer, data.lw, q, v, tau, kp,
                                        kd, rcond, with_fext, *outs)  # fmt: skip
        raise_for_status(model, status, q, v, tau, "tau")
        return tuple(x.copy() for x in outs)
    nv, m = model.nv, model.n_constraints
    fixed = (model.constraint_buffer, kp, kd, rcond, with_fext)
    out, out2 = np.empty((B, 3 * nv * nv)), np.empty((B, 3 * m * nv))
    status, out, out2 = CFD_DERIVATIVES.run_batch(model, data, fixed, q, v, tau, out, out2)
    raise_for_status(model, status, q, v, tau, "tau")
    out, out2 = out.reshape(B, 3, nv, nv), out2.reshape(B, 3, m, nv)
    return out[:, 0], out[:, 1], out[:, 2], out2[:, 0], out2[:, 1], out2[:, 2]


def _rcond(rcond, what: str) -> float:
    try:
        rcond = float(rcond)
    except (TypeError, ValueError):
        rcond = math.nan
    if not 0.0 <= rcond < math.inf:
        raise ValueError(f"{what}: rcond must be a finite non-negative number, got {rcond!r}")
    return rcond


def _one_state(q, v, x, xname: str, what: str) -> tuple:
    """q, v, x of one state, each 1-D or a Pinocchio column (n, 1), as 1-D arrays."""
    out = []
    for arr, name in ((q, "q"), (v, "v"), (x, xname)):
        arr = np.asarray(arr, dtype=np.float64)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise ValueError(f"{what} takes one state: {name} must be 1-D, got shape {np.shape(arr)} (no batches here)")
        out.append(arr)
    return tuple(out)


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
    q, v, a = _one_state(q, v, a, "a", "constrained_inverse_dynamics")
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
