"""Joint kinds: the one module that knows what each kind means (spatial_v2's ``jcalc``).

A joint kind is data: an integer code per body.  Everything that depends on it is here and
nowhere else — the names it is spelled by (URDF, :class:`ModelBuilder`, Pinocchio), nq and nv,
which axes it has, the joint transform that gives (E_k, r_k) of A_{k,β} (eq. 7b), the
joint-motion propagation p_k and its rate ṗ_k, and the configuration space (neutral, integrate,
difference, dexp⁻¹, normalize, random sampling).  The recursions read p_k, E_k and r_k and never
switch on a kind.

For joint k with placement (R_p, p_p) in its parent body and joint motion (R_j, p_j) the body
frame sits at R = R_p R_j, r = p_p + R_p p_j in the parent frame, and E_k = Rᵀ.  p_k holds,
column by column, the body-frame twist [ω; ȯ] produced by a unit rate of each joint velocity,
in Pinocchio's order of v.  Quaternions are stored (x, y, z, w) and kept unit; continuous
joints store (cos θ, sin θ); ``integrate(q, v, dt)`` is Pinocchio's ``integrate(q, v·dt)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .spatial import axis_angle_into, matmul_into, quaternion_rotation, quaternion_rotation_into, sin_cos, skew

__all__ = [
    "BASE",
    "GROUPS",
    "GROUP_OF",
    "LieGroup",
    "ONE_DOF",
    "ROOT_JOINTS",
    "SE2",
    "SE3",
    "SO2",
    "SO3",
    "VECTOR",
    "spellings",
    "CONTINUOUS",
    "FREE_FLYER",
    "HELICAL",
    "JOINTS",
    "JointKind",
    "PLANAR",
    "PRISMATIC",
    "REVOLUTE",
    "SPHERICAL",
    "UNIVERSAL",
    "kind_of",
]

BASE, REVOLUTE, CONTINUOUS, PRISMATIC, FREE_FLYER, PLANAR, SPHERICAL, UNIVERSAL, HELICAL = range(9)

# The configuration spaces of the joints (Pinocchio's Lie-group map): ℝⁿ, SO(2) as (cos θ, sin θ), SO(3) as a unit
# quaternion (x, y, z, w), SE(2) as (x, y, cos θ, sin θ) and SE(3) as (x, y, z, quaternion).
VECTOR, SO2, SO3, SE2, SE3 = range(5)


@dataclass(frozen=True)
class LieGroup:
    """A joint's configuration space: how q is integrated, differenced, made neutral, normalized and drawn.

    name; nq, nv: its sizes (None for ℝⁿ: the joint's); coordinates: how many of q's first entries are plain
    coordinates (positions, angles), which position limits bound; unit: the (start, stop) of q's entries kept of
    unit norm (a quaternion, a (cos, sin) pair), or None; one: the entry that is 1 at the neutral configuration;
    rotation: the slice of v that is an angular velocity on a non-commutative group (the entries an adaptive
    integrator's re-charting watches), or None."""

    name: str
    nq: int | None
    nv: int | None
    coordinates: int | None
    unit: tuple[int, int] | None = None
    one: int | None = None
    rotation: tuple[int, int] | None = None

    @property
    def commutative(self) -> bool:
        return self.rotation is None


GROUPS: dict[int, LieGroup] = {
    VECTOR: LieGroup("R^n", None, None, None),
    SO2: LieGroup("SO(2)", 2, 1, 0, unit=(0, 2), one=0),
    SO3: LieGroup("SO(3)", 4, 3, 0, unit=(0, 4), one=3, rotation=(0, 3)),
    SE2: LieGroup("SE(2)", 4, 3, 2, unit=(2, 4), one=2, rotation=(2, 3)),
    SE3: LieGroup("SE(3)", 7, 6, 3, unit=(3, 7), one=6, rotation=(3, 6)),
}


@dataclass(frozen=True)
class JointKind:
    """What a joint kind is, and how each source spells it.

    name: the builder's spelling (``ModelBuilder.add_body(joint=…)``); nq, nv: its sizes in q and v; group: its
    configuration space (``GROUPS``); axes: how many axis vectors it takes (0, 1 or 2); pitch: whether it takes a
    pitch [m/rad]; lengths: its ℝⁿ coordinates are lengths, not angles; root: only a model's root joint
    (``root_joint=…``); urdf, sdf, mjcf: its ``type`` in those formats; pinocchio: the ``shortname()``s of the
    Pinocchio joints it reads; q_layout: q's entries, for error messages.
    """

    code: int
    name: str
    nq: int
    nv: int
    group: int
    axes: int = 0
    pitch: bool = False
    lengths: bool = False
    root: bool = False
    urdf: tuple[str, ...] = ()
    sdf: tuple[str, ...] = ()
    mjcf: tuple[str, ...] = ()
    pinocchio: tuple[str, ...] = ()
    q_layout: str = ""

    @property
    def rotation(self) -> tuple[int, int] | None:
        """The slice of v that is an angular velocity on a non-commutative group, or None."""
        return GROUPS[self.group].rotation

    @property
    def coordinates(self) -> int:
        """How many of q's first entries are plain coordinates, which position limits bound."""
        c = GROUPS[self.group].coordinates
        return self.nq if c is None else c


JOINTS: dict[int, JointKind] = {
    k.code: k
    for k in (
        JointKind(BASE, "base", 0, 0, VECTOR),
        JointKind(REVOLUTE, "revolute", 1, 1, VECTOR, 1, urdf=("revolute",), sdf=("revolute",), mjcf=("hinge",),
                  pinocchio=("JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned"),
                  q_layout="[θ]"),
        JointKind(CONTINUOUS, "continuous", 2, 1, SO2, 1, urdf=("continuous",), sdf=("continuous",),
                  pinocchio=("JointModelRUBX", "JointModelRUBY", "JointModelRUBZ",
                             "JointModelRevoluteUnboundedUnaligned"), q_layout="[cos θ, sin θ]"),
        JointKind(PRISMATIC, "prismatic", 1, 1, VECTOR, 1, lengths=True, urdf=("prismatic",), sdf=("prismatic",),
                  mjcf=("slide",), pinocchio=("JointModelPX", "JointModelPY", "JointModelPZ",
                                              "JointModelPrismaticUnaligned"), q_layout="[d]"),
        # v = (linear, angular) twist of the body in its own frame
        JointKind(FREE_FLYER, "free-flyer", 7, 6, SE3, root=True, urdf=("free-flyer",), mjcf=("free",),
                  pinocchio=("JointModelFreeFlyer",), q_layout="[x, y, z, qx, qy, qz, qw]"),
        # v = (vx, vy, ω) in the body frame, motion in the joint's x-y plane
        JointKind(PLANAR, "planar", 4, 3, SE2, root=True, urdf=("planar",), pinocchio=("JointModelPlanar",),
                  q_layout="[x, y, cos θ, sin θ]"),
        # v = angular velocity in the body frame
        JointKind(SPHERICAL, "spherical", 4, 3, SO3, sdf=("ball",), mjcf=("ball",),
                  pinocchio=("JointModelSpherical",), q_layout="[qx, qy, qz, qw]"),
        # R = R(e1, q1) R(e2, q2), e1 = axes[k], e2 = axes2[k]
        JointKind(UNIVERSAL, "universal", 2, 2, VECTOR, 2, sdf=("universal",), pinocchio=("JointModelUniversal",),
                  q_layout="[q1, q2]"),
        # rotation θ about e with translation pitch·θ along e (Pinocchio's helical joint)
        JointKind(HELICAL, "helical", 1, 1, VECTOR, 1, pitch=True,
                  pinocchio=("JointModelHX", "JointModelHY", "JointModelHZ", "JointModelHelicalUnaligned"),
                  q_layout="[θ]"),
    )
}  # fmt: skip
GROUP_OF = np.array([JOINTS[c].group for c in range(len(JOINTS))], dtype=np.int64)
"""The configuration space of each joint kind, indexed by its code: what the compiled configuration kernels read."""
UNIT_LO = np.array([(GROUPS[JOINTS[c].group].unit or (0, 0))[0] for c in range(len(JOINTS))], dtype=np.int64)
UNIT_HI = np.array([(GROUPS[JOINTS[c].group].unit or (0, 0))[1] for c in range(len(JOINTS))], dtype=np.int64)
"""The q entries [UNIT_LO, UNIT_HI) of each joint kind kept of unit norm (a quaternion, a (cos, sin) pair), indexed by
its code; empty where none: what ``normalize_fast`` reads."""
ONE_DOF = tuple(c for c, k in JOINTS.items() if k.nv == 1)
"""The kinds with one position θ: what a joint coupling (gearbox, mimic) may join."""
ROOT_JOINTS = {None: None, **{k.name: c for c, k in JOINTS.items() if k.root}}
"""The ``root_joint=`` spellings of every loader: None (a fixed base), "free-flyer", "planar"."""


def spellings(source: str, roots: bool = False) -> dict[str, int]:
    """{a joint type of ``source`` ("urdf", "sdf", "mjcf", "pinocchio"): its kind}, for the joints inside a tree
    (with ``roots``: the root-only kinds too, as MJCF's ``free`` joint)."""
    return {t: c for c, k in JOINTS.items() if roots or not k.root for t in getattr(k, source)}


NQ = np.array([JOINTS[c].nq for c in range(len(JOINTS))], dtype=np.int64)
NV = np.array([JOINTS[c].nv for c in range(len(JOINTS))], dtype=np.int64)
WITH_AXIS = tuple(c for c, k in JOINTS.items() if k.axes >= 1)
BUILDER_NAMES = tuple(k.name for c, k in JOINTS.items() if c != BASE)
PINOCCHIO_KINDS = {short: c for c, k in JOINTS.items() for short in k.pinocchio}


def kind_of(name: str, what: str) -> int:
    """The code of the joint kind spelled ``name`` by the builder; a ValueError listing the valid names."""
    for code, k in JOINTS.items():
        if code != BASE and k.name == name:
            return code
    raise ValueError(f"{what}: unknown joint {name!r}; valid joints are: {', '.join(BUILDER_NAMES)}, fixed")


def nq_nv(kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nq_k, nv_k) of every joint of a kinds array."""
    return NQ[kinds], NV[kinds]


# ---------------------------------------------------------------------------------------
# Joint transforms and p_k, compiled: (E_k, r_k) of A_{k,β} and the motion subspace (eq. 7b).
# ---------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def placement_axis_angle_T(P, unrotated, e, angle, Ek):
    """E_k = (R_p R(e, θ))ᵀ, formed directly: the revolute joints' whole rotation in 27 products, or none when
    ``unrotated`` (R_p = 1)."""
    s, c = sin_cos(angle)
    C = 1.0 - c
    x, y, z = e[0], e[1], e[2]
    r00, r01, r02 = c + x * x * C, x * y * C - z * s, x * z * C + y * s
    r10, r11, r12 = y * x * C + z * s, c + y * y * C, y * z * C - x * s
    r20, r21, r22 = z * x * C - y * s, z * y * C + x * s, c + z * z * C
    if unrotated:
        Ek[0, 0], Ek[0, 1], Ek[0, 2] = r00, r10, r20
        Ek[1, 0], Ek[1, 1], Ek[1, 2] = r01, r11, r21
        Ek[2, 0], Ek[2, 1], Ek[2, 2] = r02, r12, r22
        return
    for i in range(3):
        p0, p1, p2 = P[i, 0], P[i, 1], P[i, 2]
        Ek[0, i] = p0 * r00 + p1 * r10 + p2 * r20
        Ek[1, i] = p0 * r01 + p1 * r11 + p2 * r21
        Ek[2, i] = p0 * r02 + p1 * r12 + p2 * r22


@njit(cache=True, inline="always")
def joint_kinematics(
    kinds, idx_q, axes, axes2, pitches, placement_R, unrotated, placement_p, q, E, r, S, rotations, bodies
):
    """Fill E[k], r[k] (A_{k,β}) of the bodies k in ``bodies`` (every body: ``module_bodies``; a frame's support)
    from q, and the one p_k column that depends on q (a universal joint's first); the others are constant and set
    once per Data (``motion_subspaces``).  ``rotations``: (4, 3, 3) work space for the multi-DOF kinds."""
    for i in range(len(bodies)):
        k = bodies[i]
        kind = kinds[k]
        e = axes[k]
        iq = idx_q[k]
        # The 1-DOF kinds first, without temporaries: they are nearly every joint of a robot.
        if kind == REVOLUTE or kind == CONTINUOUS or kind == HELICAL:
            # (cos θ, sin θ) of a continuous joint need not be exactly unit: the angle is what counts.
            angle = np.arctan2(q[iq + 1], q[iq]) if kind == CONTINUOUS else q[iq]
            placement_axis_angle_T(placement_R[k], unrotated[k], e, angle, E[k])
            if kind == HELICAL:  # it slides pitch·θ along e as it turns
                s = pitches[k] * angle
                for c in range(3):
                    r[k, c] = (
                        placement_p[k, c]
                        + (placement_R[k, c, 0] * e[0] + placement_R[k, c, 1] * e[1] + placement_R[k, c, 2] * e[2]) * s
                    )
            else:
                for c in range(3):
                    r[k, c] = placement_p[k, c]
            continue
        if kind == PRISMATIC:
            qk = q[iq]
            for c in range(3):
                for d in range(3):
                    E[k, c, d] = placement_R[k, d, c]
                r[k, c] = (
                    placement_p[k, c]
                    + (placement_R[k, c, 0] * e[0] + placement_R[k, c, 1] * e[1] + placement_R[k, c, 2] * e[2]) * qk
                )
            continue
        Rj, R, R1, R2 = rotations[0], rotations[1], rotations[2], rotations[3]
        if kind == UNIVERSAL:
            # R_j = R(e1, q1) R(e2, q2), so E_k = (R_p R(e1, q1) R(e2, q2))ᵀ = R(e2, q2)ᵀ (R_p R(e1, q1))ᵀ
            e2 = axes2[k]
            axis_angle_into(e2, q[iq + 1], R2)
            placement_axis_angle_T(placement_R[k], unrotated[k], e, q[iq], R1)
            for c in range(3):
                # ω_rel = R2ᵀ e1 q̇1 + e2 q̇2 in the body frame (R2ᵀ e1 turns with q2: see pdot_qdot)
                S[k, c, 0] = R2[0, c] * e[0] + R2[1, c] * e[1] + R2[2, c] * e[2]
                r[k, c] = placement_p[k, c]
                for d in range(3):
                    E[k, c, d] = R2[0, c] * R1[0, d] + R2[1, c] * R1[1, d] + R2[2, c] * R1[2, d]
            continue
        pj0 = pj1 = pj2 = 0.0
        if kind == FREE_FLYER:
            quaternion_rotation_into(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], Rj)
            pj0, pj1, pj2 = q[iq], q[iq + 1], q[iq + 2]
        elif kind == PLANAR:
            th = np.arctan2(q[iq + 3], q[iq + 2])
            c_, s_ = np.cos(th), np.sin(th)
            Rj[0, 0], Rj[0, 1], Rj[0, 2] = c_, -s_, 0.0
            Rj[1, 0], Rj[1, 1], Rj[1, 2] = s_, c_, 0.0
            Rj[2, 0], Rj[2, 1], Rj[2, 2] = 0.0, 0.0, 1.0
            pj0, pj1 = q[iq], q[iq + 1]
        else:  # SPHERICAL
            quaternion_rotation_into(q[iq], q[iq + 1], q[iq + 2], q[iq + 3], Rj)
        matmul_into(placement_R[k], Rj, R)
        for c in range(3):
            r[k, c] = (
                placement_p[k, c] + placement_R[k, c, 0] * pj0 + placement_R[k, c, 1] * pj1 + placement_R[k, c, 2] * pj2
            )
            for d in range(3):
                E[k, c, d] = R[d, c]  # E_k = Rᵀ maps parent-frame components into frame k


@njit(cache=True)
def motion_subspaces(kinds, axes, axes2, pitches, S):
    """p_k of every joint (eq. 7b), body frame, in Pinocchio's order of v: constant for every kind but
    a universal joint, whose first column R2ᵀ e1 joint_kinematics sets from q.  Called once per Data."""
    S[:, :, :] = 0.0
    for k in range(1, len(kinds)):
        kind, e = kinds[k], axes[k]
        for c in range(3):
            if kind == REVOLUTE or kind == CONTINUOUS:
                S[k, c, 0] = e[c]  # [e_k; 0]
            elif kind == PRISMATIC:
                S[k, 3 + c, 0] = e[c]  # [0; e_k]
            elif kind == HELICAL:
                S[k, c, 0] = e[c]  # [e_k; pitch e_k]: e_k turns into itself, so p_k is constant
                S[k, 3 + c, 0] = pitches[k] * e[c]
            elif kind == FREE_FLYER:
                S[k, 3 + c, c] = 1.0  # v[0:3]: linear velocity of o_k, body frame
                S[k, c, 3 + c] = 1.0  # v[3:6]: angular velocity, body frame
            elif kind == SPHERICAL:
                S[k, c, c] = 1.0
            elif kind == UNIVERSAL:
                S[k, c, 1] = axes2[k, c]  # e2
        if kind == PLANAR:
            S[k, 3, 0] = 1.0
            S[k, 4, 1] = 1.0
            S[k, 2, 2] = 1.0


@njit(cache=True, inline="always")
def pdot_qdot(kinds, S, axes2, k, v, iv):
    """ṗ_k q̇_k of joint k, angular rows (three numbers); its linear rows are zero for every kind.

    p_k is constant in the body frame for every kind but a universal joint, whose first column
    R2ᵀ e1 turns with q2 about e2, so ṗ_k q̇_k = q̇1 q̇2 (R2ᵀ e1) × e2."""
    if kinds[k] != UNIVERSAL:
        return 0.0, 0.0, 0.0
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    vv = v[iv] * v[iv + 1]
    return (s1 * e2 - s2 * e1) * vv, (s2 * e0 - s0 * e2) * vv, (s0 * e1 - s1 * e0) * vv


@njit(cache=True, inline="always")
def pdot_column(kinds, S, axes2, k, d, v, iv):
    """Column d of ṗ_k, angular rows (its linear rows are zero for every kind): zero but for the first column
    R2ᵀ e1 of a universal joint, which turns with q2 about e2: (R2ᵀ e1) × e2 q̇2.  Σ_d ṗ_k[:, d] q̇_d is
    ``pdot_qdot``."""
    if kinds[k] != UNIVERSAL or d != 0:
        return 0.0, 0.0, 0.0
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    w = v[iv + 1]
    return (s1 * e2 - s2 * e1) * w, (s2 * e0 - s0 * e2) * w, (s0 * e1 - s1 * e0) * w


@njit(cache=True, inline="always")
def dS_dq(kinds, S, axes2, k, d):
    """∂p_k[:, 0]/∂q_d of joint k, angular rows (three numbers; linear rows and the other columns do not depend on
    q for any kind): zero but for a universal joint's first column R2ᵀ e1, which turns about e2 with q2 (d = 1):
    (R2ᵀ e1) × e2."""
    if kinds[k] != UNIVERSAL or d != 1:
        return 0.0, 0.0, 0.0
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    return s1 * e2 - s2 * e1, s2 * e0 - s0 * e2, s0 * e1 - s1 * e0


@njit(cache=True, inline="always")
def dpdot_qdot(kinds, S, axes2, k, d, wrt_v, v, iv):
    """∂(ṗ_k q̇_k)/∂q_d (``wrt_v`` False) or ∂(ṗ_k q̇_k)/∂q̇_d (True) of joint k, angular rows: zero but for a
    universal joint, whose ṗ_k q̇_k = (s × e2) q̇1 q̇2 with s = R2ᵀ e1 (``pdot_qdot``), and ∂s/∂q2 = s × e2."""
    if kinds[k] != UNIVERSAL:
        return 0.0, 0.0, 0.0
    s0, s1, s2 = S[k, 0, 0], S[k, 1, 0], S[k, 2, 0]
    e0, e1, e2 = axes2[k, 0], axes2[k, 1], axes2[k, 2]
    c0, c1, c2 = s1 * e2 - s2 * e1, s2 * e0 - s0 * e2, s0 * e1 - s1 * e0  # s × e2
    if wrt_v:
        f = v[iv + 1] if d == 0 else v[iv]
    elif d == 1:
        c0, c1, c2 = c1 * e2 - c2 * e1, c2 * e0 - c0 * e2, c0 * e1 - c1 * e0  # (s × e2) × e2
        f = v[iv] * v[iv + 1]
    else:
        f = 0.0
    return c0 * f, c1 * f, c2 * f


@njit(cache=True)
def subspaces_fixed_in_bodies(kinds) -> bool:
    """Whether every joint's p_k is fixed in its own body (no column that turns with the parent, as a universal
    joint's first axis does): what the derivatives' O(n·d) pass in the base frame needs."""
    for k in range(1, len(kinds)):
        if kinds[k] == UNIVERSAL:
            return False
    return True


def turns_with_parent(kind: int, column: int) -> bool:
    """Whether column ``column`` of p_k is fixed in the parent's frame (ṗ = ω_β × p for it) rather than in the
    body's: a universal joint's first axis, e1 (its R2ᵀ e1 in the body frame, ``joint_kinematics``)."""
    return kind == UNIVERSAL and column == 0


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


@njit(cache=True)
def integrate_kernel(kinds, idx_q, idx_v, q, v, dt, out):
    """out = q ⊕ v dt, joint by joint, on each joint's group (``GROUPS``)."""
    qa = np.empty(4)
    qb = np.empty(4)
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
            dp = _mv(_se3_V(w), v[iv : iv + 3] * dt)
            R = quaternion_rotation(qa[0], qa[1], qa[2], qa[3])
            for c in range(3):
                out[iq + c] = q[iq + c] + R[c, 0] * dp[0] + R[c, 1] * dp[1] + R[c, 2] * dp[2]
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
    qa = np.empty(4)
    qb = np.empty(4)
    qr = np.empty(4)
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
                R0 = quaternion_rotation(-qa[0], -qa[1], -qa[2], qa[3])
                dp = _mv(R0.T, q1[iq : iq + 3] - q0[iq : iq + 3])
                out[iv : iv + 3] = _solve3(_se3_V(w), dp)
                out[iv + 3 : iv + 6] = w
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
