"""Spatial operators of the DeNOC formulation (Shah, Saha & Dutt, eq. 2b and 7b).

Conventions used everywhere inside denoc_pin:

* A twist is ``t = [ω; ȯ]``: angular velocity, then the velocity of the body origin.
  A wrench is ``w = [n; f]``: moment about the body origin, then force.  Both are
  6-vectors expressed in the body frame (the frame of the joint that carries the body,
  as in Pinocchio).
* Twist propagation from a parent body β to its child k (eq. 7b, written in frame k)::

      A_{k,β} = [[E,      O],      E : rotation taking β-frame components to k-frame
                 [-E r̃,   E]]      r : position of o_k relative to o_β, in the β frame

  This is the paper's ``[[1, O], [ã_{k,β}, 1]]`` with ``a_{k,β} = o_β − o_k``,
  followed by a change of frame.
* The 6x6 mass matrix about the body origin (eq. 2b)::

      M_k = [[I_k,       m_k d̃_k],
             [-m_k d̃_k,  m_k 1  ]]

Pinocchio orders 6-vectors ``[linear; angular]``; the conversion happens only in
:func:`to_pinocchio_order` / :func:`from_pinocchio_order` below.

The numba kernels here write into caller-provided arrays so that the O(n) recursions do
not allocate per body (they run on 100,000-body chains).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "add3",
    "add_symmetric_of",
    "add_transferred_wrench",
    "add_transferred_wrench_of",
    "add_transformed_rigid_inertia",
    "axis_angle",
    "axis_angle_into",
    "congruence_of",
    "cross3",
    "dot3",
    "force_cross",
    "from_pinocchio_matrix",
    "from_pinocchio_order",
    "inertia_about_origin",
    "log3",
    "mass_matrix",
    "mass_matrix_into",
    "mass_matrix_of",
    "matmul_into",
    "matmul_tn_into",
    "motion_cross",
    "mtv3",
    "mv3",
    "newton_euler",
    "propagate_twist",
    "propagated_twist",
    "quaternion_rotation",
    "quaternion_rotation_into",
    "rank_one_downdate",
    "rigid_inertia_into",
    "rigid_inertia_times",
    "rotated",
    "sin_cos",
    "skew",
    "spd_inverse_into",
    "store_column",
    "sub3",
    "store_motion",
    "sum_of",
    "symmetric_of",
    "to_pinocchio_order",
    "transferred_wrench",
    "twist_matrix",
]

# ---------------------------------------------------------------------------------------
# The one place where Pinocchio's [linear; angular] meets DeNOC's [angular; linear].
# ---------------------------------------------------------------------------------------


_SWAP = np.r_[3:6, 0:3]  # the half-swap is its own inverse


def _swap_halves(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.shape[-1] != 6:
        raise ValueError(f"expected a last dimension of 6, got shape {x.shape}")
    return x[..., _SWAP]


def from_pinocchio_order(x: np.ndarray) -> np.ndarray:
    """[linear; angular] (Pinocchio) → [angular; linear] (DeNOC) for 6-vectors of shape (..., 6)."""
    return _swap_halves(x)


def to_pinocchio_order(x: np.ndarray) -> np.ndarray:
    """[angular; linear] (DeNOC) → [linear; angular] (Pinocchio) for 6-vectors of shape (..., 6)."""
    return _swap_halves(x)


def from_pinocchio_matrix(X: np.ndarray) -> np.ndarray:
    """Reorder a (..., 6, 6) spatial matrix from Pinocchio's block order to DeNOC's (and back)."""
    X = np.asarray(X, dtype=float)
    if X.shape[-2:] != (6, 6):
        raise ValueError(f"expected a (..., 6, 6) matrix, got shape {X.shape}")
    return X[..., _SWAP, :][..., :, _SWAP]


@njit(cache=True, inline="always")
def store_motion(out, i, w0, w1, w2, u0, u1, u2):
    """out[i : i + 6] = the 6-vector [ω; v] (or [n; f]) in Pinocchio's order [v; ω]: the compiled kernels' side of
    this one place."""
    out[i], out[i + 1], out[i + 2] = u0, u1, u2
    out[i + 3], out[i + 4], out[i + 5] = w0, w1, w2


@njit(cache=True, inline="always")
def store_column(out, ncols, col, w0, w1, w2, u0, u1, u2):
    """Column ``col`` of a (6, ncols) matrix stored flat row by row in ``out`` = [ω; v] in Pinocchio's order."""
    out[col], out[ncols + col], out[2 * ncols + col] = u0, u1, u2
    out[3 * ncols + col], out[4 * ncols + col], out[5 * ncols + col] = w0, w1, w2


# ---------------------------------------------------------------------------------------
# Small 3-D helpers.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def skew(x):
    """x̃, the 3x3 skew-symmetric matrix with x̃ y = x × y."""
    S = np.zeros((3, 3))
    S[0, 1] = -x[2]
    S[0, 2] = x[1]
    S[1, 0] = x[2]
    S[1, 2] = -x[0]
    S[2, 0] = -x[1]
    S[2, 1] = x[0]
    return S


