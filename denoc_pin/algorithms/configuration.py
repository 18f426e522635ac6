"""The configuration space of a model: neutral, integrate, difference, dexp⁻¹, normalize, random sampling
(Pinocchio's conventions).  Each joint kind's part is ``core.joints``'s; these run it over the model."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..core.joints import GROUPS, JOINTS, UNIT_HI, UNIT_LO
from ..core.layout import HEAD_NQ, HEAD_NV, all_finite, model_views, split_model
from ..core.lie_groups import (
    dexp_inv_kernel,
    difference_kernel,
    integrate_kernel,
    neutral_q,
    normalize_q,
    random_q,
    random_qs,
)
from ..model import Model, configuration, vector
from ..model.mimic import MimicModel
from ..model.status import BAD_LENGTH, NOT_FINITE
from .protocol import MB, VEC, Entry

__all__ = ["dexp_inv", "difference", "integrate", "neutral", "normalize", "random_configuration"]

# The small calls' fast entries: the model as one buffer and the user's arrays, checked in the kernel (lengths,
# finiteness); anything else (a list, an (n, 1) column, an int dt) is refused by the exact signature and takes the
# checked path.  Pinocchio's integrate costs a few tenths of a microsecond: a numba call is about as much.
_I = types.int64


@njit(cache=True)
def integrate_fast(mb, q, v, dt, out):
    """out = q ⊕ v dt (``integrate_kernel``) after checking lengths and finiteness; a status."""
    mi, mf = split_model(mb)
    m = model_views(mi, mf)
    if q.shape[0] != mi[HEAD_NQ] or v.shape[0] != mi[HEAD_NV] or out.shape[0] != mi[HEAD_NQ]:
        return BAD_LENGTH
    if not (all_finite(q) and all_finite(v) and np.isfinite(dt)):
        return NOT_FINITE
    integrate_kernel(m.kinds, m.idx_q, m.idx_v, q, v, dt, out)
    return 0


@njit(cache=True)
def difference_fast(mb, q0, q1, out):
    """out = q1 ⊖ q0 (``difference_kernel``) after the same checks; a status."""
    mi, mf = split_model(mb)
    m = model_views(mi, mf)
    if q0.shape[0] != mi[HEAD_NQ] or q1.shape[0] != mi[HEAD_NQ] or out.shape[0] != mi[HEAD_NV]:
        return BAD_LENGTH
    if not (all_finite(q0) and all_finite(q1)):
        return NOT_FINITE
    difference_kernel(m.kinds, m.idx_q, m.idx_v, q0, q1, out)
    return 0


@njit(cache=True)
def normalize_fast(mb, q, out):
    """out = q with each joint's unit part (``GROUPS``' ``unit``) scaled to norm 1; a status."""
    mi, mf = split_model(mb)
    m = model_views(mi, mf)
    if q.shape[0] != mi[HEAD_NQ] or out.shape[0] != mi[HEAD_NQ]:
        return BAD_LENGTH
    if not all_finite(q):
        return NOT_FINITE
    out[:] = q
    for k in range(1, m.kinds.shape[0]):
        lo, hi = UNIT_LO[m.kinds[k]], UNIT_HI[m.kinds[k]]
        if hi > lo:
            i = m.idx_q[k]
            norm = 0.0
            for c in range(i + lo, i + hi):
                norm += q[c] * q[c]
            if norm == 0.0:  # nothing to scale: the checked path names the joint
                return NOT_FINITE
            norm = np.sqrt(norm)
            for c in range(i + lo, i + hi):
                out[c] = q[c] / norm
    return 0


_CONFIGURATION = {"group": "configuration", "what": "integrate, difference, normalize", "seconds": 10}
INTEGRATE = Entry(fast=integrate_fast, fast_signature=_I(MB, VEC, VEC, types.float64, VEC), **_CONFIGURATION)
DIFFERENCE = Entry(fast=difference_fast, fast_signature=_I(MB, VEC, VEC, VEC), **_CONFIGURATION)
NORMALIZE = Entry(fast=normalize_fast, fast_signature=_I(MB, VEC, VEC), **_CONFIGURATION)


def _joints(model: Model):
    """(kind, slice of q) of every joint."""
    for k in range(1, model.njoints):
        i = int(model.idx_q[k])
        yield int(model.kinds[k]), slice(i, i + int(model.nqs[k]))


def neutral(model: Model) -> np.ndarray:
    """The reference configuration: zero angles and offsets, (cos, sin) = (1, 0), identity quaternions;
    ``pinocchio.neutral``."""
    kept = model.__dict__.get("_neutral")  # kept per model: a copy of it is the whole call
    if kept is not None:
        return kept.copy()
    if type(model) is MimicModel:
        return model.reduce_q(neutral(model.tree))
    return model._formed("_neutral", lambda: _neutral(model)).copy()


def _neutral(model: Model) -> np.ndarray:
    q = np.zeros(model.nq)
    for kind, s in _joints(model):
        q[s] = neutral_q(kind)
    return q


def integrate(model: Model, q, v, dt: float = 1.0) -> np.ndarray:
    """q ⊕ v dt on the configuration space; ``pinocchio.integrate(model, q, v * dt)``.

    Quaternions and (cos, sin) pairs of the result are unit.
    """
    out = np.empty(model.nq)
    try:
        if integrate_fast(model.mb, q, v, dt, out) == 0:
            return out
    except (TypeError, AttributeError):
        pass
    if type(model) is MimicModel:  # E(q ⊕ v) = E(q) ⊕ G v: the mimic coordinates are linear in the reference's
        return model.reduce_q(integrate(model.tree, model.expand_q(q), model.expand_v(v), dt))
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    dt = float(dt)
    if not np.isfinite(dt):
        raise ValueError(f"integrate: dt must be finite, got {dt}")
    integrate_kernel(model.kinds, model.idx_q, model.idx_v, q, v, dt, out)
    return out


def dexp_inv(model: Model, x, v) -> np.ndarray:
    """J_r(x)⁻¹ v: the rate ẋ of chart coordinates x (q = q_c ⊕ x) that moves q with velocity v.
    Pinocchio's ``dIntegrate(model, q_c, x, ARG1)`` is J_r(x)."""
    x = vector(x, model.nv, "x")
    v = vector(v, model.nv, "v")
    out = np.empty(model.nv)
    dexp_inv_kernel(model.kinds, model.idx_v, model.nvs, x, v, out)
    return out


