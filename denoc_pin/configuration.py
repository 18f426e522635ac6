"""The configuration space: neutral, integrate, difference (Pinocchio's conventions), per joint kind.

Free-flyer joints live on SE(3) and planar ones on SE(2) with the velocity in the body frame,
spherical joints on SO(3), continuous joints on SO(2) as (cos θ, sin θ); the others are
vector spaces.  ``integrate(q, v, dt)`` is Pinocchio's ``integrate(q, v·dt)``: q ⊕ exp(v dt)
with the increment applied in the body frame.  Quaternions are stored (x, y, z, w) and kept unit.
The kernels are compiled so that a simulation loop can call them without leaving numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .model import (
    CONTINUOUS,
    FREE_FLYER,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    Model,
    configuration,
    vector,
)
from .spatial import matmul_into, quaternion_rotation, skew

# ---------------------------------------------------------------------------------------
# Quaternion and exponential-map helpers (x, y, z, w order).
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


@njit(cache=True)
def _se3_V(w):
    """V(ω) of exp6: p = V(ω) v (left Jacobian of SO(3))."""
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    th = np.sqrt(th2)
    if th < 1e-5:
        a, b = 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    else:
        a, b = (1.0 - np.cos(th)) / th2, (th - np.sin(th)) / (th2 * th)
    W = skew(w)
    W2 = np.empty((3, 3))
    matmul_into(W, W, W2)
    return np.eye(3) + a * W + b * W2


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


# ---------------------------------------------------------------------------------------
# Kernels.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def integrate_kernel(kinds, idx_q, idx_v, q, v, dt, out):
    """out = q ⊕ v dt, joint by joint."""
    qa = np.empty(4)
    qb = np.empty(4)
    w = np.empty(3)
    for k in range(1, len(kinds)):
        kind, iq, iv = kinds[k], idx_q[k], idx_v[k]
        if kind == REVOLUTE or kind == PRISMATIC:
            out[iq] = q[iq] + v[iv] * dt
        elif kind == UNIVERSAL:
            out[iq] = q[iq] + v[iv] * dt
            out[iq + 1] = q[iq + 1] + v[iv + 1] * dt
        elif kind == CONTINUOUS:
            th = np.arctan2(q[iq + 1], q[iq]) + v[iv] * dt
            out[iq], out[iq + 1] = np.cos(th), np.sin(th)
        elif kind == SPHERICAL:
            _normalized_quat(q, iq, qa)
            for c in range(3):
                w[c] = v[iv + c] * dt
            _quat_exp(w, qb)
            _quat_mul(qa, qb, out[iq : iq + 4])
        elif kind == FREE_FLYER:
            _normalized_quat(q, iq + 3, qa)
            for c in range(3):
                w[c] = v[iv + 3 + c] * dt
            dp = _mv(_se3_V(w), v[iv : iv + 3] * dt)
            R = quaternion_rotation(qa[0], qa[1], qa[2], qa[3])
            for c in range(3):
                out[iq + c] = q[iq + c] + R[c, 0] * dp[0] + R[c, 1] * dp[1] + R[c, 2] * dp[2]
            _quat_exp(w, qb)
            _quat_mul(qa, qb, out[iq + 3 : iq + 7])
        else:  # PLANAR: q = (x, y, cos θ, sin θ), v = (vx, vy, ω) in the body frame
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
def _ad_apply(kind, x, iv, u, out):
    """out = −ad_x u for the joint's Lie algebra (x, u: slices of the joint's tangent at iv)."""
    if kind == SPHERICAL:  # so(3): ad_ω u = ω × u
        out[0] = -(x[iv + 1] * u[2] - x[iv + 2] * u[1])
        out[1] = -(x[iv + 2] * u[0] - x[iv] * u[2])
        out[2] = -(x[iv] * u[1] - x[iv + 1] * u[0])
    elif kind == FREE_FLYER:  # se(3), x = (ν, ω): ad_x u = (ω × u_ν + ν × u_ω, ω × u_ω)
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
        kind, iv, n = kinds[k], idx_v[k], nvs[k]
        for c in range(n):
            out[iv + c] = v[iv + c]
        if kind != SPHERICAL and kind != FREE_FLYER and kind != PLANAR:
            continue
        for c in range(n):
            u[c] = v[iv + c]
        for j in range(1, 17):  # u = (−ad_x)ʲ v; only j = 1 and even j have non-zero B_j
            _ad_apply(kind, x, iv, u, w)
            for c in range(n):
                u[c] = w[c]
            if j == 1 or j % 2 == 0:
                coef = _DEXP_INV_COEF[1] if j == 1 else _DEXP_INV_COEF[j // 2 + 1]
                for c in range(n):
                    out[iv + c] += coef * u[c]
    return 0


@njit(cache=True)
def difference_kernel(kinds, idx_q, idx_v, q0, q1, out):
    """out = q1 ⊖ q0: the v that integrate(q0, v, 1) maps to q1."""
    qa = np.empty(4)
    qb = np.empty(4)
    qr = np.empty(4)
    w = np.empty(3)
    for k in range(1, len(kinds)):
        kind, iq, iv = kinds[k], idx_q[k], idx_v[k]
        if kind == REVOLUTE or kind == PRISMATIC:
            out[iv] = q1[iq] - q0[iq]
        elif kind == UNIVERSAL:
            out[iv] = q1[iq] - q0[iq]
            out[iv + 1] = q1[iq + 1] - q0[iq + 1]
        elif kind == CONTINUOUS:
            c0, s0, c1, s1 = q0[iq], q0[iq + 1], q1[iq], q1[iq + 1]
            out[iv] = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        elif kind == SPHERICAL or kind == FREE_FLYER:
            j = iq if kind == SPHERICAL else iq + 3
            _normalized_quat(q0, j, qa)
            _normalized_quat(q1, j, qb)
            qa[0], qa[1], qa[2] = -qa[0], -qa[1], -qa[2]  # q0⁻¹
            _quat_mul(qa, qb, qr)
            _quat_log(qr, w)
            if kind == SPHERICAL:
                out[iv : iv + 3] = w
            else:
                R0 = quaternion_rotation(-qa[0], -qa[1], -qa[2], qa[3])
                dp = _mv(R0.T, q1[iq : iq + 3] - q0[iq : iq + 3])
                out[iv : iv + 3] = _solve3(_se3_V(w), dp)
                out[iv + 3 : iv + 6] = w
        else:  # PLANAR
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


@njit(cache=True)
def _solve3(A, b):
    """A⁻¹ b for a 3x3 A by Cramer's rule (A = V(ω) is always well conditioned here)."""
    a0, a1, a2 = A[:, 0].copy(), A[:, 1].copy(), A[:, 2].copy()
    det = np.sum(a0 * np.cross(a1, a2))
    x = np.empty(3)
    x[0] = np.sum(b * np.cross(a1, a2)) / det
    x[1] = np.sum(a0 * np.cross(b, a2)) / det
    x[2] = np.sum(a0 * np.cross(a1, b)) / det
    return x


