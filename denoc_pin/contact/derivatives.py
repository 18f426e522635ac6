"""Jacobians of the contact step (``stepping``'s docstring), by implicit differentiation of the solved problem at its
solution, contact by contact in the mode the solution is in (Le Lidec, Montaut, Carpentier et al., "End-to-End and
Highly-Efficient Differentiable Simulation for Robotics", arXiv 2409.07107, §IV, on this step's NCP).

The step: v⁺ = v_f + M⁻¹ Jᵀ λ = v + dt FD(q, v, τ + Jᵀ λ / dt), q⁺ = q ⊕ dt v⁺, with σ = J v⁺ + b the rows' velocities
and λ solving the NCP.  At the solution each contact is

- separating (λ = 0): δλ = 0;
- sticking (λ inside the cone, σ = 0): δσ = 0, the three rows held as bilateral ones;
- sliding (‖λ_t‖ = μ λ_n > 0, σ_n = 0, λ_t = −μ λ_n u, u = σ_t / ‖σ_t‖): δσ_n = 0 and
  δλ_t + μ u δλ_n + (μ λ_n / ‖σ_t‖)(I − u uᵀ) δσ_t + λ_n u δμ = 0, the slip direction differentiated;

and a loop's or coupling's row is bilateral (δσ = 0).  With δσ = δσ_fix + G δλ — δσ_fix the change of σ at fixed λ —
these are one linear system A δλ = r for all the directions at once (where redundant sticking points or loop
rows make it singular, one of its solutions: the split of their impulses is not unique, v⁺ is).  At fixed λ:

    δv⁺ = dt ∂FD/∂q(q, v, τ + Jᵀλ/dt) δq + M⁻¹ ∂(J(q)ᵀ λ)/∂q δq + (I + dt ∂FD/∂v) δv + dt M⁻¹ δτ
    δσ = ∂(J(q) v⁺)/∂q δq + J δv⁺ + ∂b/∂q δq

∂/∂q of J's rows and of Jᵀλ for the ground's contacts: a direction e_d moves every body its column supports
rigidly by its world screw ξ_d, turns every column screw ξ_c it moves to ξ_c + ξ_d ×ₘ ξ_c (the columns of d's
subtree; within a free flyer's, ball's or planar joint's own columns, all of them, fixed in the body; within a
universal joint, the second), and moves the contact's point with its body: a vertex with it, a sphere's or
capsule's lowest point with the sphere's centre (x = s − r n, δx = δs); the ground's frame stays.  The depth
d = n·x − h changes by n·δx, the bias by (1 or β)/dt times that (rigid), k/(k dt + c) (compliant).  A loop's or
coupling's row σ_r = J_r(q) v⁺ + r(q)/dt and its reaction J_rᵀ λ_r are differentiated by the closed-loop
derivatives' rule (``loops.loop_derivatives``).
∂/∂q of pair contacts (their normal turns with both shapes) is not given yet: ask ``wrt=("v", "tau")`` for those
scenes.

One compiled call takes the step and its Jacobians (``step_jacobians``): the step's own problem (J, G, g, λ, the
world column screws its contact rows left), one pass of the forward dynamics' derivatives, the rows' q-derivatives
(``ground_rows_dq``), the modes' system (``mode_system``) and the integrator's derivatives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..algorithms.derivatives import derivatives_entry
from ..algorithms.dynamics_api import inverse_dynamics
from ..algorithms.protocol import Entry
from ..algorithms.tree_entries import rnea_entry
from ..core.dense import basic_inverse
from ..core.joints import FREE_FLYER, JOINTS, PLANAR, SPHERICAL, UNIVERSAL
from ..core.layout import LW_M, leading, model_views
from ..core.lie_groups import integrate_derivatives_kernel
from ..core.records import contact_work_views
from ..core.shapes import Box, Capsule, Mesh, Sphere
from ..core.views import INFO_CONTACTS, INFO_CONVERGED, SET_BETA, SET_C, SET_COMPLIANT, SET_K, SET_TOL
from ..loops.loop_derivatives import loop_derivatives
from ..loops.loop_kinematics import loop_step
from ..model import ModelError
from .pipeline import contact_step

__all__ = ["CONTACT_DERIVATIVES", "MODES", "ContactStepJacobians", "contact_step_derivatives", "step_jacobians"]

MODES = ("separating", "sticking", "sliding")
"""A contact's mode at the solution, ``ContactStepJacobians.modes``' codes 0, 1, 2."""

WRT = ("q", "v", "tau")

AT_THE_SURFACE = 1e-9
"""|d| (m) at or below which a rigid contact's bias is at its kink (a gap closes in one step, a penetration by β a
step): a robot standing still sinks to d → 0 there, and its ∂/∂q is the side d's sign gives, flagged one-sided."""

