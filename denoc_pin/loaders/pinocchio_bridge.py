"""Conversion between denoc_pin models and ``pinocchio.Model`` (the joint kinds denoc_pin supports)."""

from __future__ import annotations

import numpy as np

from ..algorithms.checks import check_not_singular
from ..core.joints import (
    CONTINUOUS,
    FREE_FLYER,
    HELICAL,
    JOINTS,
    PINOCCHIO_KINDS,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
)
from ..core.spatial import from_pinocchio_order
from ..loops import LoopJoint, resolve_loops
from ..model import LIMIT_FIELDS, UNBOUNDED, Frame, MimicModel, Model, ModelError

__all__ = ["CONTACT_CUTS", "SUPPORTED_PINOCCHIO_JOINTS", "from_pinocchio", "to_pinocchio", "to_pinocchio_constraints"]

CONTACT_CUTS = {"CONTACT_3D": "spherical", "CONTACT_6D": "fixed"}
"""Pinocchio's rigid constraint types and the cut joints they are: two points held together, two frames welded."""

SUPPORTED_PINOCCHIO_JOINTS = sorted(PINOCCHIO_KINDS)
# The joint limits: denoc_pin's field -> Pinocchio's (same layouts).
LIMITS = dict(
    zip(LIMIT_FIELDS, ("lowerPositionLimit", "upperPositionLimit", "velocityLimit", "effortLimit"), strict=True)
)
# |‖e‖ − 1| above this refuses a joint axis: below it the dynamics differ from Pinocchio's by less than 1e-10.
UNIT_AXIS_TOL = 1e-10


def _kind_and_axis(joint) -> tuple[int, np.ndarray, np.ndarray, float] | None:
    """Joint kind, axes and pitch; a 1-DOF joint's axis is read off its motion subspace S (Pinocchio order)."""
    kind = PINOCCHIO_KINDS.get(joint.shortname())
    if kind is None:
        return None
    jm = joint.extract()
    if JOINTS[kind].axes == 0:
        return kind, np.zeros(3), np.zeros(3), 0.0
    if kind == UNIVERSAL:
        return kind, np.asarray(jm.axis1, dtype=float), np.asarray(jm.axis2, dtype=float), 0.0
    if kind == HELICAL:  # S = [pitch e; e] mixes the two: the axis and pitch are read directly
        name = joint.shortname()
        e = (
            np.asarray(jm.axis, dtype=float)
            if name == "JointModelHelicalUnaligned"
            else np.eye(3)["XYZ".index(name[-1])]
        )
        return kind, e, np.zeros(3), float(jm.pitch)
    jd = jm.createData()
    q0 = np.array([1.0, 0.0]) if kind == CONTINUOUS else np.zeros(1)
    jm.calc(jd, q0)
    p = from_pinocchio_order(np.asarray(jd.S, dtype=float).reshape(6))
    return kind, (p[3:] if kind == PRISMATIC else p[:3]), np.zeros(3), 0.0


def _mimic_kind_and_axis(pin_model, k: int) -> tuple[int, np.ndarray, np.ndarray, float] | None:
    """A ``JointModelMimic``'s own joint, read off its motion subspace S = scaling · S_own: revolute or prismatic."""
    import pinocchio as pin

    joint = pin_model.joints[k]
    scaling = joint.extract().scaling
    if scaling == 0.0:
        return None
    jd = joint.createData()  # the generic joint's data: its S converts to NumPy, the extracted mimic's does not
    joint.calc(jd, pin.neutral(pin_model))
    p = from_pinocchio_order(np.asarray(jd.S, dtype=float).reshape(6)) / scaling
    turns, slides = np.linalg.norm(p[:3]) > 0.0, np.linalg.norm(p[3:]) > 0.0
    if turns and not slides:
        return REVOLUTE, p[:3], np.zeros(3), 0.0
    if slides and not turns:
        return PRISMATIC, p[3:], np.zeros(3), 0.0
    return None


