"""The DeNOC recursions: one numba implementation of each, next to the paper's tables."""

from .forward_dynamics import forward_dynamics, gim_inverse, udut
from .gim import DENSE_LIMIT, gim
from .inverse_dynamics import inverse_dynamics, nonlinear_effects

__all__ = ["DENSE_LIMIT", "forward_dynamics", "gim", "gim_inverse", "inverse_dynamics", "nonlinear_effects", "udut"]