RANK_RCOND = 1e-9
"""A pivot of the modes' system at or below this × its largest entry counts as zero (``dense.basic_inverse``):
a redundant row's pivot is at rounding level (1e-16), an independent one's of the order of its Delassus entry."""

BODY_FIXED_COLUMNS = (FREE_FLYER, SPHERICAL, PLANAR)
"""Joints whose columns are fixed in the moving body (q ⊕ δ = q exp(δ)): a direction of the joint turns them all."""

Q_JOINTS = {k for k, j in JOINTS.items() if j.nv >= 1}
"""The joint kinds whose ∂/∂q the contact rows have (every one that moves)."""


@dataclass(frozen=True)
class ContactStepJacobians:
    """One contact step and its Jacobians, in the tangent spaces at q and q⁺ (Pinocchio's layout).

    q_next, v_next: the step's result; A: ∂(q⁺, v⁺)/∂(q, v) (2 nv, 2 nv); B: ∂(q⁺, v⁺)/∂τ (2 nv, nv) — the columns of
    inputs not in ``wrt`` are zeros; friction: ∂(q⁺, v⁺)/∂μ_i (2 nv, n_c), each contact's friction coefficient (a
    sliding contact's; a sticking or separating one's is zero: its cone does not bind); mass: ∂(q⁺, v⁺)/∂m_k (2 nv,
    len(masses)) for the bodies named (their centres of mass and rotational inertias held); T: ∂v⁺/∂v_fix (nv, nv),
    how the solved step passes on a change of the fixed-λ velocity v + dt FD(q, v, τ + Jᵀλ/dt) (chain any model
    parameter through it); modes: (n_c,) codes into
    ``MODES``; one_sided: (n_c,) True where the contact sits at a mode switch (zero force at zero normal velocity; a
    sticking impulse on the cone's edge; a slip speed below tol; a depth within ``AT_THE_SURFACE`` of 0), so the
    Jacobian is that of the mode it is in, one side of a kink; converged: whether the solve met its tolerance (an
    unconverged solve's Jacobians are those of its iterate);
    impulses: λ (m,), contacts' (t₁, t₂, n) first, then the loops'."""

    q_next: np.ndarray
    v_next: np.ndarray
    A: np.ndarray
    B: np.ndarray
    friction: np.ndarray
    mass: np.ndarray
    T: np.ndarray
    modes: np.ndarray
    one_sided: np.ndarray
    converged: bool
    impulses: np.ndarray
    wrt: tuple


REFUSED = {1: "∂/∂q of a contact between two bodies is not given yet"}
"""The kernel's refusals (``step_jacobians``' ``counts[2]``), by code; 3 + i: collision i's shape has no ∂/∂q rule."""

NOT_FINITE_JACOBIAN = 2
"""``counts[2]`` when a Jacobian entry came out NaN or inf: a FloatingPointError, never a result."""


