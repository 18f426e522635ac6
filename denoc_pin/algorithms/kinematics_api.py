"""The public kinematics, in Pinocchio's argument order and array layouts (``frame_kinematics.py`` has the kernels).

``frame`` is a frame's name or its index ``model.frame_id(name)``; ``reference`` is ``"local"``, ``"world"`` or
``"local_world_aligned"`` (or a ``pinocchio.ReferenceFrame``), what each means is drawn in
``docs/kinematics.md``.  One state q (nq,), v, a (nv,), or a batch (B, nq), (B, nv), (B, nv): each result gets a
leading B, computed on all cores.  Spatial vectors and Jacobian rows are Pinocchio's [linear; angular].
"""

from __future__ import annotations

import numpy as np

from ..model import Data, Model, ModelError
from ..model.arguments import check_data
from ..model.mimic import MimicModel
from ..model.status import BAD_FRAME, raise_for_status
from .frame_kinematics import (
    ACCELERATION,
    CENTROIDAL_MAP,
    CENTROIDAL_MAP_DOT,
    CLASSICAL,
    COM,
    COM_ENTRY,
    COM_JACOBIAN,
    FORWARD,
    HELD_PLACEMENT_ENTRY,
    JACOBIAN,
    JACOBIAN_DOT,
    JOINT_JACOBIANS,
    KINEMATICS,
    MATRIX_ENTRY,
    MOMENTUM,
    PLACEMENT,
    PLACEMENT_ENTRY,
    PLACEMENTS,
    REFERENCES,
    VELOCITY,
)
from .protocol import EMPTY, refused, states

__all__ = [
    "center_of_mass",
    "centroidal_map",
    "centroidal_map_time_variation",
    "centroidal_momentum",
    "com_jacobian",
    "forward_kinematics",
    "frame_acceleration",
    "frame_jacobian",
    "frame_jacobian_time_variation",
    "frame_placement",
    "frame_placements",
    "frame_velocity",
    "joint_jacobian",
    "joint_jacobians",
    "update_frame_placement",
]

vector_fast, matrix_fast, placement_fast = KINEMATICS.fast, MATRIX_ENTRY.fast, PLACEMENT_ENTRY.fast
held_placement_fast, com_fast = HELD_PLACEMENT_ENTRY.fast, COM_ENTRY.fast


def _frame_index(model, frame) -> int:
    """A frame by name or index as its index (``Model.frame_index``), a model that is not one refused by type."""
    if not isinstance(model, (Model, MimicModel)):
        raise TypeError(f"model must be a denoc_pin.Model, got {type(model).__name__}")
    return model.frame_index(frame)


def _reference(reference) -> int:
    name = getattr(reference, "name", reference)  # pinocchio.ReferenceFrame.LOCAL.name == "LOCAL"
    code = REFERENCES.get(name.lower()) if isinstance(name, str) else None
    if code is None:
        raise ValueError(
            f"reference must be one of {', '.join(map(repr, REFERENCES))} (or a pinocchio.ReferenceFrame), "
            f"got {reference!r}"
        )
    return code


def _run(what: int, model: Model, data: Data, q, v, a, frame: int, ref: int, shape: tuple):
    """A vector result: the fast path (ready arrays straight to the compiled entry), else the checked one."""
    out = np.empty(shape)
    try:
        status = vector_fast(model.mb, data.ws, what, model.frame_buffer, q, EMPTY if v is None else v,
                              EMPTY if a is None else a, frame, ref, out)  # fmt: skip
    except (TypeError, AttributeError) as refusal:
        if type(model) is MimicModel:  # the tree's, at E(q), G q̇, G q̈
            return _run(what, model.tree, data, model.expand_q(q), *_expanded(model, v, a), frame, ref, shape)
        status = refused(refusal, model, data, q, *(x for x in (v, a) if x is not None))
    return out if status == 0 else _checked(what, model, data, q, v, a, frame, ref, shape)


def _expanded(model: MimicModel, v, a) -> tuple:
    return (None if v is None else model.expand_v(v)), (None if a is None else model.expand_v(a, "a"))


