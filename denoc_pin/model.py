"""The immutable :class:`Model` and its preallocated :class:`Data` workspace.

Bodies are numbered like Pinocchio's joints: index 0 is the base (the paper's link #0,
Pinocchio's "universe"), body k ≥ 1 is the link moved by joint k, and ``parents[k] < k``.
Fixed joints are merged into the parent body, as Pinocchio does.  Joint kinds are data
(an integer code per body), not classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .layout import (
    articulated_slots,
    data_views,
    model_buffer,
    model_buffer_sizes,
    model_views,
    numpy_views,
    workspace_size,
)
from .modules import decompose, draw_module_tree, module_arrays
from .spatial import inertia_about_origin, mass_matrix


class ModelError(ValueError):
    """A model (URDF file, Pinocchio model, builder input) that denoc_pin cannot accept."""


# Joint kinds: code -> (name, nq, nv), q and v laid out as Pinocchio's joint of that kind.
# Index 0 is the base, which has no joint.
BASE, REVOLUTE, CONTINUOUS, PRISMATIC, FREE_FLYER, PLANAR, SPHERICAL, UNIVERSAL = range(8)
JOINT_KINDS: dict[int, tuple[str, int, int]] = {
    BASE: ("base", 0, 0),
    REVOLUTE: ("revolute", 1, 1),
    CONTINUOUS: ("continuous", 2, 1),  # q = (cos θ, sin θ), as Pinocchio's RevoluteUnbounded
    PRISMATIC: ("prismatic", 1, 1),
    # q = (x, y, z, qx, qy, qz, qw); v = (linear, angular) twist of the body in its own frame
    FREE_FLYER: ("free-flyer", 7, 6),
    # q = (x, y, cos θ, sin θ); v = (vx, vy, ω) in the body frame, motion in the joint's x-y plane
    PLANAR: ("planar", 4, 3),
    SPHERICAL: ("spherical", 4, 3),  # q = (qx, qy, qz, qw); v = angular velocity in the body frame
    UNIVERSAL: ("universal", 2, 2),  # R = R(e1, q1) R(e2, q2), e1 = axes[k], e2 = axes2[k]
}
KIND_CODES = {name: code for code, (name, _, _) in JOINT_KINDS.items() if code != BASE}


@dataclass(frozen=True)
class Frame:
    """A link of the source description, attached to a body (after fixed-joint merging).

    name: link name.  body: index of the body it is rigidly attached to.
    rotation (3, 3), translation (3,): placement of the link frame in the body frame.
    """

    name: str
    body: int
    rotation: np.ndarray
    translation: np.ndarray


def _frozen(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


class Model:
    """Topology, joints, placements and inertias of a tree, grouped into kinematic modules.

    Fields (njoints = number of bodies + 1; index 0 is the base):

    - ``names``: (njoints,) joint names, ``names[0] == "universe"``.
    - ``link_names``: (njoints,) name of the link carried by each body (index 0: root link).
    - ``parents``: (njoints,) int, parent body, ``parents[k] < k``; ``parents[0] == 0``.
    - ``kinds``: (njoints,) int joint-kind codes (see ``JOINT_KINDS``).
    - ``idx_q``, ``idx_v``, ``nqs``, ``nvs``: (njoints,) int, where each joint sits in q and v.
    - ``axes``: (njoints, 3) unit joint axis e_k, in the joint (body) frame; for a universal
      joint the first axis, in the parent's joint frame.  ``axes2``: (njoints, 3) the universal
      joint's second axis (zero for other kinds).
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
    - ``frames``: tuple of :class:`Frame`, every link of the source and where it sits.
    - ``loops``: tuple of :class:`LoopJoint`, the joints cut to open closed loops (``loops.py``);
      ``n_constraints``: their total number of constraints (rows of the loop Jacobian).
    - ``passive``: tuple of joint names without an actuator (``constrained_inverse_dynamics`` gives
      them zero torque by default); empty: every joint is actuated.
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
        frames=(),
        gravity=(0.0, 0.0, -9.81),
        source: str | None = None,
        axes2=None,
        loops=(),
        passive=(),
    ):
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
        bad = np.flatnonzero((kinds[1:] <= BASE) | (kinds[1:] >= len(JOINT_KINDS))) + 1
        if bad.size:
            k = int(bad[0])
            raise ModelError(f"model {name!r}: unknown joint kind code {kinds[k]} for joint {names[k]!r}")
        # Axes: unit, where the kind has one (vectorised: models reach 100,000 bodies).
        axes = np.array(axes, dtype=float).reshape(njoints, 3)
        axes2 = np.zeros((njoints, 3)) if axes2 is None else np.array(axes2, dtype=float).reshape(njoints, 3)
        has_axis = np.isin(kinds, (REVOLUTE, CONTINUOUS, PRISMATIC, UNIVERSAL))
        has_axis[0] = False
        for which, ax, used in (("axis", axes, has_axis), ("second axis", axes2, kinds == UNIVERSAL)):
            ax[~used] = 0.0
            norms = np.linalg.norm(ax, axis=1)
            bad = np.flatnonzero(used & ~(np.isfinite(norms) & (norms > 0)))
            if bad.size:
                k = int(bad[0])
                raise ModelError(
                    f"model {name!r}: joint {names[k]!r} has a zero or non-finite {which} {ax[k].tolist()}"
                )
            ax[used] /= norms[used, None]
        bad = np.flatnonzero((kinds == UNIVERSAL) & (np.abs(np.einsum("ij,ij->i", axes, axes2)) > 1e-9))
        if bad.size:
            k = int(bad[0])
            raise ModelError(
                f"model {name!r}: the axes of universal joint {names[k]!r} must be orthogonal, "
                f"got {axes[k].tolist()} and {axes2[k].tolist()}"
            )
        nqs = np.array([JOINT_KINDS[c][1] for c in range(len(JOINT_KINDS))], dtype=np.int64)[kinds]
        nvs = np.array([JOINT_KINDS[c][2] for c in range(len(JOINT_KINDS))], dtype=np.int64)[kinds]
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
        ptr, bodies, body_module = module_arrays(modules, njoints - 1)
        zmax = int(nvs.max())
        slot, slot_init, nslots = articulated_slots(parents, bodies)
        # Two flat buffers hold every array the kernels read (layout.py); the fields are views.
        mi = np.concatenate(
            [[njoints, nvs.sum(), len(modules), zmax, nqs.sum(), nslots], parents, kinds, idx_q, idx_v, nqs, nvs, ptr,
             bodies, body_module, slot, slot_init]
        ).astype(np.int64)  # fmt: skip
        # mf is filled through its own views, not concatenated: at 100,000 bodies a concatenation
        # would hold every input twice at the moment of the process's peak memory.
        assert mi.size == model_buffer_sizes(njoints, len(modules))[0]
        mb, mi, mf = model_buffer(mi, model_buffer_sizes(njoints, len(modules))[1])
        w = numpy_views(model_views(mi, mf), mi, mf)
        w.placement_rotation[:] = np.asarray(placement_rotation, dtype=float).reshape(njoints, 3, 3)
        w.placement_translation[:] = np.asarray(placement_translation, dtype=float).reshape(njoints, 3)
        w.axes[:] = axes
        w.axes2[:] = axes2
        w.gravity[:] = np.asarray(gravity, dtype=float).reshape(3)
        w.masses[:] = masses
        w.coms[:] = np.asarray(coms, dtype=float).reshape(njoints, 3)
        w.inertias[:] = np.asarray(inertias, dtype=float).reshape(njoints, 3, 3)
        inertia_about_origin(w.masses, w.coms, w.inertias, out=w.inertias_origin)
        w.inertias_origin[0] = 0.0  # the base never moves; the recursions never read its inertia
        mb.setflags(write=False)  # views made from here on are read-only too (the filling views were not)
        set_(self, "_mb", mb)
        set_(self, "_mi", mb[: mi.size].view(np.int64))
        set_(self, "_mf", mb[mi.size :])
        mi, mf = self._mi, self._mf
        set_(self, "zmax", zmax)
        for field, view in numpy_views(model_views(mi, mf), mi, mf)._asdict().items():
            set_(self, field, view)
        set_(self, "modules", modules)
        set_(self, "frames", tuple(frames))
        from .loops import pack_cuts, resolve_loops

        loops, cuts = resolve_loops(self, loops)
        set_(self, "loops", loops)
        set_(self, "_cuts", cuts)
        set_(self, "_loop_pack", pack_cuts(cuts))
        set_(self, "n_constraints", sum(lp.n_constraints for lp in loops))
        passive = (passive,) if isinstance(passive, str) else tuple(passive)
        for p in passive:
            if p not in self.names[1:]:
                raise ModelError(
                    f"passive joint {p!r} is not in model {name!r}; joints are: {', '.join(self.names[1:])}"
                )
        set_(self, "passive", tuple(dict.fromkeys(passive)))

    @property
    def M(self) -> np.ndarray:
        """(njoints, 6, 6) the paper's mass matrices M_k about the body origins (eq. 2b), [ω; v], M_0 = 0.

        Formed on first access and kept; the kernels form M_k from ``masses``, ``coms`` and
        ``inertias_origin`` instead, so that a 100,000-body model does not carry 29 MB of them."""
        M = self.__dict__.get("_M")
        if M is None:
            M = mass_matrix(self.masses, self.coms, self.inertias_origin)
            M[0] = 0.0
            M.setflags(write=False)
            object.__setattr__(self, "_M", M)
        return M

    def __setattr__(self, key, value):
        raise AttributeError(f"denoc_pin.Model is immutable (tried to set {key!r}); build a new model instead")

    def create_data(self) -> Data:
        """A preallocated workspace for the algorithms (Pinocchio's ``model.createData()``)."""
        return Data(self)

    def to_pinocchio(self):
        """The equivalent ``pinocchio.Model`` (same q/v layout), to cross-check any model."""
        from .pinocchio_bridge import to_pinocchio

        return to_pinocchio(self)

    def lock_joints(self, names, q) -> Model:
        """A new model with the joints ``names`` rigid at their values in ``q`` (Isobe & Yagi's
        structure change): each locked link merges into its parent body.  This model is unchanged."""
        from .edits import lock_joints

        return lock_joints(self, names, q)

    def attach(self, parent_link: str, submodel: Model, placement=None, prefix: str = "") -> Model:
        """A new model with ``submodel`` rigidly attached by its base to ``parent_link`` at
        ``placement`` = (R, p) (a tool, a payload, a branch).  This model is unchanged."""
        from .edits import attach

        return attach(self, parent_link, submodel, placement, prefix)

    def with_loop(self, loop) -> Model:
        """A new model with the cut joint ``loop`` (a :class:`LoopJoint`) added: a loop closes."""
        from .edits import with_loop

        return with_loop(self, loop)

    def without_loop(self, name: str) -> Model:
        """A new model without the cut joint ``name``: the loop opens."""
        from .edits import without_loop

        return without_loop(self, name)

    def with_passive(self, names) -> Model:
        """A new model whose passive (unactuated) joints are ``names``; the others are actuated."""
        from .edits import with_fields

        return with_fields(self, passive=names)

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
        loops = f", {len(self.loops)} loops ({self.n_constraints} constraints)" if self.loops else ""
        return f"<denoc_pin.Model {self.name!r}: {bodies} bodies, nq={self.nq}, nv={self.nv}, {modules} modules{loops}>"

    def __str__(self) -> str:
        head = (
            f"Model {self.name!r}: nq={self.nq}, nv={self.nv}, {self.njoints - 1} bodies, {len(self.modules)} modules"
        )
        text = head + "\n" + draw_module_tree(self.modules, base=self.link_names[0])
        for lp in self.loops:
            text += f"\nloop joint {lp.name!r}: {lp.type}, {lp.link1} -> {lp.link2}, {lp.n_constraints} constraints"
        if self.passive:
            text += f"\npassive joints: {', '.join(self.passive)}"
        return text