def contact_step_derivatives(stepper, q, v, tau, wrt=WRT, masses=()) -> ContactStepJacobians:
    """The step of ``stepper`` (a ``ContactStepper``) from (q, v) under τ and its Jacobians (module docstring): one
    compiled call, ``step_jacobians``."""
    wrt = tuple(wrt)
    if not wrt or any(w not in WRT for w in wrt):
        raise ValueError(f"wrt names the inputs to differentiate by: some of {', '.join(WRT)}; got {wrt!r}")
    if stepper.settings.compliance is None and stepper.ground is not None and stepper.ground.restitution > 0.0:
        raise ModelError("contact step derivatives: a ground with restitution > 0 is not differentiated (its impact "
                         "rows switch within the step); use restitution 0")  # fmt: skip
    want_q = "q" in wrt
    moves, radius = stepper.q_tables() if want_q else (np.zeros((0, 0), dtype=np.bool_), np.zeros(0))
    data = stepper.derivative_data
    lw2 = data.lw if stepper.lw is not None else None
    q1, v1 = stepper.advance(step_jacobians, q, v, tau,
                             lambda: (data.ws, lw2, moves, radius, want_q, stepper.jacobians_record()))  # fmt: skip
    jac = stepper.jacobians_record()
    nc, m, refusal = jac.counts.tolist()
    if refusal == NOT_FINITE_JACOBIAN:  # pragma: no cover
        raise FloatingPointError("contact step derivatives: a Jacobian entry is not finite")
    if refusal:
        what = REFUSED.get(refusal) or (f"∂/∂q of a {type(stepper.model.collisions[refusal - 3].shape).__name__}'s "
                                        "contact with the ground is not given yet")  # fmt: skip
        raise ModelError(f"contact step derivatives: {what}; ask wrt=('v', 'tau')")
    nv = stepper.model.nv
    D, F, T = jac.D.copy(), jac.F[:, :nc].copy(), jac.T.copy()
    modes, one_sided, lam = jac.modes[:nc].copy(), jac.one_sided[:nc] != 0, jac.lam[:m].copy()
    converged = stepper.scene.contacts.info[INFO_CONVERGED] != 0.0
    for k, w in enumerate(WRT):
        if w not in wrt:
            D[:, k * nv : (k + 1) * nv] = 0.0
    M = np.zeros((2 * nv, len(masses)))
    if len(masses):
        M = mass_columns(stepper, masses, q, v, v1, jac)
    if not np.isfinite(M).all():  # pragma: no cover
        raise FloatingPointError("contact step derivatives: a mass derivative is not finite")
    return ContactStepJacobians(q1, v1, D[:, : 2 * nv], D[:, 2 * nv :], F, M, T, modes, one_sided, bool(converged),
                                lam, wrt)  # fmt: skip


def mass_columns(stepper, masses, q, v, v1, jac) -> np.ndarray:
    """∂(q⁺, v⁺)/∂m_k (2 nv, len(masses)) for each named body's mass, its centre of mass and its rotational inertia
    about it held (a payload at the centre): at fixed λ, v⁺ = v + dt FD(q, v, τ + Jᵀλ/dt) changes by
    −dt M⁻¹ ∂ID/∂m_k(q, v, q̈), q̈ = (v⁺ − v)/dt — ∂ID/∂m_k the inverse dynamics of a unit point mass at the centre,
    gravity included (ID is linear in the masses) — and the solved step passes that on through T = ∂v⁺/∂v_fix.
    jac: the step's ``ContactJacobians`` (its T, M⁻¹ and ∂(q ⊕ x)/∂x)."""
    model, dt = stepper.model, stepper.dt
    a = (v1 - v) / dt
    out = np.zeros((2 * model.nv, len(masses)))
    for col, name in enumerate(masses):
        unit, unit_data = stepper.unit_mass(name)
        dv1 = jac.T @ (-dt * jac.Minv @ inverse_dynamics(unit, unit_data, q, v, a))
        out[: model.nv, col], out[model.nv :, col] = dt * jac.Jv @ dv1, dv1
    return out


