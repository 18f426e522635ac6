"""The time step with contacts in compiled code, and the run of steps: one forward dynamics and one UDUᵀ
factorization a step, shared by the free velocity and by every contact and loop row (``stepping``'s docstring has
the equations).

- ``contact_problem``: the O(n) forward dynamics (Table 3) gives v_f = v + dt q̈ and leaves the factors in ws; the
  ground's contacts (``detection.ground_contacts``) and the shape pairs' (found by coal in Python, passed in) are
  stacked with the closed loops' rows (``loops.kernel.loop_step``: Schiehlen eq. 17–20) into J; G = J M⁻¹ Jᵀ + R
  from the backward recursion of Table 3 on those factors alone (``delassus_into``: G = (U⁻¹ Jᵀ)ᵀ D⁻¹ (U⁻¹ Jᵀ),
  a column's sweep only over the bodies its row moves; no GIM formed) and g = J v_f + b.
- ``contact_step``: that problem solved (``solvers``), v⁺ = v_f + M⁻¹ (Jᵀ λ) by one more solve on the factors,
  q⁺ = q ⊕ dt v⁺, the impulses kept to warm start the next step.
- ``contact_run``: nsteps of ``contact_step`` under the joint law τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v)
  (a constant τ: K_p = K_d = 0), recording every ``stride``-th state and its contacts.

The parameters travel as flat float arrays whose layout is declared below (``GROUND``, ``SETTINGS``, ``INFO``), the
contacts of a step as the tuple of arrays ``stepping.contact_buffers`` makes, each (capacity, ·).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..algorithms.compositions import aba_entry
from ..algorithms.configuration import INTEGRATE
from ..algorithms.energy import ENERGY, energy_core
from ..algorithms.forward import eliminate_rhs, udut_solve
from ..algorithms.frames import world_column
from ..algorithms.kinematics import kinematics_entry, world_poses_into
from ..algorithms.protocol import Entry
from ..core.joints import difference_kernel, integrate_kernel
from ..core.layout import all_finite, data_views, loop_views, model_views
from ..core.shapes import COL
from ..loops.compositions import cfd_entry
from ..loops.kernel import loop_step
from ..model.status import NOT_FINITE
from .detection import ground_contacts
from .solvers import solve_admm, solve_pgs, solve_sticking

__all__ = ["GROUND", "INFO", "SETTINGS", "contact_problem", "contact_run", "contact_step"]


def _offsets(names) -> dict:
    """Each name's offset in a flat array laid out in ``names``' order (a name "x:3" takes 3 entries)."""
    out, at = {}, 0
    for name in names:
        key, _, width = name.partition(":")
        out[key] = at
        at += int(width or 1)
    out["width"] = at
    return out


GROUND = _offsets(("on", "height", "n:3", "t1:3", "t2:3", "friction", "restitution"))
"""The ground's parameters: on (1 or 0: no ground), height h, the unit normal n and the tangents t₁, t₂ of its
contact frame (world), μ, e."""
SETTINGS = _offsets(("solver", "tol", "max_iter", "margin", "beta", "threshold", "warm", "compliant", "k", "c"))
"""``ContactSettings`` as numbers: solver (0 ADMM, 1 PGS), tol, max_iter, margin, β, the restitution threshold,
warm (1: warm starts), compliant (1: (k, c) used), stiffness k, damping c."""
INFO = _offsets(("contacts", "iterations", "residual", "primal", "dual", "complementarity", "converged"))
"""What a step reports: its number of contacts, and its solve's figures (``solvers.STATS``; converged 1 or 0)."""

G_ON, G_H, G_N, G_T1, G_T2, G_MU, G_E = (GROUND[k] for k in ("on", "height", "n", "t1", "t2", "friction",
                                                               "restitution"))  # fmt: skip