def _tree_limits(pin_model, kinds: np.ndarray, mimic: set[int]) -> dict[str, np.ndarray]:
    """Pinocchio's limits in the layout of the tree where each mimic joint has its coordinate (unbounded there)."""
    out = {}
    for ours, theirs in LIMITS.items():
        given, per_q = np.array(getattr(pin_model, theirs)), ours in LIMIT_FIELDS[:2]
        none = -UNBOUNDED if ours == LIMIT_FIELDS[0] else UNBOUNDED
        parts = [np.zeros(0)]
        for k in range(1, pin_model.njoints):
            n = JOINTS[kinds[k]].nq if per_q else JOINTS[kinds[k]].nv
            i = (pin_model.idx_qs if per_q else pin_model.idx_vs)[k]
            parts.append(np.full(n, none) if k in mimic else given[i : i + n])
        out[ours] = np.concatenate(parts)
    return out


def from_pinocchio(pin_model, constraint_models=None) -> Model | MimicModel:
    """A denoc_pin :class:`Model` with the same bodies, joints, q/v layout and inertias as ``pin_model``;
    ``constraint_models``: Pinocchio's ``RigidConstraintModel``s (``CONTACT_3D``, ``CONTACT_6D``) become its loops,
    spherical and fixed cut joints between the same joints at the same placements, named after the constraint
    (``constraint_i`` when it has no name).  Their reference frame only says where Pinocchio expresses λ: the cut
    holds the same points or frames together, and λ is denoc_pin's (``denoc_pin.loops``).
    A model with ``JointModelMimic``s (``buildModelFromUrdf(path, mimic=True)``) gives a :class:`MimicModel` in its
    reduced layout."""
    import pinocchio as pin

    if not isinstance(pin_model, pin.Model):
        raise ModelError(f"from_pinocchio expects a pinocchio.Model, got {type(pin_model).__name__}")
    nj = pin_model.njoints
    kinds = np.zeros(nj, dtype=np.int64)
    axes = np.zeros((nj, 3))
    axes2 = np.zeros((nj, 3))
    pitches = np.zeros(nj)
    mimicked = dict(zip(pin_model.mimicking_joints, pin_model.mimicked_joints, strict=True))
    rules = []
    for k in range(1, nj):
        if k in mimicked:
            jm = pin_model.joints[k].extract()
            rules.append((pin_model.names[k], pin_model.names[mimicked[k]], float(jm.scaling), float(jm.offset)))
        found = _mimic_kind_and_axis(pin_model, k) if k in mimicked else _kind_and_axis(pin_model.joints[k])
        if found is None:
            raise ModelError(
                f"pinocchio model {pin_model.name!r}: joint {pin_model.names[k]!r} is a "
                f"{pin_model.joints[k].shortname()}, which denoc_pin does not support; supported: "
                + ", ".join(SUPPORTED_PINOCCHIO_JOINTS)
            )
        kinds[k], axes[k], axes2[k], pitches[k] = found
        for e in (axes[k], axes2[k])[: JOINTS[kinds[k]].axes]:
            # Pinocchio uses an unaligned joint's axis as given: a non-unit axis scales S (and, for a revolute,
            # makes its rotation non-orthogonal); denoc_pin's joints assume a unit axis, so such a joint is refused
            # rather than silently normalised into different dynamics.
            if abs(np.linalg.norm(e) - 1.0) > UNIT_AXIS_TOL:
                raise ModelError(
                    f"pinocchio model {pin_model.name!r}: joint {pin_model.names[k]!r} "
                    f"({pin_model.joints[k].shortname()}) has a non-unit axis {e.tolist()} (norm "
                    f"{np.linalg.norm(e):.17g}); Pinocchio uses it as given, which scales the joint's motion "
                    "subspace; denoc_pin needs a unit axis: normalise it in the Pinocchio model"
                )
    frames = []
    link_names = list(pin_model.names)
    link_names[0] = "universe"
    seen = set()
    for f in pin_model.frames:
        j = int(f.parentJoint)
        kind = str(f.type.name).lower()
        frames.append(Frame(f.name, j, np.array(f.placement.rotation), np.array(f.placement.translation), kind))
        if f.type == pin.FrameType.BODY and j not in seen and np.allclose(f.placement.homogeneous, np.eye(4)):
            link_names[j] = f.name
            seen.add(j)
    loops = _loop_joints(pin_model, constraint_models, link_names)
    if rules and loops:
        raise ModelError(f"from_pinocchio: model {pin_model.name!r} has mimic joints and constraint models; a "
                         "reduced mimic model takes no loops: build it without mimic=True for the closed-loop "
                         "functions")  # fmt: skip
    limits = (_tree_limits(pin_model, kinds, set(mimicked)) if rules else
              {ours: np.array(getattr(pin_model, theirs)) for ours, theirs in LIMITS.items()})  # fmt: skip
    model = Model(
        name=pin_model.name,
        names=list(pin_model.names),
        link_names=link_names,
        parents=[int(p) for p in pin_model.parents],
        kinds=kinds,
        axes=axes,
        placement_rotation=[np.array(X.rotation) for X in pin_model.jointPlacements],
        placement_translation=[np.array(X.translation) for X in pin_model.jointPlacements],
        masses=[I.mass for I in pin_model.inertias],
        coms=[np.array(I.lever) for I in pin_model.inertias],
        inertias=[np.array(I.inertia) for I in pin_model.inertias],
        frames=frames,
        gravity=np.array(pin_model.gravity.linear),
        source="pinocchio",
        axes2=axes2,
        pitches=pitches,
        **limits,
        loops=resolve_loops(pin_model.name, link_names, frames, loops),
    )
    check_not_singular(model, where=f"pinocchio model {pin_model.name!r}")
    return MimicModel(model, rules) if rules else model