@njit(cache=True, nogil=True)
def step_jacobians(mi, mf, ws, cb, lw, scene, pairs, now, q, v, tau, dt, q1, v1, ws2, lw2, moves, radius, want_q,
                   jac):  # fmt: skip
    """``pipeline.contact_step`` into (q1, v1), then its Jacobians (module docstring) into ``jac`` (a
    ``ContactJacobians``: D, F, T, the modes, λ, and counts (n_c, m, refusal)); a status of the step's or the
    derivatives' kinds.  ws2, lw2: a second work area and loop work area (the forward dynamics' and the loop rows'
    derivatives); moves, radius: ``q_tables`` (want_q: the q-columns asked for; else they are zeros).  A refusal
    (``REFUSED``): the step is taken, no Jacobian."""
    nv = len(v)
    jac.counts[:] = 0
    status = contact_step(mi, mf, ws, cb, lw, scene, pairs, now, q, v, tau, dt, q1, v1)
    if status:
        return status
    w, cts, sp = contact_work_views(scene.work), scene.contacts, scene.settings
    nc = int(cts.info[INFO_CONTACTS])
    m = 3 * nc + (0 if lw is None else int(lw[LW_M]))
    jac.counts[0], jac.counts[1] = nc, m
    J, G, g = leading(w.J, (m, nv)), leading(w.G, (m, m)), leading(w.g, (m,))
    lam = jac.lam[:m]
    lam[:] = leading(w.lam, (m,))
    if want_q:
        for i in range(nc):
            if cts.keys[i, 0] >= 0:
                jac.counts[2] = 1
                return 0
            if not radius[cts.keys[i, 1]] >= 0.0:
                jac.counts[2] = 3 + cts.keys[i, 1]
                return 0
    sigma = g.copy()
    for i in range(m):
        for j in range(m):
            sigma[i] += G[i, j] * lam[j]
    modes, one_sided = jac.modes[:nc], jac.one_sided[:nc]
    contact_modes(lam, sigma, cts.mu[:nc], sp[SET_TOL], modes, one_sided)
    # v⁺ = v + dt FD(q, v, τ + Jᵀλ/dt): one pass of the forward dynamics' derivatives at that τ gives ∂/∂q at fixed
    # λ, and ∂/∂v (the Coriolis terms do not depend on q̈) and M⁻¹ as at τ
    tau_all = tau + np.dot(J.T, lam) / dt
    fq = np.zeros((nv, nv))
    fv = np.zeros((nv, nv))
    Minv = np.zeros((nv, nv))
    status = derivatives_entry(mi, mf, ws2, q, v, tau_all, False, True, fq, fv, Minv)
    if status:
        return status
    # the directions' columns: δq | δv | δτ | a kick δv_fix of the fixed-λ velocity (T) | μ_i; dv⁺ and dσ at fixed λ
    K = 4 * nv
    dvfix = np.zeros((nv, K + nc))
    for i in range(nv):
        for j in range(nv):
            dvfix[i, nv + j] = dt * fv[i, j] + (1.0 if i == j else 0.0)
            dvfix[i, 2 * nv + j] = dt * Minv[i, j]
        dvfix[i, 3 * nv + i] = 1.0
    dsig = np.zeros((m, K))
    if want_q:
        X = w.Jall  # (6, nv): the columns' world screws (v; ω), left by the step's contact rows
        dJw = np.zeros((m, nv))
        dJTlam = np.zeros((nv, nv))
        ddepth = np.zeros((nc, nv))
        ground_rows_dq(X, moves, scene.geometry.support, cts.bodies[:nc], cts.points[:nc], cts.frames[:nc],
                       radius_of(radius, cts.keys[:nc]), lam, v1, dJw, dJTlam, ddepth)  # fmt: skip
        dvfix[:, :nv] = dt * fq + np.dot(Minv, dJTlam)
        dsig[:, :nv] = dJw
        for i in range(nc):
            d = cts.depth[i]
            if sp[SET_COMPLIANT] != 0.0:
                slope = sp[SET_K] / (sp[SET_K] * dt + sp[SET_C])
            else:
                slope = (1.0 if d > 0.0 else sp[SET_BETA]) / dt  # a gap closes in a step, β of a penetration
                if abs(d) <= AT_THE_SURFACE:
                    one_sided[i] = 1
            for j in range(nv):
                dsig[3 * i + 2, j] += slope * ddepth[i, j]
        if lw is not None and m > 3 * nc:
            # the loop rows σ_r = J_r(q) v⁺ + r(q)/dt: ``loop_derivatives``' c = J a + J̇ q̇ + k_p² r at q̇ = 0, a = v⁺,
            # k_p² = 1/dt gives ∂σ_r/∂q at fixed v⁺, and ∂(J_rᵀ λ_r)/∂q, λ_r held
            nl = m - 3 * nc
            zero = np.zeros(nv)
            status = rnea_entry(mi, mf, ws2, q, zero, v1, False)
            if status:
                return status
            loop_step(mi, mf, ws2, cb, lw2, q, True)
            Cq = np.zeros((nl, nv))
            Cv = np.zeros((nl, nv))
            Gl = np.zeros((nv, nv))
            loop_derivatives(mi, mf, ws2, cb, lw2, zero, v1, lam[3 * nc :].copy(), np.sqrt(1.0 / dt), 0.0, Cq, Cv, Gl)
            dsig[3 * nc :, :nv] = Cq
            dvfix[:, :nv] += np.dot(Minv, Gl)
    dsig += np.dot(J, np.ascontiguousarray(dvfix[:, :K]))
    dv1 = dvfix
    if m:
        dlam = mode_system(G, lam, sigma, cts.mu[:nc], modes, dsig)
        dv1 = dvfix + np.dot(Minv, np.dot(J.T, dlam))
    mv = model_views(mi, mf)
    jq = np.zeros((nv, nv))
    jv = np.zeros((nv, nv))
    integrate_derivatives_kernel(mv.kinds, mv.idx_v, mv.nvs, dt * v1, jq, jv)
    dq1 = dt * np.dot(jv, dv1)
    dq1[:, :nv] += jq
    jac.D[:nv], jac.D[nv:] = dq1[:, : 3 * nv], dv1[:, : 3 * nv]
    jac.F[:nv, :nc], jac.F[nv:, :nc] = dq1[:, K:], dv1[:, K:]
    jac.T[:, :] = dv1[:, 3 * nv : K]
    jac.Minv[:, :] = Minv
    jac.Jv[:, :] = jv
    if not (np.isfinite(dq1).all() and np.isfinite(dv1).all()):  # pragma: no cover
        jac.counts[2] = NOT_FINITE_JACOBIAN
    return 0