# The 3-vectors below are tuples: values that live in registers, where a new array would cost an allocation.


@njit(cache=True, inline="always")
def rot(R, x0, x1, x2):
    """R x for a 3 x 3 R and x given by its components, a tuple."""
    return (
        R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2,
        R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
        R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2,
    )


@njit(cache=True, inline="always")
def rot_t(R, x0, x1, x2):
    """Rᵀ x, a tuple."""
    return (
        R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2,
        R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2,
        R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2,
    )


@njit(cache=True, inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    """a × b of two vectors given by their components, a tuple."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def motion_cross(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """a ×ₘ b for motions [ω; v]: [ω_a × ω_b; ω_a × v_b + v_a × ω_b]."""
    return (
        a1 * b2 - a2 * b1,
        a2 * b0 - a0 * b2,
        a0 * b1 - a1 * b0,
        a1 * b5 - a2 * b4 + a4 * b2 - a5 * b1,
        a2 * b3 - a0 * b5 + a5 * b0 - a3 * b2,
        a0 * b4 - a1 * b3 + a3 * b1 - a4 * b0,
    )


@njit(cache=True, inline="always")
def force_cross(a0, a1, a2, a3, a4, a5, f0, f1, f2, f3, f4, f5):
    """a ×* f for a motion a = [ω; v] and a wrench f = [n; f]: [ω × n + v × f; ω × f]."""
    return (
        a1 * f2 - a2 * f1 + a4 * f5 - a5 * f4,
        a2 * f0 - a0 * f2 + a5 * f3 - a3 * f5,
        a0 * f1 - a1 * f0 + a3 * f4 - a4 * f3,
        a1 * f5 - a2 * f4,
        a2 * f3 - a0 * f5,
        a0 * f4 - a1 * f3,
    )


@njit(cache=True, inline="always")
def mv3(R, x):
    """R x for a 3 x 3 R (x: any 3 indexable), a tuple."""
    return rot(R, x[0], x[1], x[2])


@njit(cache=True, inline="always")
def mtv3(R, x):
    """Rᵀ x for a 3 x 3 R, a tuple."""
    return rot_t(R, x[0], x[1], x[2])


@njit(cache=True, inline="always")
def cross3(a, b):
    """a × b, a tuple."""
    return cross(a[0], a[1], a[2], b[0], b[1], b[2])


@njit(cache=True, inline="always")
def add3(a, b):
    """a + b, a tuple."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, inline="always")
def sub3(a, b):
    """a − b, a tuple."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, inline="always")
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def log3(R):
    """Rotation vector of R (its matrix logarithm), accurate near 0 and π; a tuple."""
    c = min(1.0, max(-1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0))
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    s = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2) / 2.0
    theta = np.arctan2(s, c)
    if theta < 1e-6:
        f = (1.0 + theta * theta / 6.0) / 2.0
        return (w0 * f, w1 * f, w2 * f)
    if np.pi - theta > 1e-6:
        f = theta / (2.0 * s)
        return (w0 * f, w1 * f, w2 * f)
    # near π the axis comes from the symmetric part B = (R + Rᵀ)/2 − c I: its largest diagonal's column
    i = 0
    for k in range(3):
        if R[k, k] > R[i, i]:
            i = k
    b0, b1, b2 = (R[0, i] + R[i, 0]) / 2.0, (R[1, i] + R[i, 1]) / 2.0, (R[2, i] + R[i, 2]) / 2.0
    if i == 0:
        b0 -= c
    elif i == 1:
        b1 -= c
    else:
        b2 -= c
    f = theta / np.sqrt(max(R[i, i] - c, 1e-300))
    if b0 * w0 + b1 * w1 + b2 * w2 < 0:
        f = -f
    return (b0 * f, b1 * f, b2 * f)


# sin_cos: θ = n π/2 + y with |y| ≤ π/4 (Cody & Waite's reduction: π/2 in four parts, three of 33 bits, so that n·P
# is exact for |n| < 2^20, and a 53-bit tail: 152 bits, which keeps y's relative error at rounding level even for
# the doubles nearest a multiple of π/2), then the Taylor series of sin y and cos y to the 17th and 16th powers,
# whose truncation errors stay below 1e-18 on |y| ≤ π/4.  Within 2 ulp of the true values (tests/test_spatial.py).
_PIO2_1 = 1.5707963267341256
_PIO2_2 = 6.077100506303966e-11
_PIO2_3 = 2.0222662487111665e-21
_PIO2_4 = 8.4784276603689e-32
_TWO_OVER_PI = 0.6366197723675814
_SIN_COS_REDUCED = 823549.6  # 2^19 π/2: beyond it (and for inf, NaN) libm's own sin and cos


@njit(cache=True, inline="always")
def sin_cos(angle):
    """(sin θ, cos θ) with one shared range reduction and no branch on the quadrant: libm's sin and cos are most of
    the kinematics of a chain of revolute joints (``docs/performance.md``)."""
    if not abs(angle) < _SIN_COS_REDUCED:
        return np.sin(angle), np.cos(angle)
    n = np.rint(angle * _TWO_OVER_PI)
    y = (((angle - n * _PIO2_1) - n * _PIO2_2) - n * _PIO2_3) - n * _PIO2_4
    z = y * y
    # Horner's rule in z = y²: sin y = y (1 − z/3! + z²/5! − … − z⁸/17!), cos y = 1 − z/2! + z²/4! − … + z⁸/16!
    s = y + y * z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 + z * (-1.0 / 39916800 + z * (
        1.0 / 6227020800 + z * (-1.0 / 1307674368000 + z / 355687428096000)))))))  # fmt: skip
    c = 1.0 - 0.5 * z + z * z * (1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 + z * (-1.0 / 3628800 + z * (
        1.0 / 479001600 + z * (-1.0 / 87178291200 + z / 20922789888000))))))  # fmt: skip
    k = int(n)
    odd = k & 1  # quadrants 1 and 3 swap sine and cosine; 2 and 3 negate the sine, 1 and 2 the cosine
    a = c if odd else s
    b = s if odd else c
    return a * float(1 - (k & 2)), b * float(1 - ((k + 1) & 2))


@njit(cache=True)
def axis_angle(e, angle):
    """Rotation matrix by ``angle`` about the unit vector ``e`` (Rodrigues)."""
    R = np.empty((3, 3))
    axis_angle_into(e, angle, R)
    return R


@njit(cache=True, inline="always")
def axis_angle_into(e, angle, R):
    """R = rotation by ``angle`` about the unit vector ``e``, written in place."""
    s, c = sin_cos(angle)
    C = 1.0 - c
    x, y, z = e[0], e[1], e[2]
    R[0, 0] = c + x * x * C
    R[0, 1] = x * y * C - z * s
    R[0, 2] = x * z * C + y * s
    R[1, 0] = y * x * C + z * s
    R[1, 1] = c + y * y * C
    R[1, 2] = y * z * C - x * s
    R[2, 0] = z * x * C - y * s
    R[2, 1] = z * y * C + x * s
    R[2, 2] = c + z * z * C


@njit(cache=True)
def quaternion_rotation(x, y, z, w):
    """Rotation matrix of the quaternion (x, y, z, w) after normalising it (Pinocchio's order)."""
    R = np.empty((3, 3))
    quaternion_rotation_into(x, y, z, w, R)
    return R


@njit(cache=True, inline="always")
def quaternion_rotation_into(x, y, z, w, R):
    """R = rotation of the quaternion (x, y, z, w) after normalising it, written in place."""
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - z * w)
    R[0, 2] = 2.0 * (x * z + y * w)
    R[1, 0] = 2.0 * (x * y + z * w)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - x * w)
    R[2, 0] = 2.0 * (x * z - y * w)
    R[2, 1] = 2.0 * (y * z + x * w)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True, inline="always")