class Data:
    """Preallocated workspace of one model.  Algorithms write here and return copies.

    All per-body fields are views of one flat buffer (``layout.py``); zmax = ``model.zmax``, the
    largest joint DOF.  Fields (njoints = number of bodies + 1; index 0 is the base; body frames, [ω; v]):

    - ``E``: (njoints, 3, 3) rotation taking parent-frame components to body-frame ones.
    - ``r``: (njoints, 3) position of body origin o_k relative to its parent's, parent frame.
      ``(E[k], r[k])`` define the twist-propagation matrix A_{k,β} (eq. 7b).
    - ``S``: (njoints, 6, zmax) joint-motion propagation p_k in its first ``nvs[k]`` columns. Constant, set when
      the Data is made, except a universal joint's first column R2ᵀ e1, which the kinematics update.
    - ``t``, ``tdot``: (njoints, 6) twists and twist-rates (classical accelerations ω̇, ö).
    - ``w_tilde``: (njoints, 6) the composite wrenches w̃_k of Table 1, step 2 (the Newton-Euler
      wrenches w_k are not kept: each goes straight into its w̃_k).
    - ``fext``: (njoints, 6) external wrenches [n; f] of the last call given any, body frames (a
      call without ``fext`` does not read it).
    - ``tau``: (nv,) result of inverse dynamics; ``phi``: (nv,) φ = τ − C q̇ − gravity (A.1).
    - ``M_hat``: (nslots, 6, 6) articulated mass matrices M̂_k (eq. 20, A.6) while they are open:
      M̂_k lives in slot ``model.slot[k]`` from the elimination of k's first child to that of k
      (``layout.articulated_slots``); a chain needs two slots.  Inside a module the factorization
      passes A_{k,β}ᵀ Φ_k M̂_k A_{k,β} to the parent in registers, so it writes a slot only for a
      module's last body (what its child modules send) and for multi-DOF joints.  ``gim`` keeps its
      composite inertias M̃_k (eq. 17) in the same slots, and B_k = M̃_k p_k in ``Psi_hat``.
    - ``Psi_hat``, ``Psi``: (njoints, 6, zmax) Ψ̂_k = M̂_k P_k and Ψ_k = Ψ̂_k Î_k⁻¹ (eq. 19, A.5),
      first ``nvs[k]`` columns; ``I_hat``, ``I_hat_inv``: (njoints, zmax, zmax) Î_k = p_kᵀ Ψ̂_k and
      its inverse, top-left ``nvs[k]`` x ``nvs[k]`` block (the D blocks of eq. 18).
    - ``eta``: (njoints, 6) η_k of Table 3, step 1; step 2 then writes μ_k over them (each η_k is
      spent by then), so after ``forward_dynamics`` it holds μ_k.
    - ``ddq``: (nv,) result of forward dynamics.
    - ``gim``, ``gim_inv``, ``U``, ``D``: (nv, nv) GIM, its inverse, and its UDUᵀ factors
      (allocated on first use).
    """

    def __init__(self, model: Model):
        nj, nv = model.njoints, model.nv
        self.model = model
        # One flat workspace (layout.py), so that a compiled call takes one array for all of it.
        self._ws = np.zeros(workspace_size(nj, nv, model.zmax, int(model._mi[5])))
        self._ws[0] = model._mb.ctypes.data  # the stamp (layout.stamped_for): the fast calls check it
        for field, view in numpy_views(data_views(self._ws, model._mi), self._ws)._asdict().items():
            setattr(self, field, view)
        self.E[:] = np.eye(3)
        from .algorithms.kinematics import motion_subspaces

        motion_subspaces(model.kinds, model.axes, model.axes2, self.S)  # constant but for universal joints
        self.fext_is_zero = True
        self.zeros_v = np.zeros(nv)
        self._dense: dict[str, np.ndarray] = {}
        self._gim = None  # the "gim" workspace once allocated: gim's fast path reads an attribute, not the dict

    def dense(self, name: str) -> np.ndarray:
        """The nv x nv workspace ``name`` ("gim", "gim_inv", "U", "D"), allocated on first use:
        data for a 100,000-DOF chain must stay O(n)."""
        if name not in self._dense:
            self._dense[name] = np.zeros((self.model.nv, self.model.nv))
            if name == "gim":
                self._gim = self._dense[name]
        return self._dense[name]

    gim = property(lambda self: self.dense("gim"), doc="(nv, nv) the GIM of the last ``gim`` call")
    gim_inv = property(lambda self: self.dense("gim_inv"), doc="(nv, nv) the last ``gim_inverse``")
    U = property(lambda self: self.dense("U"), doc="(nv, nv) U of the last ``udut``")
    D = property(lambda self: self.dense("D"), doc="(nv, nv) D of the last ``udut``")

    def __repr__(self) -> str:
        return f"<denoc_pin.Data of {self.model.name!r}>"