def _loop_joints(pin_model, constraint_models, link_names: list[str]) -> list[LoopJoint]:
    """Cut joints from Pinocchio's rigid constraint models (each placement is in its joint's frame, which is the
    frame of that body's link here)."""
    import pinocchio as pin

    if constraint_models is None:
        return []
    out = []
    for i, cm in enumerate(constraint_models):
        if not isinstance(cm, pin.RigidConstraintModel):
            raise ModelError(f"from_pinocchio: constraint_models[{i}] is a {type(cm).__name__}, not a "
                             "pinocchio.RigidConstraintModel")  # fmt: skip
        kind = CONTACT_CUTS.get(str(cm.type.name))
        if kind is None:
            known = ", ".join(f"{c} (a {t} cut)" for c, t in CONTACT_CUTS.items())
            raise ModelError(f"from_pinocchio: constraint {cm.name or i!r} is a {cm.type.name}; denoc_pin reads "
                             f"{known}")  # fmt: skip
        for j in (cm.joint1_id, cm.joint2_id):
            if not 0 <= j < pin_model.njoints:
                raise ModelError(f"from_pinocchio: constraint {cm.name or i!r} names joint {j}, which "
                                 f"{pin_model.name!r} does not have (0 … {pin_model.njoints - 1})")  # fmt: skip
        ends = [(np.array(X.rotation), np.array(X.translation)) for X in (cm.joint1_placement, cm.joint2_placement)]
        out.append(LoopJoint(cm.name or f"constraint_{i}", kind, link_names[cm.joint1_id], link_names[cm.joint2_id],
                             *ends))  # fmt: skip
    return out


def to_pinocchio_constraints(model: Model, pin_model=None) -> list:
    """Pinocchio's ``RigidConstraintModel``s of the model's cut joints — ``CONTACT_3D`` for a spherical cut,
    ``CONTACT_6D`` for a fixed one, between the same bodies at the same placements, ``LOCAL`` reference frame,
    named after the cut — for ``pin_model`` (default ``to_pinocchio(model)``).  Other cut types and couplings
    have no Pinocchio equivalent: ``ModelError``."""
    import pinocchio as pin

    other = [f"{lp.name!r} ({lp.type})" for lp in model.loops if lp.type not in CONTACT_CUTS.values()]
    other += [f"{c.name!r} (coupling)" for c in model.couplings]
    if other:
        raise ModelError(f"to_pinocchio_constraints: model {model.name!r} has constraints Pinocchio's rigid "
                         f"constraint models cannot express: {', '.join(other)}; only spherical and fixed cuts "
                         "can")  # fmt: skip
    pm = to_pinocchio(model) if pin_model is None else pin_model
    types = {cut: getattr(pin.ContactType, contact) for contact, cut in CONTACT_CUTS.items()}
    out = []
    for c in model.cuts:
        cm = pin.RigidConstraintModel(types[c.loop.type], pm, int(c.body1), pin.SE3(c.R1, c.p1), int(c.body2),
                                      pin.SE3(c.R2, c.p2), pin.ReferenceFrame.LOCAL)  # fmt: skip
        cm.name = c.loop.name
        out.append(cm)
    return out


