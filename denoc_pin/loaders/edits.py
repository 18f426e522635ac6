"""Model edits for structure-varying systems (Isobe & Yagi): new models from old, nothing re-read.

Each edit builds a new :class:`Model`, so modules (and the connectivity) are recomputed; the original
model is immutable and stays as it was.  ``lock_joints`` and ``attach`` change the tree and go through
:class:`ModelBuilder`; ``with_loop``, ``without_loop`` and ``with_passive`` keep it and rebuild the
model from its own fields (``with_fields``).  ``transfer_state`` carries a state across an edit (the
events of ``simulate``).
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np

from ..algorithms.configuration import neutral
from ..algorithms.dynamics_api import gim
from ..algorithms.kinematics import kinematics_entry
from ..algorithms.kinematics_api import joint_index
from ..core.joints import JOINTS
from ..core.shapes import pairs_between
from ..loaders.builder import ModelBuilder
from ..loaders.urdf_xml import parse_xml
from ..loops import LoopJoint, loop_jacobian, loop_mobility, resolve_loops
from ..model import LIMIT_FIELDS, Model, ModelError, ModelWarning, configuration, placement_pair

__all__ = [
    "attach",
    "exclude_collisions",
    "lock_joints",
    "transfer_state",
    "with_limits",
    "with_loop",
    "with_passive",
    "without_loop",
]


def _link_poses(model: Model) -> list[tuple[np.ndarray, np.ndarray]]:
    """Where each body's link frame sits in the body's frame (the identity but for an SDF link whose joint sits
    away from its origin): the builder hangs children and frames from the link's frame."""
    at = {f.name: (f.body, f.rotation, f.translation) for f in model.frames if f.type == "body"}
    eye, zero = np.eye(3), np.zeros(3)
    out = []
    for k, link in enumerate(model.link_names):
        b, R, p = at.get(link, (k, eye, zero))
        out.append((np.asarray(R, float), np.asarray(p, float)) if b == k else (eye, zero))
    return out


def _in_link(X, R: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) given in a body's frame, in the frame X = (R_x, p_x) of its link."""
    return X[0].T @ R, X[0].T @ (p - X[1])


def _add_body_like(
    b: ModelBuilder, model: Model, k: int, parent, R: np.ndarray, p: np.ndarray, joint: str, name: str, link: str,
    links=None,
):  # fmt: skip
    """Add body k of ``model`` to builder ``b`` under ``parent`` (the parent body's link) with joint placement
    (R, p) in the parent body's frame; ``links``: ``_link_poses(model)``."""
    links = links or _link_poses(model)
    R, p = _in_link(links[int(model.parents[k])], R, p)
    X = links[k]
    kind = JOINTS[int(model.kinds[k])]
    axis = (model.axes[k], model.axes2[k]) if kind.axes == 2 else model.axes[k]
    pitch = float(model.pitches[k]) if kind.pitch else None
    limits = {}
    if joint != "fixed":  # the joint's own limits go with it
        q = slice(int(model.idx_q[k]), int(model.idx_q[k] + model.nqs[k]))
        v = slice(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k]))
        limits = {"lower": model.lower_position_limit[q], "upper": model.upper_position_limit[q],
                  "velocity": model.velocity_limit[v], "effort": model.effort_limit[v]}  # fmt: skip
    return b.add_body(
        parent, joint=joint, axis=axis if joint != "fixed" else (0.0, 0.0, 1.0), placement=(R, p),
        mass=model.masses[k], com=X[0].T @ (model.coms[k] - X[1]), inertia=X[0].T @ model.inertias[k] @ X[0],
        name=name, link=link, pitch=pitch, link_placement=X, **limits,
    )  # fmt: skip


def _copy_frames(b: ModelBuilder, model: Model, body_link: list[str], prefix: str = "", body=None) -> None:
    """The frames of ``model``'s bodies (all, or only ``body``) that the builder does not make itself: the links
    that fixed joints merged into a body (massless here: their inertia is already in the body's; under their
    fixed joint's name) and the user frames."""
    fixed_joint = None  # the fixed joint frame just read: it names the fixed joint of the link that follows
    links = _link_poses(model)
    for f in model.frames:
        if f.type == "fixed_joint":
            fixed_joint = f.name
            continue
        joint, fixed_joint = fixed_joint, None
        if f.type == "joint" or prefix + f.name in body_link or f.name == model.link_names[0]:
            continue
        if body is not None and f.body != body:
            continue
        parent = body_link[f.body]
        placement = _in_link(links[f.body], np.asarray(f.rotation), np.asarray(f.translation))
        if f.type == "body":
            b.add_body(parent, joint="fixed", placement=placement, link=prefix + f.name,
                       name=prefix + (joint or f"fixed_{f.name}"))  # fmt: skip
        else:
            b.add_frame(prefix + f.name, parent, placement, f.type)