# ---------------------------------------------------------------------------------------
# Argument checks shared by the algorithms: cheap on the good path, explicit on the bad one.
# ---------------------------------------------------------------------------------------


def check_data(model: Model, data: Data) -> None:
    if not isinstance(data, Data) or data.model is not model:
        other = getattr(getattr(data, "model", None), "name", None)
        raise ValueError(
            f"data was not created by this model ({model.name!r})"
            + (f" but by model {other!r}" if other is not None else f" (got {type(data).__name__})")
            + "; use data = model.create_data()"
        )


def vector(x, n: int, what: str) -> np.ndarray:
    """x as a float64 (n,) array, or a ValueError naming the expected shape and any non-finite entry."""
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"{what} must have shape ({n},), got {a.shape}")
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a))
        raise ValueError(f"{what} has non-finite entries (NaN or inf) at indices {bad.tolist()}")
    return a


_ROOT_LAYOUT = {FREE_FLYER: "[x, y, z, qx, qy, qz, qw]", PLANAR: "[x, y, cos θ, sin θ]"}


def configuration(model: Model, q, what: str = "q") -> np.ndarray:
    """q as a float64 (nq,) array; a q that lacks a floating root's entries is named as such."""
    a = np.asarray(q, dtype=np.float64)
    if a.shape != (model.nq,) and model.njoints > 1 and int(model.kinds[1]) in _ROOT_LAYOUT:
        root = int(model.kinds[1])
        if a.ndim == 1 and a.shape[0] == model.nq - model.nqs[1]:
            raise ValueError(
                f"{what} must have shape ({model.nq},), got {a.shape}: this model has a {JOINT_KINDS[root][0]} root "
                f"joint {model.names[1]!r}, so {what} starts with its {model.nqs[1]} entries {_ROOT_LAYOUT[root]}; "
                f"{a.shape[0]} is the size of a fixed-base {what}"
            )
    return vector(a, model.nq, what)


