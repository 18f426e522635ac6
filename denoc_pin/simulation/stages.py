"""The forward dynamics of an integrator's stage, compiled into the integrators' loops (RK4 in ``simulate``, the
Dormand–Prince pairs in ``dormand_prince``)."""

from __future__ import annotations

from numba import njit

from ..algorithms.tree_entries import aba_entry
from ..loops.loop_entries import RCOND, cfd_entry

__all__ = ["stage_accel"]


@njit(cache=True, inline="always")
def stage_accel(mi, mf, ws, cb, lw, kp, kd, q, v, tau):
    """The forward dynamics of a stage into ws's q̈: the tree's when lw is None, else the closed-loop one
    (Baumgarte's kp, kd; λ into lw).  The kernel's status."""
    # ``is None`` on an argument is decided when numba compiles: a tree's kernel does not contain, nor compile, the
    # closed-loop dynamics, the package's longest compile.
    if lw is None:
        return aba_entry(mi, mf, ws, q, v, tau, False)
    return cfd_entry(mi, mf, ws, cb, lw, q, v, tau, kp, kd, RCOND, False)
