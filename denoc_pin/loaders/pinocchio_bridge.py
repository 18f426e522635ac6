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
from ..model import LIMIT_FIELDS, Frame, Model, ModelError

__all__ = ["SUPPORTED_PINOCCHIO_JOINTS", "from_pinocchio", "to_pinocchio"]

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


def from_pinocchio(pin_model) -> Model:
    """A denoc_pin :class:`Model` with the same bodies, joints, q/v layout and inertias as ``pin_model``."""
    import pinocchio as pin

    if not isinstance(pin_model, pin.Model):
        raise ModelError(f"from_pinocchio expects a pinocchio.Model, got {type(pin_model).__name__}")
    nj = pin_model.njoints
    kinds = np.zeros(nj, dtype=np.int64)
    axes = np.zeros((nj, 3))
    axes2 = np.zeros((nj, 3))
    pitches = np.zeros(nj)
    for k in range(1, nj):
        found = _kind_and_axis(pin_model.joints[k])
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
        **{ours: np.array(getattr(pin_model, theirs)) for ours, theirs in LIMITS.items()},
    )
    check_not_singular(model, where=f"pinocchio model {pin_model.name!r}")
    return model


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