def matmul_into(A, B, out):
    """out = A B for the small dense blocks of the recursions (no BLAS needed, any layout)."""
    n, m, l = A.shape[0], A.shape[1], B.shape[1]
    for i in range(n):
        for j in range(l):
            s = 0.0
            for p in range(m):
                s += A[i, p] * B[p, j]
            out[i, j] = s


@njit(cache=True, inline="always")
def matmul_tn_into(A, B, out):
    """out = Aᵀ B."""
    n, m, l = A.shape[1], A.shape[0], B.shape[1]
    for i in range(n):
        for j in range(l):
            s = 0.0
            for p in range(m):
                s += A[p, i] * B[p, j]
            out[i, j] = s


# ---------------------------------------------------------------------------------------
# Twist propagation A_{k,β} (eq. 7b) and its transpose on wrenches.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def twist_matrix(E, r):
    """The 6x6 twist-propagation matrix A_{k,β} = [[E, O], [-E r̃, E]] (eq. 7b in frame k)."""
    A = np.zeros((6, 6))
    Er = np.zeros((3, 3))
    matmul_into(E, skew(r), Er)
    for i in range(3):
        for j in range(3):
            A[i, j] = E[i, j]
            A[3 + i, 3 + j] = E[i, j]
            A[3 + i, j] = -Er[i, j]
    return A


