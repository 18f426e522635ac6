"""The configuration groups of the joints (Pinocchio's Lie-group map, ``joints.GROUPS``): q ⊕ v (``integrate``),
q₁ ⊖ q₀ (``difference``), the RKMK correction dexp⁻¹ and their Jacobians, compiled so that a simulation loop calls
them without leaving numba; and in NumPy, one joint's q at a time: neutral, normalize, random sampling.  What each
joint kind is (its group, nq, nv) is ``joints``'s."""

from __future__ import annotations

import numpy as np
from numba import njit

from .joints import GROUP_OF, GROUPS, JOINTS, NQ, SE2, SE3, SO2, SO3, VECTOR
from .spatial import matmul_into

__all__ = [
    "dexp_inv_derivatives_kernel",
    "dexp_inv_kernel",
    "difference_derivatives_kernel",
    "difference_kernel",
    "exp_jacobians",
    "integrate_derivatives_kernel",
    "integrate_kernel",
    "neutral_q",
    "normalize_q",
    "random_q",
    "random_qs",
    "small_inverse_into",
]


# ---------------------------------------------------------------------------------------
# The configuration space, compiled: a simulation loop calls these without leaving numba.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def _quat_mul(a, b, out):
    ax, ay, az, aw = a[0], a[1], a[2], a[3]
    bx, by, bz, bw = b[0], b[1], b[2], b[3]
    out[0] = aw * bx + ax * bw + ay * bz - az * by
    out[1] = aw * by - ax * bz + ay * bw + az * bx
    out[2] = aw * bz + ax * by - ay * bx + az * bw
    out[3] = aw * bw - ax * bx - ay * by - az * bz


@njit(cache=True)
def _quat_exp(w, out):
    """Unit quaternion of the rotation vector w (angle |w| about w/|w|)."""
    th = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    s = 0.5 - th * th / 48.0 if th < 1e-6 else np.sin(0.5 * th) / th
    out[0], out[1], out[2], out[3] = s * w[0], s * w[1], s * w[2], np.cos(0.5 * th)


@njit(cache=True)
def _quat_log(qt, out):
    """Rotation vector of a unit quaternion, on the shortest path (angle in [0, π])."""
    x, y, z, w = qt[0], qt[1], qt[2], qt[3]
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    n = np.sqrt(x * x + y * y + z * z)
    f = 2.0 / w * (1.0 - n * n / (3.0 * w * w)) if n < 1e-8 else 2.0 * np.arctan2(n, w) / n
    out[0], out[1], out[2] = f * x, f * y, f * z


@njit(cache=True)
def _normalized_quat(q, i, out):
    n = np.sqrt(q[i] ** 2 + q[i + 1] ** 2 + q[i + 2] ** 2 + q[i + 3] ** 2)
    for c in range(4):
        out[c] = q[i + c] / n


@njit(cache=True)
def _mv(A, x):
    """A x for small dense A (no BLAS inside numba)."""
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out[i] += A[i, j] * x[j]
    return out


@njit(cache=True, inline="always")
def _cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _se3_V_times(w0, w1, w2, x0, x1, x2):
    """V(ω) x = x + a ω × x + b ω × (ω × x), a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³: exp6's V(ω)
    (left Jacobian of SO(3)) applied, in scalars (no array is made)."""
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    th = np.sqrt(th2)
    if th < 1e-5:
        a, b = 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    else:
        a, b = (1.0 - np.cos(th)) / th2, (th - np.sin(th)) / (th2 * th)
    c0, c1, c2 = _cross3(w0, w1, w2, x0, x1, x2)
    d0, d1, d2 = _cross3(w0, w1, w2, c0, c1, c2)
    return x0 + a * c0 + b * d0, x1 + a * c1 + b * d1, x2 + a * c2 + b * d2


@njit(cache=True)
def _se3_V_solve(w0, w1, w2, x0, x1, x2):
    """V(ω)⁻¹ x = x − ½ ω × x + c ω × (ω × x), c = (1 − (θ/2) cot(θ/2))/θ² (series below θ = 1e-2, where the
    closed form cancels; c multiplies a term of order θ², so either form's error stays at the rounding of x)."""
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    th = np.sqrt(th2)
    if th < 1e-2:
        c = 1.0 / 12.0 + th2 / 720.0 + th2 * th2 / 30240.0
    else:
        h = 0.5 * th
        c = (1.0 - h * np.cos(h) / np.sin(h)) / th2
    c0, c1, c2 = _cross3(w0, w1, w2, x0, x1, x2)
    d0, d1, d2 = _cross3(w0, w1, w2, c0, c1, c2)
    return x0 - 0.5 * c0 + c * d0, x1 - 0.5 * c1 + c * d1, x2 - 0.5 * c2 + c * d2


