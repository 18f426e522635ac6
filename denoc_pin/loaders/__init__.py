"""Models in: URDF and SDF files, the Python builder, Pinocchio models (both ways), and the built-in test models."""

from . import models
from .builder import ModelBuilder
from .files import load
from .pinocchio_bridge import from_pinocchio, to_pinocchio
from .sdf import load_sdf
from .urdf import InertiaWarning, load_urdf

__all__ = [
    "InertiaWarning",
    "ModelBuilder",
    "from_pinocchio",
    "load",
    "load_sdf",
    "load_urdf",
    "models",
    "to_pinocchio",
]
