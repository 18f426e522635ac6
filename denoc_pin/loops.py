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

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .algorithms.forward import udut_solve
from .model import Data, Model, ModelError, check_data, configuration, vector
from .spatial import matmul_into

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


def resolve_loops(model: Model, loops) -> tuple[tuple[LoopJoint, ...], tuple[_Cut, ...]]:
    """Check loop joints against the model's links and resolve them onto bodies (ModelError if bad)."""
    if not loops:
        return (), ()  # and no per-link table: at 100,000 links it alone was the build's peak memory
    where: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
    eye, zero = np.eye(3), np.zeros(3)  # shared, never written
    for k, name in enumerate(model.link_names):
        where[name] = (k, eye, zero)
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
        placements = [(np.asarray(pl[0], float), np.asarray(pl[1], float))
                      for pl in (lp.placement1, lp.placement2)]  # fmt: skip
        lp = LoopJoint(
            lp.name, lp.type, lp.link1, lp.link2, *placements, axis, axis2 if lp.type == "universal" else None
        )
        out.append(lp)
        cuts.append(_Cut(lp, ends[0][0], ends[0][1], ends[0][2], ends[1][0], ends[1][1], ends[1][2], axis, axis2,
                         b1, b2, np.array(pick, dtype=float)))  # fmt: skip
    return tuple(out), tuple(cuts)


# ---------------------------------------------------------------------------------------
# Loop kinematics from the tree's workspace (E, r, S after kinematics; t, ṫ after Table 1).
# ---------------------------------------------------------------------------------------


# Cut joints packed for the compiled kernel: per cut, ints (body1, body2, type code, first row)
# and floats R1 (9), p1, R2 (9), p2, axis, axis2, b1, b2 (3 each), then the 6 x 6 selection rows.
FIXED, REVOLUTE, PRISMATIC, UNIVERSAL, SPHERICAL, POINT_ON_LINE = range(6)
_TYPE_CODE = {name: code for code, name in enumerate(LOOP_TYPES)}
_PACKED = 72


def pack_cuts(cuts) -> tuple[np.ndarray, np.ndarray]:
    li = np.zeros((len(cuts), 4), dtype=np.int64)
    lf = np.zeros((len(cuts), _PACKED))
    row = 0
    for c, cut in enumerate(cuts):
        li[c] = (cut.body1, cut.body2, _TYPE_CODE[cut.loop.type], row)
        rows = np.zeros((6, 6))
        rows[: len(cut.rows)] = cut.rows
        lf[c] = np.concatenate([cut.R1.ravel(), cut.p1, cut.R2.ravel(), cut.p2, cut.axis, cut.axis2, cut.b1, cut.b2,
                                rows.ravel()])  # fmt: skip
        row += cut.loop.n_constraints
    li.setflags(write=False)
    lf.setflags(write=False)
    return li, lf


@njit(cache=True)
def _mv(R, x):
    return np.array([R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2], R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
                     R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2]])  # fmt: skip


@njit(cache=True)
def _mtv(R, x):  # Rᵀ x
    return np.array([R[0, 0] * x[0] + R[1, 0] * x[1] + R[2, 0] * x[2], R[0, 1] * x[0] + R[1, 1] * x[1] + R[2, 1] * x[2],
                     R[0, 2] * x[0] + R[1, 2] * x[1] + R[2, 2] * x[2]])  # fmt: skip


