"""Flat buffers behind Model and Data, declared once: what lives where, with shape, frame and order.

A numba call costs about 0.07 µs per array argument, so the compiled entries take the whole model as one buffer
``mb`` (the integers ``mi`` bit for bit, then the floats ``mf``) and the whole workspace as one (``ws``), and the
loop workspace of a model with loops as ``lw``.  The tables of ``core/tables.py`` are the single definition of what
lives where: each field's name, shape in terms of the model's sizes (``MODEL_HEADER``) and meaning.  From them
``views_source`` writes ``core/views.py`` (run ``python scripts/write_views.py``; ``tests/test_layout.py`` fails
when that file is stale): the named views every kernel unpacks at its start (``model_views``, ``data_views``,
``loop_views``, named tuples, so a kernel reads ``mv.parents``, ``dv.S``), the buffer sizes and the names of the
header entries and of a frame row's columns.  Model and Data expose the same views to Python (``numpy_views``).

The kernels' views take no reference (``core.memory``): they must not outlive their buffers, and live inside one
compiled call, whose arguments hold the buffers.  Each step of an algorithm (kinematics, Table 1, the UDUᵀ factors,
the solve) is a compiled function of the flat buffers that unpacks its views itself (the views functions are
inlined): a call passing the ~20 views of a kernel would move their ~200 words of shapes, strides and pointers.

``zmax`` is the largest joint DOF of the model: p_k, Ψ̂_k, Ψ_k are stored 6 x zmax and Î_k zmax x zmax, so that a
chain of 1-DOF joints needs no 6 x 6 blocks for them.  Memory is what bounds the papers' 100,000-DOF chains, so
nothing here is stored that a kernel can form in a few flops: M_k (eq. 2b) is made from m_k, d_k and I_k where it is
needed, ṗ_k of a universal joint from p_k and its second axis, and w_k goes straight into w̃_k.
"""

from __future__ import annotations

from types import FunctionType

import numba
import numpy as np
from numba import njit

from .memory import all_finite, borrow, int64_address, leading, numpy_view, stamp, view
from .tables import (
    DATA_FLOATS,
    FRAME_ROW,
    HEADER,
    LOOP_FLOATS,
    LOOP_HEADER,
    MODEL_FLOATS,
    MODEL_HEADER,
    MODEL_INTS,
    SIZES,
    WS_HEADER,
    views_source,
)
from .views import (
    FRAME_BODY,
    FRAME_ROTATION,
    FRAME_TRANSLATION,
    HEAD_NJ,
    HEAD_NQ,
    HEAD_NV,
    HEAD_Z,
    LW_M,
    LW_ND,
    LW_RANK,
    WS_STAMP,
    DataViews,
    LoopViews,
    ModelViews,
    data_views,
    loop_views,
    loop_workspace_size,
    model_buffer_sizes,
    model_views,
    workspace_size,
)

__all__ = [
    "DATA_FLOATS",
    "FACTOR_RATIO",
    "FMA",
    "FRAME_BODY",
    "FRAME_ROTATION",
    "FRAME_ROW",
    "FRAME_TRANSLATION",
    "HEADER",
    "HEAD_NJ",
    "HEAD_NQ",
    "HEAD_NV",
    "HEAD_Z",
    "LOOP_FLOATS",
    "LOOP_HEADER",
    "LOOP_FACTOR_DOF",
    "LW_M",
    "LW_ND",
    "LW_RANK",
    "MODEL_FLOATS",
    "MODEL_HEADER",
    "MODEL_INTS",
    "SIZES",
    "WS_HEADER",
    "WS_STAMP",
    "DataViews",
    "LoopViews",
    "ModelViews",
    "all_finite",
    "articulated_slots",
    "borrow",
    "buffer_sizes",
    "data_views",
    "dof_parents",
    "factor_cost",
    "factor_pays",
    "frame_rows",
    "leading",
    "loop_factor_order",
    "loop_views",
    "loop_workspace_size",
    "model_buffer",
    "model_buffer_sizes",
    "model_views",
    "numpy_views",
    "split_model",
    "stamped_for",
    "views_source",
    "workspace_size",
]

# The steps of the algorithms compile with a*b + c contracted into fused multiply-adds: one rounding instead of two
# (never less accurate), no reassociation, and NaN/inf semantics unchanged.
FMA = {"contract"}

FACTOR_RATIO = 16
"""The GIM's factor, GIM = Lᵀ L, serves a model's solves when its cost (``factor_cost``: Σ of the DOFs' path lengths
squared) is at most FACTOR_RATIO × rows × nv, rows the constraint rows each solve carries (``factor_pays``): a
quadruped's, Cassie's, a small closed mechanism's; on a long chain (cost n³/3) with few rows Table 3's UDUᵀ
recursions, a sweep per row, win.  Measured in ``docs/performance.md``."""

LOOP_FACTOR_DOF = 48
"""A closed-loop model of at most this many DOF, where the factor pays (``loop_factor_order``), solves its loops on
it (the loop workspace holds it, ``LW_ND``): q̈₀ and Y = GIM⁻¹ Jᵀ B by two sweeps of the λ-paths each, and its
derivatives take GIM⁻¹ from the same factor."""


def factor_pays(lam, rows: int, nv_max: int) -> bool:
    """Whether solves with ``rows`` constraint rows on a model of DOF parents ``lam`` (``dof_parents``) and at most
    nv_max DOF factor the GIM (``FACTOR_RATIO``)."""
    nv = len(lam)
    return 0 < nv <= nv_max and factor_cost(lam) <= FACTOR_RATIO * rows * nv