S_SOLVER, S_TOL, S_ITER, S_MARGIN, S_BETA, S_THRESHOLD, S_WARM, S_COMPLIANT, S_K, S_C = (
    SETTINGS[k] for k in ("solver", "tol", "max_iter", "margin", "beta", "threshold", "warm", "compliant", "k", "c")
)
I_K, I_STATS, I_CONVERGED, INFO_WIDTH = INFO["contacts"], INFO["iterations"], INFO["converged"], INFO["width"]
COL_BODY = COL["body"]


@njit(cache=True)
def contact_jacobian(Jall, support, bodies, pts, frames, nc, J):
    """Rows 0 … 3 nc − 1 of J (·, nv): per contact i, frame i's axes (t₁, t₂, n) applied to the velocity of point x_i
    on body ``bodies[i, 1]`` relative to body ``bodies[i, 0]``, column by column: ẋ = v_o + ω × x gives the column
    J_v − x × J_ω of each body's ``support`` (Jall: (6, nv) [linear; angular] world Jacobians about the world origin;
    body 0, the world, moves nothing)."""
    for i in range(nc):
        x0, x1, x2 = pts[i, 0], pts[i, 1], pts[i, 2]
        for c in range(Jall.shape[1]):
            u0 = u1 = u2 = 0.0
            for s in range(2):
                b = bodies[i, s]
                if b == 0 or not support[b, c]:
                    continue
                sign = -1.0 if s == 0 else 1.0
                w0, w1, w2 = Jall[3, c], Jall[4, c], Jall[5, c]
                u0 += sign * (Jall[0, c] - (x1 * w2 - x2 * w1))
                u1 += sign * (Jall[1, c] - (x2 * w0 - x0 * w2))
                u2 += sign * (Jall[2, c] - (x0 * w1 - x1 * w0))
            for a in range(3):
                J[3 * i + a, c] = frames[i, 0, a] * u0 + frames[i, 1, a] * u1 + frames[i, 2, a] * u2


@njit(cache=True)
def delassus_into(mv, dv, JT, G):
    """G = J M⁻¹ Jᵀ = (U⁻¹ Jᵀ)ᵀ D⁻¹ (U⁻¹ Jᵀ) from M = U D Uᵀ (A.8): Table 3's step 1 alone on each column φ of Jᵀ
    (φ̃ = D⁻¹ φ̂, φ̂ = U⁻¹ φ), then G_ab = Σ_k φ̃_k(a)ᵀ Î_k φ̃_k(b), the factors those of this step's forward
    dynamics.  A column's sweep visits only the bodies whose subtree its φ touches (a foot's contact: its leg and
    the base), and no forward recursion is needed."""
    parents, idx_v, nvs = mv.parents, mv.idx_v, mv.nvs
    nj = len(parents)
    nv, m = JT.shape
    tilde = np.zeros((nv, m))
    eta = np.empty((nj, m, 6))
    active = np.zeros(nj, dtype=np.bool_)
    phi_hat = np.empty(6)
    for col in range(m):
        active[:] = False
        for k in range(nj - 1, 0, -1):  # children before parents (parents[k] < k)
            on = active[k]
            for d in range(nvs[k]):
                if JT[idx_v[k] + d, col] != 0.0:
                    on = True
            if on:
                active[k] = True
                active[parents[k]] = True
        for k in range(nj):
            if active[k]:
                eta[k, col, :] = 0.0
        for i in range(len(mv.module_ptr) - 2, -1, -1):
            for j in range(mv.module_ptr[i + 1] - 1, mv.module_ptr[i] - 1, -1):
                k = mv.module_bodies[j]
                if active[k]:
                    eliminate_rhs(k, parents[k], idx_v[k], nvs[k], dv.E, dv.r, dv.S, dv.Psi, dv.I_hat_inv, JT,
                                  tilde, col, eta[k, col], eta[parents[k], col], phi_hat)  # fmt: skip
    hat = np.zeros((nv, m))  # φ̂ = Î φ̃, body by body (Î_k as the forward dynamics left it)
    for k in range(1, nj):
        z, iv = nvs[k], idx_v[k]
        for col in range(m):
            for d in range(z):
                s = 0.0
                for e in range(z):
                    s += dv.I_hat[k, d, e] * tilde[iv + e, col]
                hat[iv + d, col] = s
    for a in range(m):
        for b in range(a, m):
            s = 0.0
            for c in range(nv):
                s += hat[c, a] * tilde[c, b]
            G[a, b] = s
            G[b, a] = s


