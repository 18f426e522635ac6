"""The DeNOC recursions, one compiled implementation of each next to the paper's table, and the public functions
that call them (``api``)."""

from . import parallel_scheme
from .api import DENSE_LIMIT, forward_dynamics, gim, gim_inverse, inverse_dynamics, nonlinear_effects, udut
from .configuration import dexp_inv, difference, integrate, neutral, normalize, random_configuration
from .derivatives_api import (
    difference_derivatives,
    forward_dynamics_derivatives,
    integrate_derivatives,
    inverse_dynamics_derivatives,
)
from .energy import energy
from .explicit import DenocMatrices, denoc_matrices
from .kinematics_api import (
    center_of_mass,
    centroidal_map,
    centroidal_map_time_variation,
    centroidal_momentum,
    com_jacobian,
    forward_kinematics,
    frame_acceleration,
    frame_jacobian,
    frame_jacobian_time_variation,
    frame_placement,
    frame_placements,
    frame_velocity,
    joint_jacobian,
    joint_jacobians,
)

__all__ = [
    "DENSE_LIMIT",
    "DenocMatrices",
    "center_of_mass",
    "centroidal_map",
    "centroidal_map_time_variation",
    "centroidal_momentum",
    "com_jacobian",
    "denoc_matrices",
    "dexp_inv",
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
    "gim",
    "gim_inverse",
    "integrate",
    "integrate_derivatives",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "joint_jacobian",
    "joint_jacobians",
    "neutral",
    "nonlinear_effects",
    "normalize",
    "parallel_scheme",
    "random_configuration",
    "udut",
]
