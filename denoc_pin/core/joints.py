"""Joint kinds: the one module that knows what each kind means (spatial_v2's ``jcalc``).

A joint kind is data: an integer code per body.  Everything that depends on it is here and
nowhere else — the names it is spelled by (URDF, :class:`ModelBuilder`, Pinocchio), nq and nv,
which axes it has, the joint transform that gives (E_k, r_k) of A_{k,β} (eq. 7b), the
joint-motion propagation p_k, its rate ṗ_k and ∂p_k/∂q, and which configuration group it moves on
(``lie_groups`` has the groups' maps: integrate, difference, dexp⁻¹ and their Jacobians, neutral, normalize,
random sampling).  The recursions read p_k, E_k and r_k and never
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

from .spatial import axis_angle_into, matmul_into, quaternion_rotation_into, sin_cos

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
