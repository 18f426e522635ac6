"""The immutable :class:`Model` and its preallocated :class:`Data` workspace.

Bodies are numbered like Pinocchio's joints: index 0 is the base (the paper's link #0,
Pinocchio's "universe"), body k ≥ 1 is the link moved by joint k, and ``parents[k] < k``.
Fixed joints are merged into the parent body, as Pinocchio does.  Joint kinds are data
(an integer code per body), not classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.cuts import ResolvedLoops
from ..core.joints import BASE, JOINTS, WITH_AXIS, nq_nv
from ..core.layout import (
    HEADER,
    ModelViews,
    articulated_slots,
    buffer_sizes,
    dof_parents,
    frame_rows,
    model_buffer,
    model_views,
    numpy_views,
)
from ..core.modules import decompose, draw_module_tree, module_arrays
from ..core.shapes import Collision
from ..core.spatial import inertia_about_origin, mass_matrix
from .data import Data

__all__ = [
    "FRAME_TYPES",
    "LIMIT_FIELDS",
    "MAX_MAGNITUDE",
    "UNBOUNDED",
    "Frame",
    "Model",
    "ModelError",
    "ModelWarning",
    "default_frames",
    "placement_pair",
]


UNBOUNDED = float(np.finfo(float).max)
"""A limit that is not one: Pinocchio's default bound (±1.797e308) for a joint without limits."""

LIMIT_FIELDS = ("lower_position_limit", "upper_position_limit", "velocity_limit", "effort_limit")
"""The joint limits of a :class:`Model`: positions (nq,) twice, then velocity and effort (nv,)."""

MAX_MAGNITUDE = 1e12
"""Beyond this a mass [kg], an inertia component [kg m²], a length [m] or an angle [rad] is absurd: refused."""


class ModelError(ValueError):
    """A model (URDF file, Pinocchio model, builder input) that denoc_pin cannot accept."""


class SingularConfigurationError(ValueError):
    """No unique answer at this state: the generalized inertia matrix is singular (a joint that moves no mass), or
    a closed loop's actuated joints cannot drive the mechanism (their torques absorbed by the loop's reactions)."""


class ModelWarning(UserWarning):
    """A defect of a model's file that leaves the dynamics untouched (``docs/input-policy.md``): loaded, with
    the defect named; ``strict=True`` refuses it."""


FRAME_TYPES = ("op_frame", "joint", "fixed_joint", "body", "sensor")
"""The kinds of :class:`Frame`, Pinocchio's ``pin.FrameType`` in lower case."""


@dataclass(frozen=True)
class Frame:
    """A named frame fixed to a body, Pinocchio's ``pin.Frame``.

    name; body: the body (= joint index, Pinocchio's ``parentJoint``) it is fixed to; rotation (3, 3),
    translation (3,): its placement in that body's frame (Pinocchio's ``frame.placement``); type, one of
    ``FRAME_TYPES``: ``"body"`` a link of the source (those merged by fixed joints included), ``"joint"`` a
    joint's own frame, ``"fixed_joint"`` a fixed joint's, ``"op_frame"`` a user frame, ``"sensor"``.
    """

    name: str
    body: int
    rotation: np.ndarray
    translation: np.ndarray
    type: str = "body"


def default_frames(names, link_names) -> tuple[Frame, ...]:
    """Pinocchio's frames of a model built joint by joint: ``universe``, the base's link, then per joint its
    frame and its link's, at the joint's origin."""
    eye, zero = np.eye(3), np.zeros(3)  # shared, never written (Frame arrays are read only)
    eye.setflags(write=False)
    zero.setflags(write=False)
    frames = [Frame("universe", 0, eye, zero, "fixed_joint")]
    if link_names[0] != "universe":
        frames.append(Frame(link_names[0], 0, eye, zero, "body"))
    for k in range(1, len(names)):
        frames += [Frame(names[k], k, eye, zero, "joint"), Frame(link_names[k], k, eye, zero, "body")]
    return tuple(frames)


