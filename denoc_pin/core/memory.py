"""Views of flat buffers that take no reference, for the compiled kernels (numba intrinsics), and their NumPy
twin for Python.

A sliced view of a NumPy array costs two atomic reference-count updates of its buffer, about 25 ns; the ~35 views
of a call came to a third of panda's whole inverse dynamics.  The views here are ``numba.carray``s on the buffers'
memory: they must not outlive their buffers, and live inside one compiled call, whose arguments hold the buffers.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["all_finite", "borrow", "copy_into", "int64_address", "leading", "numpy_view", "stamp", "view"]


@intrinsic
def address(typingctx, buf, offset):
    """Pointer to the element ``offset`` (flat, C order) of a C-contiguous array, taking no reference."""
    sig = types.CPointer(buf.dtype)(buf, offset)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(ary.data, [args[1]])

    return sig, codegen


@intrinsic
def int64_address(typingctx, buf):
    """Pointer to the first element of a C-contiguous float64 array, read as int64 (mi inside mb)."""
    sig = types.CPointer(types.int64)(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.bitcast(ary.data, ir.IntType(64).as_pointer())

    return sig, codegen


@intrinsic
def stamp(typingctx, buf):
    """The address of a C-contiguous array's data as a float64 (exact below 2⁵³): compared, never followed."""
    sig = types.float64(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.uitofp(builder.ptrtoint(ary.data, ir.IntType(64)), ir.DoubleType())

    return sig, codegen


@njit(cache=True, inline="always")
def view(buf, offset, shape):
    """buf[offset : offset + prod(shape)] as an array of ``shape`` that takes no reference."""
    return numba.carray(address(buf, offset), shape)


def numpy_view(buf: np.ndarray, offset, shape) -> np.ndarray:
    """buf[offset : offset + prod(shape)] as a NumPy array of ``shape``: ``view`` for Python callers (it keeps its
    buffer alive and carries its writability)."""
    return buf[offset : offset + int(np.prod(shape))].reshape(shape)


@njit(cache=True, inline="always")
def leading(a, shape):
    """The first prod(shape) elements of a C-contiguous array as an array of ``shape`` that takes no reference
    (a workspace sized for the most columns, used with fewer)."""
    return numba.carray(address(a, 0), shape)


@njit(cache=True, inline="always")
def borrow(a):
    """``a`` as a view that takes no reference, for the hot loops of the call whose argument ``a`` is."""
    return numba.carray(address(a, 0), a.shape)


@njit(cache=True, inline="always")
def copy_into(out, x) -> None:
    """out[:] = x for 1-D arrays, element by element: numba's slice assignment copies x to a temporary first where it
    cannot rule out that the two overlap (views of workspaces), an allocation per call."""
    for i in range(x.shape[0]):
        out[i] = x[i]


@njit(cache=True)
def all_finite(x) -> bool:
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True