@njit(cache=True, inline="always")
def propagated_twist(E, r, w0, w1, w2, u0, u1, u2):
    """A_{k,β} [ω; ȯ] as six numbers: ω_k = E ω_β, ȯ_k = E (ȯ_β + ω_β × r) (the one place this operator is written).

    Numbers in and out, so that a recursion keeps its twist in registers between bodies."""
    c0 = w1 * r[2] - w2 * r[1] + u0
    c1 = w2 * r[0] - w0 * r[2] + u1
    c2 = w0 * r[1] - w1 * r[0] + u2
    return (
        E[0, 0] * w0 + E[0, 1] * w1 + E[0, 2] * w2,
        E[1, 0] * w0 + E[1, 1] * w1 + E[1, 2] * w2,
        E[2, 0] * w0 + E[2, 1] * w1 + E[2, 2] * w2,
        E[0, 0] * c0 + E[0, 1] * c1 + E[0, 2] * c2,
        E[1, 0] * c0 + E[1, 1] * c1 + E[1, 2] * c2,
        E[2, 0] * c0 + E[2, 1] * c1 + E[2, 2] * c2,
    )


@njit(cache=True, inline="always")
def propagate_twist(E, r, t_b, out):
    """out = A_{k,β} t_β."""
    out[0], out[1], out[2], out[3], out[4], out[5] = propagated_twist(
        E, r, t_b[0], t_b[1], t_b[2], t_b[3], t_b[4], t_b[5]
    )


@njit(cache=True, inline="always")
def transferred_wrench(E, r, n0, n1, n2, g0, g1, g2):
    """A_{k,β}ᵀ [n; f] as six numbers: f_β = Eᵀ f, n_β = Eᵀ n + r × f_β (the one place this operator is written)."""
    f0 = E[0, 0] * g0 + E[1, 0] * g1 + E[2, 0] * g2
    f1 = E[0, 1] * g0 + E[1, 1] * g1 + E[2, 1] * g2
    f2 = E[0, 2] * g0 + E[1, 2] * g1 + E[2, 2] * g2
    m0 = E[0, 0] * n0 + E[1, 0] * n1 + E[2, 0] * n2 + (r[1] * f2 - r[2] * f1)
    m1 = E[0, 1] * n0 + E[1, 1] * n1 + E[2, 1] * n2 + (r[2] * f0 - r[0] * f2)
    m2 = E[0, 2] * n0 + E[1, 2] * n1 + E[2, 2] * n2 + (r[0] * f1 - r[1] * f0)
    return m0, m1, m2, f0, f1, f2


@njit(cache=True, inline="always")
def add_transferred_wrench(E, r, w_k, out_b):
    """out_b += A_{k,β}ᵀ w_k."""
    add_transferred_wrench_of(E, r, w_k[0], w_k[1], w_k[2], w_k[3], w_k[4], w_k[5], out_b)


@njit(cache=True, inline="always")
def add_transferred_wrench_of(E, r, n0, n1, n2, g0, g1, g2, out_b):
    """out_b += A_{k,β}ᵀ [n; f] for a wrench given as six numbers."""
    m0, m1, m2, f0, f1, f2 = transferred_wrench(E, r, n0, n1, n2, g0, g1, g2)
    out_b[0] += m0
    out_b[1] += m1
    out_b[2] += m2
    out_b[3] += f0
    out_b[4] += f1
    out_b[5] += f2


@njit(cache=True, inline="always")
def rotated(E, x00, x01, x02, x10, x11, x12, x20, x21, x22):
    """Eᵀ X E for a 3 x 3 block X given as nine numbers (row by row); nine numbers back.

    Numbers, not arrays: the congruence below keeps every block in registers, where blocks in
    a scratch array were reloaded after each store to the (possibly aliasing) output."""
    t00 = x00 * E[0, 0] + x01 * E[1, 0] + x02 * E[2, 0]  # T = X E
    t01 = x00 * E[0, 1] + x01 * E[1, 1] + x02 * E[2, 1]
    t02 = x00 * E[0, 2] + x01 * E[1, 2] + x02 * E[2, 2]
    t10 = x10 * E[0, 0] + x11 * E[1, 0] + x12 * E[2, 0]
    t11 = x10 * E[0, 1] + x11 * E[1, 1] + x12 * E[2, 1]
    t12 = x10 * E[0, 2] + x11 * E[1, 2] + x12 * E[2, 2]
    t20 = x20 * E[0, 0] + x21 * E[1, 0] + x22 * E[2, 0]
    t21 = x20 * E[0, 1] + x21 * E[1, 1] + x22 * E[2, 1]
    t22 = x20 * E[0, 2] + x21 * E[1, 2] + x22 * E[2, 2]
    return (  # Eᵀ T
        E[0, 0] * t00 + E[1, 0] * t10 + E[2, 0] * t20,
        E[0, 0] * t01 + E[1, 0] * t11 + E[2, 0] * t21,
        E[0, 0] * t02 + E[1, 0] * t12 + E[2, 0] * t22,
        E[0, 1] * t00 + E[1, 1] * t10 + E[2, 1] * t20,
        E[0, 1] * t01 + E[1, 1] * t11 + E[2, 1] * t21,
        E[0, 1] * t02 + E[1, 1] * t12 + E[2, 1] * t22,
        E[0, 2] * t00 + E[1, 2] * t10 + E[2, 2] * t20,
        E[0, 2] * t01 + E[1, 2] * t11 + E[2, 2] * t21,
        E[0, 2] * t02 + E[1, 2] * t12 + E[2, 2] * t22,
    )


