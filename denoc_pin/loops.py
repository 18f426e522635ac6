"""Closed kinematic loops: cut joints, their constraints and Lagrange multipliers.

A closed mechanism is its spanning tree (the :class:`Model`) plus the joints cut to open it,
``model.loops``.  Following Schiehlen (eq. 17–20), the tree keeps its recursive O(n) dynamics and
each cut joint adds its q_c closing reactions λ:

    GIM q̈ + h = τ + Jᵀ λ,          J q̈ + J̇ q̇ = 0                      (eq. 19)
    N_c λ = −J̇ q̇ − J GIM⁻¹ (τ − h),  N_c = J GIM⁻¹ Jᵀ                  (eq. 20)

GIM⁻¹ is never formed: GIM⁻¹ (τ − h) is the tree's forward dynamics and GIM⁻¹ Jᵀ comes from the
UDUᵀ factors of that same call (Table 3 applied to the columns of Jᵀ).  Inverse dynamics of a
closed loop splits the joints into actuated and passive ones and solves for the actuator torques
and λ together: the determinate/indeterminate subsystems of Shah, Saha & Dutt (section 2.2).

Conventions (the same for every function here):

- A cut joint has two frames: C1 fixed to ``link1`` and C2 fixed to ``link2``.  When the loop is
  closed, C2 coincides with C1 up to the joint's own motion (rotation about ``axis`` for a
  revolute, …).  ``axis`` is expressed in C1 (the link1 frame moved by the loop joint's
  xyz/rpy, as a URDF joint axis is expressed in its joint frame); ``axis2`` (universal) in C2.
- The relative twist of C2 with respect to C1, in C1 components and DeNOC order [ω; v], is
  Δ = [ω₂ − ω₁; ṗ₂ − ṗ₁], ṗᵢ the velocity of the origin of Cᵢ.  Each constraint is one direction
  of Δ that the joint blocks, angular directions first, then linear ones:

  ========== == ==================================================
  type       nc constrained directions (in C1)
  ========== == ==================================================
  fixed       6 ω: x, y, z;              v: x, y, z
  revolute    5 ω: b₁, b₂ (⟂ axis);      v: x, y, z
  prismatic   5 ω: x, y, z;              v: b₁, b₂ (⟂ axis)
  universal   4 ω: n = (R₁₂ axis2) × axis; v: x, y, z
  spherical   3                          v: x, y, z
  point_on_line 2                        v: b₁, b₂ (⟂ axis): a pin in a slot along ``axis``
  ========== == ==================================================

  (b₁, b₂, axis) is a right-handed orthonormal triad fixed in C1.
- ``J`` (n_constraints, nv): the rows of Δ = J q̇.  ``λ``: one entry per constraint, the
  reaction that link1 exerts on link2 through the cut joint (link1 feels −λ), in C1 components:
  a moment [N·m] for an angular row, a force [N] for a linear one; the moment is about the joint
  point.  The joint torques it produces are Jᵀ λ.
- The residual r(q) (``loop_residual``) vanishes exactly when every loop is closed, has the
  same rows, and ṙ = J q̇ on the constraint manifold: linear rows are the components of
  C1→C2 in C1 [m]; angular rows are a rotation error [rad] (log of R₁₂ for fixed and prismatic
  joints, the tilt of the axis for a revolute, the cosine between the universal's axes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .model import Data, Model, ModelError, check_data, configuration, vector

LOOP_TYPES: dict[str, int] = {
    "fixed": 6,
    "revolute": 5,
    "prismatic": 5,
    "universal": 4,
    "spherical": 3,
    "point_on_line": 2,
}
"""Cut-joint types and their number of constraints."""


class SingularConfigurationError(ValueError):
    """The closed-loop problem has no unique answer at this state (e.g. the actuated joints
    cannot drive the mechanism, or their torques are absorbed by the loop's reactions)."""


class AssemblyError(ValueError):
    """``assemble`` found no configuration that closes the loops."""


@dataclass(frozen=True, eq=False)
class LoopJoint:
    """A joint cut to open a closed loop.

    name, type (see ``LOOP_TYPES``); link1/link2: link names; placement1/placement2: (R (3, 3), p (3,)),
    the frames C1/C2 in the link1/link2 frames; axis (3,): unit, in C1 (revolute, prismatic,
    universal, point_on_line); axis2 (3,): the universal's second axis, unit, in C2, ⟂ axis.
    """

    name: str
    type: str
    link1: str
    link2: str
    placement1: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    placement2: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: np.ndarray | None = None

    @property
    def n_constraints(self) -> int:
        return LOOP_TYPES[self.type]

    def __repr__(self) -> str:
        return (
            f"LoopJoint({self.name!r}, {self.type}, {self.link1!r} -> {self.link2!r}, {self.n_constraints} constraints)"
        )


def _unit(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.isfinite(a).all() or not np.linalg.norm(a) > 1e-12:
        raise ModelError(f"{what} must be a non-zero finite 3-vector, got {np.asarray(x).tolist()}")
    return a / np.linalg.norm(a)


def _perpendicular_pair(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(b₁, b₂) with (b₁, b₂, a) right-handed orthonormal."""
    t = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    b1 = t - a * (a @ t)
    b1 /= np.linalg.norm(b1)
    return b1, _cross(a, b1)


@dataclass(frozen=True)
class _Cut:
    """A loop joint resolved onto bodies: Cᵢ = (R_i, p_i) in the frame of body_i, the constant
    selection rows of Δ, and the axes."""

    loop: LoopJoint
    body1: int
    R1: np.ndarray
    p1: np.ndarray
    body2: int
    R2: np.ndarray
    p2: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    b1: np.ndarray
    b2: np.ndarray
    rows: np.ndarray  # (nc, 6) constant rows of Δ (the universal's angular row is filled per state)
    chain1: np.ndarray  # bodies from body1 up to (excluding) the base
    chain2: np.ndarray


def resolve_loops(model: Model, loops) -> tuple[tuple[LoopJoint, ...], tuple[_Cut, ...]]:
    """Check loop joints against the model's links and resolve them onto bodies (ModelError if bad)."""
    where: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
    for k, name in enumerate(model.link_names):
        where[name] = (k, np.eye(3), np.zeros(3))
    for f in model.frames:
        where.setdefault(f.name, (f.body, np.asarray(f.rotation, float), np.asarray(f.translation, float)))
    out, cuts, seen = [], [], set()
    for lp in loops:
        if not isinstance(lp, LoopJoint):
            raise ModelError(f"model {model.name!r}: loops must be dp.LoopJoint, got {type(lp).__name__}")
        what = f"model {model.name!r}: loop joint {lp.name!r}"
        if lp.name in seen:
            raise ModelError(f"model {model.name!r}: two loop joints named {lp.name!r}")
        seen.add(lp.name)
        if lp.type not in LOOP_TYPES:
            raise ModelError(f"{what} has unknown type {lp.type!r}; loop joint types are: {', '.join(LOOP_TYPES)}")
        ends = []
        for role, link, placement in (("link1", lp.link1, lp.placement1), ("link2", lp.link2, lp.placement2)):
            if link not in where:
                names = sorted(where)
                listed = ", ".join(names[:30]) + (f", … ({len(names)} links)" if len(names) > 30 else "")
                raise ModelError(f"{what}: {role} {link!r} is not a link of the model; links are: {listed}")
            try:
                R, p = (np.asarray(x, dtype=float) for x in placement)
            except (TypeError, ValueError):
                raise ModelError(f"{what}: placement of {role} must be (R, p)") from None
            if R.shape != (3, 3) or p.shape != (3,) or not (np.isfinite(R).all() and np.isfinite(p).all()):
                raise ModelError(f"{what}: placement of {role} must be a finite (3, 3) rotation and (3,) position")
            if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
                raise ModelError(f"{what}: placement rotation of {role} is not a rotation matrix")
            body, Rb, pb = where[link]
            ends.append((body, Rb @ R, Rb @ p + pb))
        if ends[0][0] == ends[1][0]:
            raise ModelError(
                f"{what} joins {lp.link1!r} and {lp.link2!r}, which are rigidly connected (same body "
                f"{model.link_names[ends[0][0]]!r}): it closes no loop"
            )
        axis = (
            _unit(lp.axis, f"{what}: axis")
            if lp.type in ("revolute", "prismatic", "universal", "point_on_line")
            else np.array([0.0, 0.0, 1.0])
        )
        axis2 = np.zeros(3)
        if lp.type == "universal":
            if lp.axis2 is None:
                raise ModelError(
                    f"{what}: a universal loop joint needs a second axis (<axis2 xyz=…/>, in the link2 frame)"
                )
            axis2 = _unit(lp.axis2, f"{what}: axis2")
            if abs(axis @ axis2) > 1e-9:
                raise ModelError(
                    f"{what}: the universal's axes must be orthogonal, got {axis.tolist()} and {axis2.tolist()}"
                )
        b1, b2 = _perpendicular_pair(axis)
        E = np.eye(6)
        pick = {
            "fixed": [E[0], E[1], E[2], E[3], E[4], E[5]],
            "revolute": [np.r_[b1, 0, 0, 0], np.r_[b2, 0, 0, 0], E[3], E[4], E[5]],
            "prismatic": [E[0], E[1], E[2], np.r_[0, 0, 0, b1], np.r_[0, 0, 0, b2]],
            "universal": [np.zeros(6), E[3], E[4], E[5]],
            "spherical": [E[3], E[4], E[5]],
            "point_on_line": [np.r_[0, 0, 0, b1], np.r_[0, 0, 0, b2]],
        }[lp.type]
        chains = []
        for body, _, _ in ends:
            chain = []
            while body > 0:
                chain.append(body)
                body = int(model.parents[body])
            chains.append(np.array(chain, dtype=np.int64))
        placements = [(np.asarray(pl[0], float), np.asarray(pl[1], float))
                      for pl in (lp.placement1, lp.placement2)]  # fmt: skip
        lp = LoopJoint(
            lp.name, lp.type, lp.link1, lp.link2, *placements, axis, axis2 if lp.type == "universal" else None
        )
        out.append(lp)
        cuts.append(_Cut(lp, ends[0][0], ends[0][1], ends[0][2], ends[1][0], ends[1][1], ends[1][2], axis, axis2,
                         b1, b2, np.array(pick, dtype=float), chains[0], chains[1]))  # fmt: skip
    return tuple(out), tuple(cuts)


def n_constraints(model: Model) -> int:
    """Total number of loop constraints (rows of J)."""
    return sum(lp.n_constraints for lp in model.loops)


# ---------------------------------------------------------------------------------------
# Loop kinematics from the tree's workspace (E, r, S after kinematics; t, ṫ after Table 1).
# ---------------------------------------------------------------------------------------


def _world_poses(model: Model, data: Data, bodies) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """World rotation (body → world) and origin of ``bodies`` and their ancestors, from data.E, data.r."""
    poses = {0: (np.eye(3), np.zeros(3))}

    def pose(k: int):
        if k not in poses:
            chain = []
            while k not in poses:
                chain.append(k)
                k = int(model.parents[k])
            for j in reversed(chain):
                Rb, ob = poses[int(model.parents[j])]
                poses[j] = (Rb @ data.E[j].T, ob + Rb @ data.r[j])
        return poses[k]

    for k in bodies:
        pose(int(k))
    return poses


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # np.cross costs ~30 µs a call on 3-vectors; this is the inner loop of a simulation
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _log3(R: np.ndarray) -> np.ndarray:
    """Rotation vector of R (its matrix logarithm), accurate near 0 and π."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.linalg.norm(w) / 2.0
    theta = np.arctan2(s, c)
    if theta < 1e-6:
        return w / 2.0 * (1.0 + theta**2 / 6.0)
    if np.pi - theta > 1e-6:
        return w * (theta / (2.0 * s))
    # near π: the axis from the symmetric part
    B = (R + R.T) / 2.0 - c * np.eye(3)
    i = int(np.argmax(np.diag(B)))
    a = B[:, i] / np.sqrt(max(B[i, i], 1e-300))
    if a @ w < 0:
        a = -a
    return theta * a


class _LoopState:
    """Frames, Jacobian rows and residual of every cut joint at one state (data filled by the tree)."""

    def __init__(self, model: Model, data: Data, with_velocity: bool):
        nc = n_constraints(model)
        self.J = np.zeros((nc, model.nv))
        self.r = np.zeros(nc)
        self.Jdv = np.zeros(nc) if with_velocity else None
        bodies = [c.body1 for c in model._cuts] + [c.body2 for c in model._cuts]
        poses = _world_poses(model, data, bodies)
        row = 0
        for cut in model._cuts:
            m = cut.loop.n_constraints
            frames = []
            for body, Rc, pc in ((cut.body1, cut.R1, cut.p1), (cut.body2, cut.R2, cut.p2)):
                Rb, ob = poses[body]
                frames.append((Rb @ Rc, ob + Rb @ pc))
            (Rc1, pc1), (Rc2, pc2) = frames
            R12 = Rc1.T @ Rc2
            rows = cut.rows.copy()
            u2 = R12 @ cut.axis2
            if cut.loop.type == "universal":
                rows[0, :3] = _cross(u2, cut.axis)
            # Δ = Rc1ᵀ [ω₂ − ω₁; ṗ₂ − ṗ₁] = W q̇, through the world Jacobians of the two points
            W = np.zeros((6, model.nv))
            for sign, chain, point in ((-1.0, cut.chain1, pc1), (1.0, cut.chain2, pc2)):
                for j in chain:
                    Rj, oj = poses[int(j)]
                    z, iv = int(model.nvs[j]), int(model.idx_v[j])
                    S = data.S[j, :, :z]
                    om = Rj @ S[:3]
                    W[:3, iv : iv + z] += sign * om
                    W[3:, iv : iv + z] += sign * (Rj @ S[3:] + _skew(oj - point) @ om)
            W[:3] = Rc1.T @ W[:3]
            W[3:] = Rc1.T @ W[3:]
            self.J[row : row + m] = rows @ W
            self.r[row : row + m] = _residual(cut, Rc1, pc1, pc2, R12, u2, rows)
            if with_velocity:
                self.Jdv[row : row + m] = _bias(model, data, poses, cut, Rc1, pc1, pc2, u2, rows, W)
            row += m


def _residual(cut: _Cut, Rc1, pc1, pc2, R12, u2, rows) -> np.ndarray:
    e = Rc1.T @ (pc2 - pc1)
    kind = cut.loop.type
    if kind in ("fixed", "prismatic"):
        ang = _log3(R12)
    elif kind == "revolute":
        u = R12 @ cut.axis
        ang = np.array([-(cut.b2 @ u), cut.b1 @ u])
    elif kind == "universal":
        ang = np.array([cut.axis @ u2])
    else:
        ang = np.zeros(0)
    if kind in ("prismatic", "point_on_line"):
        lin = np.array([cut.b1 @ e, cut.b2 @ e])
    elif kind in ("fixed", "revolute", "universal", "spherical"):
        lin = e
    return np.concatenate([ang, lin])


def _bias(model: Model, data: Data, poses, cut: _Cut, Rc1, pc1, pc2, u2, rows, W) -> np.ndarray:
    """J̇ q̇: the constraint rows' d/dt of Δ with q̈ = 0, from the tree's t and ṫ (Table 1 with q̈ = 0).

    Table 1 adds −g to every acceleration (gravity as base acceleration): it cancels in the
    differences ω̇₂ − ω̇₁ and p̈₂ − p̈₁.
    """
    acc, vel = [], []
    for body, point in ((cut.body1, pc1), (cut.body2, pc2)):
        Rb, ob = poses[body]
        om, vo = Rb @ data.t[body, :3], Rb @ data.t[body, 3:]
        al, ao = Rb @ data.tdot[body, :3], Rb @ data.tdot[body, 3:]
        rho = point - ob
        vel.append((om, vo + _cross(om, rho)))
        acc.append((al, ao + _cross(al, rho) + _cross(om, _cross(om, rho))))
    w1 = Rc1.T @ vel[0][0]  # ω₁ in C1: C1 turns, so d/dt (Rc1ᵀ x) = Rc1ᵀ ẋ − ω₁ × (Rc1ᵀ x)
    d_om = Rc1.T @ (vel[1][0] - vel[0][0])
    d_v = Rc1.T @ (vel[1][1] - vel[0][1])
    dd = np.concatenate(
        [Rc1.T @ (acc[1][0] - acc[0][0]) - _cross(w1, d_om), Rc1.T @ (acc[1][1] - acc[0][1]) - _cross(w1, d_v)]
    )
    out = rows @ dd
    if cut.loop.type == "universal":
        # the row n = (R₁₂ axis2) × axis turns with C2 relative to C1: ṅ = (Δω × u₂) × axis
        out[0] += _cross(_cross(d_om, u2), cut.axis) @ d_om
    return out


def _kinematics(model: Model, data: Data, q: np.ndarray) -> None:
    from .algorithms.kinematics import kinematics_entry

    kinematics_entry(model._mi, model._mf, data._ws, q)


def _need_loops(model: Model, what: str) -> None:
    if not model.loops:
        raise ModelError(f"{what}: model {model.name!r} has no loop joints (model.loops is empty)")


def loop_residual(model: Model, q, data: Data | None = None) -> np.ndarray:
    """Position error r(q) of every cut joint, stacked in ``model.loops`` order (n_constraints,).

    Linear rows [m] are the components of C1→C2 in C1; angular rows [rad] the rotation error
    (module docstring).  Zero exactly when every loop is closed.
    """
    data = _data(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    _kinematics(model, data, q)
    return _LoopState(model, data, False).r


def loop_jacobian(model: Model, q, data: Data | None = None) -> np.ndarray:
    """Constraint Jacobian J (n_constraints, nv): J q̇ = the blocked components of the relative twist
    of C2 w.r.t. C1, in C1, [ω; v] rows as in the module docstring; ṙ = J q̇ on the constraint manifold."""
    data = _data(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    _kinematics(model, data, q)
    return _LoopState(model, data, False).J


def _data(model: Model, data: Data | None) -> Data:
    if data is None:
        return model.create_data()
    check_data(model, data)
    return data


def _min_norm_solve(A: np.ndarray, b: np.ndarray, rcond: float) -> tuple[np.ndarray, int]:
    """Minimum-norm least-squares solution of A x = b by SVD (rank-revealing), and the rank."""
    x, _, rank, _ = np.linalg.lstsq(A, b, rcond=rcond)
    return x, int(rank)


def constrained_forward_dynamics(
    model: Model, data: Data, q, v, tau, fext=None, baumgarte=(0.0, 0.0), rcond: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q̈ (nv,) and cut-joint reactions λ (n_constraints,) of the closed mechanism.

    Schiehlen eq. (17)–(20): q̈₀ = GIM⁻¹ (τ − h) by the tree's recursive forward dynamics
    (Table 3), Y = GIM⁻¹ Jᵀ by the same UDUᵀ factors (no GIM, no inverse is formed), then the
    reaction system N_c λ = γ − J q̈₀ with N_c = J Y and q̈ = q̈₀ + Y λ.

    baumgarte = (kp, kd): the constraint is imposed as r̈ + 2 kd ṙ + kp² r = 0, i.e.
    γ = −J̇ q̇ − 2 kd J q̇ − kp² r (kp, kd ≥ 0, in 1/s; (0, 0) imposes J q̈ + J̇ q̇ = 0 only).

    Redundant constraints (a planar mechanism described in 3-D has a rank-deficient J) are
    handled by a rank-revealing SVD solve of the reaction system (singular values below
    ``rcond`` × the largest are dropped): the accelerations are unique and λ is the
    minimum-norm set of reactions that produces them; the reactions along redundant
    directions are statically indeterminate, so any other split is as valid.
    λ: reaction of link1 on link2 in C1 ([N·m] angular rows, [N] linear rows); see the module doc.
    """
    from .algorithms.forward import forward_dynamics, solve

    _need_loops(model, "constrained_forward_dynamics")
    kp, kd = _gains(baumgarte)
    a0 = forward_dynamics(model, data, q, v, tau, fext)  # fills the UDUᵀ factors, t and ṫ (q̈ = 0)
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    st = _LoopState(model, data, True)
    J = st.J
    nj, m = model.njoints, J.shape[0]
    Y = solve(
        model, data, np.ascontiguousarray(J.T), np.empty((nj, m, 6)), np.empty((nj, m, 6)), np.empty((model.nv, m))
    )
    Nc = J @ Y  # Schiehlen's reaction matrix (eq. 20)
    gamma = -st.Jdv - 2.0 * kd * (J @ v) - kp * kp * st.r
    lam, _ = _min_norm_solve(Nc, gamma - J @ a0, rcond)
    a = a0 + Y @ lam
    data.ddq[:] = a
    return a, lam


def _gains(baumgarte) -> tuple[float, float]:
    try:
        kp, kd = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise ValueError(f"baumgarte must be a pair (kp, kd) of non-negative numbers, got {baumgarte!r}") from None
    if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
        raise ValueError(f"baumgarte gains must be finite and non-negative, got (kp, kd) = ({kp}, {kd})")
    return kp, kd


def _dof_of(model: Model, names, what: str) -> np.ndarray:
    if isinstance(names, str):
        raise ValueError(f"{what} must be a list of joint names, got the string {names!r}")
    cols = []
    for name in names:
        k = model.joint_id(name)
        if k == 0:
            raise ModelError(f"{what}: {name!r} is the base, not a joint")
        cols.extend(range(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k])))
    return np.array(sorted(set(cols)), dtype=np.int64)


def constrained_inverse_dynamics(
    model: Model, data: Data, q, v, a, actuated, fext=None, rcond: float = 1e-10, atol: float = 1e-8
) -> tuple[np.ndarray, np.ndarray]:
    """Actuator torques τ (nv,; zero on passive joints) and reactions λ that produce q̈ = ``a``.

    The tree's inverse dynamics (Table 1) gives τ_tree = GIM q̈ + h, the torque the open tree
    would need; in the closed mechanism it is shared between the actuated joints A and the cut
    joints: S_A τ_A + Jᵀ λ = τ_tree (Shah, Saha & Dutt section 2.2: the actuated joints and the
    reactions are solved together).  ``a`` must satisfy the loops' J q̈ + J̇ q̇ = 0 (ValueError
    otherwise, beyond ``atol`` relative).

    Raises :class:`SingularConfigurationError` if the actuated joints cannot produce ``a``
    (too few or badly placed actuators, or a singular configuration), or if their torques are
    not unique because the loop's reactions can absorb them (a singular configuration).
    Redundant actuation (more actuated DOF than the mechanism has) gets the minimum-norm
    (τ_A, λ); redundant constraints get the minimum-norm λ.
    """
    from .algorithms.inverse import inverse_dynamics

    _need_loops(model, "constrained_inverse_dynamics")
    cols = _dof_of(model, actuated, "actuated")
    a = vector(a, model.nv, "a")
    vv = vector(v, model.nv, "v")
    inverse_dynamics(model, data, q, vv, np.zeros(model.nv))  # t and ṫ with q̈ = 0, for J̇ q̇
    st = _LoopState(model, data, True)
    J = st.J
    tau_tree = inverse_dynamics(model, data, q, vv, a, fext)
    viol = J @ a + st.Jdv
    scale = np.abs(J).max() * np.abs(a).max() + np.abs(st.Jdv).max() + 1.0
    if np.abs(viol).max() > atol * scale:
        raise ValueError(
            f"a violates the loop constraints: |J q̈ + J̇ q̇| = {np.abs(viol).max():.3g} (scale {scale:.3g}); "
            "closed-loop accelerations must satisfy the loops (e.g. from constrained_forward_dynamics with "
            "baumgarte=(0, 0))"
        )
    nA, m, nv = cols.size, J.shape[0], model.nv
    K = np.zeros((nv, nA + m))
    K[cols, np.arange(nA)] = 1.0
    K[:, nA:] = J.T
    U, s, Vt = np.linalg.svd(K, full_matrices=True)
    tol = rcond * (s[0] if s.size else 0.0)
    rank = int((s > tol).sum())
    x = Vt[:rank].T @ ((U[:, :rank].T @ tau_tree) / s[:rank])
    resid = np.abs(K @ x - tau_tree).max()
    if resid > 1e-8 * (np.abs(tau_tree).max() + 1.0):
        names = [model.names[k] for k in range(1, model.njoints) if model.idx_v[k] in cols]
        raise SingularConfigurationError(
            f"the actuated joints {names} cannot produce these accelerations: the torque left over after the loop "
            f"reactions is {resid:.3g} (too few or badly placed actuators, or a singular configuration of the "
            "mechanism)"
        )
    mobility = nv - np.linalg.matrix_rank(J, tol=rcond * max(np.abs(J).max(), 1e-300) * max(J.shape))
    null = Vt[rank:, :nA]
    if null.size and np.abs(null).max() > 1e-6 and nA <= mobility:
        raise SingularConfigurationError(
            "the actuator torques are not unique here: the loop reactions can absorb a torque of the actuated joints "
            "(a singular configuration of the closed mechanism)"
        )
    tau = np.zeros(nv)
    tau[cols] = x[:nA]
    return tau, x[nA:]


def complete_motion(model: Model, q, joints, v_joints, a_joints=None, data: Data | None = None):
    """Velocities and accelerations of every joint from those of ``joints`` (the mechanism's
    independent coordinates, e.g. its actuated joints), at a closed configuration q.

    J q̇ = 0 and J q̈ + J̇ q̇ = 0 (Schiehlen eq. 18–19) are solved for the other joints' rates.
    v_joints, a_joints: (n,) in the order of the joints' DOF in v.  Returns (v, a) (nv,) each
    (a is None when a_joints is None).  Raises :class:`SingularConfigurationError` if ``joints``
    do not determine the motion (too few, or a singular configuration) or over-determine it.
    """
    from .algorithms.inverse import inverse_dynamics

    _need_loops(model, "complete_motion")
    data = _data(model, data)
    q = np.ascontiguousarray(configuration(model, q))
    cols = _dof_of(model, joints, "joints")
    rest = np.setdiff1d(np.arange(model.nv), cols)
    v = np.zeros(model.nv)
    v[cols] = vector(v_joints, cols.size, "v_joints")
    _kinematics(model, data, q)
    J = _LoopState(model, data, False).J
    Jr = J[:, rest]
    if np.linalg.matrix_rank(Jr, tol=1e-10 * max(np.abs(J).max(), 1e-300) * max(J.shape)) < rest.size:
        raise SingularConfigurationError(
            f"the joints {list(joints)} do not determine the motion of the mechanism here (too few independent "
            "joints, or a singular configuration)"
        )

    def solve_rest(rhs: np.ndarray, what: str) -> np.ndarray:
        x, *_ = np.linalg.lstsq(Jr, -rhs, rcond=1e-12)
        if np.abs(Jr @ x + rhs).max() > 1e-9 * (np.abs(rhs).max() + 1.0):
            raise SingularConfigurationError(
                f"the {what} given for joints {list(joints)} are not compatible with the loops: these joints are not "
                "independent (the mechanism has fewer degrees of freedom)"
            )
        return x

    v[rest] = solve_rest(J[:, cols] @ v[cols], "velocities")
    if a_joints is None:
        return v, None
    a = np.zeros(model.nv)
    a[cols] = vector(a_joints, cols.size, "a_joints")
    inverse_dynamics(model, data, q, v, np.zeros(model.nv))  # t and ṫ with q̈ = 0, for J̇ q̇
    st = _LoopState(model, data, True)
    a[rest] = solve_rest(J[:, cols] @ a[cols] + st.Jdv, "accelerations")
    return v, a


def assemble(model: Model, q_guess, fixed=(), tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
    """A configuration near ``q_guess`` that closes every loop: Newton projection onto r(q) = 0.

    Each step is the minimum-norm correction Δ = −J_free⁺ r (SVD, so redundant constraints are
    fine) over the joints not in ``fixed`` (e.g. the actuated crank angle to hold), with
    step halving when the residual would grow.  Returns q with ‖r‖∞ ≤ tol; raises
    :class:`AssemblyError` with the residual reached if the loops cannot be closed.
    """
    from .configuration import integrate, normalize

    _need_loops(model, "assemble")
    q = normalize(model, configuration(model, q_guess, "q_guess"))
    free = np.setdiff1d(np.arange(model.nv), _dof_of(model, fixed, "fixed"))
    data = model.create_data()
    r = loop_residual(model, q, data)
    err = np.abs(r).max()
    for _ in range(max_iter):
        if err <= tol:
            return q
        J = _LoopState(model, data, False).J[:, free]
        step, _ = _min_norm_solve(J, -r, 1e-12)
        dv = np.zeros(model.nv)
        dv[free] = step
        for _ in range(40):
            q_new = integrate(model, q, dv)
            r_new = loop_residual(model, q_new, data)
            err_new = np.abs(r_new).max()
            if err_new < err:
                break
            dv *= 0.5
        else:
            break  # no step reduces the residual: a local minimum with r ≠ 0
        q, r, err = q_new, r_new, err_new
        _kinematics(model, data, q)
    if err <= tol:
        return q
    raise AssemblyError(
        f"model {model.name!r}: cannot close the loops {[lp.name for lp in model.loops]} near q_guess "
        f"(fixed joints: {list(fixed)}): the residual stalls at {err:.3g} > tol = {tol:g} — the links may be too "
        "short to meet, or the fixed joints over-constrain the mechanism"
    )