def _copy_model(b: ModelBuilder, model: Model, locked_pose=None, after: int | None = None, insert=None) -> None:
    """Add every body of ``model`` to ``b`` in order, each followed by the links merged into it, with
    its own joint, or rigidly at ``locked_pose[k]`` = (R, p) when body k is locked; call ``insert()``
    right after body ``after`` and its links (0: after the base's)."""
    locked_pose = locked_pose or {}
    links = _link_poses(model)
    body_link = [model.link_names[0]] + [""] * (model.njoints - 1)
    _copy_frames(b, model, body_link, body=0)
    if after == 0 and insert is not None:
        insert()
    for k in range(1, model.njoints):
        parent = body_link[model.parents[k]]
        if k in locked_pose:
            R, p = locked_pose[k]
            # the joint keeps its name: its frame, now of type "fixed_joint", is found as before the edit
            _add_body_like(b, model, k, parent, R, p, "fixed", model.names[k], model.link_names[k], links)
        else:
            kind = JOINTS[int(model.kinds[k])].name
            _add_body_like(b, model, k, parent, model.placement_rotation[k], model.placement_translation[k], kind,
                           model.names[k], model.link_names[k], links)  # fmt: skip
        body_link[k] = model.link_names[k]
        _copy_frames(b, model, body_link, body=k)
        if k == after and insert is not None:
            insert()


def with_fields(model: Model, **changes) -> Model:
    """A new model from ``model``'s own fields, with ``changes`` (e.g. ``loops=…``, ``passive=…``)."""
    fields = model.fields() | {"loops": model.loops, "couplings": model.couplings}
    unknown = set(changes) - set(fields)
    if unknown:
        raise TypeError(f"with_fields: unknown fields {sorted(unknown)}")
    fields |= changes
    fields["loops"] = resolve_loops(model.name, model.link_names, model.frames, fields["loops"],
                                    fields.pop("couplings"), model.names, model.kinds)  # fmt: skip
    return Model(**fields)


def with_loop(model: Model, loop) -> Model:
    """``model`` with the cut joint ``loop`` added (checked against the links like any loop joint)."""
    if not isinstance(loop, LoopJoint):
        raise ModelError(f"with_loop needs a dp.LoopJoint, got {type(loop).__name__}")
    if loop.name in {lp.name for lp in model.loops}:
        raise ModelError(f"model {model.name!r} already has a loop joint {loop.name!r}")
    return with_fields(model, loops=(*model.loops, loop))


def without_loop(model: Model, name: str) -> Model:
    """``model`` without the cut joint ``name``: the loop opens."""
    names = [lp.name for lp in model.loops]
    if name not in names:
        raise ModelError(
            f"model {model.name!r} has no loop joint {name!r}; loop joints are: {', '.join(names) or '(none)'}"
        )
    return with_fields(model, loops=tuple(lp for lp in model.loops if lp.name != name))


def with_limits(model: Model, lower=None, upper=None, velocity=None, effort=None) -> Model:
    """``model`` with new joint limits, each in Pinocchio's layout (``lower``, ``upper``: nq numbers,
    ``lower_position_limit`` and ``upper_position_limit``; ``velocity``, ``effort``: nv) or one number for all;
    those left out stay.  A lower limit above its upper one is refused."""
    fields = {}  # one number for all is broadcast here; Model checks the lengths and NaNs
    for field, given in zip(LIMIT_FIELDS, (lower, upper, velocity, effort), strict=True):
        if given is not None:
            a = np.asarray(given, dtype=float)
            fields[field] = np.full(getattr(model, field).shape, float(a)) if a.ndim == 0 else a
    low = fields.get("lower_position_limit", model.lower_position_limit)
    high = fields.get("upper_position_limit", model.upper_position_limit)
    if np.shape(low) == np.shape(high) and (low > high).any():
        i = np.flatnonzero(low > high).tolist()
        raise ModelError(f"with_limits: lower is above upper at q indices {i} of model {model.name!r}")
    if (np.asarray(fields.get("velocity_limit", model.velocity_limit)) < 0).any() or (
        np.asarray(fields.get("effort_limit", model.effort_limit)) < 0
    ).any():
        raise ModelError(f"with_limits: velocity and effort limits of model {model.name!r} are bounds on |v| and "
                         f"|τ|: non-negative")  # fmt: skip
    return with_fields(model, **fields)


