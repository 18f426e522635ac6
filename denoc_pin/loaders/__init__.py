"""Models in: URDF, SDF and MJCF files, the Python builder, Pinocchio models (both ways), the built-in test models."""

from . import models
from .builder import ModelBuilder
from .files import load
from .mjcf import load_mjcf, mujoco_state, to_mujoco_state
from .pinocchio_bridge import from_pinocchio, to_pinocchio, to_pinocchio_constraints
from .sdf import load_sdf
from .urdf import InertiaWarning, load_urdf

__all__ = [
    "InertiaWarning",
    "ModelBuilder",
    "from_pinocchio",
    "load",
    "load_mjcf",
    "load_sdf",
    "load_urdf",
    "models",
    "mujoco_state",
    "to_mujoco_state",
    "to_pinocchio",
    "to_pinocchio_constraints",
]