def _matrix(what: int, model: Model, data: Data, q, v, frame: int, ref: int, rows: int, joints: bool = False):
    """A (rows, nv) result, the same way; with ``joints``, ``frame`` is a joint (``model.joint_frame_buffer``)."""
    try:
        out = np.empty((rows, model.nv))
        fb = model.joint_frame_buffer if joints else model.frame_buffer
        status = matrix_fast(model.mb, data.ws, what, fb, q, EMPTY if v is None else v, frame, ref, out)
    except (TypeError, AttributeError) as refusal:
        if type(model) is MimicModel:  # J_tree G: the tree's columns at E(q), the mimic's added to its reference's
            v = _expanded(model, v, None)[0]
            J = _matrix(what, model.tree, data, model.expand_q(q), v, frame, ref, rows, joints)
            # data.J: the tree's columns, a mimic's times its multiplier (Pinocchio's; G's rows each hold 1 or m)
            return J * model.G.sum(axis=1) if what == JOINT_JACOBIANS else J @ model.G
        if not isinstance(model, Model):
            raise TypeError(f"model must be a denoc_pin.Model, got {type(model).__name__}") from None
        status = refused(refusal, model, data, q, *(x for x in (v,) if x is not None))
    return out if status == 0 else _checked(what, model, data, q, v, None, frame, ref, (rows, model.nv), joints)


