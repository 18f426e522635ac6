"""denoc_pin: DeNOC recursive dynamics on kinematic modules, proven against Pinocchio."""

from .algorithms import (
    DENSE_LIMIT,
    DenocMatrices,
    denoc_matrices,
    forward_dynamics,
    gim,
    gim_inverse,
    inverse_dynamics,
    nonlinear_effects,
    udut,
)
from .model import Data, Frame, Model, ModelError
from .modules import Module
from .pinocchio_bridge import from_pinocchio
from .urdf import InertiaWarning, load_urdf

__version__ = "0.1.0"

__all__ = [
    "DENSE_LIMIT",
    "Data",
    "DenocMatrices",
    "Frame",
    "InertiaWarning",
    "Model",
    "ModelError",
    "Module",
    "denoc_matrices",
    "forward_dynamics",
    "from_pinocchio",
    "gim",
    "gim_inverse",
    "inverse_dynamics",
    "load_urdf",
    "nonlinear_effects",
    "udut",
]