@njit(cache=True, inline="always")
def congruence_of(E, r, X):
    """A_{k,β}ᵀ X A_{k,β} for the symmetric X = [[A, B], [Bᵀ, C]] given as a tuple of its 21 numbers
    (A's and C's upper triangles, B row by row), returned as 21 numbers in the same order: a recursion
    can keep an articulated inertia in registers from one body to its parent.

    A_{k,β} = T·diag(E, E) with T = [[1, O], [-r̃, 1]], so the result is, with A' = EᵀAE,
    B' = EᵀBE, C' = EᵀCE:
        W11 = A' - G - Gᵀ - r̃C'r̃,   W12 = B' + r̃C',   W22 = C',   G = B'r̃
    """
    A00, A01, A02, A11, A12, A22 = X[0], X[1], X[2], X[3], X[4], X[5]
    B00, B01, B02, B10, B11, B12, B20, B21, B22 = X[6], X[7], X[8], X[9], X[10], X[11], X[12], X[13], X[14]
    C00, C01, C02, C11, C12, C22 = X[15], X[16], X[17], X[18], X[19], X[20]
    a00, a01, a02, _, a11, a12, _, _, a22 = rotated(E, A00, A01, A02, A01, A11, A12, A02, A12, A22)
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = rotated(E, B00, B01, B02, B10, B11, B12, B20, B21, B22)
    c00, c01, c02, _, c11, c12, _, _, c22 = rotated(E, C00, C01, C02, C01, C11, C12, C02, C12, C22)
    r0, r1, r2 = r[0], r[1], r[2]
    # G = B' r̃ (column j of r̃ is r × e_j)
    g00, g01, g02 = b01 * r2 - b02 * r1, b02 * r0 - b00 * r2, b00 * r1 - b01 * r0
    g10, g11, g12 = b11 * r2 - b12 * r1, b12 * r0 - b10 * r2, b10 * r1 - b11 * r0
    g20, g21, g22 = b21 * r2 - b22 * r1, b22 * r0 - b20 * r2, b20 * r1 - b21 * r0
    # H = r̃ C' (C' symmetric)
    h00, h01, h02 = r1 * c02 - r2 * c01, r1 * c12 - r2 * c11, r1 * c22 - r2 * c12
    h10, h11, h12 = r2 * c00 - r0 * c02, r2 * c01 - r0 * c12, r2 * c02 - r0 * c22
    h20, h21, h22 = r0 * c01 - r1 * c00, r0 * c11 - r1 * c01, r0 * c12 - r1 * c02
    # K = H r̃ = r̃ C' r̃ (symmetric: the upper triangle)
    k00, k01, k02 = h01 * r2 - h02 * r1, h02 * r0 - h00 * r2, h00 * r1 - h01 * r0
    k11, k12 = h12 * r0 - h10 * r2, h10 * r1 - h11 * r0
    k22 = h20 * r1 - h21 * r0
    return (
        a00 - 2.0 * g00 - k00, a01 - g01 - g10 - k01, a02 - g02 - g20 - k02,  # W11
        a11 - 2.0 * g11 - k11, a12 - g12 - g21 - k12, a22 - 2.0 * g22 - k22,
        b00 + h00, b01 + h01, b02 + h02, b10 + h10, b11 + h11, b12 + h12, b20 + h20, b21 + h21, b22 + h22,  # W12
        c00, c01, c02, c11, c12, c22,  # W22
    )  # fmt: skip


@njit(cache=True, inline="always")
def rank_one_downdate(W, a, f):
    """W − f a aᵀ for the symmetric W given as its 21 numbers (the order of ``congruence_of``) and a 6-vector a."""
    a0, a1, a2, a3, a4, a5 = a
    b0, b1, b2, b3, b4, b5 = a0 * f, a1 * f, a2 * f, a3 * f, a4 * f, a5 * f
    return (
        W[0] - a0 * b0, W[1] - a0 * b1, W[2] - a0 * b2, W[3] - a1 * b1, W[4] - a1 * b2, W[5] - a2 * b2,
        W[6] - a0 * b3, W[7] - a0 * b4, W[8] - a0 * b5,
        W[9] - a1 * b3, W[10] - a1 * b4, W[11] - a1 * b5,
        W[12] - a2 * b3, W[13] - a2 * b4, W[14] - a2 * b5,
        W[15] - a3 * b3, W[16] - a3 * b4, W[17] - a3 * b5, W[18] - a4 * b4, W[19] - a4 * b5, W[20] - a5 * b5,
    )  # fmt: skip


