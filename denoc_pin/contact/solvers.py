"""The contact problem of one time step and its two solvers, compiled.

The problem (Le Lidec, Montaut & Carpentier's NCP on the Delassus matrix): m rows, the first 3 n_c of them n_c
contacts in blocks (t₁, t₂, n) — the normal last, Pinocchio's layout — the rest bilateral (closed loops,
couplings).  Find impulses λ with

    σ = G λ + g,   σ̃ = σ + Φ(σ),   K ∋ λ ⊥ σ̃ ∈ K*,                                    (NCP)

G = J M⁻¹ Jᵀ + R (the Delassus matrix and a compliance), K the product of the Coulomb cones
K_μ = {(λ_t, λ_n) : ‖λ_t‖ ≤ μ λ_n} and of the whole line for a bilateral row, K* the dual cones
{(σ_t, σ_n) : μ‖σ_t‖ ≤ σ_n} and {0}, and Φ De Saxcé's correction μ‖σ_t‖ added to each σ_n.  Its solutions are the
Signorini condition with Coulomb friction and maximum dissipation: a point that separates has λ = 0, one in contact
sticks (σ_t = 0, λ inside the cone) or slides against its velocity on the cone's boundary.

- ``solve_pgs``: projected Gauss–Seidel, block by block: the normal impulse λ_n ← max(0, λ_n − σ_n / G_nn), then
  the tangential λ_t ← λ_t − σ_t / ‖G_tt‖₂ projected on the disc of radius μ λ_n; a bilateral row
  λ_r ← λ_r − σ_r / G_rr.
- ``solve_admm``: ADMM on the splitting x = z, z ∈ K, with a proximal term (Carpentier, Le Lidec & Montaut, RSS
  2024): (G + (ρ + η) I) x = −(g + s) + ρ (z − u) + η x_k;  z = Π_K(x + u);  u ← u + x − z; s = Φ(−ρ u).  At a
  fixed point σ̃ = −ρ u ∈ K* and ⟂ z.  De Saxcé's shift s is taken from the dual iterate −ρ u, the iteration's own
  estimate of σ̃, as Pinocchio's ADMMConstraintSolver does: taken from G z + g instead, ADMM stalled on a third of the
  problems of solo12 and go2 landing on rolled feet (two or three points of a foot, G singular) and, once ρ had
  fallen, diverged.  It runs on the problem scaled to a unit diagonal (D G D, D g, per contact block by the mean of
  its diagonal) from ρ = 1; every 5 iterations ρ is doubled or halved when ‖x − z‖ and ‖z − z_prev‖ are ten times
  apart (G + (ρ + η) I refactored).  Without the scaling a closed loop on the ground cycled; without the rescaling a
  1e6 mass ratio (whose stiff direction needs ρ ~ 1e-7) did not converge in 2,000 iterations.  A warm start λ₀ starts
  the dual too, u = −Π_K*(σ̃(λ₀)) / ρ (u at a fixed point through λ₀): a robot at rest re-solves in a few iterations.
  A solve that does not converge returns its iterate of least residual, and one whose iterates stop being finite
  stops there.

Before either, ``solve_sticking`` tries the guess that the contacts pressing in the warm start (all, without one)
stick and the others carry nothing: σ_S = 0 on those rows and the bilateral ones, λ_S = −G_SS⁻¹ g_S (one Cholesky,
G_SS shifted by 1e-11 of G's largest diagonal: two points of one foot make it singular).  If that λ lies in K and the
whole problem's residuals are within tol, it solves the NCP (σ̃_S = 0, and a contact carrying nothing separates).
A robot standing on its feet, whose impulses change a little every step, then needs no iteration at all, where ADMM
from the previous step's impulses took about 20 on go2.  A contact that slides or arrives puts λ outside K or the
residuals above tol, and the iterative solver runs as before.

All three report the same residuals, in the units of σ (m/s):
primal = max distance of λ to K (ADMM: ‖x − z‖∞), dual = max distance of σ̃ to K*,
complementarity = max over blocks of the natural map w_i ‖λ_i − Π_K(λ_i − σ̃_i / w_i)‖ (w_i: the block's mean diagonal
of G), which is zero exactly when K ∋ λ_i ⟂ σ̃_i ∈ K* and, unlike |⟨λ_i, σ̃_i⟩|, measures a sticking point's slip
velocity however small its impulse; the solve has converged when all three are ≤ tol.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.dense import cholesky_solve
from ..core.memory import leading
from ..core.records import solver_work, solver_work_views

__all__ = [
    "STATS",
    "admm",
    "dual_cone",
    "problem_residuals",
    "project_cone",
    "solve_admm",
    "solve_pgs",
    "solve_sticking",
    "sticking",
]

STATS = ("iterations", "residual", "primal", "dual", "complementarity")
"""What ``stats`` (5,) holds after a solve, in order (``core.tables.INFO_ROW``'s columns iterations …)."""


@njit(cache=True, inline="always")
def cone(mu, x0, x1, x2):
    """Π_{K_μ}(x) for x = (t₁, t₂, n): the Euclidean projection on the second-order cone ‖t‖ ≤ μ n, as a tuple."""
    t = np.sqrt(x0 * x0 + x1 * x1)
    if t <= mu * x2:
        return x0, x1, x2
    if mu * t <= -x2:
        return 0.0, 0.0, 0.0
    nn = (mu * t + x2) / (mu * mu + 1.0)
    s = mu * nn / t
    return s * x0, s * x1, nn


@njit(cache=True)
def project_cone(mu, x, y):
    """Π_{K_μ}(x) into ``y`` (``cone``)."""
    y[0], y[1], y[2] = cone(mu, x[0], x[1], x[2])


@njit(cache=True, inline="always")
def dual_cone(mu, s0, s1, s2):
    """Π_{K*_μ}(σ) for σ = (σ_t, σ_n): the projection on the dual cone K*_μ = {μ‖σ_t‖ ≤ σ_n}, the cone of friction
    1/μ (μ = 0: the half-line σ_t = 0, σ_n ≥ 0)."""
    if mu > 0.0:
        return cone(1.0 / mu, s0, s1, s2)
    return 0.0, 0.0, max(s2, 0.0)


@njit(cache=True, inline="always")
def _dist_dual(mu, s0, s1, s2):
    """Distance of σ̃ to K*_μ (``dual_cone``)."""
    p0, p1, p2 = dual_cone(mu, s0, s1, s2)
    return np.sqrt((s0 - p0) ** 2 + (s1 - p1) ** 2 + (s2 - p2) ** 2)


@njit(cache=True)
def problem_residuals(G, g, mu, nc, lam, sigma, stats):
    """σ = G λ + g into ``sigma``; the primal, dual and complementarity residuals into stats[2:5] (module docstring);
    returns their largest (inf where λ is not finite: a NaN must never pass for a solution)."""
    m = len(g)
    for i in range(m):
        s = g[i]
        for j in range(m):
            s += G[i, j] * lam[j]
        sigma[i] = s
    primal = 0.0
    dual = 0.0
    comp = 0.0
    for c in range(nc):
        r = 3 * c
        st = np.sqrt(sigma[r] ** 2 + sigma[r + 1] ** 2)
        sn = sigma[r + 2] + mu[c] * st
        y0, y1, y2 = cone(mu[c], lam[r], lam[r + 1], lam[r + 2])
        primal = max(primal, np.sqrt((y0 - lam[r]) ** 2 + (y1 - lam[r + 1]) ** 2 + (y2 - lam[r + 2]) ** 2))
        dual = max(dual, _dist_dual(mu[c], sigma[r], sigma[r + 1], sn))
        # the natural map of the block, in velocity units: w (λ − Π_K(λ − σ̃ / w)) with w its mean diagonal of G;
        # zero exactly when K ∋ λ ⟂ σ̃ ∈ K*, and a sticking point's velocity itself however small λ is
        w = max((G[r, r] + G[r + 1, r + 1] + G[r + 2, r + 2]) / 3.0, 1e-300)
        y0, y1, y2 = cone(mu[c], lam[r] - sigma[r] / w, lam[r + 1] - sigma[r + 1] / w, lam[r + 2] - sn / w)
        comp = max(comp, w * np.sqrt((lam[r] - y0) ** 2 + (lam[r + 1] - y1) ** 2 + (lam[r + 2] - y2) ** 2))
    for i in range(3 * nc, m):
        dual = max(dual, abs(sigma[i]))
    for i in range(m):
        if not np.isfinite(sigma[i]):  # max() above would skip a NaN
            primal = dual = comp = np.inf
    stats[2], stats[3], stats[4] = primal, dual, comp
    return max(primal, max(dual, comp))


@njit(cache=True)
def solve_pgs(G, g, mu, nc, lam, tol, max_iter, sigma, stats):
    """Projected Gauss–Seidel from the warm start ``lam`` (module docstring); λ in place, σ and stats out.
    Returns 1 if converged, else 0.  Allocates nothing."""
    m = len(g)
    scale = 0.0
    for i in range(m):
        scale = max(scale, G[i, i])
    res = problem_residuals(G, g, mu, nc, lam, sigma, stats)
    it = 0
    while res > tol and it < max_iter:
        it += 1
        for c in range(nc):
            r = 3 * c
            # normal row: Signorini's condition on σ_n itself (0 ≤ λ_n ⟂ σ_n ≥ 0); De Saxcé's term belongs to the
            # block's complementarity ⟨λ, σ̃⟩ = 0, not to this row (with it, a sliding point would sink)
            s0 = g[r]
            s1 = g[r + 1]
            s2 = g[r + 2]
            for j in range(m):
                s0 += G[r, j] * lam[j]
                s1 += G[r + 1, j] * lam[j]
                s2 += G[r + 2, j] * lam[j]
            ln = max(0.0, lam[r + 2] - s2 / G[r + 2, r + 2])
            dn = ln - lam[r + 2]
            lam[r + 2] = ln
            s0 += G[r, r + 2] * dn
            s1 += G[r + 1, r + 2] * dn
            # tangential rows: a projected gradient step of length 1 / (the 2 x 2 block's largest eigenvalue), then
            # the projection on the disc ‖λ_t‖ ≤ μ λ_n (a step in G_tt's metric would not commute with it)
            a, b, d = G[r, r], G[r, r + 1], G[r + 1, r + 1]
            top = 0.5 * (a + d) + np.sqrt(0.25 * (a - d) ** 2 + b * b)
            x0 = lam[r] - s0 / top
            x1 = lam[r + 1] - s1 / top
            t = np.sqrt(x0 * x0 + x1 * x1)
            lim = mu[c] * ln
            if t > lim:
                x0 *= lim / t
                x1 *= lim / t
            lam[r] = x0
            lam[r + 1] = x1
        for i in range(3 * nc, m):
            if G[i, i] <= 1e-14 * scale:  # a row no velocity reaches (a planar loop's out-of-plane row): λ stays
                continue
            s = g[i]
            for j in range(m):
                s += G[i, j] * lam[j]
            lam[i] -= s / G[i, i]
        res = problem_residuals(G, g, mu, nc, lam, sigma, stats)
    stats[0] = it
    stats[1] = res
    return 1 if res <= tol else 0


@njit(cache=True)
def _factor(G, shift, L):
    """Cholesky L Lᵀ = G + shift I (G positive semi-definite, shift > 0), on G's envelope: row i of L is 0 before
    row i of G's first entry not 0, f_i (no fill outside it: George and Liu, *Computer Solution of Large Sparse
    Positive Definite Systems*, 1981, §4), so that contacts that share no body cost nothing (a stack's G is banded)."""
    m = G.shape[0]
    for i in range(m):
        f = i
        for j in range(i):
            if G[i, j] != 0.0:
                f = j
                break
        for j in range(f):
            L[i, j] = 0.0
        for j in range(f, i + 1):
            s = G[i, j] + (shift if i == j else 0.0)
            for k in range(f, j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, i] = np.sqrt(max(s, 1e-300))
            else:
                L[i, j] = s / L[j, j]


@njit(cache=True)
def sticking(G, g, mu, nc, lam, tol, sw, stats):
    """The guess that the contacts pressing in the warm start ``lam`` (λ_n > 0; all of them when none does) stick
    and the others carry nothing (module docstring): σ_S = 0 on those rows and the bilateral ones, λ_S =
    −(G_SS + ε I)⁻¹ g_S, ε = 1e-11 of G's largest diagonal (where redundant contacts make G_SS singular, about the
    least-norm split of their impulses).  Taken into ``lam`` (σ into w.sigma, stats as the solvers', 0 iterations)
    only if it lies in K and the residuals of the whole problem are ≤ tol; returns 1 then, else 0 with ``lam``
    untouched.  sw: a ``SolverWork`` buffer; allocates nothing."""
    w = solver_work_views(sw)
    m = len(g)
    pressing = 0
    for c in range(nc):
        if lam[3 * c + 2] > 0.0:
            pressing += 1
    rows = w.rows
    k = 0
    for c in range(nc):
        if pressing == 0 or lam[3 * c + 2] > 0.0:
            rows[k], rows[k + 1], rows[k + 2] = 3 * c, 3 * c + 1, 3 * c + 2
            k += 3
    for i in range(3 * nc, m):
        rows[k] = i
        k += 1
    hi = 0.0
    for i in range(m):
        hi = max(hi, G[i, i])
    Gs, L = leading(w.Gs, (k, k)), leading(w.L, (k, k))
    b, y = leading(w.rhs, (k,)), leading(w.y, (k,))
    for i in range(k):
        b[i] = -g[int(rows[i])]
        for j in range(k):
            Gs[i, j] = G[int(rows[i]), int(rows[j])]
    _factor(Gs, 1e-11 * hi, L)  # the shift: redundant contacts (two points of a foot) make G_SS singular
    cholesky_solve(L, b, y)
    x = leading(w.x, (m,))
    x[:] = 0.0
    for i in range(k):
        x[int(rows[i])] = y[i]
    for c in range(nc):
        n = x[3 * c + 2]
        if not (n >= 0.0 and np.sqrt(x[3 * c] ** 2 + x[3 * c + 1] ** 2) <= mu[c] * n):
            return 0
    res = problem_residuals(G, g, mu, nc, x, leading(w.sigma, (m,)), stats)
    if not res <= tol:
        return 0
    for i in range(m):
        lam[i] = x[i]
    stats[0] = 0
    stats[1] = res
    return 1


@njit(cache=True)
def solve_sticking(G, g, mu, nc, lam, tol, sigma, stats):
    """``sticking`` on a work area of its own, σ into ``sigma``."""
    sw = solver_work(max(len(g), 1))
    ok = sticking(G, g, mu, nc, lam, tol, sw, stats)
    if ok:
        sigma[:] = solver_work_views(sw).sigma[: len(g)]
    return ok


@njit(cache=True)
def admm(G, g, mu, nc, lam, tol, max_iter, rho, eta, sw, stats):
    """ADMM with a proximal term from the warm start ``lam`` (module docstring), on the problem scaled to a unit
    diagonal; λ (in K) in place, σ into w.sigma and stats out (residuals of the unscaled problem), the final ρ into
    w.rho. rho ≤ 0: 1 on the scaled problem; eta: the proximal weight η, on the scaled problem (unit diagonal). sw: a
    ``SolverWork`` buffer; allocates nothing. Returns 1 if converged, else 0."""
    w = solver_work_views(sw)
    m = len(g)
    sigma = leading(w.sigma, (m,))
    # the scaling D: per contact block 1/√(mean of its diagonal), per bilateral row 1/√G_rr (1 where it is zero);
    # a cone scaled by a positive number is the same cone, and De Saxcé's term scales with its block
    d = leading(w.scale, (m,))
    d[:] = 1.0
    hi = 0.0
    for i in range(m):
        hi = max(hi, G[i, i])
    for c in range(nc):
        wb = (G[3 * c, 3 * c] + G[3 * c + 1, 3 * c + 1] + G[3 * c + 2, 3 * c + 2]) / 3.0
        if wb > 1e-12 * hi:
            d[3 * c] = d[3 * c + 1] = d[3 * c + 2] = 1.0 / np.sqrt(wb)
    for i in range(3 * nc, m):
        if G[i, i] > 1e-12 * hi:
            d[i] = 1.0 / np.sqrt(G[i, i])
    Gs = leading(w.Gs, (m, m))
    gs = leading(w.gs, (m,))
    for i in range(m):
        gs[i] = d[i] * g[i]
        for j in range(m):
            Gs[i, j] = d[i] * G[i, j] * d[j]
    if rho <= 0.0:
        rho = 1.0
    L = leading(w.L, (m, m))
    _factor(Gs, rho + eta, L)
    x, z, u, s = leading(w.x, (m,)), leading(w.z, (m,)), leading(w.u, (m,)), leading(w.s, (m,))
    rhs = leading(w.rhs, (m,))
    u[:] = 0.0
    s[:] = 0.0
    for c in range(nc):  # the warm start, scaled and projected on K
        r = 3 * c
        z[r], z[r + 1], z[r + 2] = cone(mu[c], lam[r] / d[r], lam[r + 1] / d[r + 1], lam[r + 2] / d[r + 2])
    for i in range(3 * nc, m):
        z[i] = lam[i] / d[i]
    warm = False
    for i in range(m):
        x[i] = z[i]
        lam[i] = d[i] * z[i]
        warm = warm or z[i] != 0.0
    res = problem_residuals(G, g, mu, nc, lam, sigma, stats)
    if warm:  # the dual warm start: u = −Π_K*(σ̃(z)) / ρ, u's value at a fixed point through z (σ̃ = −ρ u ∈ K*)
        for c in range(nc):
            r = 3 * c
            sn = sigma[r + 2] + mu[c] * np.sqrt(sigma[r] ** 2 + sigma[r + 1] ** 2)
            y0, y1, y2 = dual_cone(mu[c], d[r] * sigma[r], d[r + 1] * sigma[r + 1], d[r + 2] * sn)
            u[r], u[r + 1], u[r + 2] = -y0 / rho, -y1 / rho, -y2 / rho
    best = leading(w.best, (m,))  # the iterate of least residual: what a solve that does not converge returns
    for i in range(m):
        best[i] = lam[i]
    best_res = res
    it = 0
    while res > tol and it < max_iter:
        it += 1
        for c in range(nc):
            r = 3 * c
            s[r + 2] = mu[c] * rho * np.sqrt(u[r] ** 2 + u[r + 1] ** 2)  # Φ(σ̃), σ̃ = −ρ u: the dual iterate, scaled
        for i in range(m):
            rhs[i] = -(gs[i] + s[i]) + rho * (z[i] - u[i]) + eta * x[i]
        cholesky_solve(L, rhs, x)
        primal = 0.0
        change = 0.0
        for c in range(nc):
            r = 3 * c
            y0, y1, y2 = cone(mu[c], x[r] + u[r], x[r + 1] + u[r + 1], x[r + 2] + u[r + 2])
            change = max(change, max(abs(y0 - z[r]), max(abs(y1 - z[r + 1]), abs(y2 - z[r + 2]))))
            z[r], z[r + 1], z[r + 2] = y0, y1, y2
        for i in range(3 * nc, m):
            change = max(change, abs(x[i] + u[i] - z[i]))
            z[i] = x[i] + u[i]
        gap = 0.0
        for i in range(m):
            u[i] += x[i] - z[i]
            gap = max(gap, abs(x[i] - z[i]))
            primal = max(primal, d[i] * abs(x[i] - z[i]))
            lam[i] = d[i] * z[i]
        res = max(problem_residuals(G, g, mu, nc, lam, sigma, stats), primal)
        if res < best_res:
            best_res = res
            for i in range(m):
                best[i] = lam[i]
        elif not res < np.inf:  # the iterates left the floats: stop at the best one
            break
        # ρ follows the residuals, every 10 iterations by a factor 2: ‖x − z‖ (primal) against ‖z − z_prev‖ (dual,
        # over ρ), both in scaled impulses; a stiff direction (a 1e6 mass ratio) needs a small ρ to converge at all
        if it % 5 == 0 and res > tol:
            if gap > 10.0 * change and rho < 1e6:
                rho *= 2.0
                for i in range(m):
                    u[i] *= 0.5
                _factor(Gs, rho + eta, L)
            elif change > 10.0 * gap and rho > 1e-9:
                rho *= 0.5
                for i in range(m):
                    u[i] *= 2.0
                _factor(Gs, rho + eta, L)
    if not res <= best_res:
        for i in range(m):
            lam[i] = best[i]
        res = problem_residuals(G, g, mu, nc, lam, sigma, stats)
    stats[0] = it
    stats[1] = res
    w.rho[0] = rho
    return 1 if res <= tol else 0


@njit(cache=True)
def solve_admm(G, g, mu, nc, lam, tol, max_iter, rho, eta, sigma, stats):
    """``admm`` on a work area of its own, σ into ``sigma``."""
    sw = solver_work(max(len(g), 1))
    ok = admm(G, g, mu, nc, lam, tol, max_iter, rho, eta, sw, stats)
    sigma[:] = solver_work_views(sw).sigma[: len(g)]
    return ok
