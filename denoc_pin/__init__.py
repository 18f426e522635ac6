"""denoc_pin: DeNOC recursive dynamics on kinematic modules, proven against Pinocchio.

The package is layered, each floor importing only from the floors below it (``docs/architecture.md``):
core → model → algorithms → loops → simulation, loaders → tools.  This module is the public API.
"""

import importlib as _importlib

# kernel_cache first: on import it drops cached kernels that are stale, before any is loaded.
from . import kernel_cache  # noqa: F401
from .algorithms import (
    DENSE_LIMIT,
    DenocMatrices,
    center_of_mass,
    centroidal_map,
    centroidal_map_time_variation,
    centroidal_momentum,
    com_jacobian,
    denoc_matrices,
    difference,
    difference_derivatives,
    energy,
    forward_dynamics,
    forward_dynamics_derivatives,
    forward_kinematics,
    frame_acceleration,
    frame_jacobian,
    frame_jacobian_time_variation,
    frame_placement,
    frame_placements,
    frame_velocity,
    gim,
    gim_inverse,
    integrate,
    integrate_derivatives,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    joint_jacobians,
    neutral,
    nonlinear_effects,
    normalize,
    parallel_scheme,
    random_configuration,
    udut,
)
from .algorithms.parallel_scheme import connectivity_matrix
from .core.modules import Module
from .loaders import (
    InertiaWarning,
    ModelBuilder,
    from_pinocchio,
    load,
    load_mjcf,
    load_sdf,
    load_urdf,
    models,
    mujoco_state,
    to_pinocchio,
    to_pinocchio_constraints,
)
from .loops import (
    LOOP_TYPES,
    AssemblyError,
    JointCoupling,
    LoopJoint,
    SingularConfigurationError,
    assemble,
    complete_motion,
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    loop_jacobian,
    loop_residual,
)
from .model import FRAME_TYPES, Data, Frame, Model, ModelError, ModelWarning
from .simulation import (
    Trajectory,
    attach,
    inverse_dynamics_trajectory,
    lock_joints,
    simulate,
    step,
    step_derivatives,
    with_loop,
    with_passive,
    without_loop,
)
from .tools.viewer import Viewer
from .version import __version__ as __version__  # dp.__version__, from the package metadata


def __getattr__(name: str):
    # dp.distributed loads Dask's distributed and zarr (the [dask] extra): on first use, not with the package.
    if name == "distributed":
        return _importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AssemblyError",
    "DENSE_LIMIT",
    "Data",
    "DenocMatrices",
    "FRAME_TYPES",
    "Frame",
    "InertiaWarning",
    "LOOP_TYPES",
    "JointCoupling",
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
    "center_of_mass",
    "centroidal_map",
    "centroidal_map_time_variation",
    "centroidal_momentum",
    "com_jacobian",
    "complete_motion",
    "connectivity_matrix",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "denoc_matrices",
    "difference",
    "difference_derivatives",
    "energy",
    "forward_dynamics",
    "forward_dynamics_derivatives",
    "forward_kinematics",
    "frame_acceleration",
    "frame_jacobian",
    "frame_jacobian_time_variation",
    "frame_placement",
    "frame_placements",
    "frame_velocity",
    "from_pinocchio",
    "gim",
    "gim_inverse",
    "integrate",
    "integrate_derivatives",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "inverse_dynamics_trajectory",
    "joint_jacobians",
    "load",
    "load_mjcf",
    "load_sdf",
    "load_urdf",
    "lock_joints",
    "loop_jacobian",
    "loop_residual",
    "models",
    "mujoco_state",
    "neutral",
    "nonlinear_effects",
    "normalize",
    "parallel_scheme",
    "random_configuration",
    "simulate",
    "step",
    "step_derivatives",
    "to_pinocchio",
    "to_pinocchio_constraints",
    "udut",
    "with_loop",
    "with_passive",
    "without_loop",
]
