"""The configuration space of a model: neutral, integrate, difference, dexp⁻¹, normalize, random sampling
(Pinocchio's conventions).  Each joint kind's part is ``core.joints``'s; these run it over the model."""

from __future__ import annotations

import numpy as np

from ..core.joints import (
    dexp_inv_kernel,
    difference_kernel,
    integrate_kernel,
    neutral_q,
    normalize_q,
    random_q,
    random_qs,
)
from ..model import Model, configuration, vector

__all__ = ["dexp_inv", "difference", "integrate", "neutral", "normalize", "random_configuration"]


def _joints(model: Model):
    """(kind, slice of q) of every joint."""
    for k in range(1, model.njoints):
        i = int(model.idx_q[k])
        yield int(model.kinds[k]), slice(i, i + int(model.nqs[k]))


def neutral(model: Model) -> np.ndarray:
    """The reference configuration: zero angles and offsets, (cos, sin) = (1, 0), identity quaternions;
    ``pinocchio.neutral``."""
    q = np.zeros(model.nq)
    for kind, s in _joints(model):
        q[s] = neutral_q(kind)
    return q


def integrate(model: Model, q, v, dt: float = 1.0) -> np.ndarray:
    """q ⊕ v dt on the configuration space; ``pinocchio.integrate(model, q, v * dt)``.

    Quaternions and (cos, sin) pairs of the result are unit.
    """
    q = configuration(model, q)
    v = vector(v, model.nv, "v")
    out = np.empty(model.nq)
    integrate_kernel(model.kinds, model.idx_q, model.idx_v, q, v, float(dt), out)
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
    q0 = configuration(model, q0, "q0")
    q1 = configuration(model, q1, "q1")
    out = np.empty(model.nv)
    difference_kernel(model.kinds, model.idx_q, model.idx_v, q0, q1, out)
    return out


def normalize(model: Model, q) -> np.ndarray:
    """q with every quaternion and (cos, sin) pair scaled to unit norm; ``pinocchio.normalize``."""
    q = configuration(model, q).copy()
    for kind, s in _joints(model):
        normalize_q(kind, q[s])
    return q


def random_configuration(
    model: Model, rng: np.random.Generator | int | None = None, n: int | None = None
) -> np.ndarray:
    """A random q within the model's position limits (``lower_position_limit``, ``upper_position_limit``) where a
    joint has finite ones; where it has none: angles uniform in [-π, π], prismatic offsets and base positions in
    [-0.5, 0.5] m; uniformly random unit quaternions.  With ``n``: n of them as the rows of an (n, nq) array."""
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
