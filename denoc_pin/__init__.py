"""denoc_pin: DeNOC recursive dynamics on kinematic modules, proven against Pinocchio.

The package is layered, each floor importing only from the floors below it (``docs/architecture.md``):
core → model → algorithms → loops → simulation, loaders → tools.  This module is the public API.
"""

# _kernel_cache first: on import it drops cached kernels that are stale, before any is loaded.
from . import _kernel_cache  # noqa: F401
from .algorithms import (
    DENSE_LIMIT,
    DenocMatrices,
    denoc_matrices,
    difference,
    energy,
    forward_dynamics,
    gim,
    gim_inverse,
    integrate,
    inverse_dynamics,
    neutral,
    nonlinear_effects,
    normalize,
    parallel_scheme,
    random_configuration,
    udut,
)
from .algorithms.parallel_scheme import connectivity_matrix
from .core.modules import Module
from .loaders import InertiaWarning, ModelBuilder, from_pinocchio, load_urdf, models, to_pinocchio
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
from .model import Data, Frame, Model, ModelError, ModelWarning
from .simulation import (
    Trajectory,
    attach,
    inverse_dynamics_trajectory,
    lock_joints,
    simulate,
    with_loop,
    with_passive,
    without_loop,
)
from .tools.viewer import Viewer

__version__ = "0.1.0"

__all__ = [
    "DENSE_LIMIT",
    "LOOP_TYPES",
    "AssemblyError",
    "Data",
    "DenocMatrices",
    "Frame",
    "InertiaWarning",
    "LoopJoint",
    "Model",
    "ModelBuilder",
    "ModelError",
    "ModelWarning",
    "Module",
    "SingularConfigurationError",
    "Trajectory",
    "Viewer",
    "assemble",
    "attach",
    "complete_motion",
    "connectivity_matrix",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
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
    "lock_joints",
    "loop_jacobian",
    "loop_residual",
    "models",
    "neutral",
    "nonlinear_effects",
    "normalize",
    "parallel_scheme",
    "random_configuration",
    "simulate",
    "to_pinocchio",
    "udut",
    "with_loop",
    "with_passive",
    "without_loop",
]
