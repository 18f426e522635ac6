"""Conversion from a ``pinocchio.Model`` (the joint kinds denoc_pin supports)."""

from __future__ import annotations

import numpy as np

from .algorithms.forward import check_not_singular
from .model import CONTINUOUS, PRISMATIC, REVOLUTE, Frame, Model, ModelError
from .spatial import from_pinocchio_order

_KINDS = {
    **{f"JointModelR{a}": REVOLUTE for a in "XYZ"},
    **{f"JointModelRUB{a}": CONTINUOUS for a in "XYZ"},
    **{f"JointModelP{a}": PRISMATIC for a in "XYZ"},
    "JointModelRevoluteUnaligned": REVOLUTE,
    "JointModelRevoluteUnboundedUnaligned": CONTINUOUS,
    "JointModelPrismaticUnaligned": PRISMATIC,
}
SUPPORTED_PINOCCHIO_JOINTS = sorted(_KINDS)


def _kind_and_axis(joint) -> tuple[int, np.ndarray] | None:
    """Joint kind and axis, the axis read off the joint's motion subspace S (Pinocchio order)."""
    kind = _KINDS.get(joint.shortname())
    if kind is None:
        return None
    jm = joint.extract()
    jd = jm.createData()
    q0 = np.array([1.0, 0.0]) if kind == CONTINUOUS else np.zeros(1)
    jm.calc(jd, q0)
    p = from_pinocchio_order(np.asarray(jd.S, dtype=float).reshape(6))
    return kind, (p[3:] if kind == PRISMATIC else p[:3])


def from_pinocchio(pin_model) -> Model:
    """A denoc_pin :class:`Model` with the same bodies, joints, q/v layout and inertias as ``pin_model``."""
    import pinocchio as pin

    if not isinstance(pin_model, pin.Model):
        raise ModelError(f"from_pinocchio expects a pinocchio.Model, got {type(pin_model).__name__}")
    nj = pin_model.njoints
    kinds = np.zeros(nj, dtype=np.int64)
    axes = np.zeros((nj, 3))
    for k in range(1, nj):
        found = _kind_and_axis(pin_model.joints[k])
        if found is None:
            raise ModelError(
                f"pinocchio model {pin_model.name!r}: joint {pin_model.names[k]!r} is a "
                f"{pin_model.joints[k].shortname()}, which denoc_pin does not support; supported: "
                + ", ".join(SUPPORTED_PINOCCHIO_JOINTS)
            )
        kinds[k], axis = found
        n = np.linalg.norm(axis)
        if not n > 0:
            raise ModelError(f"pinocchio model {pin_model.name!r}: joint {pin_model.names[k]!r} has a zero axis")
        axes[k] = axis / n
    frames = []
    link_names = list(pin_model.names)
    link_names[0] = "universe"
    seen = set()
    for f in pin_model.frames:
        if f.type == pin.FrameType.BODY:
            j = int(f.parentJoint)
            frames.append(Frame(f.name, j, np.array(f.placement.rotation), np.array(f.placement.translation)))
            if j not in seen and np.allclose(f.placement.homogeneous, np.eye(4)):
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
    )
    check_not_singular(model, where=f"pinocchio model {pin_model.name!r}")
    return model
