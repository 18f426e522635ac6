"""A frame held on the world, as Pinocchio's rigid contacts: ``contact_3d`` (its point, a spherical cut) and
``contact_6d`` (its whole pose, a fixed cut), each a :class:`LoopJoint` between the frame's link and the base.

Pinocchio writes a foot on the ground as ``RigidConstraintModel(CONTACT_3D, model, joint, placement, 0, oMf[foot])``;
here the same constraint is a cut joint of the closed-loop functions, added by ``dp.with_loop``.  Its λ is the
reaction the link exerts on the world, in the contact frame (the ground's reaction on the foot is −λ): see
``docs/loops.md`` for the table from ``RigidConstraintModel`` to ``LoopJoint``.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import neutral
from ..algorithms.kinematics_api import frame_placement
from ..model import Model, ModelError, placement_pair
from .types import LoopJoint

__all__ = ["contact_3d", "contact_6d"]


def _contact(model: Model, frame, q, placement, name, kind: str, what: str) -> LoopJoint:
    f = model.frame_index(frame)
    fr = model.frames[f]
    if fr.body == 0:
        raise ModelError(f"{what}: frame {fr.name!r} of model {model.name!r} is on the base: it cannot move")
    q = neutral(model) if q is None else q
    data = model.create_data()
    oMf = frame_placement(model, data, q, f)
    if placement is None:
        anchor = oMf
    else:
        R, p = placement_pair(placement, f"{what}: placement")
        anchor = np.eye(4)
        anchor[:3, :3], anchor[:3, 3] = R, p
    # C1: the frame itself, given in its link's frame (a joint's frame is not a link: its body's link is)
    if fr.type in ("joint", "fixed_joint"):
        link = model.link_names[fr.body]
        lMf = _in_link(model, data, q, link, oMf)
        placement1 = (lMf[:3, :3], lMf[:3, 3])
    else:
        link, placement1 = fr.name, (np.eye(3), np.zeros(3))
    # C2: the anchor, in the frame of the base's link
    base = model.link_names[0]
    bMa = _in_link(model, data, q, base, anchor)
    return LoopJoint(name or f"{fr.name}_contact", kind, link, base, placement1, (bMa[:3, :3], bMa[:3, 3]))


def _in_link(model: Model, data, q, link: str, oM: np.ndarray) -> np.ndarray:
    """A world placement (4 x 4) in the frame of ``link`` at q; the world's where the model has no frame of that link
    (a base built without one)."""
    at = [i for i, x in enumerate(model.frames) if x.name == link and x.type == "body"]
    return np.linalg.solve(frame_placement(model, data, q, at[0]), oM) if at else oM


def contact_3d(model: Model, frame, q=None, placement=None, name: str | None = None) -> LoopJoint:
    """The cut that holds the origin of ``frame`` (a name or ``model.frame_id(name)``) at a world point: where it is
    at ``q`` (default: the neutral configuration), or at ``placement``'s origin ((R, p), 4 x 4 or ``pinocchio.SE3``);
    a spherical cut, 3 constraints; Pinocchio's ``RigidConstraintModel(CONTACT_3D, …, joint2_id=0, …)``.  Add it with
    ``dp.with_loop(model, cut)``."""
    return _contact(model, frame, q, placement, name, "spherical", "contact_3d")


def contact_6d(model: Model, frame, q=None, placement=None, name: str | None = None) -> LoopJoint:
    """The cut that holds ``frame``'s whole pose on the world (a fixed cut, 6 constraints), where it is at ``q`` or at
    ``placement``; Pinocchio's ``RigidConstraintModel(CONTACT_6D, …, joint2_id=0, …)``."""
    return _contact(model, frame, q, placement, name, "fixed", "contact_6d")