@njit(cache=True)
def contact_problem(mi, mf, ws, cb, lw, geo, gp, sp, pairs, q, v, tau, dt, det, cts):
    """The step's problem at (q, v) under τ: (status, nc, J (m, nv), G (m, m), g (m,), v_f (nv,)),
    the contacts' rows first, then the loops'.  The contacts into ``cts`` (bodies, points, frames, depths, μ, e,
    keys): the ground's first (key (−1, collision, feature)), then the pairs' (``pairs``: their own bodies, keys
    (i, j, feature), points, frames, depths, μ).  geo: (packed collisions, vertices, support, warm offsets,
    chunks); det: the ground detection's buffers.  status: ``aba_entry``'s (v_f and the rest are then empty)."""
    rows, verts, support, _, chunks = geo
    bodies, pts, frames, depth, mu, rest, keys, _, _ = cts
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    nv = len(v)
    status = aba_entry(mi, mf, ws, q, v, tau, False)  # q̈ = GIM⁻¹ (τ − h), the UDUᵀ factors left in ws
    if status:
        return status, 0, np.zeros((0, nv)), np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    vf = np.empty(nv)
    for c in range(nv):
        vf[c] = v[c] + dt * dv.ddq[c]  # v_f = v + dt M⁻¹ (τ − h)
    oR, op = dv.oR, dv.op
    world_poses_into(mv.parents, dv.E, dv.r, oR, op)
    nc = 0
    if gp[G_ON] != 0.0:
        X, D, C, F = det
        n, t1, t2 = gp[G_N : G_N + 3], gp[G_T1 : G_T1 + 3], gp[G_T2 : G_T2 + 3]
        kg = ground_contacts(rows, verts, chunks, oR, op, n, t1, t2, gp[G_H], sp[S_MARGIN], X, D, C, F)
        for i in range(kg):
            bodies[nc, 0], bodies[nc, 1] = 0, int(rows[C[i], COL_BODY])
            for a in range(3):
                pts[nc, a] = X[i, a]
                frames[nc, a, 0], frames[nc, a, 1], frames[nc, a, 2] = t1[a], t2[a], n[a]
            depth[nc], mu[nc], rest[nc] = D[i], gp[G_MU], gp[G_E]
            keys[nc, 0], keys[nc, 1], keys[nc, 2] = -1, C[i], F[i]
            nc += 1
    pb, pk, px, pf, pd, pmu, _ = pairs
    for i in range(len(pd)):
        bodies[nc, 0], bodies[nc, 1] = pb[i, 0], pb[i, 1]
        pts[nc, :] = px[i]
        frames[nc, :, :] = pf[i]
        depth[nc], mu[nc], rest[nc] = pd[i], pmu[i], 0.0
        keys[nc, 0], keys[nc, 1], keys[nc, 2] = pk[i, 0], pk[i, 1], pk[i, 2]
        nc += 1
    nl = 0
    if lw is not None:  # decided at compile time: a tree's kernel holds no loop code
        loop_step(mi, mf, ws, cb, lw, q, False)  # J_r, r(q) of the cut joints and couplings (eq. 17–18)
        nl = loop_views(lw, mi).J.shape[0]
    m = 3 * nc + nl
    J = np.empty((m, nv))
    if nc:
        Jall = np.empty((6, nv))
        for j in range(1, len(mv.parents)):
            for d in range(mv.nvs[j]):
                a0, a1, a2, l0, l1, l2 = world_column(oR, op, dv.S, j, d)
                col = mv.idx_v[j] + d
                Jall[0, col], Jall[1, col], Jall[2, col] = l0, l1, l2
                Jall[3, col], Jall[4, col], Jall[5, col] = a0, a1, a2
        contact_jacobian(Jall, support, bodies, pts, frames, nc, J)
    if lw is not None:
        lv = loop_views(lw, mi)
        for i in range(nl):
            for c in range(nv):
                J[3 * nc + i, c] = lv.J[i, c]
    JT = np.empty((nv, m))
    for i in range(m):
        for c in range(nv):
            JT[c, i] = J[i, c]
    G = np.empty((m, m))
    g = np.empty(m)
    if m == 0:
        return 0, 0, J, G, g, vf
    delassus_into(mv, dv, JT, G)  # G = J M⁻¹ Jᵀ on the factors of this step's forward dynamics
    for i in range(m):
        s = 0.0
        for c in range(nv):
            s += J[i, c] * vf[c]
        g[i] = s  # g = J v_f
    beta = sp[S_BETA]
    for i in range(nc):
        r = 3 * i + 2
        d = depth[i]
        if sp[S_COMPLIANT] != 0.0:  # f_n = max(0, −k (d + dt v_n⁺) − c v_n⁺): b_n = k d / (k dt + c), R_nn
            kk, cc = sp[S_K], sp[S_C]
            g[r] += kk * d / (kk * dt + cc)
            G[r, r] += 1.0 / (dt * (kk * dt + cc))
            continue
        low = -(max(d, 0.0) + beta * min(d, 0.0)) / dt  # a gap closes in one step; β of a penetration a step
        vb = 0.0
        for c in range(nv):
            vb += J[r, c] * v[c]  # v_n⁻, the approach velocity at the step's start
        if rest[i] > 0.0 and vb < -sp[S_THRESHOLD] and d + dt * vb < 0.0:
            # an impact within the step, from the gap d ≥ 0 the point is still at: it leaves with the speed the
            # rebound from the surface has at that height, v⁺² = e² v_imp² + 2 a_n d, v_imp² = v_n⁻² − 2 a_n d
            an = (g[r] - vb) / dt
            gap = max(d, 0.0)
            up = rest[i] ** 2 * (vb * vb - 2.0 * an * gap) + 2.0 * an * gap
            low = max(low, np.sqrt(max(up, 0.0)))
        g[r] -= low
    if lw is not None:
        res = loop_views(lw, mi).res
        for i in range(nl):
            g[3 * nc + i] += res[i] / dt  # σ = J_r v⁺ + r(q) / dt: the loop's error closed in one step
    return 0, nc, J, G, g, vf


