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
these are one linear system A δλ = r for all the directions at once (least squares where redundant sticking points
make it singular: the split of their impulses is not unique, v⁺ is).  At fixed λ:

    δv⁺ = dt ∂FD/∂q(q, v, τ + Jᵀλ/dt) δq + M⁻¹ ∂(J(q)ᵀ λ)/∂q δq + (I + dt ∂FD/∂v) δv + dt M⁻¹ δτ
    δσ = ∂(J(q) v⁺)/∂q δq + J δv⁺ + ∂b/∂q δq

∂/∂q of J's rows and of Jᵀλ for the ground's contacts: a direction e_d moves every body its column supports
rigidly by its world screw ξ_d, turns every column screw ξ_c it moves to ξ_c + ξ_d ×ₘ ξ_c (the columns of d's
subtree; within a free flyer's or ball's own joint, all of its body-fixed columns; within a universal joint, the
second), and moves the contact's point with its body: a vertex with it, a sphere's or capsule's lowest point with the
sphere's centre (x = s − r n, δx = δs); the ground's frame stays.  The depth d = n·x − h changes by n·δx, the bias by
(1 or β)/dt times that (rigid), k/(k dt + c) (compliant).  ∂/∂q of pair contacts (their normal turns with both
shapes) and of loop rows is not given yet: ask ``wrt=("v", "tau")`` for those scenes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.derivatives_api import forward_dynamics_derivatives, integrate_derivatives
from ..algorithms.kinematics_api import joint_jacobians
from ..core.joints import FREE_FLYER, JOINTS, SPHERICAL, UNIVERSAL
from ..core.shapes import Box, Capsule, Mesh, Sphere
from ..model import ModelError

__all__ = ["MODES", "ContactStepJacobians", "contact_step_derivatives"]

MODES = ("separating", "sticking", "sliding")
"""A contact's mode at the solution, ``ContactStepJacobians.modes``' codes 0, 1, 2."""

WRT = ("q", "v", "tau")

AT_THE_SURFACE = 1e-9
"""|d| (m) at or below which a rigid contact's bias is at its kink (a gap closes in one step, a penetration by β a
step): a robot standing still sinks to d → 0 there, and its ∂/∂q is the side d's sign gives, flagged one-sided."""

BODY_FIXED_COLUMNS = (FREE_FLYER, SPHERICAL)
"""Joints whose columns are fixed in the moving body (q ⊕ δ = q exp(δ)): a direction of the joint turns them all."""

Q_JOINTS = {k for k, j in JOINTS.items() if j.nv == 1} | {FREE_FLYER, SPHERICAL, UNIVERSAL}
"""The joint kinds whose ∂/∂q the contact rows have (every one but planar; the base has none)."""


