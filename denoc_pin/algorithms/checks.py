"""Model checks that need the algorithms: a GIM singular everywhere is named when a model is built."""

from __future__ import annotations

import warnings

import numpy as np

from ..model import Model, ModelError, ModelWarning
from ..model.status import SINGULAR
from .tree_entries import aba_entry

__all__ = ["check_not_singular"]


def check_not_singular(model: Model, where: str, strict: bool = False) -> None:
    """Name a model whose GIM is singular everywhere — a movable joint that moves no mass — with a
    :class:`ModelWarning` (a :class:`ModelError` under ``strict``): its mass matrix, bias forces, inverse dynamics
    and kinematics are well defined, only what inverts the GIM (forward dynamics, simulation) is not, and that
    raises ``SingularConfigurationError`` naming the joint.

    First structurally (a subtree with zero mass and zero inertia, e.g. a massless finger or leaf link), then by
    the UDUᵀ pivots Î_k at a generic (seeded random) configuration.
    """
    nj = model.njoints
    subtree = (model.masses > 0) | np.any(model.inertias != 0, axis=(1, 2))
    for k in range(nj - 1, 0, -1):
        subtree[model.parents[k]] |= subtree[k]
    for k in range(1, nj):
        if not subtree[k]:
            leaves = [model.link_names[c] for c in range(k, nj) if _is_in_subtree(model, c, k)]
            links = ", ".join(map(repr, leaves))
            problem = f"{where}: joint {model.names[k]!r} moves only massless links ({links}), so the GIM is singular"
            return _singular(problem, strict)
    data = model.create_data()
    rng = np.random.default_rng(12345)
    q = rng.uniform(-np.pi, np.pi, model.nq)
    zero = np.zeros(model.nv)
    # Forward dynamics' kernel, which factors on its way: loading a model then compiles what a first forward
    # dynamics needs, rather than a factorization kernel of its own, which would be one more compile.
    status = aba_entry(model.mi, model.mf, data.ws, q, zero, zero, False)  # q̇ = 0, τ = 0: read, not written
    if status:
        k = status - SINGULAR
        _singular(f"{where}: joint {model.names[k]!r} moves no inertia about its axis at a generic configuration, so "
                  "the GIM is singular", strict)  # fmt: skip


def _singular(problem: str, strict: bool) -> None:
    if strict:
        raise ModelError(f"{problem}; give the link an <inertial> or make the joint fixed (strict=True refuses it)")
    warnings.warn(f"{problem}: the mass matrix, bias forces, inverse dynamics and kinematics hold, forward dynamics "
                  "and simulation raise SingularConfigurationError; give the link an <inertial> or make the joint "
                  "fixed", ModelWarning, stacklevel=4)  # fmt: skip


def _is_in_subtree(model: Model, k: int, root: int) -> bool:
    while k > root:
        k = model.parents[k]
    return k == root
