"""Small dense linear algebra, compiled and LAPACK-free, in place: the reaction systems of closed loops have a few
dozen rows at most, and a solve that writes into the loop workspace allocates nothing per call.  Besides: the
minimum-norm least-squares solve by SVD that the Python-level loop functions use."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "basic_inverse",
    "cholesky_in_place",
    "cholesky_inverse",
    "cholesky_solve",
    "cholesky_solve_rows",
    "eigen_solve",
    "jacobi_eigen",
    "lu_inverse",
    "min_norm_solve",
    "pivoted_cholesky",
    "symmetric_pinv_solve",
    "symmetric_product_into",
]


def min_norm_solve(A: np.ndarray, b: np.ndarray, rcond: float) -> tuple[np.ndarray, int]:
    """Minimum-norm least-squares solution of A x = b by SVD (rank-revealing), and the rank."""
    x, _, rank, _ = np.linalg.lstsq(A, b, rcond=rcond)
    return x, int(rank)


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


@njit(cache=True, fastmath={"reassoc", "contract"})  # its row dot products in any order: they vectorize
def cholesky_in_place(A, rcond):
    """A = L Lᵀ, L into A's lower triangle (L[i, k] from the dot of rows i and k, both contiguous); False if a
    pivot is ≤ rcond × A's largest diagonal (A singular to that accuracy)."""
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
            s = 0.0
            for p in range(k):
                s += A[i, p] * A[k, p]
            A[i, k] = (A[i, k] - s) / d
    return True


@njit(cache=True, fastmath={"contract"})
def cholesky_inverse(A, L) -> bool:
    """A ← A⁻¹ for a symmetric positive definite A (its lower triangle read): A = L Lᵀ (``cholesky_in_place`` on a
    copy in L), X = L⁻¹ in place in L, A⁻¹ = Xᵀ X; n³/2 multiply-adds, backward stable as LAPACK's (cond(A) ε).  Both
    steps update whole rows (axpy on contiguous rows: independent multiply-adds, not a chain of sums).  False,
    A untouched, if a pivot is not positive (A not positive definite to rounding: the caller takes an LU)."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i + 1):
            L[i, j] = A[i, j]
    if not cholesky_in_place(L, 0.0):
        return False
    for i in range(n):  # row i of X = L⁻¹: X[i, :i] = −(Σ_{k<i} L[i, k] X[k, :k+1]) / L[i, i], accumulated in place
        for k in range(i):
            c = L[i, k]
            L[i, k] = 0.0
            for j in range(k + 1):
                L[i, j] += c * L[k, j]
        r = 1.0 / L[i, i]
        for j in range(i):
            L[i, j] *= -r
        L[i, i] = r
    for i in range(n):
        for j in range(i + 1):
            A[i, j] = 0.0
    for k in range(n):  # A⁻¹ = Xᵀ X = Σ_k X[k, :]ᵀ X[k, :]: rank-one updates of the lower triangle, row by row
        for i in range(k + 1):
            c = L[k, i]
            for j in range(i + 1):
                A[i, j] += c * L[k, j]
    for i in range(n):
        for j in range(i):
            A[j, i] = A[i, j]
    return True


@njit(cache=True)
def lu_inverse(A, out, rcond):
    """out = A⁻¹ by Gauss–Jordan elimination with partial pivoting, A kept; False (out undefined) if a pivot is
    ≤ rcond × A's largest entry: A singular or nearly so to that accuracy, for a rank-revealing solve instead."""
    m = A.shape[0]
    W = A.copy()
    out[:, :] = 0.0
    big = 0.0
    for i in range(m):
        out[i, i] = 1.0
        for j in range(m):
            big = max(big, abs(A[i, j]))
    for k in range(m):
        p = k
        for i in range(k + 1, m):
            if abs(W[i, k]) > abs(W[p, k]):
                p = i
        if not abs(W[p, k]) > rcond * big:
            return False
        if p != k:
            for c in range(m):
                W[k, c], W[p, c] = W[p, c], W[k, c]
                out[k, c], out[p, c] = out[p, c], out[k, c]
        d = 1.0 / W[k, k]
        for c in range(m):
            W[k, c] *= d
            out[k, c] *= d
        for i in range(m):
            if i != k and W[i, k] != 0.0:
                f = W[i, k]
                for c in range(m):
                    W[i, c] -= f * W[k, c]
                    out[i, c] -= f * out[k, c]
    return True