def _checked_frames(name: str, frames, njoints: int) -> tuple[Frame, ...]:
    """The frames as given, each checked: a known type, a body of the model, a finite rigid placement."""
    frames = tuple(frames)
    for f in frames:
        if not isinstance(f, Frame):
            raise ModelError(f"model {name!r}: frames must be dp.Frame, got {type(f).__name__}")
        what = f"model {name!r}: frame {f.name!r}"
        if f.type not in FRAME_TYPES:
            raise ModelError(f"{what} has type {f.type!r}; frame types are: {', '.join(FRAME_TYPES)}")
        if not (isinstance(f.body, (int, np.integer)) and 0 <= f.body < njoints):
            raise ModelError(f"{what} is fixed to body {f.body!r}; bodies are 0 … {njoints - 1}")
        if np.shape(f.rotation) != (3, 3) or np.shape(f.translation) != (3,):
            raise ModelError(f"{what}: its placement must be a finite (3, 3) rotation and a (3,) translation")
    if not frames:
        return frames
    # the numbers of every frame at once (a check per frame cost a model of 35 frames 4 ms)
    R = np.array([f.rotation for f in frames], dtype=float)
    p = np.array([f.translation for f in frames], dtype=float)
    finite = np.isfinite(R).all(axis=(1, 2)) & np.isfinite(p).all(axis=1)
    huge = ~(np.abs(np.where(finite[:, None], p, 0.0)).max(axis=1) <= MAX_MAGNITUDE)
    off = np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)) - (1e-6 + 1e-5 * np.eye(3))  # np.allclose(RᵀR, I)
    rigid = ~(off.max(axis=(1, 2)) > 0) & ~(np.linalg.det(np.where(finite[:, None, None], R, np.eye(3))) < 0)
    for k in np.flatnonzero(~finite | huge | ~rigid):
        what = f"model {name!r}: frame {frames[k].name!r}"
        if not finite[k]:
            raise ModelError(f"{what}: its placement must be a finite (3, 3) rotation and a (3,) translation")
        if huge[k]:
            raise ModelError(f"{what}: its translation {p[k].tolist()} has a magnitude beyond {MAX_MAGNITUDE:g}")
        raise ModelError(f"{what}: its rotation {R[k].tolist()} is not a rotation matrix")
    return frames


def _checked_collisions(name: str, collisions, njoints: int) -> tuple[Collision, ...]:
    """The collisions as a tuple, each on an existing body, their names unique."""
    out = tuple(collisions)
    seen: set[str] = set()
    for c in out:
        if not isinstance(c, Collision):
            raise ModelError(f"model {name!r}: collisions must be dp collisions (ModelBuilder.add_collision), got "
                             f"{type(c).__name__}")  # fmt: skip
        if not 0 <= c.body < njoints:
            raise ModelError(f"model {name!r}: collision {c.name!r} is on body {c.body}; bodies are 0..{njoints - 1}")
        if c.name in seen:
            raise ModelError(f"model {name!r}: two collisions are named {c.name!r}")
        seen.add(c.name)
    return out


def _checked_exclusions(name: str, pairs, collisions) -> tuple[tuple[str, str], ...]:
    """The excluded pairs of collision names, each sorted, sorted, without repeats; every name a collision's."""
    names = {c.name for c in collisions}
    out = set()
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise ModelError(f"model {name!r}: an excluded collision pair is two collision names, got {pair!r}")
        for n in pair:
            if n not in names:
                raise ModelError(f"model {name!r}: excluded collision pair {tuple(pair)!r}: no collision named {n!r}; "
                                 f"the collisions are {', '.join(sorted(names)) or 'none'}")  # fmt: skip
        if pair[0] != pair[1]:
            out.add(tuple(sorted(pair)))
    return tuple(sorted(out))


def _checked_pairs(name: str, pairs, collisions) -> tuple[tuple[str, str, float], ...]:
    """The explicit collision pairs (a, b, μ), names sorted, sorted, the last of a repeated pair kept; every name a
    collision's, a ≠ b, μ a number ≥ 0."""
    names = {c.name for c in collisions}
    out = {}
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 3:
            raise ModelError(f"model {name!r}: a collision pair is (name, name, friction), got {pair!r}")
        a, b, mu = pair
        for n in (a, b):
            if n not in names:
                raise ModelError(f"model {name!r}: collision pair {(a, b)!r}: no collision named {n!r}; the "
                                 f"collisions are {', '.join(sorted(names)) or 'none'}")  # fmt: skip
        if a == b:
            raise ModelError(f"model {name!r}: collision pair {(a, b)!r} pairs a collision with itself")
        try:
            mu = float(mu)
        except (TypeError, ValueError):
            mu = float("nan")
        if not (np.isfinite(mu) and mu >= 0.0):
            raise ModelError(f"model {name!r}: collision pair {(a, b)!r}: friction must be a number >= 0, got "
                             f"{pair[2]!r}")  # fmt: skip
        out[tuple(sorted((str(a), str(b))))] = mu
    return tuple((a, b, mu) for (a, b), mu in sorted(out.items()))


