"""Cut-joint kinds: the joints cut to open a closed loop (Schiehlen eq. 17–20), as the loop kernel reads them.

Each kind blocks some directions of the relative twist Δ of frame C2 with respect to C1 (in C1,
[ω; v]); ``rows`` gives them as constant selection rows, angular directions first:

========== == ==================================================
kind       nc constrained directions (in C1)
========== == ==================================================
fixed       6 ω: x, y, z;              v: x, y, z
revolute    5 ω: b₁, b₂ (⟂ axis);      v: x, y, z
prismatic   5 ω: x, y, z;              v: b₁, b₂ (⟂ axis)
universal   4 ω: n = (R₁₂ axis2) × axis; v: x, y, z
spherical   3                          v: x, y, z
point_on_line 2                        v: b₁, b₂ (⟂ axis): a pin in a slot along ``axis``
========== == ==================================================

(b₁, b₂, axis) is a right-handed orthonormal triad fixed in C1.  The codes are ``CUT_*``, a
namespace of their own: a cut kind is not a tree joint kind (``core.joints``).  A joint coupling
(θ = multiplier · θ_ref + offset) is one more constraint kind, ``CUT_COUPLING``, of one row.

The loop kernel reads every cut and coupling from one float64 buffer (``ResolvedLoops.packed``), one
row each, whose columns ``PACKED`` declares once (a numba call costs about 0.1 µs per array argument).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tables import CUT_ROW
from .views import (
    P_AXIS,
    P_AXIS2,
    P_B1,
    P_B2,
    P_BODY1,
    P_BODY2,
    P_KIND,
    P_MULTIPLIER,
    P_OFFSET,
    P_P1,
    P_P2,
    P_R1,
    P_R2,
    P_ROW,
    P_ROWS,
    P_WIDTH,
)

__all__ = ["CUT_KINDS", "CUT_WITH_AXIS", "PACKED", "Coupling", "Cut", "ResolvedLoops", "cut_rows",
           "perpendicular_pair", "P_AXIS", "P_AXIS2", "P_B1", "P_B2", "P_BODY1", "P_BODY2", "P_KIND", "P_MULTIPLIER",
           "P_OFFSET", "P_P1", "P_P2", "P_R1", "P_R2", "P_ROW", "P_ROWS", "P_WIDTH"]  # fmt: skip

CUT_FIXED, CUT_REVOLUTE, CUT_PRISMATIC, CUT_UNIVERSAL, CUT_SPHERICAL, CUT_POINT_ON_LINE, CUT_COUPLING = range(7)
CUT_KINDS: dict[str, tuple[int, int]] = {
    "fixed": (CUT_FIXED, 6),
    "revolute": (CUT_REVOLUTE, 5),
    "prismatic": (CUT_PRISMATIC, 5),
    "universal": (CUT_UNIVERSAL, 4),
    "spherical": (CUT_SPHERICAL, 3),
    "point_on_line": (CUT_POINT_ON_LINE, 2),
}
"""Cut-joint type name -> (code, number of constraints)."""
CUT_WITH_AXIS = ("revolute", "prismatic", "universal", "point_on_line")

PACKED = CUT_ROW
"""The columns of the packed buffer (``core.tables.CUT_ROW``); the kernels read them by the generated P_* names."""


def perpendicular_pair(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(b₁, b₂) with (b₁, b₂, a) right-handed orthonormal."""
    t = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    b1 = t - a * (a @ t)
    b1 /= np.linalg.norm(b1)
    return b1, np.cross(a, b1)


def cut_rows(kind: str, b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """(nc, 6) constant selection rows of Δ for a cut of this kind (the universal's angular row is zero here:
    it turns with the joint and the kernel fills it per state)."""
    E = np.eye(6)
    pick = {
        "fixed": [E[0], E[1], E[2], E[3], E[4], E[5]],
        "revolute": [np.r_[b1, 0, 0, 0], np.r_[b2, 0, 0, 0], E[3], E[4], E[5]],
        "prismatic": [E[0], E[1], E[2], np.r_[0, 0, 0, b1], np.r_[0, 0, 0, b2]],
        "universal": [np.zeros(6), E[3], E[4], E[5]],
        "spherical": [E[3], E[4], E[5]],
        "point_on_line": [np.r_[0, 0, 0, b1], np.r_[0, 0, 0, b2]],
    }[kind]
    return np.array(pick, dtype=float)


@dataclass(frozen=True)
class Cut:
    """A loop joint resolved onto bodies: Cᵢ = (R_i, p_i) in the frame of body_i, the constant
    selection rows of Δ, and the axes (``loop`` is the :class:`LoopJoint` it resolves)."""

    loop: object
    body1: int
    R1: np.ndarray
    p1: np.ndarray
    body2: int
    R2: np.ndarray
    p2: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    b1: np.ndarray
    b2: np.ndarray
    rows: np.ndarray  # (nc, 6) constant rows of Δ (the universal's angular row is filled per state)

    @property
    def n_constraints(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class Coupling:
    """A joint coupling resolved onto bodies: the joint of body ``body`` follows that of body ``reference``,
    θ = multiplier · θ_ref + offset: one constraint row (``coupling`` is the JointCoupling it resolves)."""

    coupling: object
    body: int
    reference: int
    multiplier: float
    offset: float


@dataclass(frozen=True)
class ResolvedLoops:
    """The cut joints and joint couplings of a model, resolved (``loops.resolve_loops``), the cuts packed for the
    loop kernel.  Their constraint rows: every cut's in order, then one row per coupling.

    cuts: tuple of :class:`Cut`; couplings: tuple of :class:`Coupling`; ``packed()``: both as the loop kernel
    reads them (``PACKED``)."""

    cuts: tuple[Cut, ...] = ()
    couplings: tuple[Coupling, ...] = ()

    @property
    def joints(self) -> tuple:
        return tuple(c.loop for c in self.cuts)

    @property
    def n_constraints(self) -> int:
        return sum(c.n_constraints for c in self.cuts) + len(self.couplings)

    def packed(self) -> np.ndarray:
        """(n_cuts + n_couplings, P_WIDTH) read-only: one row per cut, then per coupling (``PACKED``)."""
        out = np.zeros((len(self.cuts) + len(self.couplings), P_WIDTH))
        row = 0
        for c, cut in enumerate(self.cuts):
            rows = np.zeros((6, 6))
            rows[: len(cut.rows)] = cut.rows
            out[c] = np.concatenate([(cut.body1, cut.body2, CUT_KINDS[cut.loop.type][0], row), cut.R1.ravel(), cut.p1,
                                     cut.R2.ravel(), cut.p2, cut.axis, cut.axis2, cut.b1, cut.b2, rows.ravel(),
                                     (0.0, 0.0)])  # fmt: skip
            row += cut.n_constraints
        for c, cp in enumerate(self.couplings, start=len(self.cuts)):
            out[c, [P_BODY1, P_BODY2, P_KIND, P_ROW, P_MULTIPLIER, P_OFFSET]] = (
                cp.body, cp.reference, CUT_COUPLING, row, cp.multiplier, cp.offset)  # fmt: skip
            row += 1
        out.setflags(write=False)
        return out