@njit(cache=True)
def contact_step(mi, mf, ws, cb, lw, geo, gp, sp, pairs, warm, now, q, v, tau, dt, q1, v1, det, cts):
    """One step from (q, v) under τ into (q1, v1) (``stepping``'s docstring): ``contact_problem``, solved from the
    warm starts, v⁺ = v_f + M⁻¹ (Jᵀ λ), q⁺ = q ⊕ dt v⁺.  warm: (impulses (features, 3), their step (features,), the
    loops' impulses), a ground feature's start used when it was in contact at step now − 1 and updated to now; a
    pair's start is ``pairs[6]``.  The contacts' impulses (frame t₁, t₂, n) into cts[7], the step's figures into
    cts[8] (``INFO``).  A status: ``aba_entry``'s."""
    woff = geo[3]
    status, nc, J, G, g, vf = contact_problem(mi, mf, ws, cb, lw, geo, gp, sp, pairs, q, v, tau, dt, det, cts)
    if status:
        return status
    mv = model_views(mi, mf)
    _, _, _, _, mu, _, keys, imp, info = cts
    wimp, wstep, wloops = warm
    start = pairs[6]
    m = len(g)
    lam = np.zeros(m)
    kp = len(pairs[4])
    if sp[S_WARM] != 0.0:
        for i in range(nc):
            if keys[i, 0] < 0:
                w = woff[keys[i, 1]] + keys[i, 2]
                if wstep[w] == now - 1:
                    lam[3 * i], lam[3 * i + 1], lam[3 * i + 2] = wimp[w, 0], wimp[w, 1], wimp[w, 2]
            else:
                p = i - (nc - kp)
                lam[3 * i], lam[3 * i + 1], lam[3 * i + 2] = start[p, 0], start[p, 1], start[p, 2]
        for i in range(3 * nc, m):
            lam[i] = wloops[i - 3 * nc]
    stats = np.zeros(5)
    ok = 1
    if m:
        sigma = np.empty(m)
        ok = solve_sticking(G, g, mu, nc, lam, sp[S_TOL], sigma, stats)  # the pressing contacts stick: no iteration
        if not ok and sp[S_SOLVER] == 1.0:
            ok = solve_pgs(G, g, mu, nc, lam, sp[S_TOL], int(sp[S_ITER]), sigma, stats)
        elif not ok:  # η on the problem scaled to a unit diagonal
            ok = solve_admm(G, g, mu, nc, lam, sp[S_TOL], int(sp[S_ITER]), 0.0, 1e-6, sigma, stats)
    nv = len(v)
    dv = data_views(ws, mi)
    if m:  # v⁺ = v_f + M⁻¹ (Jᵀ λ): one more solve on the step's factors (Table 3)
        rhs, dvel = np.empty((nv, 1)), np.empty((nv, 1))
        for c in range(nv):
            s = 0.0
            for i in range(m):
                s += J[i, c] * lam[i]
            rhs[c, 0] = s
        eta = np.empty((len(mv.parents), 1, 6))
        udut_solve(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi,
                   dv.I_hat_inv, rhs, eta, eta, dvel, np.empty(6))  # fmt: skip
        for c in range(nv):
            v1[c] = vf[c] + dvel[c, 0]
    else:
        v1[:] = vf
    integrate_kernel(mv.kinds, mv.idx_q, mv.idx_v, q, v1, dt, q1)  # q⁺ = q ⊕ dt v⁺
    for i in range(nc):
        imp[i, 0], imp[i, 1], imp[i, 2] = lam[3 * i], lam[3 * i + 1], lam[3 * i + 2]
        if keys[i, 0] < 0:
            w = woff[keys[i, 1]] + keys[i, 2]
            wimp[w, :] = imp[i]
            wstep[w] = now
    for i in range(3 * nc, m):
        wloops[i - 3 * nc] = lam[i]
    info[I_K] = nc
    for a in range(5):
        info[I_STATS + a] = stats[a]
    info[I_CONVERGED] = ok
    return 0