# ---------------------------------------------------------------------------------------
# Public functions.
# ---------------------------------------------------------------------------------------


def neutral(model: Model) -> np.ndarray:
    """The reference configuration: zero angles and offsets, (cos, sin) = (1, 0), identity quaternions;
    ``pinocchio.neutral``."""
    q = np.zeros(model.nq)
    for k in range(1, model.njoints):
        i, kind = model.idx_q[k], model.kinds[k]
        if kind == CONTINUOUS:
            q[i] = 1.0
        elif kind == SPHERICAL:
            q[i + 3] = 1.0
        elif kind == FREE_FLYER:
            q[i + 6] = 1.0
        elif kind == PLANAR:
            q[i + 2] = 1.0
    return q


def integrate(model: Model, q, v, dt: float = 1.0) -> np.ndarray:
    """q ⊕ v dt on the configuration space; ``pinocchio.integrate(model, q, v * dt)``.

    Quaternions and (cos, sin) pairs of the result are unit.
    """
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    out = np.empty(model.nq)
    integrate_kernel(model.kinds, model.idx_q, model.idx_v, q, v, float(dt), out)
    return out


def dexp_inv(model: Model, x, v) -> np.ndarray:
    """J_r(x)⁻¹ v: the rate ẋ of chart coordinates x (q = q_c ⊕ x) that moves q with velocity v.
    Pinocchio's ``dIntegrate(model, q_c, x, ARG1)`` is J_r(x)."""
    x = vector(x, model.nv, "x")
    v = vector(v, model.nv, "v")
    out = np.empty(model.nv)
    dexp_inv_kernel(model.kinds, model.idx_v, model.nvs, x, v, out)
    return out


def difference(model: Model, q0, q1) -> np.ndarray:
    """The velocity v with q0 ⊕ v = q1 (shortest rotation); ``pinocchio.difference``."""
    q0 = configuration(model, q0, "q0")
    q1 = configuration(model, q1, "q1")
    out = np.empty(model.nv)
    difference_kernel(model.kinds, model.idx_q, model.idx_v, q0, q1, out)
    return out


def normalize(model: Model, q) -> np.ndarray:
    """q with every quaternion and (cos, sin) pair scaled to unit norm; ``pinocchio.normalize``."""
    q = configuration(model, q).copy()
    for k in range(1, model.njoints):
        i, kind = model.idx_q[k], model.kinds[k]
        s = {CONTINUOUS: slice(i, i + 2), SPHERICAL: slice(i, i + 4), FREE_FLYER: slice(i + 3, i + 7)}.get(kind)
        if kind == PLANAR:
            s = slice(i + 2, i + 4)
        if s is not None:
            q[s] /= np.linalg.norm(q[s])
    return q


def random_configuration(model: Model, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """A random q: angles uniform in [-π, π], prismatic offsets and base positions in [-0.5, 0.5] m,
    uniformly random unit quaternions."""
    rng = np.random.default_rng(rng)
    q = np.empty(model.nq)
    for k in range(1, model.njoints):
        i, kind = model.idx_q[k], model.kinds[k]
        if kind in (REVOLUTE, UNIVERSAL):
            q[i : i + model.nqs[k]] = rng.uniform(-np.pi, np.pi, model.nqs[k])
        elif kind == CONTINUOUS:
            th = rng.uniform(-np.pi, np.pi)
            q[i : i + 2] = np.cos(th), np.sin(th)
        elif kind == PRISMATIC:
            q[i] = rng.uniform(-0.5, 0.5)
        elif kind == SPHERICAL:
            u = rng.standard_normal(4)
            q[i : i + 4] = u / np.linalg.norm(u)
        elif kind == FREE_FLYER:
            u = rng.standard_normal(4)
            q[i : i + 3] = rng.uniform(-0.5, 0.5, 3)
            q[i + 3 : i + 7] = u / np.linalg.norm(u)
        else:  # PLANAR
            th = rng.uniform(-np.pi, np.pi)
            q[i : i + 4] = *rng.uniform(-0.5, 0.5, 2), np.cos(th), np.sin(th)
    return q