@njit(cache=True, inline="always")
def add_symmetric_of(W, out):
    """out += the symmetric 6 x 6 matrix given as its 21 numbers W (the order of ``congruence_of``)."""
    w00, w01, w02, w11, w12, w22 = W[0], W[1], W[2], W[3], W[4], W[5]
    v00, v01, v02, v10, v11, v12, v20, v21, v22 = W[6], W[7], W[8], W[9], W[10], W[11], W[12], W[13], W[14]
    c00, c01, c02, c11, c12, c22 = W[15], W[16], W[17], W[18], W[19], W[20]
    out[0, 0] += w00
    out[0, 1] += w01
    out[0, 2] += w02
    out[1, 0] += w01
    out[1, 1] += w11
    out[1, 2] += w12
    out[2, 0] += w02
    out[2, 1] += w12
    out[2, 2] += w22
    out[0, 3] += v00
    out[0, 4] += v01
    out[0, 5] += v02
    out[1, 3] += v10
    out[1, 4] += v11
    out[1, 5] += v12
    out[2, 3] += v20
    out[2, 4] += v21
    out[2, 5] += v22
    out[3, 0] += v00
    out[4, 0] += v01
    out[5, 0] += v02
    out[3, 1] += v10
    out[4, 1] += v11
    out[5, 1] += v12
    out[3, 2] += v20
    out[4, 2] += v21
    out[5, 2] += v22
    out[3, 3] += c00
    out[3, 4] += c01
    out[3, 5] += c02
    out[4, 3] += c01
    out[4, 4] += c11
    out[4, 5] += c12
    out[5, 3] += c02
    out[5, 4] += c12
    out[5, 5] += c22


@njit(cache=True, inline="always")
def symmetric_of(X):
    """The 21 numbers (the order of ``congruence_of``) of a symmetric 6 x 6 array X."""
    return (
        X[0, 0], X[0, 1], X[0, 2], X[1, 1], X[1, 2], X[2, 2],
        X[0, 3], X[0, 4], X[0, 5], X[1, 3], X[1, 4], X[1, 5], X[2, 3], X[2, 4], X[2, 5],
        X[3, 3], X[3, 4], X[3, 5], X[4, 4], X[4, 5], X[5, 5],
    )  # fmt: skip


@njit(cache=True, inline="always")
def symmetric_times(X, s0, s1, s2, s3, s4, s5):
    """X s for a symmetric 6 x 6 X given as its 21 numbers (the order of ``congruence_of``): six numbers."""
    A00, A01, A02, A11, A12, A22 = X[0], X[1], X[2], X[3], X[4], X[5]
    B00, B01, B02, B10, B11, B12, B20, B21, B22 = X[6], X[7], X[8], X[9], X[10], X[11], X[12], X[13], X[14]
    C00, C01, C02, C11, C12, C22 = X[15], X[16], X[17], X[18], X[19], X[20]
    return (
        A00 * s0 + A01 * s1 + A02 * s2 + B00 * s3 + B01 * s4 + B02 * s5,
        A01 * s0 + A11 * s1 + A12 * s2 + B10 * s3 + B11 * s4 + B12 * s5,
        A02 * s0 + A12 * s1 + A22 * s2 + B20 * s3 + B21 * s4 + B22 * s5,
        B00 * s0 + B10 * s1 + B20 * s2 + C00 * s3 + C01 * s4 + C02 * s5,
        B01 * s0 + B11 * s1 + B21 * s2 + C01 * s3 + C11 * s4 + C12 * s5,
        B02 * s0 + B12 * s1 + B22 * s2 + C02 * s3 + C12 * s4 + C22 * s5,
    )


@njit(cache=True, inline="always")
def sum_of(X, W):
    """X + W for two symmetric 6 x 6 matrices given as their 21 numbers."""
    return (
        X[0] + W[0], X[1] + W[1], X[2] + W[2], X[3] + W[3], X[4] + W[4], X[5] + W[5], X[6] + W[6],
        X[7] + W[7], X[8] + W[8], X[9] + W[9], X[10] + W[10], X[11] + W[11], X[12] + W[12], X[13] + W[13],
        X[14] + W[14], X[15] + W[15], X[16] + W[16], X[17] + W[17], X[18] + W[18], X[19] + W[19], X[20] + W[20],
    )  # fmt: skip


@njit(cache=True, inline="always")
def mass_matrix_of(m, d, Io):
    """M_k (eq. 2b) as the 21 numbers of ``congruence_of``: I_o's upper triangle, m d̃ row by row, m 1."""
    md0, md1, md2 = m * d[0], m * d[1], m * d[2]
    return (
        Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2],
        0.0, -md2, md1, md2, 0.0, -md0, -md1, md0, 0.0,
        m, 0.0, 0.0, m, 0.0, m,
    )  # fmt: skip


