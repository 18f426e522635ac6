"""The user-facing description of a cut joint, :class:`LoopJoint`, and the closed-loop errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core.cuts import CUT_KINDS
from ..model import SingularConfigurationError

__all__ = [
    "LOOP_TYPES",
    "AssemblyError",
    "JointCoupling",
    "LoopJoint",
    "SingularConfigurationError",
    "baumgarte_gains",
]

LOOP_TYPES: dict[str, int] = {name: nc for name, (_, nc) in CUT_KINDS.items()}
"""Cut-joint types and their number of constraints."""


class AssemblyError(ValueError):
    """``assemble`` found no configuration that closes the loops."""


@dataclass(frozen=True, eq=False)
class LoopJoint:
    """A joint cut to open a closed loop.

    name, type (see ``LOOP_TYPES``); link1/link2: link names; placement1/placement2: (R (3, 3), p (3,)),
    the frames C1/C2 in the link1/link2 frames; axis (3,): unit, in C1 (revolute, prismatic,
    universal, point_on_line); axis2 (3,): the universal's second axis, unit, in C2, ⟂ axis.
    """

    name: str
    type: str
    link1: str
    link2: str
    placement1: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    placement2: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: np.ndarray | None = None

    @property
    def n_constraints(self) -> int:
        return LOOP_TYPES[self.type]

    def __repr__(self) -> str:
        return (
            f"LoopJoint({self.name!r}, {self.type}, {self.link1!r} -> {self.link2!r}, {self.n_constraints} constraints)"
        )


@dataclass(frozen=True)
class JointCoupling:
    """Two joints geared together: θ_joint = multiplier · θ_reference + offset (one constraint, its own
    multiplier λ: the torque the coupling exerts on ``joint``, −multiplier · λ on ``reference``).

    The convention of URDF's ``<mimic joint=reference multiplier offset>``; an SDF ``gearbox`` joint becomes one
    (``load_sdf``).  Both joints are 1-DOF (revolute, continuous, prismatic, helical); θ is the joint's position
    (a continuous joint's angle atan2(sin, cos), its residual wrapped into (−π, π]).  A joint coupled to itself
    with multiplier 0 is held at θ = offset (MJCF's joint equality without joint2)."""

    name: str
    joint: str
    reference: str
    multiplier: float = 1.0
    offset: float = 0.0

    @property
    def n_constraints(self) -> int:
        return 1

    @property
    def held(self) -> bool:
        """The joint coupled to itself with multiplier 0: held at θ = offset."""
        return self.joint == self.reference and self.multiplier == 0.0

    @property
    def rule(self) -> str:
        """θ_joint's right-hand side as text: "offset" when held, else "multiplier · reference ± offset"."""
        if self.held:
            return f"{self.offset:g}"
        off = f" {self.offset:+g}" if self.offset else ""
        return f"{self.multiplier:g} · {self.reference}{off}"

    def __repr__(self) -> str:
        return f"JointCoupling({self.name!r}: {self.joint} = {self.rule})"


def baumgarte_gains(baumgarte) -> tuple[float, float]:
    """(kp, kd) of a Baumgarte pair, checked: finite and non-negative.  A ``pinocchio.BaumgarteCorrectorParameters``
    (r̈ + Kd ṙ + Kp r = 0) gives kp = √Kp, kd = Kd / 2 (r̈ + 2 kd ṙ + kp² r = 0)."""
    if hasattr(baumgarte, "Kp") and hasattr(baumgarte, "Kd"):
        Kp, Kd = float(np.max(baumgarte.Kp)), float(np.max(baumgarte.Kd))
        if np.ptp(baumgarte.Kp) != 0 or np.ptp(baumgarte.Kd) != 0 or Kp < 0 or Kd < 0:
            raise ValueError(f"baumgarte: Pinocchio's corrector gains must be one non-negative Kp and one Kd (the same "
                             f"on every row), got Kp={baumgarte.Kp}, Kd={baumgarte.Kd}")  # fmt: skip
        baumgarte = (math.sqrt(Kp), 0.5 * Kd)
    try:
        kp, kd = baumgarte
        kp, kd = float(kp), float(kd)
    except (TypeError, ValueError):
        raise ValueError(f"baumgarte must be a pair (kp, kd) of non-negative numbers, got {baumgarte!r}") from None
    if not (0.0 <= kp < math.inf and 0.0 <= kd < math.inf):
        raise ValueError(f"baumgarte gains must be finite and non-negative, got (kp, kd) = ({kp}, {kd})")
    return kp, kd