def loop_factor_order(lam, m: int) -> int:
    """The order of the loop workspace's factor H for m constraint rows: nv where ``factor_pays`` (up to
    ``LOOP_FACTOR_DOF``), else 0."""
    return len(lam) if factor_pays(lam, m, LOOP_FACTOR_DOF) else 0


def frame_rows(frames) -> np.ndarray:
    """(nframes, 13) read-only rows (``FRAME_ROW``) of frames given as (body, rotation, translation)."""
    out = np.zeros((len(frames), sum(n for _, n, _ in FRAME_ROW)))
    for i, (body, R, p) in enumerate(frames):
        out[i, FRAME_BODY] = body
        out[i, FRAME_ROTATION : FRAME_ROTATION + 9] = np.asarray(R, dtype=float).ravel()
        out[i, FRAME_TRANSLATION : FRAME_TRANSLATION + 3] = p
    out.setflags(write=False)
    return out


@njit(cache=True)
def articulated_slots(parents, module_bodies):
    """Where the factorization keeps each M̂_k: (slot, slot_init, number of slots).

    M̂_k is needed only from the moment its first child is eliminated until k itself is, so the
    backward sweep of eq. (20–21) keeps the open ones in a few recycled 6 x 6 slots: two for a
    chain, about one per pending branch for a tree, instead of one per body (29 MB at 100,000).
    slot_init[k] bit 1: k is a leaf and starts its own slot with M_k; bit 2: k is the first child
    of its parent to be eliminated and starts the parent's slot with M_β.
    """
    nj = len(parents)
    slot = np.full(nj, -1, dtype=np.int64)
    slot_init = np.zeros(nj, dtype=np.int64)
    free = np.empty(nj + 1, dtype=np.int64)  # a stack of released slots; free[nj] counts the slots made
    nfree = 0
    free[nj] = 0
    for j in range(len(module_bodies) - 1, -1, -1):  # the factorization's order (forward.factor_step)
        k = module_bodies[j]
        if slot[k] < 0:
            slot[k], nfree = _open_slot(free, nfree)
            slot_init[k] |= 1
        b = parents[k]
        if b > 0 and slot[b] < 0:
            slot[b], nfree = _open_slot(free, nfree)
            slot_init[k] |= 2
        free[nfree] = slot[k]  # k is eliminated: its slot is free again
        nfree += 1
    return slot, slot_init, max(free[nj], 1)


@njit(cache=True, inline="always")
def _open_slot(free, nfree):
    """A released slot if there is one, else a new one (free[-1] counts them); (slot, nfree)."""
    if nfree:
        return free[nfree - 1], nfree - 1
    free[-1] += 1
    return free[-1] - 1, nfree


def dof_parents(parents, idx_v, nvs) -> np.ndarray:
    """λ (nv,): the DOF before each DOF on its path to the base, −1 for none: a joint's DOFs follow one another, its
    first follows the last DOF of its nearest ancestor that has any (Featherstone's parent array, over DOFs)."""
    lam = np.arange(-1, int(np.sum(nvs)) - 1, dtype=np.int64)
    for k in range(1, len(parents)):
        if nvs[k] == 0:
            continue
        b = parents[k]
        while b > 0 and nvs[b] == 0:
            b = parents[b]
        lam[idx_v[k]] = idx_v[b] + nvs[b] - 1 if b > 0 else -1
    return lam


def factor_cost(lam) -> int:
    """Σ over the DOFs of the square of their λ-path's length (the DOF and those before it to the base): what the
    GIM's factor Lᵀ L costs, in multiply-adds up to a factor 2 (n³/3 on a chain, a few hundred on a quadruped)."""
    depth = np.zeros(len(lam), dtype=np.int64)
    for c in range(len(lam)):
        depth[c] = 1 if lam[c] < 0 else depth[lam[c]] + 1
    return int(np.sum(depth * depth))


def numpy_views(views, *buffers: np.ndarray):
    """What the kernels' ``views`` (model_views, data_views, loop_views) give on ``buffers``, as NumPy views: the
    same code with NumPy slices for ``view``, so the offsets stay defined once; each view keeps its buffer alive
    and carries its writability."""
    twin = _NUMPY_TWINS.get(views)
    if twin is None:
        f = views.py_func
        twin = _NUMPY_TWINS[views] = FunctionType(f.__code__, {**f.__globals__, "view": numpy_view}, f.__name__)
    return twin(*buffers)


_NUMPY_TWINS: dict = {}
buffer_sizes = model_buffer_sizes.py_func
"""(size of mi, size of mf) for the sizes in mi's header, from Python: making a model loads no compiled code."""


def model_buffer(mi: np.ndarray, nf: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mb, mi, mf): one float64 buffer mb holding the integers mi (bit for bit) and then nf floats.

    The fast entry points take the model as this one array (``split_model``): each array argument
    of a numba call costs about 0.07 µs."""
    mb = np.empty(mi.size + nf)
    ints = mb[: mi.size].view(np.int64)
    ints[:] = mi
    return mb, ints, mb[mi.size :]


@njit(cache=True, inline="always")
def split_model(mb):
    """(mi, mf) of a model buffer made by ``model_buffer``, as views that take no reference."""
    ints = int64_address(mb)
    head = numba.carray(ints, HEADER)
    ni = model_buffer_sizes(head)[0]
    return numba.carray(ints, ni), view(mb, ni, len(mb) - ni)


@njit(cache=True, inline="always")
def stamped_for(ws, mb) -> bool:
    """Whether workspace ws was made for (stamped with) model buffer mb (``Data``)."""
    return ws[WS_STAMP] == stamp(mb)
