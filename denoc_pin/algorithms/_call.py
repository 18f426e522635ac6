"""Argument handling shared by the algorithms: a fast path for ready arrays, clear errors otherwise.

One state: q (nq,), v (nv,), x (nv,).  A batch: q (B, nq), v (B, nv), x (B, nv).

The fast path hands the user's arrays straight to a compiled entry point with fixed signatures
(``FAST_*`` below): numba's dispatcher checks dtype, dimension, layout and writability in C,
and refuses anything else with a TypeError instead of compiling for it; the kernel checks that
data was made for model (its stamp), the lengths and finiteness, and returns a status.  Any
refusal or non-zero status sends the call down the checked path here, which converts what it
can and otherwise raises an error naming the array and its expected shape.  The fast path is
written out in each public function (inverse_dynamics, forward_dynamics, gim) rather than shared:
a helper would add a Python call, about 70 ns, to calls of 1.5–5 µs.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ..model import Data, Model, check_data, configuration, external_forces, vector

_F64 = np.dtype(np.float64)
_UNIT_STRIDE = (8,)


_MI = types.Array(types.int64, 1, "C", readonly=True)  # model.mi
_MF = types.Array(types.float64, 1, "C", readonly=True)  # model.mf
_VEC = types.Array(types.float64, 1, "C")  # data.ws, q, v, x
_MAT = types.Array(types.float64, 2, "C")
_MB = types.Array(types.float64, 1, "C", readonly=True)  # model._mb
ENTRY_STATE = types.int64(_MI, _MF, _VEC, _VEC, _VEC, _VEC, types.boolean)  # (mi, mf, ws, q, v, x, with_fext)
ENTRY_GIM = types.int64(_MI, _MF, _VEC, _VEC, _MAT)  # (mi, mf, ws, q, out)
# The fast path's entry points take the model as one buffer and no flag: every argument counts.
FAST_STATE = types.int64(_MB, _VEC, _VEC, _VEC, _VEC)  # (mb, ws, q, v, x), no external forces
FAST_GIM = types.int64(_MB, _VEC, _VEC, _MAT)  # (mb, ws, q, out)
BAD_LENGTH = -1  # the status of an entry point given q, v or x of the wrong length
NOT_STAMPED = -2  # the status of a fast entry point given a workspace made for another model


def _ready(x, n: int) -> bool:
    """A writable C-contiguous float64 (n,) array: passed to the kernels as it is."""
    # dtype ==, not is: arrays boxed by numba (data.tau, and copies of it) carry an equal but
    # distinct float64 dtype object, and `is` would send every such call down the slow path.
    return (
        type(x) is np.ndarray
        and x.dtype == _F64
        and x.shape == (n,)
        and x.strides == _UNIT_STRIDE
        and x.flags.writeable
    )


def _kernel_array(x) -> np.ndarray:
    """A C-contiguous float64 array the entry points accept (writable: their signatures say so)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    return a if a.flags.writeable else a.copy()


def states(model: Model, data: Data, q, v, x, xname: str):
    """(q, v, x, batch) ready for the kernels; batch is None for one state, else B."""
    if getattr(data, "model", None) is not model:
        check_data(model, data)
    restamp(model, data)
    nq, nv = model.nq, model.nv
    if _ready(q, nq) and _ready(v, nv) and (x is None or _ready(x, nv)):
        return q, v, x, None
    qa = np.asarray(q, dtype=np.float64)
    if qa.ndim == 2:
        B = qa.shape[0]
        arrays = []
        for arr, n, name in ((q, nq, "q"), (v, nv, "v"), (x, nv, xname)):
            if arr is None:
                arrays.append(None)
                continue
            a = np.ascontiguousarray(arr, dtype=np.float64)
            if a.shape != (B, n):
                raise ValueError(f"a batch of {B} states needs {name} of shape ({B}, {n}), got {a.shape}")
            arrays.append(a)
        return (*arrays, B)
    q = _kernel_array(configuration(model, q))
    v = _kernel_array(vector(v, nv, "v"))
    x = None if x is None else _kernel_array(vector(x, nv, xname))
    return q, v, x, None


def restamp(model: Model, data: Data) -> None:
    """Stamp data (checked to be model's) for model's fast path: a copied Data carries its original's stamp."""
    data._ws[0] = model._mb.ctypes.data


def set_fext(model: Model, data: Data, fext) -> None:
    """fext into data.fext (DeNOC order), zeroing it only when the last call had forces."""
    if fext is None:
        if not data.fext_is_zero:
            data.fext[:] = 0.0
            data.fext_is_zero = True
    else:
        data.fext[:] = external_forces(model, fext)
        data.fext_is_zero = False


def raise_for_status(model: Model, status: int, q, v, x, xname: str) -> None:
    """Turn a kernel's status into the error the user should see (1: non-finite input, 2 + k: singular at k)."""
    if status == 0:
        return
    if status == 1:
        for arr, name in ((q, "q"), (v, "v"), (x, xname)):
            if arr is None:
                continue
            bad = ~np.isfinite(arr)
            if bad.any():
                where = np.argwhere(bad).tolist() if np.ndim(arr) > 1 else np.flatnonzero(bad).tolist()
                raise ValueError(f"{name} has non-finite entries (NaN or inf) at indices {where[:10]}")
        raise ValueError("non-finite input")
    k = status - 2
    raise ValueError(
        f"the generalized inertia matrix is singular at this configuration: joint {model.names[k]!r} moves no mass "
        f"(articulated inertia Î_k is not positive definite)"
    )