@njit(cache=True)
def _quat_rotate(x, y, z, w, v0, v1, v2):
    """R(q) v for the unit quaternion (x, y, z, w): v + 2w (u × v) + 2 u × (u × v), u = (x, y, z)."""
    c0, c1, c2 = _cross3(x, y, z, v0, v1, v2)
    d0, d1, d2 = _cross3(x, y, z, c0, c1, c2)
    return v0 + 2.0 * (w * c0 + d0), v1 + 2.0 * (w * c1 + d1), v2 + 2.0 * (w * c2 + d2)


@njit(cache=True)
def _se2_V(th):
    """V(θ) of the SE(2) exponential: p = V(θ) v_xy."""
    if abs(th) < 1e-5:
        a, b = 1.0 - th * th / 6.0, th / 2.0 - th**3 / 24.0
    else:
        a, b = np.sin(th) / th, (1.0 - np.cos(th)) / th
    V = np.empty((2, 2))
    V[0, 0], V[0, 1], V[1, 0], V[1, 1] = a, -b, b, a
    return V


@njit(cache=True)
def integrate_kernel(kinds, idx_q, idx_v, q, v, dt, out):
    """out = q ⊕ v dt, joint by joint, on each joint's group (``GROUPS``)."""
    quats = np.empty((2, 4))  # qa, qb: two quaternions, one allocation
    qa, qb = quats[0], quats[1]
    w = np.empty(3)
    for k in range(1, len(kinds)):
        group, iq, iv = GROUP_OF[kinds[k]], idx_q[k], idx_v[k]
        if group == VECTOR:
            for c in range(NQ[kinds[k]]):
                out[iq + c] = q[iq + c] + v[iv + c] * dt
        elif group == SO2:
            th = np.arctan2(q[iq + 1], q[iq]) + v[iv] * dt
            out[iq], out[iq + 1] = np.cos(th), np.sin(th)
        elif group == SO3:
            _normalized_quat(q, iq, qa)
            for c in range(3):
                w[c] = v[iv + c] * dt
            _quat_exp(w, qb)
            _quat_mul(qa, qb, out[iq : iq + 4])
        elif group == SE3:
            _normalized_quat(q, iq + 3, qa)
            for c in range(3):
                w[c] = v[iv + 3 + c] * dt
            # p ⊕ = p + R V(ω dt) v dt (exp6)
            d0, d1, d2 = _se3_V_times(w[0], w[1], w[2], v[iv] * dt, v[iv + 1] * dt, v[iv + 2] * dt)
            d0, d1, d2 = _quat_rotate(qa[0], qa[1], qa[2], qa[3], d0, d1, d2)
            out[iq], out[iq + 1], out[iq + 2] = q[iq] + d0, q[iq + 1] + d1, q[iq + 2] + d2
            _quat_exp(w, qb)
            _quat_mul(qa, qb, out[iq + 3 : iq + 7])
            # Pinocchio's SE(3) keeps the result in the input's hemisphere (a turn |ω dt| > π would leave it); its
            # SO(3) does not: the same q as Pinocchio's, not only the same rotation
            if out[iq + 3] * qa[0] + out[iq + 4] * qa[1] + out[iq + 5] * qa[2] + out[iq + 6] * qa[3] < 0.0:
                for c in range(3, 7):
                    out[iq + c] = -out[iq + c]
        else:  # SE2: q = (x, y, cos θ, sin θ), v = (vx, vy, ω) in the body frame
            th0 = np.arctan2(q[iq + 3], q[iq + 2])
            dth = v[iv + 2] * dt
            dp = _mv(_se2_V(dth), v[iv : iv + 2] * dt)
            c0, s0 = np.cos(th0), np.sin(th0)
            out[iq] = q[iq] + c0 * dp[0] - s0 * dp[1]
            out[iq + 1] = q[iq + 1] + s0 * dp[0] + c0 * dp[1]
            out[iq + 2], out[iq + 3] = np.cos(th0 + dth), np.sin(th0 + dth)
    return 0