@njit(cache=True)
def basic_inverse(A, out, rcond):
    """out = X with A X b = b for every b in A's range (A⁻¹ where A is invertible): Gaussian elimination with
    complete pivoting stops where the largest remaining entry is ≤ rcond × A's largest, its r pivots' rows and
    columns the basic block B; X holds B⁻¹ at B's columns' rows and rows' columns, zeros elsewhere (x = X b sets the
    non-basic unknowns to zero).  Returns the rank r.  A rank-revealing solve for a consistent singular system at
    the cost of an inverse, not of an SVD."""
    m = A.shape[0]
    W = A.copy()
    rows, cols = np.arange(m), np.arange(m)
    big = 0.0
    for i in range(m):
        for j in range(m):
            big = max(big, abs(A[i, j]))
    out[:, :] = 0.0
    rank = 0
    for k in range(m):
        p, c, best = k, k, 0.0
        for i in range(k, m):
            for j in range(k, m):
                if abs(W[i, j]) > best:
                    p, c, best = i, j, abs(W[i, j])
        if not best > rcond * big:
            break
        if p != k:
            rows[k], rows[p] = rows[p], rows[k]
            for j in range(m):
                W[k, j], W[p, j] = W[p, j], W[k, j]
        if c != k:
            cols[k], cols[c] = cols[c], cols[k]
            for i in range(m):
                W[i, k], W[i, c] = W[i, c], W[i, k]
        for i in range(k + 1, m):
            f = W[i, k] / W[k, k]
            for j in range(k + 1, m):
                W[i, j] -= f * W[k, j]
        rank += 1
    B = np.empty((rank, rank))
    for a in range(rank):
        for b in range(rank):
            B[a, b] = A[rows[a], cols[b]]
    Binv = np.empty((rank, rank))
    lu_inverse(B, Binv, 0.0)
    for a in range(rank):
        for b in range(rank):
            out[cols[a], rows[b]] = Binv[a, b]
    return rank


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


@njit(cache=True, fastmath={"contract"})
def cholesky_solve_rows(L, X):
    """X ← (L Lᵀ)⁻¹ X for L in the lower triangle, every column of X at once: each step updates a whole
    contiguous row of X (``cholesky_solve``'s order of operations, column by column)."""
    m, n = X.shape
    for i in range(m):
        for p in range(i):
            lip = L[i, p]
            for j in range(n):
                X[i, j] -= lip * X[p, j]
        d = L[i, i]
        for j in range(n):
            X[i, j] /= d
    for i in range(m - 1, -1, -1):
        for p in range(i + 1, m):
            lpi = L[p, i]
            for j in range(n):
                X[i, j] -= lpi * X[p, j]
        d = L[i, i]
        for j in range(n):
            X[i, j] /= d


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
def pivoted_cholesky(G, order, rtol, sure_redundant, sure_independent):
    """Π G Πᵀ = L Lᵀ with diagonal pivoting, G symmetric positive semi-definite (J Jᵀ): L (m x rank) into G's lower
    trapezoid in pivot order, ``order`` the rows in that order.  It stops at the first pivot ≤ rtol² × G's
    largest diagonal: the rank.  Returns (rank, clear): clear is False if a pivot lay between sure_redundant and
    sure_independent (× the largest diagonal), where pivots can misjudge J's singular values."""
    m = G.shape[0]
    dmax = 0.0
    for i in range(m):
        order[i] = i
        dmax = max(dmax, G[i, i])
    if dmax == 0.0:
        return 0, True
    cut = rtol * rtol * dmax
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
