"""The time step with contacts in compiled code, as its stages, and the run of steps (``stepping``'s docstring has
the equations).  One factorization of M a step, shared by the free velocity and by every contact and loop row: up to
``DENSE_STEP`` DOF, M = Lᵀ L (the GIM factored along the tree, no fill); above, Table 3's UDUᵀ.  Nothing is allocated
a step (the work areas of ``core.tables``: ``ContactWork``, ``SolverWork``).

    contact_step = free_velocity   v_f = v + dt M⁻¹ (τ − h)                 (M's factors kept for the stages below)
                   detect          the ground's contacts, then the shape pairs'   → ContactSet
                   contact_rows    J's rows (t₁, t₂, n) · (ẋ₂ − ẋ₁) at each point
                   closure_rows    J's rows of the cut joints and couplings      (Schiehlen eq. 17–18)
                   delassus        G = J M⁻¹ Jᵀ on the step's factors            (Yᵀ Y, Y = L⁻ᵀ Jᵀ; or A.8)
                   bias            g = J v_f + b: gaps, Baumgarte, restitution, compliance
                   warm_start      λ₀: the last step's impulses of the same contacts
                   solve           the NCP on (G, g)                             (``solvers``)
                   advance         v⁺ = v_f + M⁻¹ Jᵀ λ, q⁺ = q ⊕ dt v⁺
                   keep_warm       the impulses kept for the next step, the step's INFO

``contact_problem`` is the first six (what ``ContactStepper.problem`` shows); ``contact_run`` is nsteps of
``contact_step`` under the joint law τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v), every ``stride``-th state
recorded (``record_step``, the stepwise run's recorder too).  Their arguments are the records of ``core.tables``:
a ``ContactScene`` (collisions, ground, settings, warm starts, contacts, work areas), ``ShapePairs``,
``JointLaw``, ``RunOutput`` and ``ContactRecords``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..algorithms.composite import l_solve, lt_solve
from ..algorithms.configuration import INTEGRATE
from ..algorithms.energy import ENERGY, energy_core
from ..algorithms.forward import eliminate_rhs, udut_solve
from ..algorithms.frame_kinematics import world_column
from ..algorithms.kinematics import kinematics_entry, world_poses_into
from ..algorithms.protocol import Entry
from ..algorithms.tree_entries import aba_entry, gim_forward_entry
from ..core.layout import LW_M, all_finite, borrow, data_views, leading, loop_views, model_views
from ..core.layout import factor_pays as layout_factor_pays
from ..core.lie_groups import difference_kernel, integrate_kernel
from ..core.records import contact_work_views, shape_pairs, solver_work_views
from ..core.views import (
    COL_BODY,
    COL_BOX_C,
    COL_BOX_H,
    COL_CODE,
    COL_REACH,
    COL_VCOUNT,
    COL_VSTART,
    GROUND_FRICTION,
    GROUND_HEIGHT,
    GROUND_N,
    GROUND_ON,
    GROUND_RESTITUTION,
    GROUND_T1,
    GROUND_T2,
    INFO_CONTACTS,
    INFO_CONVERGED,
    INFO_ITERATIONS,
    SET_BETA,
    SET_C,
    SET_COMPLIANT,
    SET_K,
    SET_MARGIN,
    SET_MAX_ITER,
    SET_SOLVER,
    SET_THRESHOLD,
    SET_TOL,
    SET_WARM,
)
from ..loops.loop_entries import cfd_entry
from ..loops.loop_kinematics import loop_step
from ..model.status import NOT_FINITE, TOO_MANY_CONTACTS
from .detection import ground_contacts, shape_pose
from .patch import pair_patch
from .solvers import admm, solve_pgs, sticking

__all__ = [
    "CONTACT_LOOPS",
    "CONTACT_RUN",
    "CONTACT_STEP",
    "DENSE_STEP",
    "advance",
    "bias",
    "closure_rows",
    "contact_problem",
    "contact_rows",
    "contact_run",
    "contact_step",
    "delassus",
    "detect",
    "factor_pays",
    "factored_delassus",
    "free_velocity",
    "keep_warm",
    "record_rest",
    "record_step",
    "solve",
    "warm_start",
]


DENSE_STEP = 64
"""Up to this nv a step may factor the GIM, M = Lᵀ L (O(n d²) for depth d, an nv x nv work area), and form G = Yᵀ Y
from Y = L⁻ᵀ Jᵀ by one sweep of the tree over all of J's rows; above, Table 3's UDUᵀ factors of the forward dynamics
serve, a sweep per row (O(n) each, no n² memory)."""


def factor_pays(model) -> bool:
    """Whether a contact step on ``model`` factors M = Lᵀ L (``layout.factor_pays``, rows = 3 a collision + the
    loops'; nv ≤ ``DENSE_STEP``): a quadruped's or Cassie's steps gain a quarter, where on a chain with one
    collision Table 3's sweeps win from about 18 DOF.  Decided once a scene, so that a step's result does not depend
    on the steps before it."""
    rows = 3 * len(model.collisions) + model.n_constraints
    return layout_factor_pays(model.dof_parent, rows, DENSE_STEP)


@njit(cache=True)
def free_velocity(mi, mf, ws, q, v, tau, dt, vf, work):
    """v_f = v + dt q̈, q̈ = GIM⁻¹ (τ − h): by the GIM's factor Lᵀ L into the work area's H where it has room (the
    scene's, where ``factor_pays``; ``gim_forward_entry``), otherwise (or should a pivot fail) by the O(n) forward
    dynamics, Table 3, its UDUᵀ factors left in ws; the work area's ``route`` says which.  The bodies' world
    placements (oR, op) too.  Returns ``aba_entry``'s status.  work: a ``ContactWork`` buffer."""
    w = contact_work_views(work)
    nv = len(v)
    n = nv if len(w.H) == nv * nv else 0
    status, factored = gim_forward_entry(mi, mf, ws, q, v, tau, False, leading(w.H, (n, n)))
    if status:
        return status
    w.route[0] = 1.0 if factored else 0.0
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    for c in range(nv):
        vf[c] = v[c] + dt * dv.ddq[c]
    world_poses_into(mv.parents, dv.E, dv.r, dv.oR, dv.op)
    return 0


@njit(cache=True)
def detect(geo, gp, sp, oR, op, pairs, cts, work, warm):
    """The step's contacts into ``cts`` (a ``ContactSet``): the ground's (``detection.ground_contacts``; key
    (−1, collision, feature), the ground's μ and e), the shape pairs the compiled narrow phase answers
    (``_shape_pairs``: sweep and prune, then ``patch.pair_patch``: up to PAIR_POINTS points with one normal, key
    (i, j, point), e = 0), then the pairs coal found in Python (``pairs``, e = 0).  work: a
    ``ContactWork`` buffer (the ground's candidates, the pairs' poses); warm: the ``WarmStarts`` (each pair's GJK
    direction, read and left updated).  Returns n_c, or −1 when the pairs give more points than ``cts`` holds."""
    w = contact_work_views(work)
    margin = sp[SET_MARGIN]
    nc = 0
    if gp[GROUND_ON] != 0.0:
        n, t1, t2 = gp[GROUND_N : GROUND_N + 3], gp[GROUND_T1 : GROUND_T1 + 3], gp[GROUND_T2 : GROUND_T2 + 3]
        kg = ground_contacts(geo, oR, op, n, t1, t2, gp[GROUND_HEIGHT], margin, work)
        for i in range(kg):
            col = int(w.hit_collision[i])
            cts.bodies[nc, 0], cts.bodies[nc, 1] = 0, int(geo.rows[col, COL_BODY])
            for a in range(3):
                cts.points[nc, a] = w.hit_points[i, a]
                cts.frames[nc, a, 0], cts.frames[nc, a, 1], cts.frames[nc, a, 2] = t1[a], t2[a], n[a]
            cts.depth[nc], cts.mu[nc], cts.restitution[nc] = w.hit_depth[i], gp[GROUND_FRICTION], gp[GROUND_RESTITUTION]
            cts.keys[nc, 0], cts.keys[nc, 1], cts.keys[nc, 2] = -1, col, int(w.hit_feature[i])
            cts.warm_row[nc] = geo.woff[col] + int(w.hit_feature[i])
            nc += 1
    nc = _shape_pairs(geo, oR, op, margin, cts, nc, w, warm)
    if nc < 0:
        return -1
    for i in range(len(pairs.depth)):
        cts.bodies[nc, 0], cts.bodies[nc, 1] = pairs.bodies[i, 0], pairs.bodies[i, 1]
        for a in range(3):
            cts.points[nc, a] = pairs.points[i, a]
            cts.keys[nc, a] = pairs.keys[i, a]
            for b in range(3):
                cts.frames[nc, a, b] = pairs.frames[i, a, b]
        cts.depth[nc], cts.mu[nc], cts.restitution[nc] = pairs.depth[i], pairs.mu[i], 0.0
        cts.warm_row[nc] = -1
        nc += 1
    return nc


@njit(cache=True)
def _shape_pairs(geo, oR, op, margin, cts, nc, w, warm):
    """The shape pairs' contacts after cts[:nc] (``detect``): each collision's world pose and bounding box (its
    shape-frame box turned: centre R c + p, half extents |R| h, widened by half the margin) once, then sweep and prune
    (Baraff 1992; Cohen et al., I-COLLIDE, 1995) of the boxes along the axis their centres spread most on, the
    collisions kept in last step's order (insertion sort: nearly sorted already); a pair whose boxes overlap on all
    three axes, that may touch (geo.pair_of) and whose bounding spheres come within the margin goes to
    ``patch.pair_patch``.  Returns the new n_c, or −1 when the points outrun cts."""
    ncol = geo.rows.shape[0]
    if geo.pairs.shape[0] == 0:
        return nc
    for c in range(ncol):
        R, p = w.col_R[c], w.col_p[c]
        shape_pose(geo.rows[c], oR, op, R, p, w.col_par[c])
        row = geo.rows[c]
        for a in range(3):
            centre, half = p[a], 0.5 * margin
            for b in range(3):
                centre += R[a, b] * row[COL_BOX_C + b]
                half += abs(R[a, b]) * row[COL_BOX_H + b]
            w.col_lo[c, a], w.col_hi[c, a] = centre - half, centre + half
    axis, spread = 0, -1.0
    for a in range(3):
        lo, hi = np.inf, -np.inf
        for c in range(ncol):
            lo, hi = min(lo, w.col_p[c, a]), max(hi, w.col_p[c, a])
        if hi - lo > spread:
            axis, spread = a, hi - lo
    order = w.sweep_order
    for a in range(1, ncol):  # insertion sort of the order by the boxes' low ends along the axis
        b = a
        while b > 0 and w.col_lo[int(order[b - 1]), axis] > w.col_lo[int(order[b]), axis]:
            order[b - 1], order[b] = order[b], order[b - 1]
            b -= 1
    for a in range(ncol):
        ia = int(order[a])
        for b in range(a + 1, ncol):
            ib = int(order[b])
            if w.col_lo[ib, axis] > w.col_hi[ia, axis]:
                break  # sorted by the low ends: no later box reaches ia's
            if (w.col_lo[ib, 0] > w.col_hi[ia, 0] or w.col_lo[ia, 0] > w.col_hi[ib, 0]
                    or w.col_lo[ib, 1] > w.col_hi[ia, 1] or w.col_lo[ia, 1] > w.col_hi[ib, 1]
                    or w.col_lo[ib, 2] > w.col_hi[ia, 2] or w.col_lo[ia, 2] > w.col_hi[ib, 2]):  # fmt: skip
                continue  # the boxes are apart on an axis
            i, j = min(ia, ib), max(ia, ib)
            kp = geo.pair_of[i, j]
            if kp < 0:
                continue
            ri, rj = geo.rows[i], geo.rows[j]
            gap = np.sqrt((w.col_p[j, 0] - w.col_p[i, 0]) ** 2 + (w.col_p[j, 1] - w.col_p[i, 1]) ** 2
                          + (w.col_p[j, 2] - w.col_p[i, 2]) ** 2)  # fmt: skip
            if gap - ri[COL_REACH] - rj[COL_REACH] >= margin:
                continue  # the bounding spheres are apart
            vi, vj = int(ri[COL_VSTART]), int(rj[COL_VSTART])
            Vi, Vj = geo.verts[vi : vi + int(ri[COL_VCOUNT])], geo.verts[vj : vj + int(rj[COL_VCOUNT])]
            k = pair_patch(int(ri[COL_CODE]), w.col_par[i], w.col_R[i], w.col_p[i], Vi,
                           int(rj[COL_CODE]), w.col_par[j], w.col_R[j], w.col_p[j], Vj,
                           ri[COL_REACH] + rj[COL_REACH], margin, w.narrow, w.patch_points, w.patch_depths,
                           w.patch_frame, warm.axes[kp])  # fmt: skip
            if nc + k > len(cts.depth):
                return -1  # more points than the scene holds (ContactSettings.pair_contacts)
            for f in range(k):
                cts.bodies[nc, 0], cts.bodies[nc, 1] = int(ri[COL_BODY]), int(rj[COL_BODY])
                for x in range(3):
                    cts.points[nc, x] = w.patch_points[f, x]
                    for y in range(3):
                        cts.frames[nc, x, y] = w.patch_frame[x, y]
                cts.depth[nc], cts.mu[nc], cts.restitution[nc] = w.patch_depths[f], geo.pair_mu[kp], 0.0
                cts.keys[nc, 0], cts.keys[nc, 1], cts.keys[nc, 2] = i, j, f
                cts.warm_row[nc] = geo.pair_warm[kp] + f
                nc += 1
    return nc


@njit(cache=True)
def contact_rows(mi, mf, ws, support, cts, nc, Jall, J):
    """Rows 0 … 3 n_c − 1 of J (·, nv): per contact i, its frame's axes (t₁, t₂, n) applied to the velocity of
    point x_i on its second body relative to its first, column by column: ẋ = v_o + ω × x gives the column
    J_v − x × J_ω of each body's ``support`` (Jall (6, nv): the bodies' [linear; angular] world Jacobian columns
    about the world origin; body 0, the world, moves nothing)."""
    if nc == 0:
        return
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    for j in range(1, len(mv.parents)):
        for d in range(mv.nvs[j]):
            a0, a1, a2, l0, l1, l2 = world_column(dv.oR, dv.op, dv.S, j, d)
            col = mv.idx_v[j] + d
            Jall[0, col], Jall[1, col], Jall[2, col] = l0, l1, l2
            Jall[3, col], Jall[4, col], Jall[5, col] = a0, a1, a2
    bodies, pts, frames = cts.bodies, cts.points, cts.frames
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
def closure_rows(mi, mf, ws, cb, lw, q, J, first):
    """Rows first … first + n_l − 1 of J: the cut joints' and couplings' Jacobian J_r and their residual r(q) into
    lw (``loops.loop_kinematics.loop_step``, Schiehlen eq. 17–18).  A tree (lw None) has none: decided at compile
    time."""
    if lw is None:
        return
    loop_step(mi, mf, ws, cb, lw, q, False)
    lv = loop_views(lw, mi)
    for i in range(lv.J.shape[0]):
        for c in range(J.shape[1]):
            J[first + i, c] = lv.J[i, c]


@njit(cache=True)
def delassus(mi, mf, ws, J, work, G):
    """G = J M⁻¹ Jᵀ = (U⁻¹ Jᵀ)ᵀ D⁻¹ (U⁻¹ Jᵀ) from M = U D Uᵀ (A.8): Table 3's step 1 alone on each column φ of Jᵀ
    (φ̃ = D⁻¹ φ̂, φ̂ = U⁻¹ φ), then G_ab = Σ_k φ̃_k(a)ᵀ Î_k φ̃_k(b), the factors those of this step's forward
    dynamics.  A column's sweep visits only the bodies whose subtree its φ touches (a foot's contact: its leg and
    the base), and no forward recursion is needed.  The sweep takes the bodies in turn, each over the columns that
    visit it (a body's E, r, S, Ψ, Î⁻¹ read once); the sum over k is one product (Î φ̃)ᵀ φ̃.  Where the step
    factored M = Lᵀ L instead (``free_velocity``): ``factored_delassus``.  work: a ``ContactWork`` buffer."""
    mv, dv, w = model_views(mi, mf), data_views(ws, mi), contact_work_views(work)
    m, nv = J.shape
    if w.route[0] != 0.0:
        factored_delassus(mv.dof_parent, leading(w.H, (nv, nv)), J, leading(w.JT, (nv, m)), G)
        return
    parents, idx_v, nvs = mv.parents, mv.idx_v, mv.nvs
    nj = len(parents)
    JT, tilde = borrow(leading(w.JT, (nv, m))), borrow(leading(w.tilde, (nv, m)))
    eta, active = borrow(leading(w.eta, (nj, m, 6))), borrow(leading(w.active, (nj, m)))
    E, r, S, Psi = borrow(dv.E), borrow(dv.r), borrow(dv.S), borrow(dv.Psi)
    I_hat_inv, phi_hat = borrow(dv.I_hat_inv), w.phi_hat
    for i in range(m):
        for c in range(nv):
            JT[c, i] = J[i, c]
    tilde[:, :] = 0.0
    active[:, :] = 0.0
    for col in range(m):  # the bodies whose subtree row col of J touches, children before parents (parents[k] < k)
        for k in range(nj - 1, -1, -1):
            on = active[k, col] != 0.0
            for d in range(nvs[k]):
                on = on or J[col, idx_v[k] + d] != 0.0
            if on:
                active[k, col] = active[parents[k], col] = 1.0
                eta[k, col, :] = 0.0
    for i in range(len(mv.module_ptr) - 2, -1, -1):
        for j in range(mv.module_ptr[i + 1] - 1, mv.module_ptr[i] - 1, -1):
            k = mv.module_bodies[j]
            b, iv, z = parents[k], idx_v[k], nvs[k]
            for col in range(m):
                if active[k, col] != 0.0:
                    eliminate_rhs(k, b, iv, z, E, r, S, Psi, I_hat_inv, JT, tilde, col, eta[k, col], eta[b, col],
                                  phi_hat)  # fmt: skip
    tilde_T, hat_T = borrow(leading(w.JT, (m, nv))), borrow(leading(w.hat, (m, nv)))  # Jᵀ read: its memory holds φ̃ᵀ
    for c in range(nv):
        for col in range(m):
            tilde_T[col, c] = tilde[c, col]
    hat_T[:, :] = 0.0
    for k in range(1, nj):  # (Î φ̃)ᵀ, body by body (Î_k as the forward dynamics left it)
        z, iv = nvs[k], idx_v[k]
        for col in range(m):
            if active[k, col] != 0.0:
                for d in range(z):
                    s = 0.0
                    for e in range(z):
                        s += dv.I_hat[k, d, e] * tilde_T[col, iv + e]
                    hat_T[col, iv + d] = s
    np.dot(hat_T, tilde_T.T, G)  # G_ab = Σ_k φ̃_k(a)ᵀ Î_k φ̃_k(b)
    for a in range(m):  # symmetric to the last bit: the solvers factor its lower triangle
        for c in range(a + 1, m):
            G[a, c] = G[c, a]


@njit(cache=True)
def factored_delassus(lam, H, J, Y, G):
    """G = J M⁻¹ Jᵀ = Yᵀ Y, Y = L⁻ᵀ Jᵀ (nv, m) for M = Lᵀ L (``free_velocity``'s factor in H, λ = ``dof_parent``):
    one sweep of the tree on Jᵀ's rows, each DOF's row taken from its λ-path's (whole rows of m), then one BLAS
    product.  Y stays in its buffer for ``advance``."""
    m, nv = J.shape
    if m == 0:
        return
    for c in range(nv):
        for i in range(m):
            Y[c, i] = J[i, c]
    lt_solve(H, lam, Y)
    np.dot(Y.T, Y, G)
    for a in range(m):  # symmetric to the last bit: the solvers factor its lower triangle
        for c in range(a + 1, m):
            G[a, c] = G[c, a]


@njit(cache=True)
def bias(J, v, vf, cts, nc, lw, mi, dt, sp, G, g):
    """g = J v_f + b, and a compliant contact's R on G's diagonal (``stepping``'s docstring): a gap closes in one
    step, β of a penetration a step, an impact within the step leaves with e times its speed at the surface, a
    compliant normal row is the implicit spring–damper; a loop row σ = J_r v⁺ + r(q) / dt."""
    m, nv = J.shape
    for i in range(m):
        s = 0.0
        for c in range(nv):
            s += J[i, c] * vf[c]
        g[i] = s  # g = J v_f
    beta = sp[SET_BETA]
    for i in range(nc):
        r = 3 * i + 2
        d = cts.depth[i]
        if sp[SET_COMPLIANT] != 0.0:  # f_n = max(0, −k (d + dt v_n⁺) − c v_n⁺): b_n = k d / (k dt + c), R_nn
            kk, cc = sp[SET_K], sp[SET_C]
            g[r] += kk * d / (kk * dt + cc)
            G[r, r] += 1.0 / (dt * (kk * dt + cc))
            continue
        low = -(max(d, 0.0) + beta * min(d, 0.0)) / dt  # a gap closes in one step; β of a penetration a step
        vb = 0.0
        for c in range(nv):
            vb += J[r, c] * v[c]  # v_n⁻, the approach velocity at the step's start
        e = cts.restitution[i]
        if e > 0.0 and vb < -sp[SET_THRESHOLD] and d + dt * vb < 0.0:
            # an impact within the step, from the gap d ≥ 0 the point is still at: it leaves with the speed the
            # rebound from the surface has at that height, v⁺² = e² v_imp² + 2 a_n d, v_imp² = v_n⁻² − 2 a_n d
            an = (g[r] - vb) / dt
            gap = max(d, 0.0)
            up = e**2 * (vb * vb - 2.0 * an * gap) + 2.0 * an * gap
            low = max(low, np.sqrt(max(up, 0.0)))
        g[r] -= low
    if lw is not None:
        res = loop_views(lw, mi).res
        for i in range(m - 3 * nc):
            g[3 * nc + i] += res[i] / dt  # σ = J_r v⁺ + r(q) / dt: the loop's error closed in one step


@njit(cache=True)
def warm_start(geo, sp, warm, pairs, cts, nc, now, lam):
    """λ₀: a contact's impulse of step now − 1 where it was in contact then (its ``warm_row``), a coal pair's its
    ``pairs.start``, the loops' last impulses; zero without warm starts."""
    lam[:] = 0.0
    if sp[SET_WARM] == 0.0:
        return
    kp = len(pairs.depth)
    for i in range(nc):
        f = cts.warm_row[i]
        if f >= 0:
            if warm.step[f] == now - 1:
                lam[3 * i], lam[3 * i + 1], lam[3 * i + 2] = warm.impulse[f, 0], warm.impulse[f, 1], warm.impulse[f, 2]
        else:
            p = i - (nc - kp)
            lam[3 * i], lam[3 * i + 1], lam[3 * i + 2] = pairs.start[p, 0], pairs.start[p, 1], pairs.start[p, 2]
    for i in range(3 * nc, len(lam)):
        lam[i] = warm.loops[i - 3 * nc]


@njit(cache=True)
def solve(G, g, mu, nc, lam, sp, sw, stats):
    """The NCP on (G, g) from λ₀ in ``lam`` (``solvers``): the sticking guess, else PGS or ADMM (η on the problem
    scaled to a unit diagonal).  λ in place, the figures into stats; returns 1 if converged."""
    if len(g) == 0:
        stats[:] = 0.0
        return 1
    if sticking(G, g, mu, nc, lam, sp[SET_TOL], sw, stats):  # the pressing contacts stick: no iteration
        return 1
    if sp[SET_SOLVER] == 1.0:
        sigma = leading(solver_work_views(sw).sigma, (len(g),))
        return solve_pgs(G, g, mu, nc, lam, sp[SET_TOL], int(sp[SET_MAX_ITER]), sigma, stats)
    # from last step's final ρ (a contact set's conditioning changes slowly); should that stall, once more from
    # ρ = 1 and the best iterate
    rho = solver_work_views(sw).rho[0]
    if admm(G, g, mu, nc, lam, sp[SET_TOL], int(sp[SET_MAX_ITER]), rho, 1e-6, sw, stats) or rho == 0.0:
        return int(stats[1] <= sp[SET_TOL])
    first = stats[0]
    ok = admm(G, g, mu, nc, lam, sp[SET_TOL], int(sp[SET_MAX_ITER]), 1.0, 1e-6, sw, stats)
    stats[0] += first
    return ok


@njit(cache=True)
def advance(mi, mf, ws, J, lam, vf, q, dt, q1, v1, work):
    """v⁺ = v_f + M⁻¹ (Jᵀ λ), by one more solve on the step's factors (L⁻¹ (Y λ), or Table 3); q⁺ = q ⊕ dt v⁺.
    work: a ``ContactWork`` buffer."""
    mv, dv, w = model_views(mi, mf), data_views(ws, mi), contact_work_views(work)
    m, nv = J.shape
    if m and w.route[0] != 0.0:  # M⁻¹ Jᵀ λ = L⁻¹ (Y λ), Y = L⁻ᵀ Jᵀ as factored_delassus left it
        Y, dvel = leading(w.JT, (nv, m)), w.dvel
        for c in range(nv):
            s = 0.0
            for i in range(m):
                s += Y[c, i] * lam[i]
            dvel[c] = s
        l_solve(leading(w.H, (nv, nv)), mv.dof_parent, dvel)
        for c in range(nv):
            v1[c] = vf[c] + dvel[c]
    elif m:
        rhs, dvel = leading(w.rhs, (nv, 1)), leading(w.dvel, (nv, 1))
        for c in range(nv):
            s = 0.0
            for i in range(m):
                s += J[i, c] * lam[i]
            rhs[c, 0] = s
        eta = leading(w.eta1, (len(mv.parents), 1, 6))
        udut_solve(mv.parents, mv.module_ptr, mv.module_bodies, mv.idx_v, mv.nvs, dv.E, dv.r, dv.S, dv.Psi,
                   dv.I_hat_inv, rhs, eta, eta, dvel, w.phi_hat)  # fmt: skip
        for c in range(nv):
            v1[c] = vf[c] + dvel[c, 0]
    else:
        for c in range(nv):
            v1[c] = vf[c]
    integrate_kernel(mv.kinds, mv.idx_q, mv.idx_v, q, v1, dt, q1)  # q⁺ = q ⊕ dt v⁺


@njit(cache=True)
def keep_warm(geo, cts, nc, lam, warm, now, stats, ok):
    """The contacts' impulses into cts.impulse and, but for coal's pairs, into the warm starts (step now);
    the loops' into warm.loops; the step's INFO (n_c, the solve's figures, converged)."""
    for i in range(nc):
        cts.impulse[i, 0], cts.impulse[i, 1], cts.impulse[i, 2] = lam[3 * i], lam[3 * i + 1], lam[3 * i + 2]
        f = cts.warm_row[i]
        if f >= 0:
            for a in range(3):
                warm.impulse[f, a] = cts.impulse[i, a]
            warm.step[f] = now
    for i in range(3 * nc, len(lam)):
        warm.loops[i - 3 * nc] = lam[i]
    cts.info[INFO_CONTACTS] = nc
    for a in range(5):
        cts.info[INFO_ITERATIONS + a] = stats[a]
    cts.info[INFO_CONVERGED] = ok


@njit(cache=True)
def contact_problem(mi, mf, ws, cb, lw, scene, pairs, q, v, tau, dt):
    """The step's problem at (q, v) under τ: (status, n_c, m), with v_f, J (m, nv), G (m, m) and g (m,) in the
    scene's work area and the contacts in scene.contacts, their rows first, then the loops'.  status:
    ``aba_entry``'s, or TOO_MANY_CONTACTS (nothing else is then written)."""
    w = contact_work_views(scene.work)
    status = free_velocity(mi, mf, ws, q, v, tau, dt, w.v_free, scene.work)
    if status:
        return status, 0, 0
    dv = data_views(ws, mi)
    cts = scene.contacts
    nc = detect(scene.geometry, scene.ground, scene.settings, dv.oR, dv.op, pairs, cts, scene.work, scene.warm)
    if nc < 0:
        return TOO_MANY_CONTACTS, 0, 0
    nl = 0 if lw is None else int(lw[LW_M])
    m = 3 * nc + nl
    J, G, g = leading(w.J, (m, len(v))), leading(w.G, (m, m)), leading(w.g, (m,))
    contact_rows(mi, mf, ws, scene.geometry.support, cts, nc, w.Jall, J)
    closure_rows(mi, mf, ws, cb, lw, q, J, 3 * nc)
    delassus(mi, mf, ws, J, scene.work, G)
    bias(J, v, w.v_free, cts, nc, lw, mi, dt, scene.settings, G, g)
    return 0, nc, m


@njit(cache=True)
def contact_step(mi, mf, ws, cb, lw, scene, pairs, now, q, v, tau, dt, q1, v1):
    """One step from (q, v) under τ into (q1, v1), as its stages (module docstring); the contacts, their impulses
    (contact frame t₁, t₂, n) and the step's INFO in scene.contacts.  A status: ``aba_entry``'s."""
    status, nc, m = contact_problem(mi, mf, ws, cb, lw, scene, pairs, q, v, tau, dt)
    if status:
        return status
    w, cts = contact_work_views(scene.work), scene.contacts
    J, G, g, lam = leading(w.J, (m, len(v))), leading(w.G, (m, m)), leading(w.g, (m,)), leading(w.lam, (m,))
    warm_start(scene.geometry, scene.settings, scene.warm, pairs, cts, nc, now, lam)
    ok = solve(G, g, cts.mu, nc, lam, scene.settings, scene.solver, w.stats)
    advance(mi, mf, ws, J, lam, w.v_free, q, dt, q1, v1, scene.work)
    keep_warm(scene.geometry, cts, nc, lam, scene.warm, now, w.stats, ok)
    return 0


@njit(cache=True)
def record_step(cts, dt, row, rec):
    """A step's contacts into row ``row`` of ``rec`` (a ``ContactRecords``): the compiled and the stepwise runs'
    one recorder."""
    k = int(cts.info[INFO_CONTACTS])
    rec.count[row] = k
    for i in range(k):
        for a in range(3):
            rec.points[row, i, a] = cts.points[i, a]
            rec.normals[row, i, a] = cts.frames[i, a, 2]
            rec.impulses[row, i, a] = cts.impulse[i, a]
            f = (cts.frames[i, a, 0] * cts.impulse[i, 0] + cts.frames[i, a, 1] * cts.impulse[i, 1]
                 + cts.frames[i, a, 2] * cts.impulse[i, 2])  # fmt: skip
            rec.forces[row, i, a] = f / dt  # the world force on the second shape: the impulse over the step
            rec.keys[row, i, a] = cts.keys[i, a]
        rec.depths[row, i] = cts.depth[i]
    rec.info[row, :] = cts.info


@njit(cache=True)
def record_rest(row, rec):
    """Row ``row`` of ``rec`` for a state no step leaves (a run's last): no contacts, a solve that converged."""
    rec.count[row] = 0
    rec.info[row, :] = 0.0
    rec.info[row, INFO_CONVERGED] = 1.0


@njit(cache=True, nogil=True)
def contact_run(mi, mf, ws, cb, lw, scene, now, q0, v0, law, dt, nsteps, stride, out, rec, info):
    """nsteps of ``contact_step`` from (q0, v0) under the joint law (module docstring; law: a ``JointLaw``), every
    ``stride``-th state recorded into ``out`` (a ``RunOutput``; row 0 the start) with the contacts of the step that
    leaves it (``rec``, a ``ContactRecords``), the last row with none.  No shape pairs: coal finds those in Python.
    info (3,): the step reached (on failure, the first whose state is not finite), the largest |v| before it and its
    index.  Returns 0 or the status of the step that failed."""
    mv, dv = model_views(mi, mf), data_views(ws, mi)
    w = contact_work_views(scene.work)
    nv, nq = len(v0), len(q0)
    pairs = shape_pairs(0)  # none: coal finds them in Python
    q, v = q0.copy(), v0.copy()
    q1, v1, tau, dq = np.empty(nq), np.empty(nv), w.tau, w.dq
    dq[:] = 0.0
    work = 0.0
    row = 0
    for i in range(nsteps + 1):
        info[0] = i
        for c in range(nv):
            if abs(v[c]) > info[1]:
                info[1] = abs(v[c])
                info[2] = c
        if law.feedback:
            difference_kernel(mv.kinds, mv.idx_q, mv.idx_v, q, law.q_ref, dq)  # q_ref ⊖ q
        for c in range(nv):  # τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v)
            tau[c] = law.tau_ff[c] + law.kp[c] * dq[c] + law.kd[c] * (law.v_ref[c] - v[c])
        last = i == nsteps
        if last:
            kinematics_entry(mi, mf, ws, q)  # for the last row's energy
        else:
            s = contact_step(mi, mf, ws, cb, lw, scene, pairs, now + i, q, v, tau, dt, q1, v1)
            if s:
                return s
            if not (all_finite(q1) and all_finite(v1)):
                info[0] = i + 1
                return NOT_FINITE
        if i % stride == 0:
            out.Q[row, :] = q
            out.V[row, :] = v
            out.T[row, :] = tau
            out.W[row] = work
            out.KE[row], out.PE[row] = energy_core(mv, dv, v)
            if last:
                if row:
                    out.A[row, :] = out.A[row - 1]
                else:
                    out.A[row, :] = 0.0
                record_rest(row, rec)
            else:
                for c in range(nv):
                    out.A[row, c] = (v1[c] - v[c]) / dt
                record_step(scene.contacts, dt, row, rec)
                if lw is not None:
                    out.LAM[row, :] = scene.warm.loops
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