@dataclass(frozen=True)
class ContactStepJacobians:
    """One contact step and its Jacobians, in the tangent spaces at q and q⁺ (Pinocchio's layout).

    q_next, v_next: the step's result; A: ∂(q⁺, v⁺)/∂(q, v) (2 nv, 2 nv); B: ∂(q⁺, v⁺)/∂τ (2 nv, nv) — the columns of
    inputs not in ``wrt`` are zeros; friction: ∂(q⁺, v⁺)/∂μ_i (2 nv, n_c), each contact's friction coefficient (a
    sliding contact's; a sticking or separating one's is zero: its cone does not bind); modes: (n_c,) codes into
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
    modes: np.ndarray
    one_sided: np.ndarray
    converged: bool
    impulses: np.ndarray
    wrt: tuple


def contact_step_derivatives(stepper, q, v, tau, wrt=WRT) -> ContactStepJacobians:
    """The step of ``stepper`` (a ``ContactStepper``) from (q, v) under τ and its Jacobians (module docstring)."""
    wrt = tuple(wrt)
    if not wrt or any(w not in WRT for w in wrt):
        raise ValueError(f"wrt names the inputs to differentiate by: some of {', '.join(WRT)}; got {wrt!r}")
    model, dt, nv = stepper.model, stepper.dt, stepper.model.nv
    q, v, tau = (np.array(x, dtype=float) for x in (q, v, tau))
    q1, v1, rec = stepper.step(q, v, tau)
    P = stepper.problem(q, v, tau)
    nc, J, G, g = P["nc"], P["J"], P["G"], P["g"]
    if nc != len(rec["depths"]) or P["keys"] != rec["keys"]:  # pragma: no cover - detection is deterministic
        raise RuntimeError("the step and its problem found different contacts")
    lam = np.concatenate([rec["impulses"].reshape(-1), rec["loop_impulses"]])
    m = len(g)
    sigma = G @ lam + g
    mu, tol = P["mu"], stepper.settings.tol
    modes, one_sided = np.zeros(nc, dtype=np.int64), np.zeros(nc, dtype=bool)
    for i in range(nc):
        lt, ln = lam[3 * i : 3 * i + 2], lam[3 * i + 2]
        slip = float(np.hypot(*sigma[3 * i : 3 * i + 2]))
        if ln <= 0.0:
            modes[i], one_sided[i] = 0, sigma[3 * i + 2] <= tol
        elif slip > tol and np.hypot(*lt) >= mu[i] * ln * (1.0 - 1e-9):
            modes[i], one_sided[i] = 2, slip <= 10.0 * tol
        else:
            modes[i], one_sided[i] = 1, np.hypot(*lt) >= mu[i] * ln * (1.0 - 1e-6)
    if stepper.settings.compliance is None and stepper.ground is not None and stepper.ground.restitution > 0.0:
        raise ModelError("contact step derivatives: a ground with restitution > 0 is not differentiated (its impact "
                         "rows switch within the step); use restitution 0")  # fmt: skip
    data = stepper.derivative_data
    fq, fv, Minv = forward_dynamics_derivatives(model, data, q, v, tau)
    # the directions' columns: δq | δv | δτ; dv⁺ and dσ at fixed λ
    dvfix = np.zeros((nv, 3 * nv))
    dvfix[:, nv : 2 * nv] = np.eye(nv) + dt * fv
    dvfix[:, 2 * nv :] = dt * Minv
    dsig = np.zeros((m, 3 * nv))
    if "q" in wrt:
        if 3 * nc < m:
            raise ModelError("contact step derivatives: ∂/∂q of a closed loop's rows is not given yet; ask "
                             "wrt=('v', 'tau')")  # fmt: skip
        fq_tot = forward_dynamics_derivatives(model, data, q, v, tau + J.T @ lam / dt)[0]
        dJv, dJTlam, ddepth = _ground_row_derivatives(stepper, q, P, lam, v1)
        dvfix[:, :nv] = dt * fq_tot + Minv @ dJTlam
        dsig[:, :nv] = dJv
        st = stepper.settings
        for i in range(nc):
            d = P["depths"][i]
            if st.compliance is not None:
                k, c = (float(x) for x in np.asarray(st.compliance, dtype=float).reshape(2))
                slope = k / (k * dt + c)
            else:
                slope = (1.0 if d > 0.0 else st.stabilization) / dt  # a gap closes in a step, β of a penetration
                one_sided[i] |= abs(d) <= AT_THE_SURFACE
            dsig[3 * i + 2, :nv] += slope * ddepth[i]
    dsig += J @ dvfix
    # the modes' system A δλ = r; r's last n_c columns: the directions μ_i (a sliding contact's λ_t = −μ λ_n u)
    A, r = np.zeros((m, m)), np.zeros((m, 3 * nv + nc))
    for i in range(nc):
        rows = slice(3 * i, 3 * i + 3)
        if modes[i] == 0:
            A[rows, rows] = np.eye(3)
        elif modes[i] == 1:
            A[rows], r[rows, : 3 * nv] = G[rows], -dsig[rows]
        else:
            t, n = slice(3 * i, 3 * i + 2), 3 * i + 2
            A[n], r[n, : 3 * nv] = G[n], -dsig[n]
            st = sigma[t]
            speed = float(np.linalg.norm(st))
            u = st / speed
            kappa = mu[i] * lam[n] / speed
            Pt = kappa * (np.eye(2) - np.outer(u, u))
            A[t] = Pt @ G[t]
            A[t, t] += np.eye(2)
            A[t, n] += mu[i] * u
            r[t, : 3 * nv] = -Pt @ dsig[t]
            r[t, 3 * nv + i] = -lam[n] * u
    A[3 * nc :], r[3 * nc :, : 3 * nv] = G[3 * nc :], -dsig[3 * nc :]
    dlam = np.linalg.lstsq(A, r, rcond=1e-13)[0] if m else np.zeros((0, 3 * nv + nc))
    dv1 = np.hstack([dvfix, np.zeros((nv, nc))]) + Minv @ (J.T @ dlam)
    jq, jv = integrate_derivatives(model, q, dt * v1)
    dq1 = dt * jv @ dv1
    dq1[:, :nv] += jq
    friction = np.vstack([dq1[:, 3 * nv :], dv1[:, 3 * nv :]])
    dq1, dv1 = dq1[:, : 3 * nv], dv1[:, : 3 * nv]
    keep = np.zeros(3 * nv, dtype=bool)
    for k, w in enumerate(WRT):
        keep[k * nv : (k + 1) * nv] = w in wrt
    D = np.vstack([dq1, dv1]) * keep
    if not (np.isfinite(D).all() and np.isfinite(friction).all()):  # pragma: no cover - divisions by positives
        raise FloatingPointError("contact step derivatives: a Jacobian entry is not finite")
    return ContactStepJacobians(q1, v1, D[:, : 2 * nv].copy(), D[:, 2 * nv :].copy(), friction, modes, one_sided,
                                bool(rec["converged"]), lam, wrt)  # fmt: skip


def _ground_row_derivatives(stepper, q, P, lam, w):
    """(∂(J(q) w)/∂q (m, nv), ∂(J(q)ᵀ λ)/∂q (nv, nv), ∂d/∂q (n_c, nv)) for contacts with the ground (module
    docstring); a ModelError for what has none yet (pairs, a planar joint, a cylinder's rim)."""
    model, data, nv, nc = stepper.model, stepper.derivative_data, stepper.model.nv, P["nc"]
    for k in range(1, model.njoints):
        if int(model.kinds[k]) not in Q_JOINTS:
            kind = JOINTS[int(model.kinds[k])].name
            raise ModelError(f"contact step derivatives: ∂/∂q through joint {model.names[k]!r} ({kind}) is not "
                             "given yet; ask wrt=('v', 'tau')")  # fmt: skip
    X = joint_jacobians(model, data, q)  # (6, nv): column c's world screw ξ_c = (v_c, ω_c) about the origin
    joint_of = np.zeros(nv, dtype=np.int64)
    for k in range(1, model.njoints):
        joint_of[model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = k
    support = stepper.scene.geometry.support  # support[k, c]: column c moves body k
    # moves[d, c]: direction d turns column c's screw
    moves = support[joint_of].T.copy()
    for c in range(nv):
        for d in range(nv):
            if joint_of[c] == joint_of[d]:
                kind = int(model.kinds[joint_of[c]])
                moves[d, c] = kind in BODY_FIXED_COLUMNS or (kind == UNIVERSAL and c > d)
    lin, ang = X[:3], X[3:]
    # dX[d]: the (6, nv) change of every column screw along direction d: ξ_d ×ₘ ξ_c where d moves c
    dlin = np.cross(ang.T[:, None, :], lin.T[None, :, :]) + np.cross(lin.T[:, None, :], ang.T[None, :, :])
    dang = np.cross(ang.T[:, None, :], ang.T[None, :, :])
    dlin *= moves[:, :, None]
    dang *= moves[:, :, None]
    m = len(lam)
    dJw, dJTlam, ddepth = np.zeros((m, nv)), np.zeros((nv, nv)), np.zeros((nc, nv))
    for i in range(nc):
        key = P["keys"][i]
        if key[0] != "ground":
            raise ModelError("contact step derivatives: ∂/∂q of a contact between two bodies is not given yet; ask "
                             "wrt=('v', 'tau')")  # fmt: skip
        col = model.collisions[key[1]]
        b = int(P["bodies"][i, 1])
        F, x = P["frames"][i], P["points"][i]
        n = F[:, 2]
        if isinstance(col.shape, (Sphere, Capsule)):
            s = x + col.shape.radius * n  # the sphere's centre: the lowest point moves with it
        elif isinstance(col.shape, (Box, Mesh)):
            s = x  # a vertex, fixed in the body
        else:
            raise ModelError(f"contact step derivatives: ∂/∂q of a {type(col.shape).__name__}'s contact with the "
                             "ground is not given yet; ask wrt=('v', 'tau')")  # fmt: skip
        sup = support[b]  # the columns that move body b
        dx = (np.cross(ang.T, s) + lin.T) * sup[:, None]  # (nv, 3): δx along each direction d
        Va = ang[:, sup] @ w[sup]  # body b's angular velocity at w
        dVl = np.einsum("dcx,c->dx", dlin[:, sup], w[sup])  # (nv, 3): δ of its twist along each direction
        dVa = np.einsum("dcx,c->dx", dang[:, sup], w[sup])
        du = dVl + np.cross(dVa, x) + np.cross(Va, dx)  # (nv, 3): δ(ẋ) = δv + δω × x + ω × δx
        dJw[3 * i : 3 * i + 3] = F.T @ du.T
        f = F @ lam[3 * i : 3 * i + 3]
        moment = np.cross(x, f)
        # δQ_c = δξ_c · (f, x × f) + ω_c · (δx × f), c in body b's support
        dQ = np.einsum("dcx,x->dc", dlin[:, sup], f) + np.einsum("dcx,x->dc", dang[:, sup], moment)
        dQ += np.cross(dx, f) @ ang[:, sup]
        dJTlam[sup] += dQ.T
        ddepth[i] = dx @ n
    return dJw, dJTlam, ddepth