def _checked(what: int, model: Model, data: Data, q, v, a, frame: int, ref: int, shape: tuple, joints=False):
    """Convert and check the input (one state or a batch), run the kernel, raise a clear error on a bad status."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a denoc_pin.Model, got {type(model).__name__}")
    given = q, v, a
    q, v, a, B = states(model, data, q, v, a, "a", optional=True)
    fb = model.joint_frame_buffer if joints else model.frame_buffer
    if B is not None:
        out = np.empty((B, *shape))
        status, _ = KINEMATICS.run_batch(model, data, (what, fb, frame, ref), q, v, a, out.reshape(B, -1))
    else:
        out = np.empty(shape)
        status = KINEMATICS.kernel(model.mi, model.mf, data.ws, what, fb, q, EMPTY if v is None else v,
                                   EMPTY if a is None else a, frame, ref, out.reshape(-1))  # fmt: skip
    if status == BAD_FRAME:  # a negative index counts from the end, as in Python; any other is out of range
        return _checked(what, model, data, *given, model.frame_index(frame), ref, shape)
    raise_for_status(model, status, q, v, a, "a")
    return out


def forward_kinematics(model: Model, data: Data, q, v=None, a=None) -> None:
    """The kinematics at q (and q̇, q̈) into ``data``; ``pinocchio.forwardKinematics``.

    ``data.oR`` (njoints, 3, 3), ``data.op`` (njoints, 3): each body's (= joint's) placement in the world
    (Pinocchio's ``data.oMi``); with v, ``data.t`` (njoints, 6): each body's twist [ω; ȯ] in its own frame
    (Pinocchio's ``data.v``, halves swapped); with a, ``data.tdot``: its classical acceleration [ω̇; ö], own frame,
    without gravity (Pinocchio's ``data.a`` is [ö − ω × ȯ; ω̇]).  A batch is refused: ``data`` holds one state.
    """
    if np.ndim(q) == 2 and np.shape(q) != (model.nq, 1):
        raise ValueError("forward_kinematics fills data with one state; for a batch call the frame functions")
    if a is not None and v is None:
        raise ValueError("forward_kinematics: an acceleration a needs the velocity v")
    _run(FORWARD, model, data, q, v, a, 0, 0, (0,))


def frame_placement(model: Model, data: Data, q, frame) -> np.ndarray:
    """(4, 4) world placement of ``frame`` (a name or ``model.frame_id(name)``); Pinocchio's
    ``updateFramePlacement`` after ``forwardKinematics``, ``data.oMf[frame].homogeneous``."""
    out = np.empty((4, 4))
    f = frame if type(frame) is int else _frame_index(model, frame)  # the kernel checks the range
    try:
        status = placement_fast(model.mb, data.ws, model.frame_buffer, q, f, out)
    except (TypeError, AttributeError) as refusal:
        if type(model) is MimicModel:
            return frame_placement(model.tree, data, model.expand_q(q), f)
        status = refused(refusal, model, data, q)
    return out if status == 0 else _checked(PLACEMENT, model, data, q, None, None, f, 0, (4, 4))


def update_frame_placement(model: Model, data: Data, frame) -> np.ndarray:
    """(4, 4) world placement of ``frame`` from the placement of its body that ``data`` holds; Pinocchio's
    ``updateFramePlacement``, which reads ``data.oMi``.  No kinematics pass: the body's placement is the one the
    last call on ``data`` left there — ``forward_kinematics`` (every body) or a frame's placement, velocity,
    acceleration or Jacobian at q (that frame's body and its ancestors).  ``J = frame_jacobian(model, data, q, f)``
    then ``X = update_frame_placement(model, data, f)`` is the Jacobian and the placement at q for one kinematics
    pass, Pinocchio's ``computeFrameJacobian`` + ``updateFramePlacement``."""
    out = np.empty((4, 4))
    if type(frame) is int:  # the fast path: a Model and its Data (numba refuses any other type)
        try:
            if held_placement_fast(model.mb, data.ws, model.frame_buffer, frame, out) == 0:
                return out
        except (TypeError, AttributeError):
            pass
    if type(model) is MimicModel:
        return update_frame_placement(model.tree, data, frame)
    if not isinstance(model, Model):
        raise TypeError(f"model must be a denoc_pin.Model, got {type(model).__name__}")
    check_data(model, data)  # data made by another model: the error says so
    held_placement_fast(model.mb, data.ws, model.frame_buffer, model.frame_index(frame), out)
    return out


def frame_placements(model: Model, data: Data, q) -> np.ndarray:
    """(nframes, 4, 4) world placement of every frame of ``model.frames``; ``updateFramePlacements``."""
    nf = len(model.frames)
    out = _run(PLACEMENTS, model, data, q, None, None, 0, 0, (16 * nf,))
    return out.reshape(out.shape[:-1] + (nf, 4, 4))


def frame_velocity(model: Model, data: Data, q, v, frame, reference="local") -> np.ndarray:
    """(6,) ``frame``'s spatial velocity [v; ω] in ``reference``; ``getFrameVelocity``."""
    f = frame if type(frame) is int else _frame_index(model, frame)
    ref = REFERENCES[reference] if reference in REFERENCES else _reference(reference)
    return _run(VELOCITY, model, data, q, v, None, f, ref, (6,))


def frame_acceleration(model: Model, data: Data, q, v, a, frame, reference="local", classical=False) -> np.ndarray:
    """(6,) ``frame``'s spatial acceleration [a; α] in ``reference`` (``getFrameAcceleration``), or with
    ``classical=True`` the classical one, a + ω × v (``getFrameClassicalAcceleration``: in ``local`` the
    acceleration of the frame's origin).  Gravity is not in it."""
    what = CLASSICAL if classical else ACCELERATION
    f = frame if type(frame) is int else _frame_index(model, frame)
    ref = REFERENCES[reference] if reference in REFERENCES else _reference(reference)
    return _run(what, model, data, q, v, a, f, ref, (6,))


def frame_jacobian(model: Model, data: Data, q, frame, reference="local") -> np.ndarray:
    """(6, nv) J with [v; ω] of ``frame`` in ``reference`` = J q̇; ``computeFrameJacobian``.  Its columns are the
    frame's block row of N = N_l N_d (eq. 9) carried into ``reference``."""
    ref = REFERENCES[reference] if reference in REFERENCES else _reference(reference)
    if type(frame) is int:  # the fast path, inline: it is the call of inverse-kinematics loops
        try:
            out = np.empty((6, model.nv))
            if matrix_fast(model.mb, data.ws, JACOBIAN, model.frame_buffer, q, EMPTY, frame, ref, out) == 0:
                return out
        except (TypeError, AttributeError):
            pass
    return _matrix(JACOBIAN, model, data, q, None, _frame_index(model, frame), ref, 6)


def joint_jacobian(model: Model, data: Data, q, joint, reference="local") -> np.ndarray:
    """(6, nv) J with [v; ω] of joint ``joint`` (a joint's name or its index ``model.joint_id(name)``, 0 the
    universe) in ``reference``: the twist of its body in the joint's frame; Pinocchio's ``computeJointJacobian``
    (local) or ``getJointJacobian`` after ``computeJointJacobians``.  An integer given to ``frame_jacobian`` stays a
    frame index, as in Pinocchio (frame 6 is not joint 6); the joint's frame is ``model.frame_id(name, "joint")``."""
    j = joint_index(model, joint)
    ref = REFERENCES[reference] if reference in REFERENCES else _reference(reference)
    return _matrix(JACOBIAN, model, data, q, None, j, ref, 6, joints=True)


def joint_index(model: Model, joint) -> int:
    """A joint given by name or index, as its index 0 … njoints − 1 (the error names the valid ones)."""
    if isinstance(joint, str):
        return model.joint_id(joint)
    if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool):
        if 0 <= joint < model.njoints:
            return int(joint)
        raise ModelError(f"joint index {joint} is out of range for model {model.name!r}: 0 (the universe) … "
                         f"{model.njoints - 1}")  # fmt: skip
    raise ModelError(f"a joint is a name or an index (model.joint_id(name)), got {type(joint).__name__}")


def joint_jacobians(model: Model, data: Data, q) -> np.ndarray:
    """(6, nv) every joint's columns p_j in the world frame (Pinocchio's ``data.J`` after
    ``computeJointJacobians``): the twist of body k, world, about the world origin, is the sum of its supports'.
    For a :class:`MimicModel`, (6, tree.nv) as Pinocchio's (``nvExtended``): a column per joint of the tree, a mimic
    joint's times its multiplier."""
    return _matrix(JOINT_JACOBIANS, model, data, q, None, 0, 0, 6)


def frame_jacobian_time_variation(model: Model, data: Data, q, v, frame, reference="local") -> np.ndarray:
    """(6, nv) dJ/dt of ``frame_jacobian`` along q̇ (exact); ``getFrameJacobianTimeVariation`` after
    ``computeJointJacobiansTimeVariation``."""
    f = frame if type(frame) is int else _frame_index(model, frame)
    ref = REFERENCES[reference] if reference in REFERENCES else _reference(reference)
    return _matrix(JACOBIAN_DOT, model, data, q, v, f, ref, 6)


def center_of_mass(model: Model, data: Data, q, v=None, a=None):
    """The centre of mass (3,), world; with v, (com, vcom); with v and a, (com, vcom, acom); ``centerOfMass``.

    The bodies counted are Pinocchio's: every body but the base (a fixed base's root link is left out)."""
    if v is None and a is None:  # the fast path: the position alone, into its own (3,)
        out = np.empty(3)
        try:
            if com_fast(model.mb, data.ws, q, out) == 0:
                return out
        except (TypeError, AttributeError):
            pass
    if a is not None and v is None:
        raise ValueError("center_of_mass: an acceleration a needs the velocity v")
    out = _run(COM, model, data, q, v, a, 0, 0, (9,))
    parts = out[..., 0:3], out[..., 3:6], out[..., 6:9]
    n = 1 if v is None else 2 if a is None else 3
    return parts[0].copy() if n == 1 else tuple(p.copy() for p in parts[:n])


def com_jacobian(model: Model, data: Data, q) -> np.ndarray:
    """(3, nv) J_com with v_com = J_com q̇, world; ``jacobianCenterOfMass``."""
    return _matrix(COM_JACOBIAN, model, data, q, None, 0, 0, 3)


def centroidal_momentum(model: Model, data: Data, q, v) -> np.ndarray:
    """(6,) the centroidal momentum h_G [linear; angular about the centre of mass], world axes;
    ``computeCentroidalMomentum``."""
    return _run(MOMENTUM, model, data, q, v, None, 0, 0, (6,))


def centroidal_map(model: Model, data: Data, q) -> np.ndarray:
    """(6, nv) A_G with h_G = A_G q̇; ``computeCentroidalMap``."""
    return _matrix(CENTROIDAL_MAP, model, data, q, None, 0, 0, 6)


def centroidal_map_time_variation(model: Model, data: Data, q, v) -> np.ndarray:
    """(6, nv) dA_G/dt along q̇, exact (``pin.dccrba``'s ``data.dAg``; see ``docs/kinematics.md`` on
    ``computeCentroidalMapTimeVariation``)."""
    return _matrix(CENTROIDAL_MAP_DOT, model, data, q, v, 0, 0, 6)