@njit(cache=True, nogil=True)
def contact_run(mi, mf, ws, cb, lw, geo, gp, sp, warm, now, q0, v0, law, dt, nsteps, stride, out, rec, info):
    """nsteps of ``contact_step`` from (q0, v0) under the joint law (module docstring), every ``stride``-th state
    recorded (row 0 the start) with the contacts of the step that leaves it.

    law: (K_p, K_d, q_ref, v_ref, τ_ff, feedback (1: K_p or K_d not zero)); out: (Q, V, A, T, KE, PE, W, Λ: the
    loops' impulses); rec: the recorded contacts (k (rows,), points, normals, impulses (contact frame), forces (world,
    impulse / dt), depths, keys (rows, capacity, ·), the step's ``INFO`` (rows, ·)), the last row with none.
    info (3,): the step reached (on failure, the first whose state is not finite), the largest |v| before it and its
    index.  Returns 0 or the status of the step that failed."""
    kp, kd, qref, vref, tff, feedback = law
    Q, V, A, T, KE, PE, W, LAM = out
    RK, RP, RN, RI, RF, RD, RKEY, RINFO = rec
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    nv, nq = len(v0), len(q0)
    cap = max(1, RP.shape[1])  # the ground's capacity: a run in compiled code has no shape pairs
    X, D = np.empty((cap, 3)), np.empty(cap)
    C, F = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    det = (X, D, C, F)
    cts = (np.empty((cap, 2), dtype=np.int64), np.empty((cap, 3)), np.empty((cap, 3, 3)), np.empty(cap),
           np.empty(cap), np.empty(cap), np.empty((cap, 3), dtype=np.int64), np.empty((cap, 3)),
           np.zeros(INFO_WIDTH))  # fmt: skip
    pairs = (np.empty((0, 2), dtype=np.int64), np.empty((0, 3), dtype=np.int64), np.empty((0, 3)),
             np.empty((0, 3, 3)), np.empty(0), np.empty(0), np.empty((0, 3)))  # fmt: skip
    q, v = q0.copy(), v0.copy()
    q1, v1, tau, dq = np.empty(nq), np.empty(nv), np.empty(nv), np.zeros(nv)
    work = 0.0
    row = 0
    for i in range(nsteps + 1):
        info[0] = i
        for c in range(nv):
            if abs(v[c]) > info[1]:
                info[1] = abs(v[c])
                info[2] = c
        if feedback:
            difference_kernel(mv.kinds, mv.idx_q, mv.idx_v, q, qref, dq)  # q_ref ⊖ q
        for c in range(nv):
            tau[c] = tff[c] + kp[c] * dq[c] + kd[c] * (vref[c] - v[c])  # τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v)
        last = i == nsteps
        if last:
            kinematics_entry(mi, mf, ws, q)  # for the last row's energy
        else:
            s = contact_step(mi, mf, ws, cb, lw, geo, gp, sp, pairs, warm, now + i, q, v, tau, dt, q1, v1, det, cts)
            if s:
                return s
            if not (all_finite(q1) and all_finite(v1)):
                info[0] = i + 1
                return NOT_FINITE
        if i % stride == 0:
            Q[row, :] = q
            V[row, :] = v
            T[row, :] = tau
            W[row] = work
            KE[row], PE[row] = energy_core(mv, dv, v)
            if last:
                if row:
                    A[row, :] = A[row - 1]
                else:
                    A[row, :] = 0.0
                RK[row] = 0
                RINFO[row, :] = 0.0
                RINFO[row, I_CONVERGED] = 1.0
            else:
                for c in range(nv):
                    A[row, c] = (v1[c] - v[c]) / dt
                _record(cts, dt, row, RK, RP, RN, RI, RF, RD, RKEY, RINFO)
                if lw is not None:
                    LAM[row, :] = warm[2]
            row += 1
        if last:
            break
        for c in range(nv):
            work += dt * tau[c] * v1[c]
        q[:] = q1
        v[:] = v1
    return 0