def with_passive(model: Model, names) -> Model:
    """``model`` whose passive (unactuated) joints are ``names``; the others are actuated."""
    return with_fields(model, passive=names)


def _columns(model: Model, k: int) -> np.ndarray:
    return np.arange(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k]))


def transfer_state(old: Model, new: Model, q, v) -> tuple[np.ndarray, np.ndarray, float]:
    """Carry (q, v) of ``old`` across an edit to ``new``: joints are matched by name, a joint that is new
    starts at its neutral value at rest, a joint that is gone (locked) keeps its pose inside its body.

    Velocities go through the impact of the edit: a locked joint stops, and a loop that closes stops the
    relative motion it forbids.  As for a perfectly inelastic impact, v⁺ is the velocity closest to v in
    the kinetic-energy metric that satisfies the new constraints:

        min ½ (v⁺ − v)ᵀ GIM (v⁺ − v)  subject to  C v⁺ = 0,   C = [rows of the locked joints; J_new P]

    (P maps old velocities to new ones), so the generalized momentum GIM v is conserved in every
    direction the constraints leave free: a free-floating system keeps its linear and angular momentum.
    Returns (q_new, v_new, kinetic energy lost).
    """
    q = configuration(old, q)
    v = np.asarray(v, dtype=float)
    q_new = neutral(new)
    P = np.zeros((new.nv, old.nv))
    locked_cols = []
    for k in range(1, old.njoints):
        name = old.names[k]
        if name not in new.names:
            locked_cols.extend(_columns(old, k))
            continue
        j = new.names.index(name)
        if new.kinds[j] != old.kinds[k]:
            raise ModelError(f"joint {name!r} changed kind across the edit; states cannot be carried")
        q_new[new.idx_q[j] : new.idx_q[j] + new.nqs[j]] = q[old.idx_q[k] : old.idx_q[k] + old.nqs[k]]
        P[_columns(new, j), _columns(old, k)] = 1.0
    rows = [np.eye(old.nv)[locked_cols]]
    if new.n_constraints:
        rows.append(loop_jacobian(new, q_new) @ P)
    C = np.vstack(rows)
    if not (C.shape[0] and np.abs(C @ v).max() > 0.0):  # nothing stops: no impact, and no dense GIM needed
        return q_new, P @ v, 0.0
    # v⁺ = v − M⁻¹Cᵀ μ with (C M⁻¹ Cᵀ) μ = C v; minimum-norm μ for redundant constraints
    M = gim(old, old.create_data(), q)
    Y = np.linalg.solve(M, C.T)
    mu = np.linalg.lstsq(C @ Y, C @ v, rcond=1e-12)[0]
    v_plus = v - Y @ mu
    return q_new, P @ v_plus, 0.5 * float(v @ M @ v - v_plus @ M @ v_plus)


def lock_joints(model: Model, joints, q) -> Model:
    """A new model where the ``joints`` (names or indices, ``model.joint_id(name)``; one or a list) are rigid at
    their values in ``q``: each locked link merges into its parent body (and its children hang from that body), as a
    fixed joint would; Pinocchio's ``buildReducedModel``.  A locked joint's frame keeps its name, of type
    ``"fixed_joint"`` now.

    q: (nq,) configuration of ``model``; only the locked joints' entries are used.
    """
    joints = [joints] if isinstance(joints, str | int | np.integer) else list(joints)
    locked = set()
    for j in joints:  # raises ModelError listing the valid names
        k = joint_index(model, j)
        if k == 0:
            raise ModelError(f"lock_joints: joint 0 is the universe, not a joint of model {model.name!r}")
        locked.add(k)
    names = [model.names[k] for k in sorted(locked)]
    q = np.ascontiguousarray(configuration(model, q))
    data = model.create_data()
    kinematics_entry(model.mi, model.mf, data.ws, q)
    # the body frame at q in its parent: R = E_kᵀ, p = r_k
    poses = {k: (data.E[k].T.copy(), data.r[k].copy()) for k in locked}
    b = ModelBuilder(model.name, gravity=model.gravity, base=model.link_names[0])
    _copy_model(b, model, locked_pose=poses)
    for lp in model.loops:  # the links keep their names, so the cut joints carry over
        b.add_loop_joint(lp)
    for c in model.couplings:
        ends = [model.joint_id(c.joint) in locked, model.joint_id(c.reference) in locked]
        if ends == [True, True]:
            continue  # both rigid: the coupling holds nothing any more
        if any(ends):
            raise ModelError(
                f"cannot lock {c.joint if ends[0] else c.reference!r} alone: the coupling {c.name!r} gears "
                f"{c.joint!r} to {c.reference!r}; lock both joints, or neither"
            )
        b.add_coupling(c.name, c.joint, c.reference, c.multiplier, c.offset)
    b.add_passive(*(p for p in model.passive if model.joint_id(p) not in locked))
    _copy_collisions(b, model)
    edited = b.build()
    if edited.loops:
        _refuse_rigid_loops(model, edited, names, q)
    return edited


