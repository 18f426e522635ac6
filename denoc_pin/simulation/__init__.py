"""Simulation on the configuration space, and model edits for structure-varying systems (Isobe & Yagi)."""

from ..loaders.edits import attach, lock_joints, transfer_state, with_limits, with_loop, with_passive, without_loop
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
    "lock_joints",
    "simulate",
    "simulate_batch",
    "step",
    "step_derivatives",
    "transfer_state",
    "with_limits",
    "with_loop",
    "with_passive",
    "without_loop",
]