@njit(cache=True)
def radius_of(radius, keys):
    """Each ground contact's radius (``q_tables``' per collision)."""
    out = np.zeros(len(keys))
    for i in range(len(keys)):
        out[i] = radius[keys[i, 1]]
    return out


@njit(cache=True)
def contact_modes(lam, sigma, mu, tol, modes, one_sided):
    """Each contact's mode at the solution (``MODES``: separating λ_n = 0; sliding: slipping faster than tol with λ
    on the cone's edge; else sticking) and whether it sits at a switch (``ContactStepJacobians.one_sided``)."""
    for i in range(len(modes)):
        ln, lt = lam[3 * i + 2], np.sqrt(lam[3 * i] ** 2 + lam[3 * i + 1] ** 2)
        slip = np.sqrt(sigma[3 * i] ** 2 + sigma[3 * i + 1] ** 2)
        if ln <= 0.0:
            modes[i], one_sided[i] = 0, 1 if sigma[3 * i + 2] <= tol else 0
        elif slip > tol and lt >= mu[i] * ln * (1.0 - 1e-9):
            modes[i], one_sided[i] = 2, 1 if slip <= 10.0 * tol else 0
        else:
            modes[i], one_sided[i] = 1, 1 if lt >= mu[i] * ln * (1.0 - 1e-6) else 0