def external_forces(model: Model, fext) -> np.ndarray:
    """Pinocchio-style fext (one spatial force per joint, joint frame, [linear; angular] or
    pinocchio.Force) as an (njoints, 6) array in DeNOC order [n; f]."""
    from .spatial import from_pinocchio_order

    if isinstance(fext, np.ndarray) and fext.dtype != object:
        F = np.asarray(fext, dtype=np.float64)
    else:
        items = list(fext)
        rows = []
        for f in items:
            if hasattr(f, "linear") and hasattr(f, "angular"):
                rows.append(np.concatenate([np.asarray(f.linear, float), np.asarray(f.angular, float)]))
            else:
                rows.append(np.asarray(f, dtype=float))
        try:
            F = np.array(rows, dtype=np.float64)
        except ValueError:
            raise ValueError("fext must be (njoints, 6) [linear, angular] or a list of pinocchio.Force") from None
    if F.shape != (model.njoints, 6):
        raise ValueError(
            f"fext must have shape ({model.njoints}, 6) (one [linear, angular] force per joint, index 0 = universe),"
            f" got {F.shape}"
        )
    if not np.isfinite(F).all():
        raise ValueError("fext has non-finite entries (NaN or inf)")
    return np.ascontiguousarray(from_pinocchio_order(F))
