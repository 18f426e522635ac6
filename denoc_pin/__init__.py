"""denoc_pin: DeNOC recursive dynamics on kinematic modules, proven against Pinocchio.

The package is layered, each floor importing only from the floors below it (``docs/architecture.md``):
core → model → algorithms → loops, contact → simulation, loaders → tools.  This module is the public API.
"""

import importlib as _importlib

# kernel_cache first: it gives numba the locator of the machine's kernel cache before any kernel is declared.
from . import kernel_cache  # noqa: F401

# isort: split
from . import algorithms, loaders
from .algorithms import *  # noqa: F403
from .algorithms.parallel_scheme import connectivity_matrix
from .contact import ContactSettings, ContactStepper
from .core.modules import Module
from .core.shapes import Box, Capsule, Collision, Cylinder, Ground, Mesh, Sphere
from .loaders import *  # noqa: F403
from .loops import (
    LOOP_TYPES,
    AssemblyError,
    JointCoupling,
    LoopJoint,
    SingularConfigurationError,
    assemble,
    complete_motion,
    constrained_forward_dynamics,
    constrained_forward_dynamics_derivatives,
    constrained_inverse_dynamics,
    contact_3d,
    contact_6d,
    loop_jacobian,
    loop_residual,
)
from .model import FRAME_TYPES, Data, Frame, MimicModel, Model, ModelError, ModelWarning
from .simulation import (
    JointPD,
    Trajectory,
    attach,
    exclude_collisions,
    inverse_dynamics_trajectory,
    lock_joints,
    simulate,
    simulate_batch,
    step,
    step_derivatives,
    with_limits,
    with_loop,
    with_passive,
    with_self_collision,
    without_loop,
)
from .tools.plots import plot
from .tools.viewer import Viewer
from .tools.warmup import warmup
from .version import __version__ as __version__  # dp.__version__, from the package metadata


def __getattr__(name: str):
    # dp.distributed loads Dask's distributed and zarr (the [dask] extra): on first use, not with the package.
    if name == "distributed":
        return _importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The subpackages' public names as they declare them, then what the public API takes from the others.
__all__ = [
    *algorithms.__all__,
    *loaders.__all__,
    "AssemblyError",
    "Box",
    "Capsule",
    "Collision",
    "ContactSettings",
    "ContactStepper",
    "Cylinder",
    "Data",
    "FRAME_TYPES",
    "Frame",
    "Ground",
    "JointPD",
    "LOOP_TYPES",
    "JointCoupling",
    "LoopJoint",
    "Mesh",
    "MimicModel",
    "Model",
    "ModelError",
    "ModelWarning",
    "Module",
    "SingularConfigurationError",
    "Sphere",
    "Trajectory",
    "Viewer",
    "plot",
    "assemble",
    "attach",
    "complete_motion",
    "contact_3d",
    "contact_6d",
    "connectivity_matrix",
    "constrained_forward_dynamics",
    "constrained_forward_dynamics_derivatives",
    "constrained_inverse_dynamics",
    "inverse_dynamics_trajectory",
    "exclude_collisions",
    "lock_joints",
    "loop_jacobian",
    "loop_residual",
    "simulate",
    "simulate_batch",
    "step",
    "step_derivatives",
    "warmup",
    "with_limits",
    "with_loop",
    "with_passive",
    "with_self_collision",
    "without_loop",
]