# B_k / k! for k = 0, 1, 2, 4, …, 16 (Bernoulli numbers): x/(eˣ − 1) = Σ B_k xᵏ / k!.
_DEXP_INV_COEF = np.array([
    1.0, -0.5, 1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0, 1.0 / 47900160.0,
    -691.0 / 1307674368000.0, 1.0 / 74724249600.0, -3617.0 / 10670622842880000.0,
])  # fmt: skip


@njit(cache=True)
def _ad_apply(group, x, iv, u, out):
    """out = −ad_x u for the joint's Lie algebra (x, u: slices of the joint's tangent at iv)."""
    if group == SO3:  # so(3): ad_ω u = ω × u
        out[0] = -(x[iv + 1] * u[2] - x[iv + 2] * u[1])
        out[1] = -(x[iv + 2] * u[0] - x[iv] * u[2])
        out[2] = -(x[iv] * u[1] - x[iv + 1] * u[0])
    elif group == SE3:  # se(3), x = (ν, ω): ad_x u = (ω × u_ν + ν × u_ω, ω × u_ω)
        n0, n1, n2, w0, w1, w2 = x[iv], x[iv + 1], x[iv + 2], x[iv + 3], x[iv + 4], x[iv + 5]
        out[0] = -(w1 * u[2] - w2 * u[1] + n1 * u[5] - n2 * u[4])
        out[1] = -(w2 * u[0] - w0 * u[2] + n2 * u[3] - n0 * u[5])
        out[2] = -(w0 * u[1] - w1 * u[0] + n0 * u[4] - n1 * u[3])
        out[3] = -(w1 * u[5] - w2 * u[4])
        out[4] = -(w2 * u[3] - w0 * u[5])
        out[5] = -(w0 * u[4] - w1 * u[3])
    else:  # se(2), x = (vx, vy, ω): ad_x u = (−ω u_y + vy u_ω, ω u_x − vx u_ω, 0)
        out[0] = -(-x[iv + 2] * u[1] + x[iv + 1] * u[2])
        out[1] = -(x[iv + 2] * u[0] - x[iv] * u[2])
        out[2] = 0.0


