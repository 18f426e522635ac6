"""The DeNOC recursions, one compiled implementation of each next to the paper's table, and the public functions
that call them (``api``)."""

from . import parallel_scheme
from .api import DENSE_LIMIT, forward_dynamics, gim, gim_inverse, inverse_dynamics, nonlinear_effects, udut
from .configuration import dexp_inv, difference, integrate, neutral, normalize, random_configuration
from .energy import energy
from .explicit import DenocMatrices, denoc_matrices

__all__ = [
    "DENSE_LIMIT",
    "DenocMatrices",
    "denoc_matrices",
    "dexp_inv",
    "difference",
    "energy",
    "forward_dynamics",
    "gim",
    "gim_inverse",
    "integrate",
    "inverse_dynamics",
    "neutral",
    "nonlinear_effects",
    "normalize",
    "parallel_scheme",
    "random_configuration",
    "udut",
]