def _aligned(axis: np.ndarray) -> str | None:
    for name, e in zip("XYZ", np.eye(3), strict=True):
        if np.array_equal(axis, e):
            return name
    return None


def _unbounded_unaligned(e: np.ndarray):
    """A RevoluteUnboundedUnaligned joint about e.  Pinocchio's Python API has no constructor
    with an axis, but its URDF parser makes one: take the joint from a one-joint URDF."""
    import pinocchio as pin

    axis = " ".join(f"{float(x):.17g}" for x in e)
    xml = (
        '<robot name="axis"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        f'<parent link="a"/><child link="b"/><axis xyz="{axis}"/></joint></robot>'
    )
    return pin.buildModelFromXML(xml).joints[1]


def _is_depth_first(parents: np.ndarray) -> bool:
    """Every subtree occupies consecutive indices: the order Pinocchio's crba and Minv assume."""
    path = [0]
    for k in range(1, len(parents)):
        while path[-1] != parents[k]:
            path.pop()
            if not path:
                return False
        path.append(k)
    return True


def to_pinocchio(model: Model):
    """The equivalent ``pinocchio.Model``: same joints (aligned kinds where the axis is x, y or z),
    placements, inertias, gravity, and a BODY frame per link.

    Pinocchio's crba and computeMinverse assume a depth-first joint order (each subtree on
    consecutive indices) and are silently wrong otherwise, so a model in another order (possible
    with :class:`ModelBuilder`; URDF models are depth-first) is refused.
    """
    import pinocchio as pin

    if not _is_depth_first(model.parents):
        raise ModelError(
            f"to_pinocchio: model {model.name!r} is not in depth-first order (parents {model.parents.tolist()}); "
            "Pinocchio's crba and computeMinverse require every subtree on consecutive joint indices. "
            "Add bodies depth-first (finish a branch before starting the next)."
        )
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    for k in range(1, model.njoints):
        kind, e = int(model.kinds[k]), model.axes[k]
        a = _aligned(e)
        if kind == REVOLUTE:
            joint = getattr(pin, f"JointModelR{a}")() if a else pin.JointModelRevoluteUnaligned(e)
        elif kind == CONTINUOUS:
            joint = getattr(pin, f"JointModelRUB{a}")() if a else _unbounded_unaligned(e)
        elif kind == PRISMATIC:
            joint = getattr(pin, f"JointModelP{a}")() if a else pin.JointModelPrismaticUnaligned(e)
        elif kind == FREE_FLYER:
            joint = pin.JointModelFreeFlyer()
        elif kind == PLANAR:
            joint = pin.JointModelPlanar()
        elif kind == SPHERICAL:
            joint = pin.JointModelSpherical()
        elif kind == HELICAL:
            pitch = float(model.pitches[k])
            joint = getattr(pin, f"JointModelH{a}")(pitch) if a else pin.JointModelHelicalUnaligned(e, pitch)
        elif kind == UNIVERSAL:
            joint = pin.JointModelUniversal(e, model.axes2[k])
        else:
            raise ModelError(f"to_pinocchio: joint {model.names[k]!r} has a kind Pinocchio lacks")
        placement = pin.SE3(model.placement_rotation[k], model.placement_translation[k])
        jid = pm.addJoint(int(model.parents[k]), joint, placement, model.names[k])
        pm.appendBodyToJoint(jid, pin.Inertia(model.masses[k], model.coms[k], model.inertias[k]), pin.SE3.Identity())
    # The frames in model.frames' order, so that a frame has the same index in both (universe is pm's frame 0).
    joint_frame = [0] * model.njoints  # each body's joint frame: the parent frame of the frames fixed to it
    for f in model.frames:
        if f.name == "universe" and f.type == "fixed_joint" and f.body == 0:
            continue
        kind = getattr(pin.FrameType, f.type.upper())
        fid = pm.addFrame(pin.Frame(f.name, f.body, joint_frame[f.body], pin.SE3(f.rotation, f.translation), kind))
        if f.type == "joint":
            joint_frame[f.body] = fid
    for ours, theirs in LIMITS.items():
        setattr(pm, theirs, np.array(getattr(model, ours)))
    return pm