@njit(cache=True)
def mode_system(G, lam, sigma, mu, modes, dsig):
    """δλ (m, K + n_c) from A δλ = r (module docstring), each contact's rows by its mode, the loops' bilateral: r's
    first K columns −(the held rows of dσ_fix), its last n_c the directions μ_i (a sliding contact's λ_t = −μ λ_n u).
    Redundant sticking points or loop rows leave A singular (the split of their impulses is not unique): with no
    contact sliding, A's null space is that of Jᵀ (A = G on the held rows), so any solution gives one δv⁺ and
    δλ = X r, X a generalized inverse (``dense.basic_inverse``); sliding points' split moves v⁺ (their friction acts
    where their normal impulse is), and their singular system takes the minimum-norm solution (SVD least squares),
    which the solver's solution follows (a cube sliding on four corners, in the tests)."""
    m, K = dsig.shape
    nc = len(modes)
    A, r = np.zeros((m, m)), np.zeros((m, K + nc))
    for i in range(nc):
        if modes[i] == 0:  # δλ = 0
            for a in range(3):
                A[3 * i + a, 3 * i + a] = 1.0
            continue
        if modes[i] == 1:  # δσ = 0
            for a in range(3):
                A[3 * i + a, :] = G[3 * i + a, :]
                r[3 * i + a, :K] = -dsig[3 * i + a, :]
            continue
        n = 3 * i + 2  # sliding: δσ_n = 0; δλ_t + μ u δλ_n + κ (I − u uᵀ) δσ_t + λ_n u δμ = 0
        A[n, :] = G[n, :]
        r[n, :K] = -dsig[n, :]
        speed = np.sqrt(sigma[3 * i] ** 2 + sigma[3 * i + 1] ** 2)
        u0, u1 = sigma[3 * i] / speed, sigma[3 * i + 1] / speed
        kappa = mu[i] * lam[n] / speed
        P00, P01, P11 = kappa * (1.0 - u0 * u0), -kappa * u0 * u1, kappa * (1.0 - u1 * u1)
        t0, t1 = 3 * i, 3 * i + 1
        for j in range(m):
            A[t0, j] = P00 * G[t0, j] + P01 * G[t1, j]
            A[t1, j] = P01 * G[t0, j] + P11 * G[t1, j]
        for j in range(K):
            r[t0, j] = -(P00 * dsig[t0, j] + P01 * dsig[t1, j])
            r[t1, j] = -(P01 * dsig[t0, j] + P11 * dsig[t1, j])
        A[t0, t0] += 1.0
        A[t1, t1] += 1.0
        A[t0, n] += mu[i] * u0
        A[t1, n] += mu[i] * u1
        r[t0, K + i] = -lam[n] * u0
        r[t1, K + i] = -lam[n] * u1
    for a in range(3 * nc, m):  # a loop's row: δσ = 0
        A[a, :] = G[a, :]
        r[a, :K] = -dsig[a, :]
    X = np.empty((m, m))
    sliding = False
    for i in range(nc):
        sliding |= modes[i] == 2
    if basic_inverse(A, X, RANK_RCOND) == m or not sliding:
        return np.dot(X, r)
    return np.linalg.lstsq(A, r, rcond=1e-13)[0]