@njit(cache=True, inline="always")
def rigid_inertia_into(m, d, Io, C):
    """C[0:10] = (m, m d, I_o upper triangle xx xy xz yy yz zz): the 10 numbers of a rigid body's M_k (eq. 2b)."""
    C[0] = m
    C[1], C[2], C[3] = m * d[0], m * d[1], m * d[2]
    C[4], C[5], C[6], C[7], C[8], C[9] = Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2]


@njit(cache=True, inline="always")
def rigid_inertia_times(m, h0, h1, h2, J00, J01, J02, J11, J12, J22, a0, a1, a2, l0, l1, l2):
    """M p = [J a + h × l; m l + a × h] as six numbers, for the rigid inertia M of ``rigid_inertia_into``
    (m, h = m d, J about o, upper triangle) and p = [a; l]."""
    return (
        J00 * a0 + J01 * a1 + J02 * a2 + h1 * l2 - h2 * l1,
        J01 * a0 + J11 * a1 + J12 * a2 + h2 * l0 - h0 * l2,
        J02 * a0 + J12 * a1 + J22 * a2 + h0 * l1 - h1 * l0,
        m * l0 + a1 * h2 - a2 * h1,
        m * l1 + a2 * h0 - a0 * h2,
        m * l2 + a0 * h1 - a1 * h0,
    )


@njit(cache=True, inline="always")
def add_transformed_rigid_inertia(E, r, C, Cb):
    """Cb += C moved to the parent: the composite of rigid bodies is rigid, so A_{k,β}ᵀ M̃_k A_{k,β} (eq. 17)
    is (m, h, J) → (m, Eᵀh + m r, EᵀJE + m(|r|²1 − r rᵀ) + 2(r·h')1 − r h'ᵀ − h' rᵀ), h' = Eᵀh, J about o.

    About 90 flops where the 6 x 6 congruence takes 200.
    """
    m = C[0]
    h0, h1, h2 = C[1], C[2], C[3]
    g0 = E[0, 0] * h0 + E[1, 0] * h1 + E[2, 0] * h2  # h' = Eᵀ h
    g1 = E[0, 1] * h0 + E[1, 1] * h1 + E[2, 1] * h2
    g2 = E[0, 2] * h0 + E[1, 2] * h1 + E[2, 2] * h2
    J00, J01, J02, J11, J12, J22 = C[4], C[5], C[6], C[7], C[8], C[9]
    j00, j01, j02, _, j11, j12, _, _, j22 = rotated(E, J00, J01, J02, J01, J11, J12, J02, J12, J22)
    r0, r1, r2 = r[0], r[1], r[2]
    diag = m * (r0 * r0 + r1 * r1 + r2 * r2) + 2.0 * (r0 * g0 + r1 * g1 + r2 * g2)
    Cb[0] += m
    Cb[1] += g0 + m * r0
    Cb[2] += g1 + m * r1
    Cb[3] += g2 + m * r2
    Cb[4] += j00 - m * r0 * r0 - 2.0 * r0 * g0 + diag
    Cb[5] += j01 - m * r0 * r1 - r0 * g1 - g0 * r1
    Cb[6] += j02 - m * r0 * r2 - r0 * g2 - g0 * r2
    Cb[7] += j11 - m * r1 * r1 - 2.0 * r1 * g1 + diag
    Cb[8] += j12 - m * r1 * r2 - r1 * g2 - g1 * r2
    Cb[9] += j22 - m * r2 * r2 - 2.0 * r2 * g2 + diag


# ---------------------------------------------------------------------------------------
# Mass matrix (eq. 2b) and the Newton-Euler wrench w_k = M_k ṫ_k + Ω_k M_k E_k t_k.
# ---------------------------------------------------------------------------------------


