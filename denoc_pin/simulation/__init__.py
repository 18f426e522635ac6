"""Simulation on the configuration space, and model edits for structure-varying systems (Isobe & Yagi)."""

from ..loaders.edits import (
    attach,
    exclude_collisions,
    lock_joints,
    transfer_state,
    with_limits,
    with_loop,
    with_passive,
    with_self_collision,
    without_loop,
)
from .contact_simulation import simulate_batch
from .control import JointPD
from .simulate import METHODS, Trajectory, inverse_dynamics_trajectory, simulate
from .step import STEP_METHODS, step, step_derivatives

__all__ = [
    "JointPD",
    "METHODS",
    "STEP_METHODS",
    "Trajectory",
    "attach",
    "inverse_dynamics_trajectory",
    "exclude_collisions",
    "lock_joints",
    "simulate",
    "simulate_batch",
    "step",
    "step_derivatives",
    "transfer_state",
    "with_limits",
    "with_loop",
    "with_passive",
    "with_self_collision",
    "without_loop",
]
