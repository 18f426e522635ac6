"""Flat buffers behind Model and Data, and their named views.

A numba call costs about 0.13 µs per array argument, so the compiled entry points take the
whole model as two flat buffers (``mi`` integers, ``mf`` floats) and the whole workspace as
one (``ws``).  The views below are the single definition of what lives where: Model and Data
expose them as named arrays, and every kernel unpacks the same views (named tuples, so a
kernel reads ``mv.parents``, ``dv.S``) at its start.

The same holds between compiled functions: each step of an algorithm (kinematics, Table 1, the
UDUᵀ factors, the solve) is a compiled function of the flat buffers that unpacks its views
itself (``model_views`` and ``data_views`` are inlined), and the paper-shaped kernel it calls
with the views is inlined into it.  A call passing the ~20 views of a kernel moves their ~200
words of shapes, strides and pointers; it cost more than the kernel itself on panda (FD took
3.5 µs inside numba with view-passing calls, 2.0 µs with buffer-passing ones).

The kernels' views are ``numba.carray``s on the buffers' memory, which take no reference: a
sliced view costs two atomic reference-count updates of its buffer, about 25 ns, and the ~35
views of a call came to 0.7 µs, a third of panda's whole ID kernel.  Such views must not outlive
their buffers: they live inside one compiled call, whose arguments hold the buffers.  Python
gets ordinary NumPy views of the same memory (``numpy_views``).

``zmax`` is the largest joint DOF of the model: p_k, Ψ̂_k, Ψ_k are stored 6 x zmax and Î_k
zmax x zmax, so that a chain of 1-DOF joints needs no 6 x 6 blocks for them.

Memory is what bounds the papers' 100,000-DOF chains, so nothing here is stored that a kernel
can form in a few flops: M_k (eq. 2b) is made from m_k, d_k and I_k where it is needed, ṗ_k of a
universal joint from p_k and its second axis, and w_k goes straight into w̃_k.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

HEADER = 6  # mi[0:6] = nj, nv, number of modules, zmax, nq, number of M̂ slots
# The steps of the algorithms compile with a*b + c contracted into fused multiply-adds: one rounding
# instead of two (never less accurate), no reassociation, and NaN/inf semantics unchanged.  It took
# panda's FD step from 1.71 to 1.61 µs and its GIM from 0.95 to 0.83 µs inside numba.
FMA = {"contract"}
WS_HEADER = 1  # ws[0] = the address of the model buffer it was made for (the stamp); the views follow

ModelViews = namedtuple(
    "ModelViews",
    "parents kinds idx_q idx_v nqs nvs module_ptr module_bodies body_module slot slot_init placement_rotation "
    "placement_translation axes axes2 gravity masses coms inertias inertias_origin",
)
DataViews = namedtuple("DataViews", "E r S t tdot w_tilde fext eta M_hat Psi_hat Psi I_hat I_hat_inv tau phi ddq")


@intrinsic
def _address(typingctx, buf, offset):
    """Pointer to the element ``offset`` (flat, C order) of a C-contiguous array, taking no reference."""
    sig = types.CPointer(buf.dtype)(buf, offset)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(ary.data, [args[1]])

    return sig, codegen


@intrinsic
def _int64_address(typingctx, buf):
    """Pointer to the first element of a C-contiguous float64 array, read as int64 (mi inside mb)."""
    sig = types.CPointer(types.int64)(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.bitcast(ary.data, ir.IntType(64).as_pointer())

    return sig, codegen


@intrinsic
def _stamp(typingctx, buf):
    """The address of a C-contiguous array's data as a float64 (exact below 2⁵³): compared, never followed."""
    sig = types.float64(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.uitofp(builder.ptrtoint(ary.data, ir.IntType(64)), ir.DoubleType())

    return sig, codegen


@njit(cache=True, inline="always")
def _view(buf, offset, shape):
    """buf[offset : offset + prod(shape)] as an array of ``shape`` that takes no reference."""
    return numba.carray(_address(buf, offset), shape)


@njit(cache=True, inline="always")
def borrow(a):
    """``a`` as a view that takes no reference, for the hot loops of the call whose argument ``a`` is."""
    return numba.carray(_address(a, 0), a.shape)


@njit(cache=True, inline="always")
def model_views(mi, mf):
    """ModelViews of the flat model buffers (field docs: ``Model``)."""
    nj, nmod = mi[0], mi[2]
    o = HEADER
    parents = _view(mi, o, nj)
    o += nj
    kinds = _view(mi, o, nj)
    o += nj
    idx_q = _view(mi, o, nj)
    o += nj
    idx_v = _view(mi, o, nj)
    o += nj
    nqs = _view(mi, o, nj)
    o += nj
    nvs = _view(mi, o, nj)
    o += nj
    module_ptr = _view(mi, o, nmod + 1)
    o += nmod + 1
    module_bodies = _view(mi, o, nj - 1)
    o += nj - 1
    body_module = _view(mi, o, nj)
    o += nj
    slot = _view(mi, o, nj)
    o += nj
    slot_init = _view(mi, o, nj)
    f = 0
    placement_R = _view(mf, f, (nj, 3, 3))
    f += 9 * nj
    placement_p = _view(mf, f, (nj, 3))
    f += 3 * nj
    axes = _view(mf, f, (nj, 3))
    f += 3 * nj
    axes2 = _view(mf, f, (nj, 3))
    f += 3 * nj
    gravity = _view(mf, f, 3)
    f += 3
    masses = _view(mf, f, nj)
    f += nj
    coms = _view(mf, f, (nj, 3))
    f += 3 * nj
    inertias = _view(mf, f, (nj, 3, 3))
    f += 9 * nj
    inertias_origin = _view(mf, f, (nj, 3, 3))
    return ModelViews(
        parents, kinds, idx_q, idx_v, nqs, nvs, module_ptr, module_bodies, body_module, slot, slot_init,
        placement_R, placement_p, axes, axes2, gravity, masses, coms, inertias, inertias_origin,
    )  # fmt: skip


@njit(cache=True)
def model_buffer_sizes(nj: int, nmod: int) -> tuple[int, int]:
    """(size of mi, size of mf)."""
    return HEADER + 9 * nj + nmod + 1 + nj - 1, 9 * nj + 3 * nj + 3 * nj + 3 * nj + 3 + nj + 3 * nj + 9 * nj + 9 * nj


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
    ints = _int64_address(mb)
    head = numba.carray(ints, HEADER)
    ni = model_buffer_sizes(head[0], head[2])[0]
    return numba.carray(ints, ni), _view(mb, ni, len(mb) - ni)


@njit(cache=True, inline="always")
def stamped_for(ws, mb) -> bool:
    """Whether workspace ws was made for (stamped with) model buffer mb (``Data``)."""
    return ws[0] == _stamp(mb)


@njit(cache=True, inline="always")
def data_views(ws, mi):
    """DataViews of the flat workspace (field docs: ``Data``)."""
    nj, nv, z, ns = mi[0], mi[1], mi[3], mi[5]
    o = WS_HEADER
    E = _view(ws, o, (nj, 3, 3))
    o += 9 * nj
    r = _view(ws, o, (nj, 3))
    o += 3 * nj
    S = _view(ws, o, (nj, 6, z))
    o += 6 * z * nj
    t = _view(ws, o, (nj, 6))
    o += 6 * nj
    tdot = _view(ws, o, (nj, 6))
    o += 6 * nj
    w_tilde = _view(ws, o, (nj, 6))
    o += 6 * nj
    fext = _view(ws, o, (nj, 6))
    o += 6 * nj
    eta = _view(ws, o, (nj, 6))
    o += 6 * nj
    M_hat = _view(ws, o, (ns, 6, 6))
    o += 36 * ns
    Psi_hat = _view(ws, o, (nj, 6, z))
    o += 6 * z * nj
    Psi = _view(ws, o, (nj, 6, z))
    o += 6 * z * nj
    I_hat = _view(ws, o, (nj, z, z))
    o += z * z * nj
    I_hat_inv = _view(ws, o, (nj, z, z))
    o += z * z * nj
    tau = _view(ws, o, nv)
    o += nv
    phi = _view(ws, o, nv)
    o += nv
    ddq = _view(ws, o, nv)
    return DataViews(E, r, S, t, tdot, w_tilde, fext, eta, M_hat, Psi_hat, Psi, I_hat, I_hat_inv, tau, phi, ddq)


def numpy_views(views, *buffers: np.ndarray):
    """The kernels' views (ModelViews or DataViews) as the same named tuple of NumPy views of their buffers.

    Each view is located in the buffer whose memory holds it, so the offsets stay defined once,
    above; the NumPy views keep their buffer alive and carry its writability."""
    out = {}
    for name, v in views._asdict().items():
        for buf in buffers:
            start = (v.ctypes.data - buf.ctypes.data) // buf.itemsize
            if buf.dtype == v.dtype and 0 <= start and start + v.size <= buf.size:
                out[name] = buf[start : start + v.size].reshape(v.shape)
                break
        else:
            raise AssertionError(f"view {name!r} lies in none of the buffers")
    return type(views)(**out)


def workspace_size(nj: int, nv: int, zmax: int, nslots: int) -> int:
    return WS_HEADER + nj * (9 + 3 + 6 * zmax + 5 * 6 + 2 * 6 * zmax + 2 * zmax * zmax) + 36 * nslots + 3 * nv


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
    for j in range(len(module_bodies) - 1, -1, -1):  # the factorization's order (udut_factor)
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


@njit(cache=True)
def all_finite(x) -> bool:
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True
