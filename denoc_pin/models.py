"""Models of the seed papers that have no URDF."""

from __future__ import annotations

import numpy as np

from .builder import ModelBuilder
from .model import Model


def cylinder_inertia(mass: float, length: float, radius: float) -> np.ndarray:
    """Solid cylinder along z, about its centre of mass."""
    side = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([side, side, mass * radius**2 / 2.0])


def rope(n_links: int = 50, length: float = 2.5, radius: float = 0.005, mass: float = 0.004) -> Model:
    """The rope of Shah, Saha & Dutt (section 4, Fig. 7): ``n_links`` cylindrical elements of
    length ``length / n_links`` (50 mm), radius ``radius`` (5 mm) and mass ``mass`` each (4 g),
    every one joined to the previous, and the first to a fixed point, by a universal joint.

    2 n_links DOF (100 for the paper's rope).  At q = 0 the rope hangs straight down (−z) from the
    origin; each universal joint turns first about x, then about y.  Joint k is ``u{k}``,
    element k is ``element_{k}``.
    """
    if n_links < 1:
        raise ValueError(f"n_links must be at least 1, got {n_links}")
    if not (length > 0 and radius > 0 and mass > 0):
        raise ValueError(f"length, radius and mass must be positive, got {length}, {radius}, {mass}")
    l = length / n_links
    b = ModelBuilder(f"rope_{n_links}")
    I_c = cylinder_inertia(mass, l, radius)
    parent, offset = 0, np.zeros(3)
    for k in range(1, n_links + 1):
        parent = b.add_body(
            parent,
            joint="universal",
            axis=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
            placement=(np.eye(3), offset),
            mass=mass,
            com=(0.0, 0.0, -l / 2),
            inertia=I_c,
            name=f"u{k}",
            link=f"element_{k}",
        )
        offset = np.array([0.0, 0.0, -l])
    return b.build()