def difference(model: Model, q0, q1) -> np.ndarray:
    """The velocity v with q0 ⊕ v = q1 (shortest rotation); ``pinocchio.difference``."""
    out = np.empty(model.nv)
    try:
        if difference_fast(model.mb, q0, q1, out) == 0:
            return out
    except (TypeError, AttributeError):
        pass
    if type(model) is MimicModel:
        return model.reduce_v(difference(model.tree, model.expand_q(q0, "q0"), model.expand_q(q1, "q1")))
    q0 = configuration(model, q0, "q0")
    q1 = configuration(model, q1, "q1")
    difference_kernel(model.kinds, model.idx_q, model.idx_v, q0, q1, out)
    return out


def normalize(model: Model, q) -> np.ndarray:
    """q with every quaternion and (cos, sin) pair scaled to unit norm; ``pinocchio.normalize``."""
    out = np.empty(model.nq)
    try:
        if normalize_fast(model.mb, q, out) == 0:
            return out
    except (TypeError, AttributeError):
        pass
    if type(model) is MimicModel:
        return model.reduce_q(normalize(model.tree, model.expand_q(q)))
    q = configuration(model, q).copy()
    for k, (kind, s) in enumerate(_joints(model), start=1):
        unit = GROUPS[JOINTS[kind].group].unit
        if unit is not None and not q[s][unit[0] : unit[1]].any():
            lo, hi = s.start + unit[0], s.start + unit[1]
            raise ValueError(f"normalize: joint {model.names[k]!r} has its {hi - lo} unit entries of q all zero "
                             f"(q[{lo}:{hi}]): no direction to scale to norm 1")  # fmt: skip
        normalize_q(kind, q[s])
    return q


def random_configuration(
    model: Model, rng: np.random.Generator | int | None = None, n: int | None = None
) -> np.ndarray:
    """A random q within the model's position limits (``lower_position_limit``, ``upper_position_limit``) where a
    joint has finite ones; where it has none: angles uniform in [-π, π], prismatic offsets and base positions in
    [-0.5, 0.5] m; uniformly random unit quaternions.  With ``n``: n of them as the rows of an (n, nq) array."""
    if type(model) is MimicModel:  # the tree's, its mimic entries dropped: the references sample their own limits
        return model.reduce_q(random_configuration(model.tree, rng, n))
    rng = np.random.default_rng(rng)
    if n is not None:
        Q = np.empty((int(n), model.nq))
        for kind, s in _joints(model):
            Q[:, s] = random_qs(kind, rng, model.lower_position_limit[s], model.upper_position_limit[s], int(n))
        return Q
    q = np.empty(model.nq)
    for kind, s in _joints(model):
        q[s] = random_q(kind, rng, model.lower_position_limit[s], model.upper_position_limit[s])
    return q
