"""``dp.warmup``: load every kernel a model's calls need, once, before the calls that must be fast.

A kernel compiles at its first use and is cached by numba; a fresh process still loads each cached kernel at its first
call (10–60 ms each).  A control loop, a benchmark or a short script calls ``warmup(model)`` first, so that its own
first calls cost what later ones do.
"""

from __future__ import annotations

import time

import numpy as np

from ..algorithms import (
    DENSE_LIMIT,
    center_of_mass,
    difference,
    energy,
    forward_dynamics,
    forward_dynamics_derivatives,
    forward_kinematics,
    frame_acceleration,
    frame_jacobian,
    frame_placement,
    frame_placements,
    frame_velocity,
    gim,
    integrate,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    joint_jacobian,
    neutral,
    nonlinear_effects,
    normalize,
)
from ..loops import constrained_forward_dynamics, constrained_forward_dynamics_derivatives
from ..model import Model

__all__ = ["warmup"]


def warmup(model: Model, derivatives: bool = False, batches: bool = False) -> float:
    """Call each of the model's compiled functions once at its neutral configuration, at rest: the dynamics (and
    with loops the closed-loop dynamics), the GIM, the kinematics, frames and Jacobians, the centre of mass, the
    energy, ``integrate``, ``difference``, ``normalize``; with ``derivatives`` the dynamics' derivatives too, with
    ``batches`` the batch forms of the dynamics.  Returns the seconds it took (0.1–1 s in a fresh process whose
    kernels are in numba's cache; the first use after an install compiles them, ``denoc-pin compile``)."""
    t0 = time.perf_counter()
    data = model.create_data()
    q, z = neutral(model), np.zeros(model.nv)
    forward_kinematics(model, data, q, z, z)
    inverse_dynamics(model, data, q, z, z)
    forward_dynamics(model, data, q, z, z)
    nonlinear_effects(model, data, q, z)
    if model.nv <= DENSE_LIMIT:
        gim(model, data, q)
    last = len(model.frames) - 1
    frame_placement(model, data, q, last)
    frame_placements(model, data, q)
    frame_jacobian(model, data, q, last)
    joint_jacobian(model, data, q, model.njoints - 1)
    frame_velocity(model, data, q, z, last)
    frame_acceleration(model, data, q, z, z, last)
    center_of_mass(model, data, q, z, z)
    energy(model, data, q, z)
    difference(model, q, integrate(model, q, z))
    normalize(model, q)
    if model.n_constraints:
        constrained_forward_dynamics(model, data, q, z, z)
    if derivatives:
        inverse_dynamics_derivatives(model, data, q, z, z)
        forward_dynamics_derivatives(model, data, q, z, z)
        if model.n_constraints:
            constrained_forward_dynamics_derivatives(model, data, q, z, z)
    if batches:
        Q, Z = np.tile(q, (2, 1)), np.zeros((2, model.nv))
        inverse_dynamics(model, data, Q, Z, Z)
        forward_dynamics(model, data, Q, Z, Z)
        if model.n_constraints:
            constrained_forward_dynamics(model, data, Q, Z, Z)
    return time.perf_counter() - t0
