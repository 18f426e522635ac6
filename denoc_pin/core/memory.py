"""Views of flat buffers that take no reference, for the compiled kernels (numba intrinsics), and their NumPy
twin for Python.

A sliced view of a NumPy array costs two atomic reference-count updates of its buffer, about 25 ns; the ~35 views
of a call came to a third of panda's whole inverse dynamics.  The views here are ``numba.carray``s on the buffers'
memory: they must not outlive their buffers, and live inside one compiled call, whose arguments hold the buffers.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import errors
from numba.core.typing import signature
from numba.core.typing.npydecl import parse_shape
from numba.extending import intrinsic
from numba.np.arrayobj import np_cfarray

__all__ = ["all_finite", "borrow", "copy_into", "int64_address", "leading", "numpy_view", "stamp", "view"]


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


def _cfarray(context, builder, retty, ptr, shapety, shape):
    """The array struct of a C-contiguous ``retty`` on the data at ``ptr``, with no meminfo (numba.carray's own
    lowering, ``np_cfarray``)."""
    return np_cfarray(context, builder, signature(retty, types.CPointer(retty.dtype), shapety), (ptr, shape))


def _shaped(what: str, a, shape) -> types.Array:
    """The type of a C-contiguous view of ``shape`` on array ``a``'s data."""
    ndim = parse_shape(shape)
    if not isinstance(a, types.Array) or ndim is None:
        raise errors.NumbaTypeError(f"{what} takes an array and a shape, not {a}, {shape}")
    return types.Array(a.dtype, ndim, "C")


def _lowered(retty, offset: bool):
    """The lowering of a view of type ``retty`` on its first argument's data, from the element the second argument
    gives (``offset``) or from the first, shaped by the last argument."""

    def codegen(context, builder, sig, args):
        ptr = context.make_array(sig.args[0])(context, builder, args[0]).data
        if offset:
            ptr = builder.gep(ptr, [context.cast(builder, args[1], sig.args[1], types.intp)])
        return _cfarray(context, builder, retty, ptr, sig.args[-1], args[-1])

    return codegen


@intrinsic
def view(typingctx, buf, offset, shape):
    """buf[offset : offset + prod(shape)] as an array of ``shape`` that takes no reference.  An intrinsic, lowered
    where it is called: the ~1,500 views of the package's kernels, as inlined functions, took numba 15 s to copy and
    type again at every compile."""
    retty = _shaped("view", buf, shape)
    return retty(buf, offset, shape), _lowered(retty, offset=True)


def numpy_view(buf: np.ndarray, offset, shape) -> np.ndarray:
    """buf[offset : offset + prod(shape)] as a NumPy array of ``shape``: ``view`` for Python callers (it keeps its
    buffer alive and carries its writability)."""
    return buf[offset : offset + int(np.prod(shape))].reshape(shape)


@intrinsic
def leading(typingctx, a, shape):
    """The first prod(shape) elements of a C-contiguous array as an array of ``shape`` that takes no reference
    (a workspace sized for the most columns, used with fewer)."""
    retty = _shaped("leading", a, shape)
    return retty(a, shape), _lowered(retty, offset=False)


@intrinsic
def borrow(typingctx, a):
    """``a`` as a view that takes no reference, for the hot loops of the call whose argument ``a`` is."""
    if not isinstance(a, types.Array):
        raise errors.NumbaTypeError(f"borrow takes an array, not {a}")
    retty = types.Array(a.dtype, a.ndim, "C")

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        return _cfarray(context, builder, retty, ary.data, types.UniTuple(types.intp, a.ndim), ary.shape)

    return retty(a), codegen


@njit(cache=True, inline="always")
def copy_into(out, x) -> None:
    """out[:] = x for 1-D arrays that do not overlap, element by element: numba's slice assignment compares the two
    ranges at run time first, and copies through a temporary (an allocation) where they overlap."""
    for i in range(x.shape[0]):
        out[i] = x[i]


@njit(cache=True)
def all_finite(x) -> bool:
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True