def q_tables(stepper) -> tuple[np.ndarray, np.ndarray]:
    """(moves (nv, nv): direction d turns column c's screw; radius (n_collisions,): how far below its body-fixed
    centre a collision's ground contact is — a sphere's or capsule's radius, 0 for a box's or mesh's vertex, NaN
    where ∂/∂q has no rule yet), a model's, made once a stepper; a ModelError for a joint kind without one."""
    model, nv = stepper.model, stepper.model.nv
    for k in range(1, model.njoints):
        if int(model.kinds[k]) not in Q_JOINTS:
            kind = JOINTS[int(model.kinds[k])].name
            raise ModelError(f"contact step derivatives: ∂/∂q through joint {model.names[k]!r} ({kind}) is not "
                             "given yet; ask wrt=('v', 'tau')")  # fmt: skip
    joint_of = np.zeros(nv, dtype=np.int64)
    for k in range(1, model.njoints):
        joint_of[model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = k
    moves = stepper.scene.geometry.support[joint_of].T.copy()  # d moves c's joint: c's joint is in d's subtree
    for c in range(nv):
        for d in range(nv):
            if joint_of[c] == joint_of[d]:
                kind = int(model.kinds[joint_of[c]])
                moves[d, c] = kind in BODY_FIXED_COLUMNS or (kind == UNIVERSAL and c > d)
    radius = np.full(len(model.collisions), np.nan)
    for i, col in enumerate(model.collisions):
        if isinstance(col.shape, (Sphere, Capsule)):
            radius[i] = col.shape.radius  # the lowest point moves with the sphere's centre
        elif isinstance(col.shape, (Box, Mesh)):
            radius[i] = 0.0  # a vertex, fixed in the body
    return moves, radius


@njit(cache=True)
def ground_rows_dq(X, moves, support, bodies, points, frames, radius, lam, w, dJw, dJTlam, ddepth):
    """The ground contacts' rows differentiated in q (module docstring), into dJw (m, nv), dJTlam (nv, nv) and
    ddepth (n_c, nv).  X (6, nv): the columns' world screws (v; ω) about the origin; moves[d, c]: direction d turns
    column c; support[k, c]: column c moves body k; radius: each contact's point below its body-fixed centre."""
    nv = X.shape[1]
    for i in range(len(radius)):
        b = bodies[i, 1]
        x, F = points[i], frames[i]
        s0, s1, s2 = x[0] + radius[i] * F[0, 2], x[1] + radius[i] * F[1, 2], x[2] + radius[i] * F[2, 2]
        f = np.zeros(3)
        for a in range(3):
            f[a] = F[a, 0] * lam[3 * i] + F[a, 1] * lam[3 * i + 1] + F[a, 2] * lam[3 * i + 2]
        om = np.zeros(3)  # body b's angular velocity at w
        for c in range(nv):
            if support[b, c]:
                for a in range(3):
                    om[a] += X[3 + a, c] * w[c]
        for d in range(nv):
            if not support[b, d]:
                continue  # direction d moves neither the point nor the columns of b's support
            vd0, vd1, vd2, wd0, wd1, wd2 = X[0, d], X[1, d], X[2, d], X[3, d], X[4, d], X[5, d]
            dx0 = wd1 * s2 - wd2 * s1 + vd0  # δx = ω_d × s + v_d
            dx1 = wd2 * s0 - wd0 * s2 + vd1
            dx2 = wd0 * s1 - wd1 * s0 + vd2
            dvl0 = dvl1 = dvl2 = dva0 = dva1 = dva2 = 0.0  # δ of body b's twist at w
            for c in range(nv):
                if not (support[b, c] and moves[d, c]):
                    continue
                vc0, vc1, vc2, wc0, wc1, wc2 = X[0, c], X[1, c], X[2, c], X[3, c], X[4, c], X[5, c]
                # ξ_d ×ₘ ξ_c = (ω_d × v_c + v_d × ω_c, ω_d × ω_c)
                l0 = wd1 * vc2 - wd2 * vc1 + vd1 * wc2 - vd2 * wc1
                l1 = wd2 * vc0 - wd0 * vc2 + vd2 * wc0 - vd0 * wc2
                l2 = wd0 * vc1 - wd1 * vc0 + vd0 * wc1 - vd1 * wc0
                a0 = wd1 * wc2 - wd2 * wc1
                a1 = wd2 * wc0 - wd0 * wc2
                a2 = wd0 * wc1 - wd1 * wc0
                dvl0 += l0 * w[c]
                dvl1 += l1 * w[c]
                dvl2 += l2 * w[c]
                dva0 += a0 * w[c]
                dva1 += a1 * w[c]
                dva2 += a2 * w[c]
                # δQ_c = δξ_c · (f, x × f)
                dJTlam[c, d] += (l0 * f[0] + l1 * f[1] + l2 * f[2] + a0 * (x[1] * f[2] - x[2] * f[1])
                                 + a1 * (x[2] * f[0] - x[0] * f[2]) + a2 * (x[0] * f[1] - x[1] * f[0]))  # fmt: skip
            # δẋ = δv + δω × x + ω × δx
            du0 = dvl0 + dva1 * x[2] - dva2 * x[1] + om[1] * dx2 - om[2] * dx1
            du1 = dvl1 + dva2 * x[0] - dva0 * x[2] + om[2] * dx0 - om[0] * dx2
            du2 = dvl2 + dva0 * x[1] - dva1 * x[0] + om[0] * dx1 - om[1] * dx0
            for a in range(3):
                dJw[3 * i + a, d] = F[0, a] * du0 + F[1, a] * du1 + F[2, a] * du2
            ddepth[i, d] = F[0, 2] * dx0 + F[1, 2] * dx1 + F[2, 2] * dx2
            # + ω_c · (δx × f) over c in b's support
            m0, m1, m2 = dx1 * f[2] - dx2 * f[1], dx2 * f[0] - dx0 * f[2], dx0 * f[1] - dx1 * f[0]
            for c in range(nv):
                if support[b, c]:
                    dJTlam[c, d] += X[3, c] * m0 + X[4, c] * m1 + X[5, c] * m2


# Compiled for its caller's buffers (a tree's; a closed mechanism's at its first use), after the step it takes.
CONTACT_DERIVATIVES = Entry(step_jacobians, group="contact_derivatives",
                            after=(contact_step, derivatives_entry, loop_derivatives),
                            what="the contact step's Jacobians", seconds=60)  # fmt: skip