def _copy_collisions(b: ModelBuilder, model: Model, prefix: str = "") -> None:
    """``model``'s collisions onto the builder's links of the same (prefixed) names, each at its placement in its
    link's frame, so that a link merged into another body carries its shapes there."""
    frames = {}
    for f in model.frames:
        frames.setdefault(f.name, f)
    for c in model.collisions:
        f = frames.get(c.link)
        if f is None or f.body != c.body:  # given on a body index: the body's own link
            f = frames[model.link_names[c.body]] if model.link_names[c.body] in frames else None
        Rf, pf = (np.eye(3), np.zeros(3)) if f is None else (np.asarray(f.rotation), np.asarray(f.translation))
        link = prefix + (model.link_names[c.body] if f is None else f.name)
        R, p = Rf.T @ c.rotation, Rf.T @ (np.asarray(c.translation) - pf)
        b.add_collision(link, c.shape, (R, p), name=prefix + c.name, group=c.group, mask=c.mask, friction=c.friction,
                        ground=c.ground)  # fmt: skip
    for a, c in model.excluded_collisions:
        b.exclude_collisions(prefix + a, prefix + c)
    for a, c, mu in model.collision_pairs:
        b.add_collision_pair(prefix + a, prefix + c, mu)


def collision_pairs(model: Model, a: str, b: str, where: str) -> list[tuple[str, str]]:
    """The pairs of collisions between a and b, each a collision's name or a link's (all its collisions)."""
    try:
        return pairs_between(model.collisions, a, b, set(model.link_names) | {f.name for f in model.frames})
    except ValueError as e:
        raise ModelError(f"{where}: model {model.name!r}: {e}") from None


def exclude_collisions(model: Model, pairs=(), srdf=None) -> Model:
    """A new model whose collisions in ``pairs`` never touch each other: pairs of collision or link names (a link:
    every collision on it), and an SRDF's ``<disable_collisions link1= link2=>`` (example-robot-data ships one per
    robot; Pinocchio's ``removeCollisionPairs``).  An SRDF link the model lacks is skipped with a warning (an SRDF
    often names links of a larger robot); a pair of names it cannot find is a ``ModelError``."""
    excluded = list(model.excluded_collisions)
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise ModelError(f"exclude_collisions: a pair is two collision or link names, got {pair!r}")
        excluded += collision_pairs(model, str(pair[0]), str(pair[1]), "exclude_collisions")
    if srdf is not None:
        excluded += _srdf_pairs(model, Path(srdf))
    return with_fields(model, excluded_collisions=excluded)


def with_self_collision(model: Model, srdf=None, exclude=()) -> Model:
    """A new model whose collisions touch each other, but for an SRDF's ``disable_collisions`` pairs and ``exclude``
    (``exclude_collisions``): a URDF's collisions touch only the ground (it says nothing of which pairs may touch;
    Pinocchio's ``addAllCollisionPairs`` then ``removeCollisionPairs``).  Each collision's mask takes its group's
    bits; parent and child links stay apart, as always."""
    touching = tuple(dataclasses.replace(c, mask=c.mask | c.group) for c in model.collisions)
    return exclude_collisions(with_fields(model, collisions=touching), exclude, srdf)


def _srdf_pairs(model: Model, path: Path) -> list[tuple[str, str]]:
    """The collision pairs an SRDF's ``disable_collisions`` elements name (``exclude_collisions``)."""
    if not path.is_file():
        raise ModelError(f"{path}: no such SRDF file")
    lenient: list[str] = []
    root = parse_xml(path, "robot", lenient)  # the robot files' reader: no DTD entities, bad bytes named
    for problem in lenient:
        warnings.warn(f"{path}: {problem}", ModelWarning, stacklevel=3)
    out, missing = [], set()
    links = set(model.link_names) | {f.name for f in model.frames}
    for el in root.iter("disable_collisions"):
        a, b = el.get("link1"), el.get("link2")
        if a is None or b is None:
            raise ModelError(f"{path}, line {el.sourceline}: <disable_collisions> needs link1 and link2")
        if a not in links or b not in links:
            missing |= {x for x in (a, b) if x not in links}
            continue
        out += collision_pairs(model, a, b, f"{path}, line {el.sourceline}")
    if missing:
        warnings.warn(f"{path}: links {', '.join(sorted(missing))} are not in model {model.name!r}; their "
                      "disable_collisions pairs are skipped", ModelWarning, stacklevel=3)  # fmt: skip
    return out