@njit(cache=True)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _log3(R):
    """Rotation vector of R (its matrix logarithm), accurate near 0 and π."""
    c = min(1.0, max(-1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) / 2.0
    theta = np.arctan2(s, c)
    if theta < 1e-6:
        return w / 2.0 * (1.0 + theta * theta / 6.0)
    if np.pi - theta > 1e-6:
        return w * (theta / (2.0 * s))
    B = (R + R.T) / 2.0  # near π the axis comes from the symmetric part
    i = 0
    for k in range(3):
        B[k, k] -= c
        if B[k, k] > B[i, i]:
            i = k
    a = B[:, i] / np.sqrt(max(B[i, i], 1e-300))
    if a[0] * w[0] + a[1] * w[1] + a[2] * w[2] < 0:
        a = -a
    return theta * a


@njit(cache=True)
def loop_kernel(parents, idx_v, nvs, E, r, S, t, tdot, li, lf, with_bias, J, res, Jdv):
    """J (rows of Δ = J q̇), residual r and, if ``with_bias``, the rows of Δ̇ of every cut joint.

    Inputs are the tree's workspace: E, r, S after kinematics, and t, ṫ of Table 1.  Δ̇ = J q̈ + J̇ q̇
    for the q̈ that Table 1 used: J̇ q̇ when it ran with q̈ = 0.  Table 1 adds −g to every
    acceleration (gravity as base acceleration): it cancels in the differences ω̇₂ − ω̇₁ and p̈₂ − p̈₁.
    """
    nj, nv = len(parents), J.shape[1]
    # world poses: R_k = R_β E_kᵀ, o_k = o_β + R_β r_k
    Rw = np.zeros((nj, 3, 3))
    ow = np.zeros((nj, 3))
    for c in range(3):
        Rw[0, c, c] = 1.0
    for k in range(1, nj):
        b = parents[k]
        for c in range(3):
            for d in range(3):
                Rw[k, c, d] = Rw[b, c, 0] * E[k, d, 0] + Rw[b, c, 1] * E[k, d, 1] + Rw[b, c, 2] * E[k, d, 2]
        ow[k] = ow[b] + _mv(Rw[b], r[k])
    W = np.zeros((6, nv))
    for ci in range(li.shape[0]):
        b1, b2, kind, row0 = li[ci, 0], li[ci, 1], li[ci, 2], li[ci, 3]
        f = lf[ci]
        R1, p1, R2, p2 = f[0:9].reshape(3, 3), f[9:12], f[12:21].reshape(3, 3), f[21:24]
        ax, ax2, B1, B2 = f[24:27], f[27:30], f[30:33], f[33:36]
        sel = f[36:72].reshape(6, 6).copy()
        Rc1, Rc2 = Rw[b1] @ R1, Rw[b2] @ R2
        pc1, pc2 = ow[b1] + _mv(Rw[b1], p1), ow[b2] + _mv(Rw[b2], p2)
        R12 = Rc1.T @ Rc2
        u2 = _mv(R12, ax2)
        m = (
            6
            if kind == FIXED
            else 5
            if kind <= PRISMATIC
            else 4
            if kind == UNIVERSAL
            else 3
            if kind == SPHERICAL
            else 2
        )
        if kind == UNIVERSAL:  # the blocked rotation is about n = (R₁₂ axis2) × axis, which turns
            sel[0, 0:3] = _cross(u2, ax)
        # Δ = Rc1ᵀ [ω₂ − ω₁; ṗ₂ − ṗ₁] = W q̇ through the world Jacobians of the two points
        W[:, :] = 0.0
        for side in range(2):
            sign = -1.0 if side == 0 else 1.0
            j = b1 if side == 0 else b2
            pc = pc1 if side == 0 else pc2
            while j > 0:
                rho = pc - ow[j]
                for d in range(nvs[j]):
                    om = _mv(Rw[j], S[j, 0:3, d])
                    vv = _mv(Rw[j], S[j, 3:6, d]) + _cross(om, rho)
                    col = idx_v[j] + d
                    for c in range(3):
                        W[c, col] += sign * om[c]
                        W[3 + c, col] += sign * vv[c]
                j = parents[j]
        for col in range(nv):
            wa = _mtv(Rc1, W[0:3, col])
            wl = _mtv(Rc1, W[3:6, col])
            for i in range(m):
                J[row0 + i, col] = (sel[i, 0] * wa[0] + sel[i, 1] * wa[1] + sel[i, 2] * wa[2] + sel[i, 3] * wl[0]
                                    + sel[i, 4] * wl[1] + sel[i, 5] * wl[2])  # fmt: skip
        # residual: angular rows (rotation error), then linear rows (C1→C2 in C1)
        e = _mtv(Rc1, pc2 - pc1)
        i = row0
        if kind == FIXED or kind == PRISMATIC:
            lg = _log3(R12)
            res[i : i + 3] = lg
            i += 3
        elif kind == REVOLUTE:
            u = _mv(R12, ax)
            res[i] = -(B2[0] * u[0] + B2[1] * u[1] + B2[2] * u[2])
            res[i + 1] = B1[0] * u[0] + B1[1] * u[1] + B1[2] * u[2]
            i += 2
        elif kind == UNIVERSAL:
            res[i] = ax[0] * u2[0] + ax[1] * u2[1] + ax[2] * u2[2]
            i += 1
        if kind == PRISMATIC or kind == POINT_ON_LINE:
            res[i] = B1[0] * e[0] + B1[1] * e[1] + B1[2] * e[2]
            res[i + 1] = B2[0] * e[0] + B2[1] * e[1] + B2[2] * e[2]
        else:
            res[i : i + 3] = e
        if not with_bias:
            continue
        # J̇ q̇ = d/dt of the rows of Δ with q̈ = 0; C1 turns, so d/dt (Rc1ᵀ x) = Rc1ᵀ ẋ − ω₁ × (Rc1ᵀ x)
        oms = np.zeros((2, 3))
        vels = np.zeros((2, 3))
        als = np.zeros((2, 3))
        accs = np.zeros((2, 3))
        for side in range(2):
            b = b1 if side == 0 else b2
            rho = (pc1 if side == 0 else pc2) - ow[b]
            om, vo = _mv(Rw[b], t[b, 0:3]), _mv(Rw[b], t[b, 3:6])
            al, ao = _mv(Rw[b], tdot[b, 0:3]), _mv(Rw[b], tdot[b, 3:6])
            oms[side], vels[side] = om, vo + _cross(om, rho)
            als[side], accs[side] = al, ao + _cross(al, rho) + _cross(om, _cross(om, rho))
        w1 = _mtv(Rc1, oms[0])
        d_om = _mtv(Rc1, oms[1] - oms[0])
        d_v = _mtv(Rc1, vels[1] - vels[0])
        dd_a = _mtv(Rc1, als[1] - als[0]) - _cross(w1, d_om)
        dd_l = _mtv(Rc1, accs[1] - accs[0]) - _cross(w1, d_v)
        for i in range(m):
            Jdv[row0 + i] = (sel[i, 0] * dd_a[0] + sel[i, 1] * dd_a[1] + sel[i, 2] * dd_a[2] + sel[i, 3] * dd_l[0]
                             + sel[i, 4] * dd_l[1] + sel[i, 5] * dd_l[2])  # fmt: skip
        if kind == UNIVERSAL:  # ṅ = (Δω × u₂) × axis
            nd = _cross(_cross(d_om, u2), ax)
            Jdv[row0] += nd[0] * d_om[0] + nd[1] * d_om[1] + nd[2] * d_om[2]
    return 0


class _LoopState:
    """Jacobian rows J, residual r and (``with_velocity``) J̇ q̇ of every cut joint, from the tree's
    workspace in ``data`` (kinematics done; t and ṫ of Table 1 with q̈ = 0 for the bias)."""

    def __init__(self, model: Model, data: Data, with_velocity: bool):
        nc = model.n_constraints
        self.J = np.empty((nc, model.nv))
        self.r = np.empty(nc)
        self.Jdv = np.empty(nc) if with_velocity else None
        li, lf = model._loop_pack
        loop_kernel(model.parents, model.idx_v, model.nvs, data.E, data.r, data.S, data.t, data.tdot, li, lf,
                    with_velocity, self.J, self.r, self.Jdv if with_velocity else self.r)  # fmt: skip


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


@njit(cache=True)
def symmetric_pinv_solve(A, b, rcond):
    """x = A⁺ b for a symmetric positive semi-definite A (the minimum-norm solution), by the cyclic
    Jacobi eigen-decomposition A = V diag(w) Vᵀ; eigenvalues ≤ rcond · max w count as zero.
    Returns (x, rank).  Compiled and LAPACK-free: the reaction systems here are small."""
    m = A.shape[0]
    A = 0.5 * (A + A.T)
    V = np.eye(m)
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
    wmax = 0.0
    for i in range(m):
        wmax = max(wmax, abs(A[i, i]))
    x = np.zeros(m)
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
    return x, rank


@njit(cache=True)
def reaction_kernel(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, J, Jdv, res, v, a0, kp,
                    kd, rcond, a, lam):  # fmt: skip
    """Schiehlen eq. (19)–(20) on the tree's UDUᵀ factors: Y = GIM⁻¹ Jᵀ by the recursions of Table 3,
    N_c = J Y, N_c λ = γ − J q̈₀ (minimum norm), q̈ = q̈₀ + Y λ.  Returns the rank of N_c."""
    m, nv = J.shape
    nj = len(parents)
    JT = np.empty((nv, m))
    for i in range(m):
        for k in range(nv):
            JT[k, i] = J[i, k]
    Y = np.empty((nv, m))
    udut_solve(parents, module_ptr, module_bodies, idx_v, nvs, E, r, S, Psi, I_hat_inv, JT, np.empty((nj, m, 6)),
               np.empty((nj, m, 6)), Y)  # fmt: skip
    Nc = np.empty((m, m))
    matmul_into(J, Y, Nc)  # Schiehlen's reaction matrix N_c (eq. 20)
    rhs = np.empty(m)
    for i in range(m):
        jv = 0.0
        ja = 0.0
        for k in range(nv):
            jv += J[i, k] * v[k]
            ja += J[i, k] * a0[k]
        rhs[i] = -Jdv[i] - 2.0 * kd * jv - kp * kp * res[i] - ja  # γ − J q̈₀
    x, rank = symmetric_pinv_solve(Nc, rhs, rcond)
    for i in range(m):
        lam[i] = x[i]
    for k in range(nv):
        s = a0[k]
        for i in range(m):
            s += Y[k, i] * x[i]
        a[k] = s
    return rank


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
    handled by a rank-revealing solve of the symmetric reaction system (its eigenvalues below
    ``rcond`` × the largest are dropped): the accelerations are unique and λ is the
    minimum-norm set of reactions that produces them; the reactions along redundant
    directions are statically indeterminate, so any other split is as valid.
    λ: reaction of link1 on link2 in C1 ([N·m] angular rows, [N] linear rows); see the module doc.
    """
    from .algorithms.forward import forward_dynamics

    _need_loops(model, "constrained_forward_dynamics")
    _one_state(q, v, tau, "tau", "constrained_forward_dynamics")
    kp, kd = _gains(baumgarte)
    a0 = forward_dynamics(model, data, q, v, tau, fext)  # fills the UDUᵀ factors, t and ṫ (q̈ = 0)
    st = _LoopState(model, data, True)
    a, lam = np.empty(model.nv), np.empty(model.n_constraints)
    reaction_kernel(model.parents, model.module_ptr, model.module_bodies, model.idx_v, model.nvs, data.E, data.r,
                    data.S, data.Psi, data.I_hat_inv, st.J, st.Jdv, st.r, np.ascontiguousarray(v, dtype=float), a0,
                    kp, kd, float(rcond), a, lam)  # fmt: skip
    data.ddq[:] = a
    return a, lam


def _one_state(q, v, x, xname: str, what: str) -> None:
    for arr, name in ((q, "q"), (v, "v"), (x, xname)):
        if np.ndim(arr) != 1:
            raise ValueError(f"{what} takes one state: {name} must be 1-D, got shape {np.shape(arr)} (no batches here)")


def _gains(baumgarte) -> tuple[float, float]:
    try:
        kp, kd = baumgarte
        kp, kd = float(kp), float(kd)
    except (TypeError, ValueError):
        raise ValueError(f"baumgarte must be a pair (kp, kd) of non-negative numbers, got {baumgarte!r}") from None
    if not (0.0 <= kp < math.inf and 0.0 <= kd < math.inf):
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
    model: Model, data: Data, q, v, a, actuated=None, fext=None, rcond: float = 1e-10, atol: float = 1e-8
) -> tuple[np.ndarray, np.ndarray]:
    """Actuator torques τ (nv,; zero on passive joints) and reactions λ that produce q̈ = ``a``.

    actuated: joint names; None: every joint not in ``model.passive`` (``model.with_passive``).

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
    _one_state(q, v, a, "a", "constrained_inverse_dynamics")
    if actuated is None:
        actuated = [n for n in model.names[1:] if n not in model.passive]
    cols = _dof_of(model, actuated, "actuated")
    a = vector(a, model.nv, "a")
    tau_tree = inverse_dynamics(model, data, q, v, a, fext)
    # ṫ now holds the accelerations of q̈ = a, so the kernel's "bias" is J q̈ + J̇ q̇ itself
    st = _LoopState(model, data, True)
    J = st.J
    viol = st.Jdv
    scale = np.abs(J).max() * np.abs(a).max() + np.abs(viol - J @ a).max() + 1.0
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
        x, _ = _min_norm_solve(Jr, -rhs, 1e-12)
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


def loop_mobility(model: Model, q) -> dict[str, int]:
    """Per cut joint, the mobility of its loop at q: the DOF of the tree joints on the path between
    its two links, less the rank of its constraints on them (0: the loop is rigid)."""
    J = loop_jacobian(model, q)
    rows = np.cumsum([0] + [lp.n_constraints for lp in model.loops])
    out = {}
    for i, cut in enumerate(model._cuts):
        a, b = {cut.body1}, {cut.body2}
        for s in (a, b):  # ancestors, each set including the body itself
            k = next(iter(s))
            while k:
                k = int(model.parents[k])
                s.add(k)
        path = sorted((a ^ b) - {0})
        cols = [c for k in path for c in range(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k]))]
        block = J[rows[i] : rows[i + 1]][:, cols]
        rank = np.linalg.matrix_rank(block, tol=1e-9 * max(1.0, np.abs(block).max())) if block.size else 0
        out[model.loops[i].name] = len(cols) - int(rank)
    return out


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
