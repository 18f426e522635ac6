"""denoc_pin: DeNOC recursive dynamics on kinematic modules, proven against Pinocchio."""

# _kernel_cache first: on import it drops cached kernels that are stale, before any is loaded.
from . import _kernel_cache, models, parallel_scheme  # noqa: F401
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
from .builder import ModelBuilder
from .configuration import difference, integrate, neutral, normalize, random_configuration
from .loops import (
    LOOP_TYPES,
    AssemblyError,
    LoopJoint,
    SingularConfigurationError,
    assemble,
    complete_motion,
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    loop_jacobian,
    loop_residual,
)
from .model import Data, Frame, Model, ModelError
from .modules import Module
from .parallel_scheme import connectivity_matrix
from .pinocchio_bridge import from_pinocchio
from .simulate import Trajectory, energy, inverse_dynamics_trajectory, simulate
from .urdf import InertiaWarning, load_urdf
from .viewer import Viewer

__version__ = "0.1.0"

__all__ = [
    "DENSE_LIMIT",
    "LOOP_TYPES",
    "AssemblyError",
    "LoopJoint",
    "SingularConfigurationError",
    "assemble",
    "complete_motion",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "loop_jacobian",
    "loop_residual",
    "Data",
    "DenocMatrices",
    "Frame",
    "InertiaWarning",
    "Model",
    "ModelError",
    "Module",
    "ModelBuilder",
    "Trajectory",
    "Viewer",
    "connectivity_matrix",
    "denoc_matrices",
    "difference",
    "energy",
    "forward_dynamics",
    "from_pinocchio",
    "gim",
    "gim_inverse",
    "integrate",
    "inverse_dynamics",
    "inverse_dynamics_trajectory",
    "load_urdf",
    "models",
    "neutral",
    "normalize",
    "parallel_scheme",
    "random_configuration",
    "simulate",
    "nonlinear_effects",
    "udut",
]