def _refuse_rigid_loops(model: Model, edited: Model, names, q) -> None:
    """Locking a joint of a closed loop must leave the loop some mobility: a rigid loop keeps every one of
    its constraints while nothing can move, an over-constrained structure whose reactions are not
    determined."""
    q_new = transfer_state(model, edited, q, np.zeros(model.nv))[0]
    before = loop_mobility(model, q)
    for loop, mobility in loop_mobility(edited, q_new).items():
        if mobility <= 0 and before.get(loop, 0) > 0:
            raise ModelError(
                f"locking {', '.join(names)} leaves loop {loop!r} of model {model.name!r} rigid (mobility 0): "
                f"over-constrained; open it first with dp.without_loop(model, {loop!r})"
            )


def attach(model: Model, parent_link, submodel: Model, placement=None, prefix: str = "") -> Model:
    """A new model with ``submodel`` (a tool, a payload, a branch) rigidly attached by its base to
    the link ``parent_link`` of ``model`` (its name, or its frame's index ``model.frame_id(name)``) at
    ``placement`` ((R, p), 4 x 4 or a ``pinocchio.SE3``) in that link's frame; Pinocchio's ``appendModel``.

    The submodel's joints and links, names prefixed by ``prefix``, are inserted right after the host
    link's subtree, so that a depth-first model stays depth-first (their q and v entries sit there too).
    """
    if isinstance(parent_link, int | np.integer) and not isinstance(parent_link, bool):
        parent_link = model.frames[model.frame_index(parent_link)].name
    frame_names = {f.name for f in model.frames} | set(model.link_names)
    if parent_link not in frame_names:
        raise ModelError(
            f"attach: no link {parent_link!r} in model {model.name!r}; links are: {', '.join(sorted(frame_names))}"
        )
    R0, p0 = placement_pair(placement, "attach: placement")
    # Depth-first order is kept (Pinocchio needs it): the submodel goes right after the host body's subtree.
    host = next((f.body for f in model.frames if f.name == parent_link), None)
    host = model.link_names.index(parent_link) if host is None else host
    last = host
    for k in range(host + 1, model.njoints):
        b_ = model.parents[k]
        while b_ > host:
            b_ = model.parents[b_]
        if b_ == host or host == 0:
            last = k
    b = ModelBuilder(model.name, gravity=model.gravity, base=model.link_names[0])
    sub_link = [parent_link] + [""] * (submodel.njoints - 1)

    def add_submodel():
        links = _link_poses(submodel)
        for k in range(1, submodel.njoints):
            R, p = submodel.placement_rotation[k], submodel.placement_translation[k]
            if submodel.parents[k] == 0:  # the submodel's base sits at `placement` in the parent link
                R, p = R0 @ R, R0 @ p + p0
            kind = JOINTS[int(submodel.kinds[k])].name
            _add_body_like(b, submodel, k, sub_link[submodel.parents[k]], R, p, kind, prefix + submodel.names[k],
                           prefix + submodel.link_names[k], links)  # fmt: skip
            sub_link[k] = prefix + submodel.link_names[k]

    _copy_model(b, model, after=last, insert=add_submodel)
    _copy_frames(b, submodel, sub_link, prefix)
    for lp in model.loops:
        b.add_loop_joint(lp)
    for c in model.couplings:
        b.add_coupling(c.name, c.joint, c.reference, c.multiplier, c.offset)
    for c in submodel.couplings:
        b.add_coupling(prefix + c.name, prefix + c.joint, prefix + c.reference, c.multiplier, c.offset)
    b.add_passive(*model.passive, *(prefix + p for p in submodel.passive))
    for lp in submodel.loops:
        b.add_loop(prefix + lp.name, lp.type, prefix + lp.link1, prefix + lp.link2, lp.placement1, lp.placement2,
                   lp.axis, lp.axis2)  # fmt: skip
    _copy_collisions(b, model)
    _copy_collisions(b, submodel, prefix)
    return b.build()
