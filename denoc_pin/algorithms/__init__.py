"""The DeNOC recursions: one numba implementation of each, next to the paper's tables."""

from .composite import DENSE_LIMIT, gim
from .explicit import DenocMatrices, denoc_matrices
from .forward import forward_dynamics, gim_inverse, udut
from .inverse import inverse_dynamics, nonlinear_effects

__all__ = [
    "DENSE_LIMIT",
    "DenocMatrices",
    "denoc_matrices",
    "forward_dynamics",
    "gim",
    "gim_inverse",
    "inverse_dynamics",
    "nonlinear_effects",
    "udut",
]