@njit(cache=True)
def dexp_inv_kernel(kinds, idx_v, nvs, x, v, out):
    """out = J_r(x)⁻¹ v joint by joint, J_r the right Jacobian of q ⊕ x (d/dt (q ⊕ x) = J_r(x) ẋ):
    J_r(x)⁻¹ = Σ_k B_k/k! (−ad_x)ᵏ.  The identity on commutative joints.  Exact to rounding for
    |x| ≤ 1 (the series' radius is 2π; its terms fall like (|x|/2π)ᵏ).  This is the correction that
    keeps Runge–Kutta stages on a Lie group at the method's order (Munthe-Kaas)."""
    u = np.empty(6)
    w = np.empty(6)
    for k in range(1, len(kinds)):
        group, iv, n = GROUP_OF[kinds[k]], idx_v[k], nvs[k]
        for c in range(n):
            out[iv + c] = v[iv + c]
        if group == VECTOR or group == SO2:  # commutative: J_r = 1
            continue
        for c in range(n):
            u[c] = v[iv + c]
        for j in range(1, 17):  # u = (−ad_x)ʲ v; only j = 1 and even j have non-zero B_j
            _ad_apply(group, x, iv, u, w)
            for c in range(n):
                u[c] = w[c]
            if j == 1 or j % 2 == 0:
                coef = _DEXP_INV_COEF[1] if j == 1 else _DEXP_INV_COEF[j // 2 + 1]
                for c in range(n):
                    out[iv + c] += coef * u[c]
    return 0


@njit(cache=True)
def dexp_inv_derivatives_kernel(kinds, idx_v, nvs, x, u, dx, du):
    """The derivatives of ``dexp_inv_kernel``'s K = J_r(x)⁻¹ u = Σ_j c_j (−ad_x)ʲ u, joint by joint (block
    diagonal, nv x nv): du = ∂K/∂u = J_r(x)⁻¹ and dx = ∂K/∂x = Σ_j c_j D_j with D_j = (−ad_x) D_{j−1} + (−ad_e)
    (−ad_x)^{j−1} u for each direction e of x (ad is bilinear).  The same series, so the exact derivative of what
    the RK4 stages compute; identities and zeros on commutative joints."""
    dx[:, :] = 0.0
    du[:, :] = 0.0
    P = np.empty(6)
    D = np.empty(6)
    w = np.empty(6)
    e = np.zeros(6)
    for k in range(1, len(kinds)):
        group, iv, n = GROUP_OF[kinds[k]], idx_v[k], nvs[k]
        for c in range(n):
            du[iv + c, iv + c] = 1.0
        if group == VECTOR or group == SO2:
            continue
        for col in range(n):
            for wrt_x in (False, True):
                for c in range(6):
                    e[c] = 0.0
                e[col] = 1.0
                for c in range(n):  # P = u (for ∂/∂x) or the unit vector (for ∂/∂u, K being linear in u)
                    P[c] = u[iv + c] if wrt_x else e[c]
                    D[c] = 0.0
                for j in range(1, 17):
                    if wrt_x:  # D_j = (−ad_x) D_{j−1} + (−ad_e) P_{j−1}
                        _ad_apply(group, x, iv, D, w)
                        for c in range(n):
                            D[c] = w[c]
                        _ad_apply(group, e, 0, P, w)
                        for c in range(n):
                            D[c] += w[c]
                    _ad_apply(group, x, iv, P, w)  # P_j = (−ad_x) P_{j−1}
                    for c in range(n):
                        P[c] = w[c]
                    if j == 1 or j % 2 == 0:
                        coef = _DEXP_INV_COEF[1] if j == 1 else _DEXP_INV_COEF[j // 2 + 1]
                        for c in range(n):
                            if wrt_x:
                                dx[iv + c, iv + col] += coef * D[c]
                            else:
                                du[iv + c, iv + col] += coef * P[c]
    return 0


@njit(cache=True)
def _minus_ad_matrix(group, x, iv, n, M):
    """M[:n, :n] = −ad_x of the joint's Lie algebra (``_ad_apply`` column by column), Pinocchio's tangent order."""
    e = np.zeros(6)
    col = np.empty(6)
    for j in range(n):
        e[:] = 0.0
        e[j] = 1.0
        _ad_apply(group, x, iv, e, col)
        for i in range(n):
            M[i, j] = col[i]


@njit(cache=True)
def exp_jacobians(M, n, Jr, E):
    """For M = −ad_x (n x n, n ≤ 6): E = exp(M) = Ad(exp x)⁻¹ and the right Jacobian Jr = Σ_k Mᵏ/(k+1)! =
    ∫₀¹ exp(sM) ds of q ⊕ x (d(q ⊕ x) = Ad(exp x)⁻¹ dq + J_r(x) dx).  By scaling and squaring: the series at
    x/2ˢ, ‖M‖/2ˢ ≤ ½, then s doublings J_r(2y) = ½ (1 + exp(M_y)) J_r(y), exp(2 M_y) = exp(M_y)², so that a
    large x (a long step, a big translation) loses no accuracy to the series."""
    norm = 0.0
    for i in range(n):
        row = 0.0
        for j in range(n):
            row += abs(M[i, j])
        norm = max(norm, row)
    s = 0
    while norm > 0.5 and s < 60:
        norm *= 0.5
        s += 1
    scale = 0.5**s
    P = np.zeros((6, 6))
    T = np.empty((6, 6))
    for i in range(n):
        for j in range(n):
            E[i, j] = Jr[i, j] = P[i, j] = 1.0 if i == j else 0.0
    for k in range(1, 20):  # P = (M/2ˢ)ᵏ/k!, terms below 2⁻ᵏ/k!
        matmul_into(P[:n, :n], M[:n, :n], T[:n, :n])
        for i in range(n):
            for j in range(n):
                P[i, j] = T[i, j] * scale / k
                E[i, j] += P[i, j]
                Jr[i, j] += P[i, j] / (k + 1)
    for _ in range(s):
        for i in range(n):
            for j in range(n):
                T[i, j] = 0.5 * (E[i, j] + (1.0 if i == j else 0.0))
        matmul_into(T[:n, :n], Jr[:n, :n], P[:n, :n])
        Jr[:n, :n] = P[:n, :n]
        matmul_into(E[:n, :n], E[:n, :n], P[:n, :n])
        E[:n, :n] = P[:n, :n]


@njit(cache=True)
def small_inverse_into(A, n, out):
    """out[:n, :n] = A[:n, :n]⁻¹ by Gauss–Jordan elimination with partial pivoting (n ≤ 6; here J_r, invertible
    for rotation angles below 2π: a difference's angle is at most π)."""
    W = np.zeros((6, 12))
    for i in range(n):
        for j in range(n):
            W[i, j] = A[i, j]
        W[i, n + i] = 1.0
    for c in range(n):
        p = c
        for i in range(c + 1, n):
            if abs(W[i, c]) > abs(W[p, c]):
                p = i
        if p != c:
            for j in range(2 * n):
                W[c, j], W[p, j] = W[p, j], W[c, j]
        f = 1.0 / W[c, c]
        for j in range(2 * n):
            W[c, j] *= f
        for i in range(n):
            if i != c and W[i, c] != 0.0:
                g = W[i, c]
                for j in range(2 * n):
                    W[i, j] -= g * W[c, j]
    for i in range(n):
        for j in range(n):
            out[i, j] = W[i, n + j]


@njit(cache=True)
def integrate_derivatives_kernel(kinds, idx_v, nvs, v, dq, dv):
    """The Jacobians of q ⊕ v in the tangent spaces (``pinocchio.dIntegrate`` ARG0, ARG1), block diagonal:
    dq = Ad(exp v)⁻¹ and dv = J_r(v) on each joint's group (``exp_jacobians``), identities on ℝⁿ and SO(2)."""
    dq[:, :] = 0.0
    dv[:, :] = 0.0
    M, Jr, E = np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((6, 6))
    for k in range(1, len(kinds)):
        group, iv, n = GROUP_OF[kinds[k]], idx_v[k], nvs[k]
        if group == VECTOR or group == SO2:
            for c in range(n):
                dq[iv + c, iv + c] = dv[iv + c, iv + c] = 1.0
            continue
        _minus_ad_matrix(group, v, iv, n, M)
        exp_jacobians(M, n, Jr, E)
        for i in range(n):
            for j in range(n):
                dq[iv + i, iv + j] = E[i, j]
                dv[iv + i, iv + j] = Jr[i, j]
    return 0


@njit(cache=True)
def difference_derivatives_kernel(kinds, idx_q, idx_v, nvs, q0, q1, d0, d1):
    """The Jacobians of v = q1 ⊖ q0 in the tangent spaces (``pinocchio.dDifference`` ARG0, ARG1), block diagonal:
    d1 = J_r(v)⁻¹ (q1 ⊕ δ moves v by J_r⁻¹ δ) and d0 = −J_l(v)⁻¹ = −J_r(v)⁻¹ Ad(exp v)⁻¹; −1 and 1 on ℝⁿ, SO(2)."""
    v = np.empty(len(d0))
    difference_kernel(kinds, idx_q, idx_v, q0, q1, v)
    d0[:, :] = 0.0
    d1[:, :] = 0.0
    M, Jr, E, Ji = np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((6, 6))
    for k in range(1, len(kinds)):
        group, iv, n = GROUP_OF[kinds[k]], idx_v[k], nvs[k]
        if group == VECTOR or group == SO2:
            for c in range(n):
                d0[iv + c, iv + c] = -1.0
                d1[iv + c, iv + c] = 1.0
            continue
        _minus_ad_matrix(group, v, iv, n, M)
        exp_jacobians(M, n, Jr, E)
        small_inverse_into(Jr, n, Ji)
        for i in range(n):
            for j in range(n):
                d1[iv + i, iv + j] = Ji[i, j]
                s = 0.0
                for m in range(n):
                    s += Ji[i, m] * E[m, j]
                d0[iv + i, iv + j] = -s
    return 0


@njit(cache=True)
def difference_kernel(kinds, idx_q, idx_v, q0, q1, out):
    """out = q1 ⊖ q0: the v that integrate(q0, v, 1) maps to q1."""
    quats = np.empty((3, 4))  # qa, qb, qr: three quaternions, one allocation
    qa, qb, qr = quats[0], quats[1], quats[2]
    w = np.empty(3)
    for k in range(1, len(kinds)):
        group, iq, iv = GROUP_OF[kinds[k]], idx_q[k], idx_v[k]
        if group == VECTOR:
            for c in range(NQ[kinds[k]]):
                out[iv + c] = q1[iq + c] - q0[iq + c]
        elif group == SO2:
            c0, s0, c1, s1 = q0[iq], q0[iq + 1], q1[iq], q1[iq + 1]
            out[iv] = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        elif group == SO3 or group == SE3:
            j = iq if group == SO3 else iq + 3
            _normalized_quat(q0, j, qa)
            _normalized_quat(q1, j, qb)
            qa[0], qa[1], qa[2] = -qa[0], -qa[1], -qa[2]  # q0⁻¹
            _quat_mul(qa, qb, qr)
            _quat_log(qr, w)
            if group == SO3:
                out[iv : iv + 3] = w
            else:
                # v = V(ω)⁻¹ R0ᵀ (p1 − p0); qa holds q0⁻¹, so rotating by it is R0ᵀ
                d0, d1, d2 = _quat_rotate(qa[0], qa[1], qa[2], qa[3], q1[iq] - q0[iq], q1[iq + 1] - q0[iq + 1],
                                          q1[iq + 2] - q0[iq + 2])  # fmt: skip
                out[iv], out[iv + 1], out[iv + 2] = _se3_V_solve(w[0], w[1], w[2], d0, d1, d2)
                out[iv + 3], out[iv + 4], out[iv + 5] = w[0], w[1], w[2]
        else:  # SE2
            th0 = np.arctan2(q0[iq + 3], q0[iq + 2])
            th1 = np.arctan2(q1[iq + 3], q1[iq + 2])
            dth = np.arctan2(np.sin(th1 - th0), np.cos(th1 - th0))
            c0, s0 = np.cos(th0), np.sin(th0)
            dx, dy = q1[iq] - q0[iq], q1[iq + 1] - q0[iq + 1]
            px, py = c0 * dx + s0 * dy, -s0 * dx + c0 * dy
            V = _se2_V(dth)
            det = V[0, 0] * V[1, 1] - V[0, 1] * V[1, 0]
            out[iv] = (V[1, 1] * px - V[0, 1] * py) / det
            out[iv + 1] = (-V[1, 0] * px + V[0, 0] * py) / det
            out[iv + 2] = dth
    return 0


# ---------------------------------------------------------------------------------------
# The configuration space in NumPy: one joint's q entries at a time.
# ---------------------------------------------------------------------------------------


def neutral_q(kind: int) -> np.ndarray:
    """The joint's q at the reference configuration: zero angles and offsets, (cos, sin) = (1, 0),
    identity quaternions."""
    q = np.zeros(JOINTS[kind].nq)
    one = GROUPS[JOINTS[kind].group].one
    if one is not None:
        q[one] = 1.0
    return q


def normalize_q(kind: int, qk: np.ndarray) -> None:
    """Scale the joint's quaternion or (cos, sin) pair in ``qk`` (its q entries, a view) to unit norm."""
    unit = GROUPS[JOINTS[kind].group].unit
    if unit is not None:
        qk[unit[0] : unit[1]] /= np.linalg.norm(qk[unit[0] : unit[1]])


def random_q(kind: int, rng: np.random.Generator, lower=None, upper=None) -> np.ndarray:
    """A random q of the joint: its first ``coordinates`` entries uniform within [lower, upper] (the joint's
    position limits, (nq,)) where both bounds are finite and below 1e300 (Pinocchio's "no limit" is 1.8e308);
    otherwise angles uniform in [-π, π], offsets and base positions in [-0.5, 0.5] m; uniformly random unit
    quaternions and (cos θ, sin θ)."""
    q = random_qs(kind, rng, None, None, None)
    if lower is not None:
        for i in range(JOINTS[kind].coordinates):
            if max(abs(lower[i]), abs(upper[i])) < 1e300:
                q[i] = rng.uniform(lower[i], upper[i])
    return q


def random_qs(kind: int, rng: np.random.Generator, lower, upper, n: int | None) -> np.ndarray:
    """n random q of the joint as the rows of an (n, nq) array, drawn as ``random_q`` draws one (n None: one q,
    (nq,), without limits; the random stream is consumed in another order for n rows), on the joint's group."""
    k = JOINTS[kind]
    size = () if n is None else (n,)
    if k.group == VECTOR:
        bound = 0.5 if k.lengths else np.pi
        q = rng.uniform(-bound, bound, (*size, k.nq))
    elif k.group in (SO2, SE2):
        th = rng.uniform(-np.pi, np.pi, size)
        q = np.stack([np.cos(th), np.sin(th)], axis=-1)
        if k.group == SE2:
            q = np.concatenate([rng.uniform(-0.5, 0.5, (*size, 2)), q], axis=-1)
    else:  # SO3, SE3: uniformly random unit quaternions
        u = rng.standard_normal((*size, 4))
        q = u / np.linalg.norm(u, axis=-1, keepdims=True)
        if k.group == SE3:
            q = np.concatenate([rng.uniform(-0.5, 0.5, (*size, 3)), q], axis=-1)
    if n is not None:
        for i in range(k.coordinates):
            if max(abs(lower[i]), abs(upper[i])) < 1e300:
                q[:, i] = rng.uniform(lower[i], upper[i], n)
    return q