def placement_pair(placement, what: str = "placement") -> tuple[np.ndarray, np.ndarray]:
    """(R, p), copies, from None (identity), a pair (R, p), a 4 x 4 homogeneous matrix or a ``pinocchio.SE3``; a
    ModelError naming ``what`` if it is none of these or R is not a rotation."""
    if placement is None:
        return np.eye(3), np.zeros(3)
    try:
        if hasattr(placement, "rotation") and hasattr(placement, "translation"):  # pinocchio.SE3
            R, p = np.array(placement.rotation, dtype=float), np.array(placement.translation, dtype=float)
        elif isinstance(placement, tuple | list) and len(placement) == 2:
            R, p = (np.asarray(x, dtype=float) for x in placement)
        else:
            T = np.asarray(placement, dtype=float)
            if T.shape != (4, 4):
                raise ModelError(f"{what} must be (R, p), a 4x4 homogeneous matrix or a pinocchio.SE3, got shape "
                                 f"{T.shape}")  # fmt: skip
            R, p = T[:3, :3], T[:3, 3]
    except (TypeError, ValueError) as e:
        if isinstance(e, ModelError):
            raise
        raise ModelError(f"{what} must be (R, p), a 4x4 homogeneous matrix or a pinocchio.SE3: {e}") from None
    if R.shape != (3, 3) or p.shape != (3,):
        raise ModelError(f"{what} (R, p) must be a (3, 3) rotation and a (3,) position, got {R.shape} and {p.shape}")
    if not (np.isfinite(R).all() and np.isfinite(p).all()):
        raise ModelError(f"{what} is not finite")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ModelError(f"{what}: its rotation R is not a rotation matrix (RᵀR ≠ 1 or det R < 0)")
    return R.copy(), p.copy()