def mass_matrix(m, d, I_o) -> np.ndarray:
    """M_k = [[I_k, m d̃], [-m d̃, m 1]] with I_k about the body origin and d the centre of mass.

    Also for stacks: m (...,), d (..., 3), I_o (..., 3, 3) → (..., 6, 6).
    """
    m = np.asarray(m, dtype=float)
    d = np.asarray(d, dtype=float)
    M = np.zeros(m.shape + (6, 6))
    md = m[..., None] * d
    D = np.zeros(m.shape + (3, 3))
    D[..., 0, 1], D[..., 0, 2], D[..., 1, 2] = -md[..., 2], md[..., 1], -md[..., 0]
    D[..., 1, 0], D[..., 2, 0], D[..., 2, 1] = md[..., 2], -md[..., 1], md[..., 0]
    M[..., :3, :3] = I_o
    M[..., :3, 3:] = D
    M[..., 3:, :3] = -D
    M[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return M


def inertia_about_origin(m, com, I_c, out=None) -> np.ndarray:
    """Parallel-axis theorem: I_o = I_c + m (|c|² 1 − c cᵀ); also for stacks (..., 3, 3).

    Entry by entry, into ``out`` if given: for a model of 100,000 bodies, stacked (n, 3, 3)
    temporaries were the build's peak memory."""
    m = np.asarray(m, dtype=float)
    com = np.asarray(com, dtype=float)
    I_c = np.asarray(I_c, dtype=float)
    if out is None:
        out = np.empty(np.broadcast_shapes(I_c.shape, m.shape + (3, 3)))
    cc = np.einsum("...i,...i->...", com, com)
    for i in range(3):
        for j in range(3):
            out[..., i, j] = I_c[..., i, j] + m * ((cc if i == j else 0.0) - com[..., i] * com[..., j])
    return out


@njit(cache=True, inline="always")
def newton_euler(m, d, Io, w0, w1, w2, a0, a1, a2, l0, l1, l2):
    """M_k ṫ_k + Ω_k M_k E_k t_k (eq. 1/2b) as six numbers, for t_k = [ω; ȯ], ṫ_k = [ω̇; ö] = [a; l]:
    n = I_o ω̇ + m d × ö + ω × I_o ω,  f = m (ö + ω̇ × d + ω × (ω × d)).  M_k is never formed.

    m: mass, d: (3,) centre of mass, Io: (3, 3) rotational inertia about the body origin.
    Reading 13 numbers instead of M_k's 36 is what keeps the 100,000-DOF chains memory-bound less.
    """
    d0, d1, d2 = d[0], d[1], d[2]
    # I_o ω (the angular momentum part of M_k E_k t_k)
    h0 = Io[0, 0] * w0 + Io[0, 1] * w1 + Io[0, 2] * w2
    h1 = Io[1, 0] * w0 + Io[1, 1] * w1 + Io[1, 2] * w2
    h2 = Io[2, 0] * w0 + Io[2, 1] * w1 + Io[2, 2] * w2
    x0 = w1 * d2 - w2 * d1  # ω × d
    x1 = w2 * d0 - w0 * d2
    x2 = w0 * d1 - w1 * d0
    return (
        Io[0, 0] * a0 + Io[0, 1] * a1 + Io[0, 2] * a2 + m * (d1 * l2 - d2 * l1) + w1 * h2 - w2 * h1,
        Io[1, 0] * a0 + Io[1, 1] * a1 + Io[1, 2] * a2 + m * (d2 * l0 - d0 * l2) + w2 * h0 - w0 * h2,
        Io[2, 0] * a0 + Io[2, 1] * a1 + Io[2, 2] * a2 + m * (d0 * l1 - d1 * l0) + w0 * h1 - w1 * h0,
        m * (l0 + a1 * d2 - a2 * d1 + w1 * x2 - w2 * x1),
        m * (l1 + a2 * d0 - a0 * d2 + w2 * x0 - w0 * x2),
        m * (l2 + a0 * d1 - a1 * d0 + w0 * x1 - w1 * x0),
    )


@njit(cache=True, inline="always")
def mass_matrix_into(m, d, Io, out):
    """out = M_k = [[I_o, m d̃], [−m d̃, m 1]] (eq. 2b), the compiled twin of ``mass_matrix``
    (``mass_matrix_of`` written out)."""
    out[:, :] = 0.0
    add_symmetric_of(mass_matrix_of(m, d, Io), out)


# ---------------------------------------------------------------------------------------
# Inverse of the small symmetric positive-definite blocks Î_k (z_k x z_k, z_k ≤ 6).
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def spd_inverse_into(A, n, out):
    """out[:n, :n] = A[:n, :n]⁻¹ by Cholesky, A = L Lᵀ, A⁻¹ = L⁻ᵀ L⁻¹, all in out (no work arrays: it runs for
    every multi-DOF joint in every call); returns False when A is not positive definite."""
    if n == 1:
        if not (A[0, 0] > 0.0):
            return False
        out[0, 0] = 1.0 / A[0, 0]
        return True
    for j in range(n):  # L into out's lower triangle
        s = A[j, j]
        for p in range(j):
            s -= out[j, p] * out[j, p]
        if not (s > 0.0):
            return False
        out[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for p in range(j):
                s -= out[i, p] * out[j, p]
            out[i, j] = s / out[j, j]
    # L⁻¹ over L, column by column from the left: column j reads L only in columns > j and in its own
    # rows below the one it writes
    for j in range(n):
        out[j, j] = 1.0 / out[j, j]
        for i in range(j + 1, n):
            s = out[i, j] * out[j, j]
            for p in range(j + 1, i):
                s += out[i, p] * out[p, j]
            out[i, j] = -s / out[i, i]
    # A⁻¹ = L⁻ᵀ L⁻¹: the strict upper triangle first (it reads the diagonal), then the diagonal, then the mirror
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for p in range(j, n):
                s += out[p, i] * out[p, j]
            out[i, j] = s
    for i in range(n):
        s = 0.0
        for p in range(i, n):
            s += out[p, i] * out[p, i]
        out[i, i] = s
    for i in range(n):
        for j in range(i + 1, n):
            out[j, i] = out[i, j]
    return True
