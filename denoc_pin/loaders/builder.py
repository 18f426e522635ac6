"""Build a :class:`Model` in Python, for systems that have no URDF (ropes, huge chains, test trees)."""

from __future__ import annotations

import numpy as np

from ..algorithms.checks import check_not_singular
from ..core.joints import BUILDER_NAMES, JOINTS, kind_of
from ..core.shapes import Collision, Shape, pairs_between
from ..core.spatial import inertia_about_origin
from ..loops import JointCoupling, LoopJoint, resolve_loops
from ..model import FRAME_TYPES, LIMIT_FIELDS, MAX_MAGNITUDE, UNBOUNDED, Frame, Model, ModelError, placement_pair

__all__ = ["BUILDER_JOINTS", "ModelBuilder"]

BUILDER_JOINTS = (*BUILDER_NAMES, "fixed")


class ModelBuilder:
    """Add bodies one by one (parents first), then ``build()`` a :class:`Model`.

    Any order with parents first works for denoc_pin; to cross-check with ``dp.to_pinocchio(model)``
    add them depth-first (finish a branch before starting the next), as Pinocchio requires.

    >>> b = ModelBuilder("pendulum")
    >>> link = b.add_body(0, joint="revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5))
    >>> model = b.build()
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81), base: str = "universe"):
        """base: the name of the base link (the paper's #0), to which bodies with parent 0 attach."""
        self.name = name
        self.gravity = np.asarray(gravity, dtype=float)
        self._added = 0
        self._names = ["universe"]
        self._links = [base]
        self._parents = [0]
        self._kinds = [0]
        self._axes = [np.zeros(3)]
        self._axes2 = [np.zeros(3)]
        self._pitches = [0.0]
        self._R = [np.eye(3)]
        self._p = [np.zeros(3)]
        # per body: mass, first moment m c, inertia about the body origin (fixed links add here)
        self._mass = [0.0]
        self._h = [np.zeros(3)]
        self._I_o = [np.zeros((3, 3))]
        # link name -> (body, R, p): where a link frame sits on its body
        self._frames: dict[str, tuple[int, np.ndarray, np.ndarray]] = {base: (0, np.eye(3), np.zeros(3))}
        # every frame, in order (Model.frames): each joint's, then its link's, as Pinocchio's parser makes them
        self._frame_list = [Frame("universe", 0, np.eye(3), np.zeros(3), "fixed_joint")]
        if base != "universe":
            self._frame_list.append(Frame(base, 0, np.eye(3), np.zeros(3)))
        self._loops: list = []
        self._couplings: list = []
        self._passive: list = []  # names of unactuated joints (Model.passive)
        self._collisions: list[Collision] = []  # Model.collisions
        self._excluded: list[tuple[str, str]] = []  # Model.excluded_collisions, by collision name
        self._paired: list[tuple[str, str, float]] = []  # Model.collision_pairs, by collision name
        self._limits: dict[str, list] = {f: [] for f in LIMIT_FIELDS}  # per joint, in q (positions) or v

    def _resolve_parent(self, parent) -> tuple[int, np.ndarray, np.ndarray]:
        if isinstance(parent, str):
            if parent in self._frames:
                return self._frames[parent]
            if parent in self._names:
                k = self._names.index(parent)
                return k, np.eye(3), np.zeros(3)
            raise ModelError(f"ModelBuilder: no link or joint named {parent!r}; links are: {', '.join(self._frames)}")
        k = int(parent)
        if not 0 <= k < len(self._names):
            raise ModelError(f"ModelBuilder: parent body {k} does not exist yet (bodies 0..{len(self._names) - 1})")
        return k, np.eye(3), np.zeros(3)

    def add_body(
        self,
        parent=0,
        joint: str = "revolute",
        axis=(0.0, 0.0, 1.0),
        placement=None,
        mass: float = 0.0,
        com=(0.0, 0.0, 0.0),
        inertia=None,
        name: str | None = None,
        link: str | None = None,
        pitch: float | None = None,
        lower=None,
        upper=None,
        velocity=None,
        effort=None,
        link_placement=None,
    ) -> int:
        """Attach a link to ``parent`` (body index, 0 = base, or a link/joint name) through ``joint``.

        axis: unit joint axis in the joint frame; for "universal" a pair (e1, e2) of orthogonal axes.
        pitch: for "helical" (and only for it), the translation along the axis per radian turned [m/rad].
        placement: (R, p) or 4x4, the joint frame in the parent link's frame at q = 0.
        mass, com (centre of mass in the link frame), inertia (3x3 about the centre of mass), or inertia=a
        ``pinocchio.Inertia`` alone (its mass, lever and rotational inertia).
        link_placement: (R, p) or 4x4, the link's frame in the joint frame (default: the same frame; an SDF link
        whose joint sits away from the link's origin); children attached by the link's name hang from it.
        lower, upper (the joint's nq numbers, or one for all), velocity, effort (its nv, or one): its limits, in
        Pinocchio's layout (``Model.lower_position_limit``, …); left out: unbounded, as Pinocchio's ``addJoint``.
        Returns the body index; a "fixed" joint merges the link into its parent body and
        returns that body's index (attach to the fixed link's own frame by its link name).
        """
        if joint not in BUILDER_JOINTS:
            raise ModelError(f"ModelBuilder: unknown joint {joint!r}; valid joints are: {', '.join(BUILDER_JOINTS)}")
        if (pitch is None) == (joint == "helical"):
            raise ModelError(
                f"ModelBuilder: a helical joint takes pitch=… [m/rad], and only a helical joint does; got joint "
                f"{joint!r} with pitch={pitch!r}"
            )
        b, Rl, pl = self._resolve_parent(parent)
        Rj, pj = placement_pair(placement)
        R, p = Rl @ Rj, Rl @ pj + pl  # joint frame in the parent body's frame
        k = len(self._names)
        self._added += 1  # default names count every call, fixed joints included
        name = name or f"joint_{self._added}"
        link = link or f"link_{self._added}"
        if name in self._names:
            raise ModelError(f"ModelBuilder: a joint named {name!r} exists already")
        if link in self._frames:
            raise ModelError(f"ModelBuilder: a link named {link!r} exists already")
        if hasattr(inertia, "lever") and hasattr(inertia, "mass"):  # a pinocchio.Inertia: mass, com and inertia
            if mass != 0.0 or np.any(np.asarray(com, dtype=float) != 0.0):
                raise ModelError(f"ModelBuilder: link {link!r}: a pinocchio.Inertia gives the mass and the centre of "
                                 f"mass too; pass mass= and com= or the Inertia, not both")  # fmt: skip
            mass, com, inertia = inertia.mass, inertia.lever, inertia.inertia
        mass = float(mass)
        com = np.asarray(com, dtype=float).reshape(3)
        I_c = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float).reshape(3, 3)
        if mass < 0 or not np.isfinite(mass):
            raise ModelError(f"ModelBuilder: link {link!r} has a negative or non-finite mass ({mass})")
        for what, x in (("mass", mass), ("com", com), ("inertia", I_c), ("placement translation", pj)):
            if not (np.isfinite(x).all() and np.abs(x).max() <= MAX_MAGNITUDE):
                raise ModelError(
                    f"ModelBuilder: link {link!r}: {what} {np.asarray(x).tolist()} is not finite or has a magnitude "
                    f"beyond {MAX_MAGNITUDE:g}"
                )
        if not np.all(np.isfinite(I_c)) or np.linalg.eigvalsh(0.5 * (I_c + I_c.T))[0] < -1e-12 * max(
            1.0, np.trace(I_c)
        ):
            raise ModelError(f"ModelBuilder: the inertia of link {link!r} is not positive semi-definite")
        Rx, px = placement_pair(link_placement, f"ModelBuilder: link {link!r}: link_placement")
        if joint == "fixed":
            if any(x is not None for x in (lower, upper, velocity, effort)):
                raise ModelError(f"ModelBuilder: a fixed joint has no limits (link {link!r})")
            target, Rf, pf = b, R @ Rx, R @ px + p
            self._frames[link] = (b, Rf, pf)
            self._frame_list += [Frame(name, b, R, p, "fixed_joint"), Frame(link, b, Rf, pf)]
        else:
            if JOINTS[kind_of(joint, "ModelBuilder")].axes == 2:
                a = np.asarray(axis, dtype=float)
                if a.shape != (2, 3):
                    raise ModelError(
                        f"ModelBuilder: a universal joint takes axis=(e1, e2), two 3-vectors; got {a.tolist()}"
                    )
                e1, e2 = a
            else:
                e1, e2 = np.asarray(axis, dtype=float).reshape(3), np.zeros(3)
            kind = kind_of(joint, "ModelBuilder")
            sizes = {"lower": JOINTS[kind].nq, "upper": JOINTS[kind].nq, "velocity": JOINTS[kind].nv,
                     "effort": JOINTS[kind].nv}  # fmt: skip
            given = {"lower": lower, "upper": upper, "velocity": velocity, "effort": effort}
            for (arg, value), field in zip(given.items(), LIMIT_FIELDS, strict=True):
                n = sizes[arg]
                a = np.asarray((-UNBOUNDED if arg == "lower" else UNBOUNDED) if value is None else value, float).ravel()
                if a.size not in (1, n):
                    raise ModelError(
                        f"ModelBuilder: joint {name!r}: {arg}= takes one number or {n} (the joint's "
                        f"{'nq' if arg in ('lower', 'upper') else 'nv'}), got {a.size}"
                    )
                self._limits[field].append(np.broadcast_to(a, n).copy())
            low, high = self._limits["lower_position_limit"][-1], self._limits["upper_position_limit"][-1]
            if (low > high).any():
                for f in LIMIT_FIELDS:
                    self._limits[f].pop()
                raise ModelError(f"ModelBuilder: joint {name!r}: lower {low.tolist()} is above upper {high.tolist()}")
            self._names.append(name)
            self._links.append(link)
            self._parents.append(b)
            self._kinds.append(kind)
            self._pitches.append(float(pitch) if JOINTS[kind].pitch else 0.0)
            self._axes.append(e1)
            self._axes2.append(e2)
            self._R.append(R)
            self._p.append(p)
            self._mass.append(0.0)
            self._h.append(np.zeros(3))
            self._I_o.append(np.zeros((3, 3)))
            self._frames[link] = (k, Rx, px)
            self._frame_list += [Frame(name, k, np.eye(3), np.zeros(3), "joint"), Frame(link, k, Rx, px)]
            target, Rf, pf = k, Rx, px
        # the link's inertia, expressed in its body's frame
        c = Rf @ com + pf
        self._mass[target] += mass
        self._h[target] += mass * c
        self._I_o[target] += inertia_about_origin(mass, c, Rf @ I_c @ Rf.T)
        return target

    def add_frame(self, name: str, parent, placement=None, type: str = "op_frame") -> None:
        """A frame ``name`` fixed at ``placement`` ((R, p) or 4 x 4) in the link, joint or frame ``parent``
        (``Model.add_frame``; Pinocchio's ``addFrame``).  Bodies may attach to it by its name."""
        if not isinstance(name, str) or not name or name in self._frames:
            raise ModelError(f"ModelBuilder: add_frame needs a new name; {name!r} is taken or not a name")
        if type not in FRAME_TYPES:
            raise ModelError(f"ModelBuilder: unknown frame type {type!r}; frame types are: {', '.join(FRAME_TYPES)}")
        b, Rl, pl = self._resolve_parent(parent)
        R, p = placement_pair(placement, f"ModelBuilder: frame {name!r}: placement")
        self._frames[name] = (b, Rl @ R, Rl @ p + pl)
        self._frame_list.append(Frame(name, b, Rl @ R, Rl @ p + pl, type))

    def add_loop(
        self, name: str, type: str, link1: str, link2: str, placement1=None, placement2=None, axis=(0.0, 0.0, 1.0),
        axis2=None,
    ) -> None:  # fmt: skip
        """Close a loop with a cut joint between two links (see ``denoc_pin.loops``): frames C1, C2 at
        ``placement1``/``placement2`` = (R, p) or 4x4 in the link1/link2 frames, ``axis`` in C1,
        ``axis2`` (universal) in C2.  Checked when ``build()`` runs."""
        self.add_loop_joint(
            LoopJoint(name, type, link1, link2, placement_pair(placement1), placement_pair(placement2),
                      np.asarray(axis, dtype=float), None if axis2 is None else np.asarray(axis2, dtype=float))
        )  # fmt: skip

    def add_loop_joint(self, loop: LoopJoint) -> None:
        """Close a loop with a :class:`LoopJoint` as it is (checked when ``build()`` runs)."""
        if not isinstance(loop, LoopJoint):
            raise ModelError(f"ModelBuilder: add_loop_joint needs a dp.LoopJoint, got {type(loop).__name__}")
        self._loops.append(loop)

    def add_coupling(self, name: str, joint: str, reference: str, multiplier: float = 1.0, offset: float = 0.0) -> None:
        """Gear joint ``joint`` to ``reference``: θ = multiplier · θ_ref + offset (a :class:`JointCoupling`, one
        constraint; URDF's mimic convention).  Checked when ``build()`` runs."""
        self._couplings.append(JointCoupling(name, joint, reference, multiplier, offset))

    def add_collision(
        self, link, shape: Shape, placement=None, name: str | None = None, group: int = 1, mask: int = 1,
        friction: float = 1.0, ground: bool = False,
    ) -> None:  # fmt: skip
        """Fix a collision ``shape`` (``dp.Sphere``, ``dp.Box``, ``dp.Capsule``, ``dp.Cylinder``, ``dp.Mesh``) on
        ``link`` (a link's, joint's or frame's name, or a body index) at ``placement`` ((R, p) or 4 x 4, default the
        identity) in its frame.  group, mask: MuJoCo's contype/conaffinity bits (which pairs may touch); friction:
        μ against other collisions (the ground has its own); ground: it touches the ground whatever its bits."""
        if not isinstance(shape, Shape):
            raise ModelError(f"ModelBuilder: add_collision needs a shape (dp.Sphere, dp.Box, dp.Capsule, dp.Cylinder, "
                             f"dp.Mesh), got {type(shape).__name__}")  # fmt: skip
        b, Rl, pl = self._resolve_parent(link)
        label = link if isinstance(link, str) else self._links[b]
        name = f"{label}_collision_{len(self._collisions)}" if name is None else name
        R, p = placement_pair(placement, f"ModelBuilder: collision {name!r}: placement")
        for what, bits in (("group", group), ("mask", mask)):
            if not isinstance(bits, (int, np.integer)) or isinstance(bits, bool) or bits < 0:
                raise ModelError(f"ModelBuilder: collision {name!r}: {what} is a non-negative integer of bits, "
                                 f"got {bits!r}")  # fmt: skip
        if not (np.isfinite(friction) and friction >= 0):
            raise ModelError(f"ModelBuilder: collision {name!r}: friction must be a number >= 0, got {friction!r}")
        self._collisions.append(
            Collision(name, label, b, shape, Rl @ R, Rl @ p + pl, int(group), int(mask), float(friction), bool(ground))
        )

    def _excluded_pairs(self) -> list[tuple[str, str]]:
        """The excluded pairs as collision names: a link's name stands for every collision on it."""
        out = []
        for a, b in self._excluded:
            try:
                out += pairs_between(self._collisions, a, b, self._links)
            except ValueError as e:
                raise ModelError(f"ModelBuilder {self.name!r}: exclude_collisions: {e}") from None
        return out

    def add_collision_pair(self, a: str, b: str, friction: float = 1.0) -> None:
        """Collisions a and b may touch, with μ = friction, whatever their bits, their bodies' joint and the
        exclusions (MuJoCo's ``<pair>``): each a collision's name, or a link's (every collision on it, resolved at
        ``build``)."""
        self._paired.append((str(a), str(b), friction))

    def _explicit_pairs(self) -> list[tuple[str, str, float]]:
        """The explicit pairs as collision names (a link's name: every collision on it) with their μ."""
        out = []
        for a, b, mu in self._paired:
            try:
                out += [(x, y, mu) for x, y in pairs_between(self._collisions, a, b, self._links)]
            except ValueError as e:
                raise ModelError(f"ModelBuilder {self.name!r}: add_collision_pair: {e}") from None
        return out

    def exclude_collisions(self, a: str, b: str) -> None:
        """Collisions a and b never touch each other: each a collision's name, or a link's (every collision on it
        so far and later: the pairs are resolved at ``build``)."""
        self._excluded.append((str(a), str(b)))

    def add_passive(self, *names: str) -> None:
        """Mark the joints ``names`` passive (unactuated: ``Model.passive``); checked when ``build()`` runs."""
        self._passive.extend(names)

    def build(self) -> Model:
        """The immutable :class:`Model` (its GIM checked to be regular, as for URDFs)."""
        nj = len(self._names)
        masses = np.array(self._mass)
        coms = np.array([h / m if m > 0 else np.zeros(3) for h, m in zip(self._h, masses, strict=True)])
        inertias = np.array(
            [I - inertia_about_origin(m, c, np.zeros((3, 3))) for I, m, c in zip(self._I_o, masses, coms, strict=True)]
        )
        frames = list(self._frame_list)
        model = Model(
            name=self.name,
            names=self._names,
            link_names=self._links,
            parents=self._parents,
            kinds=self._kinds,
            axes=self._axes,
            axes2=self._axes2,
            placement_rotation=self._R,
            placement_translation=self._p,
            masses=masses,
            coms=coms,
            inertias=inertias,
            frames=frames,
            gravity=self.gravity,
            source="ModelBuilder",
            pitches=self._pitches,
            loops=resolve_loops(self.name, self._links, frames, self._loops, self._couplings, self._names, self._kinds),
            passive=self._passive,
            collisions=self._collisions,
            excluded_collisions=self._excluded_pairs(),
            collision_pairs=self._explicit_pairs(),
            **{f: np.concatenate(a) if a else np.zeros(0) for f, a in self._limits.items()},
        )
        if nj > 1:
            check_not_singular(model, where=f"model {self.name!r}")
        return model