class Model:
    """Topology, joints, placements and inertias of a tree, grouped into kinematic modules.

    Fields (njoints = number of bodies + 1; index 0 is the base):

    - ``names``: (njoints,) joint names, ``names[0] == "universe"``.
    - ``link_names``: (njoints,) name of the link carried by each body (index 0: root link).
    - ``parents``: (njoints,) int, parent body, ``parents[k] < k``; ``parents[0] == 0``.
    - ``kinds``: (njoints,) int joint-kind codes (``core.joints.JOINTS``).
    - ``idx_q``, ``idx_v``, ``nqs``, ``nvs``: (njoints,) int, where each joint sits in q and v.
    - ``axes``: (njoints, 3) unit joint axis e_k, in the joint (body) frame; for a universal
      joint the first axis, in the parent's joint frame.  ``axes2``: (njoints, 3) the universal
      joint's second axis (zero for other kinds).  ``pitches``: (njoints,) a helical joint's
      pitch [m/rad] (zero for other kinds).
    - ``placement_rotation``: (njoints, 3, 3) and ``placement_translation``: (njoints, 3):
      pose of joint frame k in its parent body's frame at q = 0.
    - ``masses``: (njoints,); ``coms``: (njoints, 3) centre of mass d_k in the body frame;
      ``inertias``: (njoints, 3, 3) rotational inertia about the centre of mass, body frame.
    - ``inertias_origin``: (njoints, 3, 3) I_k about the body origin (parallel axes), body
      frame; zero for the base.
    - ``M``: (njoints, 6, 6) the paper's mass matrix M_k about the body origin (eq. 2b),
      order [ω; v]; a property, formed on first access.
    - ``gravity``: (3,) gravity vector in the base frame (default (0, 0, -9.81) as Pinocchio).
    - ``modules``: tuple of :class:`Module`; ``module_ptr``, ``module_bodies``, ``body_module``
      are their flat form for the compiled recursions.

    - ``slot``, ``slot_init``: (njoints,) int, where the factorization keeps M̂_k (``Data.M_hat``).
    - ``unrotated``: (njoints,) int, 1 where ``placement_rotation[k]`` is exactly the identity (a URDF joint
      without rpy): the kinematics then skip the product by it.
    - ``dof_parent``: (nv,) int, λ(c): the DOF before c on its path to the base, −1 for none (a joint's DOFs in
      order, its first after its nearest moving ancestor's last); GIM[c, d] ≠ 0 only where one of c, d is on the
      other's λ-path, so GIM = Lᵀ L has no fill (``composite.ltl_factor``).
    - ``frames``: tuple of :class:`Frame`, Pinocchio's ``model.frames``: ``universe``, every link of the source
      (those merged by fixed joints included), every joint's and fixed joint's frame, and user frames
      (``add_frame``), in Pinocchio's order for a URDF; ``frame_id(name)`` is the index of one.
      ``frame_buffer``: (nframes, 13) their flat form for the kernels (``core.tables.FRAME_ROW``).
    - ``loops``: tuple of :class:`LoopJoint`, the joints cut to open closed loops (``denoc_pin.loops``);
      ``couplings``: tuple of :class:`JointCoupling`, joints geared together (an SDF gearbox, a URDF mimic);
      ``n_constraints``: their total number of constraints (rows of the loop Jacobian: the cuts', then one per
      coupling); ``coupled``: the couplings resolved onto the bodies (``core.cuts.Coupling``).
    - ``collisions``: tuple of :class:`~denoc_pin.core.shapes.Collision`, the shapes the contacts are detected on
      (``ModelBuilder.add_collision``; ``load_urdf`` and ``load_sdf`` read ``<collision>``, ``load_mjcf`` the geoms
      that touch something), each on a body at a placement in its
      frame; ``simulate(..., ground=…)`` reads them.  ``excluded_collisions``: sorted pairs of collision names that
      never touch each other (an MJCF ``<exclude>``, an SRDF's ``disable_collisions``, ``exclude_collisions``);
      ``collision_pairs``: sorted (a, b, μ), pairs of collision names that may touch whatever their bits, their
      bodies' joint or the exclusions, with their own μ (an MJCF ``<pair>``, ``ModelBuilder.add_collision_pair``).
    - ``passive``: tuple of joint names without an actuator (``constrained_inverse_dynamics`` gives
      them zero torque by default); empty: every joint is actuated.
    - ``lower_position_limit``, ``upper_position_limit``: (nq,) and ``velocity_limit``, ``effort_limit``: (nv,),
      Pinocchio's names and layouts; ``UNBOUNDED`` (Pinocchio's ±1.797e308) where a joint has none.  No
      algorithm reads them: ``random_configuration`` samples within them, the bridge carries them.

    The arrays the kernels read are views of one read-only float64 buffer ``mb``: its first part ``mi``
    (int64, bit for bit) holds the sizes (``core.tables.SIZES``) and ``MODEL_INTS``, the rest ``mf`` holds
    ``MODEL_FLOATS``; ``core/tables.py`` declares both tables.  ``cuts`` are the loop joints resolved onto the
    bodies (``core.cuts.Cut``), and ``constraint_buffer`` the cuts and couplings as the loop kernel reads them
    (``core.cuts.PACKED``).
    ``nqs``, ``body_module``, ``inertias`` and ``M`` are formed on first access (no kernel reads them: at
    100,000 bodies they would take 11 MB).
    """

    def __init__(
        self,
        *,
        name: str,
        names,
        link_names,
        parents,
        kinds,
        axes,
        placement_rotation,
        placement_translation,
        masses,
        coms,
        inertias,
        frames=None,
        gravity=(0.0, 0.0, -9.81),
        source: str | None = None,
        axes2=None,
        pitches=None,
        loops: ResolvedLoops | None = None,
        passive=(),
        lower_position_limit=None,
        upper_position_limit=None,
        velocity_limit=None,
        effort_limit=None,
        collisions=(),
        excluded_collisions=(),
        collision_pairs=(),
    ):
        """Keyword arguments as the fields above (a limit left out: ``UNBOUNDED``); ``loops`` comes resolved onto
        the bodies (``denoc_pin.loops.resolve_loops``), as the builder and the loaders hand it over."""
        parents = np.asarray(parents, dtype=np.int64)
        kinds = np.asarray(kinds, dtype=np.int64)
        njoints = len(parents)
        if njoints < 2:
            raise ModelError(f"model {name!r} has no movable joint")
        body = np.arange(njoints)
        bad = np.flatnonzero((parents[1:] < 0) | (parents[1:] >= body[1:])) + 1
        if bad.size:
            k = int(bad[0])
            raise ModelError(f"model {name!r}: parent of body {k} is {parents[k]}; expected 0 <= parent < {k}")
        bad = np.flatnonzero((kinds[1:] <= BASE) | (kinds[1:] >= len(JOINTS))) + 1
        if bad.size:
            k = int(bad[0])
            raise ModelError(f"model {name!r}: unknown joint kind code {kinds[k]} for joint {names[k]!r}")
        # Axes: unit, where the kind has one (vectorised: models reach 100,000 bodies).
        axes = np.array(axes, dtype=float).reshape(njoints, 3)
        axes2 = np.zeros((njoints, 3)) if axes2 is None else np.array(axes2, dtype=float).reshape(njoints, 3)
        pitches = np.zeros(njoints) if pitches is None else np.array(pitches, dtype=float).reshape(njoints)
        has_axis = np.isin(kinds, WITH_AXIS)
        has_axis[0] = False
        two_axes = np.isin(kinds, [c for c, k in JOINTS.items() if k.axes == 2])
        for which, ax, used in (("axis", axes, has_axis), ("second axis", axes2, two_axes)):
            ax[~used] = 0.0
            norms = np.linalg.norm(ax, axis=1)
            bad = np.flatnonzero(used & ~(np.isfinite(norms) & (norms > 0)))
            if bad.size:
                k = int(bad[0])
                raise ModelError(
                    f"model {name!r}: joint {names[k]!r} has a zero or non-finite {which} {ax[k].tolist()}"
                )
            ax[used] /= norms[used, None]
        bad = np.flatnonzero(two_axes & (np.abs(np.einsum("ij,ij->i", axes, axes2)) > 1e-9))
        if bad.size:
            k = int(bad[0])
            raise ModelError(
                f"model {name!r}: the axes of universal joint {names[k]!r} must be orthogonal, "
                f"got {axes[k].tolist()} and {axes2[k].tolist()}"
            )
        has_pitch = np.isin(kinds, [c for c, k in JOINTS.items() if k.pitch])
        bad = np.flatnonzero(has_pitch & ~np.isfinite(pitches))
        if bad.size:
            raise ModelError(f"model {name!r}: joint {names[int(bad[0])]!r} has a non-finite pitch")
        pitches[~has_pitch] = 0.0
        nqs, nvs = nq_nv(kinds)
        idx_q = np.concatenate([[0], np.cumsum(nqs)[:-1]])
        idx_v = np.concatenate([[0], np.cumsum(nvs)[:-1]])
        set_ = object.__setattr__
        set_(self, "name", str(name))
        set_(self, "source", source)
        set_(self, "names", tuple(names))
        set_(self, "link_names", tuple(link_names))
        set_(self, "njoints", njoints)
        set_(self, "nq", int(nqs.sum()))
        set_(self, "nv", int(nvs.sum()))
        modules = decompose(parents, tuple(names), nvs)
        ptr, bodies, _ = module_arrays(modules, njoints - 1)
        zmax = int(nvs.max())
        slot, slot_init, nslots = articulated_slots(parents, bodies)
        # Two flat buffers hold every array the kernels read (declared in core/tables.py); the fields are views.
        head = np.array([njoints, nvs.sum(), len(modules), zmax, nqs.sum(), nslots], dtype=np.int64)
        ni, nf = buffer_sizes(head)
        # A joint frame not rotated in its parent's frame (URDF's rpy = 0, most chains) skips the kinematics' product
        # by the placement rotation: 27 products and 9 loads a joint, a ninth of a revolute chain's inverse dynamics.
        rot = np.asarray(placement_rotation, dtype=float).reshape(njoints, 3, 3)
        unrotated = np.all(rot == np.eye(3), axis=(1, 2)).astype(np.int64)
        dof_parent = dof_parents(parents, idx_v, nvs)
        mi = np.concatenate([head, parents, kinds, idx_q, idx_v, nvs, ptr, bodies, slot, slot_init, unrotated,
                             dof_parent])  # fmt: skip
        mi = mi.astype(np.int64)
        # mf is filled through its own views, not concatenated: at 100,000 bodies a concatenation
        # would hold every input twice at the moment of the process's peak memory.
        assert mi.size == ni and HEADER == head.size
        mb, mi, mf = model_buffer(mi, nf)
        w = numpy_views(model_views, mi, mf)
        w.placement_rotation[:] = rot
        w.placement_translation[:] = np.asarray(placement_translation, dtype=float).reshape(njoints, 3)
        w.axes[:] = axes
        w.axes2[:] = axes2
        w.pitches[:] = pitches
        w.gravity[:] = np.asarray(gravity, dtype=float).reshape(3)
        w.masses[:] = masses
        w.coms[:] = np.asarray(coms, dtype=float).reshape(njoints, 3)
        inertias = np.asarray(inertias, dtype=float).reshape(njoints, 3, 3)
        # The builder's and the Pinocchio bridge's gate of the input policy (the URDF loader refuses these with
        # their lines first): a NaN, an inf or an absurd magnitude would come out as NaNs, never as an error.
        checked = {
            "placement rotation": w.placement_rotation,
            "placement translation": w.placement_translation,
            "pitch": w.pitches,
            "mass": w.masses,
            "centre of mass": w.coms,
            "inertia": inertias,
            "gravity": w.gravity[None],
        }
        for what, a in checked.items():
            bad = (~np.isfinite(a) | (np.abs(a) > MAX_MAGNITUDE)).reshape(len(a), -1).any(axis=1)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                where = "gravity" if what == "gravity" else f"joint {names[k]!r}: its {what}"
                raise ModelError(
                    f"model {name!r}: {where} {np.asarray(a[k]).tolist()} is not finite or has a magnitude beyond "
                    f"{MAX_MAGNITUDE:g}"
                )
        inertia_about_origin(w.masses, w.coms, inertias, out=w.inertias_origin)
        w.inertias_origin[0] = 0.0  # the base never moves; the recursions never read its inertia
        mb.setflags(write=False)  # views made from here on are read-only too (the filling views were not)
        set_(self, "mb", mb)
        # mi and mf again, from the read-only mb: the views above were made while mb was writable.
        self._set_views(mi.size)
        set_(self, "zmax", zmax)
        set_(self, "modules", modules)
        # None: Pinocchio's frames of a model built joint by joint (default_frames), formed on first access.
        set_(self, "_frames", None if frames is None else _checked_frames(name, frames, njoints))
        loops = ResolvedLoops() if loops is None else loops
        if not isinstance(loops, ResolvedLoops):
            raise ModelError(
                f"model {name!r}: loops must be resolved onto the bodies (denoc_pin.loops.resolve_loops), got "
                f"{type(loops).__name__}; ModelBuilder.add_loop and the loaders do this"
            )
        set_(self, "loops", loops.joints)
        set_(self, "cuts", loops.cuts)
        set_(self, "constraint_buffer", loops.packed())
        set_(self, "coupled", loops.couplings)
        set_(self, "couplings", tuple(c.coupling for c in loops.couplings))
        set_(self, "n_constraints", loops.n_constraints)
        passive = (passive,) if isinstance(passive, str) else tuple(passive)
        for p in passive:
            if p not in self.names[1:]:
                raise ModelError(
                    f"passive joint {p!r} is not in model {name!r}; joints are: {', '.join(self.names[1:])}"
                )
        set_(self, "passive", tuple(dict.fromkeys(passive)))
        limits = zip(
            LIMIT_FIELDS,
            (lower_position_limit, upper_position_limit, velocity_limit, effort_limit),
            (self.nq, self.nq, self.nv, self.nv),
            (-UNBOUNDED, UNBOUNDED, UNBOUNDED, UNBOUNDED),
            strict=True,
        )
        for field, given, n, default in limits:
            a = np.full(n, default) if given is None else np.array(given, dtype=float)
            if a.shape != (n,) or np.isnan(a).any():
                raise ModelError(f"model {name!r}: {field} must be {n} numbers (not NaN), got shape {a.shape}")
            a.setflags(write=False)
            set_(self, field, a)
        set_(self, "collisions", _checked_collisions(name, collisions, njoints))
        set_(self, "excluded_collisions", _checked_exclusions(name, excluded_collisions, self.collisions))
        set_(self, "collision_pairs", _checked_pairs(name, collision_pairs, self.collisions))

    def _set_views(self, ni: int) -> None:
        """mi, mf and every kernel field as views of the read-only ``mb`` (its first ``ni`` words are mi)."""
        object.__setattr__(self, "mi", self.mb[:ni].view(np.int64))
        object.__setattr__(self, "mf", self.mb[ni:])
        for field, view in numpy_views(model_views, self.mi, self.mf)._asdict().items():
            object.__setattr__(self, field, view)

    def __getstate__(self) -> dict:
        # Pickle copies each view as an array of its own: only mb goes, the views are made again from it.
        views = {
            "mi",
            "mf",
            *ModelViews._fields,
            "_nqs",
            "_body_module",
            "_inertias",
            "_M",
            "_neutral",
            "frame_buffer",
            "joint_frame_buffer",
            "_frame_index",
            "_last_stepper",
        }  # fmt: skip  (a run's stepper: not pickled)
        return {"_ni": self.mi.size} | {k: v for k, v in self.__dict__.items() if k not in views}

    def __setstate__(self, state: dict) -> None:
        ni = state.pop("_ni")
        self.__dict__.update(state)
        mb = np.array(self.mb)  # an unpickled array owns its memory: make it read-only again
        mb.setflags(write=False)
        for field in LIMIT_FIELDS:
            getattr(self, field).setflags(write=False)
        object.__setattr__(self, "mb", mb)
        self._set_views(ni)

    def _formed(self, key: str, make) -> np.ndarray:
        """A read-only array formed on first access and kept (fields no kernel reads)."""
        a = self.__dict__.get(key)
        if a is None:
            a = make()
            a.setflags(write=False)
            object.__setattr__(self, key, a)
        return a

    @property
    def nqs(self) -> np.ndarray:
        """(njoints,) int, the size n_q of each joint in q."""
        return self._formed("_nqs", lambda: nq_nv(self.kinds)[0])

    @property
    def body_module(self) -> np.ndarray:
        """(njoints,) int, the module index of each body, -1 for the base."""
        return self._formed("_body_module", lambda: module_arrays(self.modules, self.njoints - 1)[2])

    @property
    def inertias(self) -> np.ndarray:
        """(njoints, 3, 3) rotational inertia about the centre of mass, body frame (parallel axes from I_k);
        zero for the base."""

        def make():
            I_c = self.inertias_origin - inertia_about_origin(self.masses, self.coms, np.zeros((self.njoints, 3, 3)))
            I_c[0] = 0.0  # like I_k about o_k: the base's is never used
            return I_c

        return self._formed("_inertias", make)

    @property
    def M(self) -> np.ndarray:
        """(njoints, 6, 6) the paper's mass matrices M_k about the body origins (eq. 2b), [ω; v], M_0 = 0.

        Formed on first access and kept; the kernels form M_k from ``masses``, ``coms`` and
        ``inertias_origin`` instead, so that a 100,000-body model does not carry 29 MB of them."""

        def make():
            M = mass_matrix(self.masses, self.coms, self.inertias_origin)
            M[0] = 0.0
            return M

        return self._formed("_M", make)

    @property
    def frames(self) -> tuple[Frame, ...]:
        """Every frame of the model (see the class's fields), Pinocchio's ``model.frames``."""
        if self._frames is None:
            object.__setattr__(self, "_frames", default_frames(self.names, self.link_names))
        return self._frames

    @property
    def nframes(self) -> int:
        """len(model.frames)."""
        return len(self.frames)

    @cached_property
    def frame_buffer(self) -> np.ndarray:
        """(nframes, 13) read-only: each frame's row (``core.tables.FRAME_ROW``) for the kernels.  Formed on first
        access and kept in the instance (a plain attribute from then on: the fast calls read it)."""
        return frame_rows([(f.body, f.rotation, f.translation) for f in self.frames])

    @cached_property
    def joint_frame_buffer(self) -> np.ndarray:
        """(njoints, 13) read-only: ``frame_buffer``'s rows of the joint frames, row k on body k at its origin (the
        joint's frame, Pinocchio's ``oMi[k]``), so that a frame kernel reads joint k as frame k."""
        eye, zero = np.eye(3), np.zeros(3)
        return frame_rows([(k, eye, zero) for k in range(self.njoints)])

    def frame_id(self, name: str, type: str | None = None) -> int:
        """Index in ``frames`` of the frame named ``name`` (of ``type``, if given), Pinocchio's ``getFrameId``.  As
        there, a name that several frames carry (a joint and its link named alike) needs its ``type``; the errors
        list the valid names."""
        index = self.__dict__.get("_frame_index")
        if index is None:
            index = {}
            for i, f in enumerate(self.frames):
                index.setdefault(f.name, []).append(i)
                index.setdefault((f.name, f.type), []).append(i)
            object.__setattr__(self, "_frame_index", index)
        found = index.get(name if type is None else (name, type))
        if found is not None and len(found) == 1:
            return found[0]
        if found:
            types = ", ".join(repr(self.frames[i].type) for i in found)
            raise ModelError(
                f"{len(found)} frames of model {self.name!r} are named {name!r} (of types {types}): give its type, "
                f"model.frame_id({name!r}, type=…)"
            )
        if type is not None and type not in FRAME_TYPES:
            raise ModelError(f"unknown frame type {type!r}; frame types are: {', '.join(FRAME_TYPES)}")
        valid = list(dict.fromkeys(f.name for f in self.frames if type is None or f.type == type))
        listed = ", ".join(valid[:60]) + (f", … ({len(valid)} frames)" if len(valid) > 60 else "")
        kind = "frame" if type is None else f"{type} frame"
        raise ModelError(f"no {kind} {name!r} in model {self.name!r}; frames are: {listed}")

    def frame_index(self, frame) -> int:
        """A frame given by name or index, as its index (the error names the valid ones)."""
        if isinstance(frame, str):
            return self.frame_id(frame)
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
            n = len(self.frames)
            if -n <= frame < n:
                return int(frame) % n
            raise ModelError(f"frame index {frame} is out of range for model {self.name!r} ({n} frames)")
        raise ModelError(f"a frame is a name or an index (model.frame_id(name)), got {type(frame).__name__}")

    def add_frame(self, name: str, parent, placement=None, type: str = "op_frame") -> Model:
        """A new model with a frame ``name`` fixed at ``placement`` ((R, p) or 4 x 4, default identity) in the
        frame ``parent`` (a frame's name or index: a link, a joint, another user frame); Pinocchio's
        ``addFrame``.  The model itself is untouched."""
        if not isinstance(name, str) or not name:
            raise ModelError(f"add_frame: a frame's name is a non-empty string, got {name!r}")
        if type not in FRAME_TYPES:
            raise ModelError(f"add_frame: unknown frame type {type!r}; frame types are: {', '.join(FRAME_TYPES)}")
        if any(f.name == name and f.type == type for f in self.frames):
            raise ModelError(f"add_frame: model {self.name!r} has a {type} frame named {name!r} already")
        host = self.frames[self.frame_index(parent)]
        R, p = placement_pair(placement, f"add_frame {name!r}: placement")
        Rh, ph = np.asarray(host.rotation, float), np.asarray(host.translation, float)
        frame = _checked_frames(self.name, [Frame(name, host.body, Rh @ R, Rh @ p + ph, type)], self.njoints)[0]
        fields = self.fields()
        fields["frames"] = self.frames + (frame,)
        return Model(**fields)

    def fields(self) -> dict:
        """The keyword arguments that make this model again (``Model(**model.fields())``), loops resolved."""
        fields = {
            "name": self.name, "names": self.names, "link_names": self.link_names, "parents": self.parents,
            "kinds": self.kinds, "axes": self.axes, "axes2": self.axes2, "pitches": self.pitches,
            "placement_rotation": self.placement_rotation, "placement_translation": self.placement_translation,
            "masses": self.masses, "coms": self.coms, "inertias": self.inertias, "frames": self._frames,
            "gravity": self.gravity, "source": self.source, "loops": ResolvedLoops(self.cuts, self.coupled),
            "passive": self.passive, "collisions": self.collisions, "excluded_collisions": self.excluded_collisions,
            "collision_pairs": self.collision_pairs,
        }  # fmt: skip
        return fields | {f: getattr(self, f) for f in LIMIT_FIELDS}

    def __setattr__(self, key, value):
        raise AttributeError(f"denoc_pin.Model is immutable (tried to set {key!r}); build a new model instead")

    def create_data(self) -> Data:
        """A preallocated workspace for the algorithms (Pinocchio's ``model.createData()``)."""
        return Data(self)

    def joint_id(self, name: str) -> int:
        """Body/joint index of a joint name, with the valid names in the error."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ModelError(
                f"no joint {name!r} in model {self.name!r}; joints are: {', '.join(self.names[1:])}"
            ) from None

    def __repr__(self) -> str:
        bodies, modules = self.njoints - 1, len(self.modules)
        loops = f", {len(self.loops)} loops" if self.loops else ""
        loops += f", {len(self.couplings)} couplings" if self.couplings else ""
        loops += f" ({self.n_constraints} constraints)" if self.n_constraints else ""
        return f"<denoc_pin.Model {self.name!r}: {bodies} bodies, nq={self.nq}, nv={self.nv}, {modules} modules{loops}>"

    def __str__(self) -> str:
        head = (
            f"Model {self.name!r}: nq={self.nq}, nv={self.nv}, {self.njoints - 1} bodies, {len(self.modules)} modules"
        )
        text = head + "\n" + draw_module_tree(self.modules, base=self.link_names[0])
        for lp in self.loops:
            text += f"\nloop joint {lp.name!r}: {lp.type}, {lp.link1} -> {lp.link2}, {lp.n_constraints} constraints"
        for c in self.couplings:
            text += f"\ncoupling {c.name!r}: {c.joint} = {c.rule}{' (held)' if c.held else ''}, 1 constraint"
        if self.passive:
            text += f"\npassive joints: {', '.join(self.passive)}"
        return text
