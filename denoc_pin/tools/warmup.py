"""``dp.warmup``: load every kernel a model's calls need, once, before the calls that must be fast.

A kernel compiles at its first use and is kept in the machine's kernel cache; a fresh process still loads each cached
kernel at its first call (10–60 ms each).  A control loop, a benchmark or a short script calls ``warmup(model)``
first, so that its own first calls cost what later ones do.
"""

from __future__ import annotations

import time

from ..algorithms.protocol import ENTRIES
from ..model import Model
from .precompile import TASKS  # noqa: F401 (imports every module that declares an entry)

__all__ = ["warmup"]


def warmup(model: Model, derivatives: bool = False, batches: bool = False) -> float:
    """Load, once, every compiled entry (``algorithms.protocol.ENTRIES``) the model's calls use: the dynamics (and
    with loops the closed-loop dynamics), the GIM, the kinematics, frames and Jacobians, the energy, ``integrate``,
    ``difference``, ``normalize``; with ``derivatives`` the dynamics' derivatives too, with ``batches`` the rows of
    the batch forms.  The simulation and contact loops, compiled for a run's own buffers, load at a run's start.
    Returns the seconds it took (0.1–1 s in a fresh process whose kernels are in the kernel cache; the first use
    after an install compiles them, ``denoc-pin compile``)."""
    t0 = time.perf_counter()
    for entry in ENTRIES:
        if (entry.loops and not model.n_constraints) or (entry.derivatives and not derivatives):
            continue
        entry.prepare(rows=batches)
    model.create_data()  # the kernels a Data's set-up runs
    return time.perf_counter() - t0