# Compiled for its caller's buffers, for a tree (no loop buffers) or a closed mechanism.
_CONTACTS = {"what": "the contact step and run (detection, Delassus, PGS, ADMM)", "seconds": 60}
CONTACT_STEP = Entry(contact_step, group="contacts", after=(aba_entry, ENERGY.kernel, INTEGRATE.fast), **_CONTACTS)
CONTACT_RUN = Entry(contact_run, group="contacts", after=(contact_step,), **_CONTACTS)
CONTACT_LOOPS = Entry(
    contact_run, group="closed_loop_contacts", after=(contact_run, cfd_entry), loops=True, **_CONTACTS
)


@njit(cache=True)
def _record(cts, dt, row, RK, RP, RN, RI, RF, RD, RKEY, RINFO):
    """A step's contacts into row ``row`` of the run's records (``contact_run``)."""
    _, pts, frames, depth, _, _, keys, imp, info = cts
    k = int(info[I_K])
    RK[row] = k
    for i in range(k):
        for a in range(3):
            RP[row, i, a] = pts[i, a]
            RN[row, i, a] = frames[i, a, 2]
            RI[row, i, a] = imp[i, a]
            f = frames[i, a, 0] * imp[i, 0] + frames[i, a, 1] * imp[i, 1] + frames[i, a, 2] * imp[i, 2]
            RF[row, i, a] = f / dt  # the world force on the second shape: the impulse over the step
            RKEY[row, i, a] = keys[i, a]
        RD[row, i] = depth[i]
    RINFO[row, :] = info
