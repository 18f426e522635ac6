"""The call plumbing of the algorithms, apart from their paper-shaped kernels: entry points on the flat
buffers, status codes, the fast path, argument conversion and batches.

One state: q (nq,), v (nv,), x (nv,).  A batch: q (B, nq), v (B, nv), x (B, nv).

The fast path hands the user's arrays straight to a compiled entry point with fixed signatures
(``FAST_*`` below, compiled at the first call: ``compile_on_first_use``): numba's dispatcher checks dtype,
dimension, layout and writability in C and refuses anything else instead of compiling for it; the
kernel checks that data was made for model (its stamp), the lengths and finiteness, and returns a
status.  A refusal is examined explicitly (``refused``): if an argument is not in the kernels'
form, the call goes down the checked path here, which converts what it can and otherwise raises an
error naming the array and its expected shape; if every argument was in form, the refusal is a bug
and is raised.  The fast path is written out in each public function (``api.py``) rather than
shared: a helper would add a Python call, about 70 ns, to calls of 1.5–5 µs.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, types

from .._kernel_cache import compile_on_first_use, prepare
from ..core.layout import FMA, all_finite, borrow, data_views, split_model, stamped_for
from ..model import Data, Model, check_data, configuration, external_forces, vector
from .composite import gim_step
from .forward import factor_step
from .inverse import inverse_dynamics_step
from .kinematics import kinematics_entry

__all__: list[str] = []

_F64 = np.dtype(np.float64)
_UNIT_STRIDE = (8,)
_MI = types.Array(types.int64, 1, "C", readonly=True)  # model.mi
_MF = types.Array(types.float64, 1, "C", readonly=True)  # model.mf
_VEC = types.Array(types.float64, 1, "C")  # data.ws, q, v, x
_MAT = types.Array(types.float64, 2, "C")
_MB = types.Array(types.float64, 1, "C", readonly=True)  # model.mb
ENTRY_STATE = types.int64(_MI, _MF, _VEC, _VEC, _VEC, _VEC, types.boolean)  # (mi, mf, ws, q, v, x, with_fext)
ENTRY_GIM = types.int64(_MI, _MF, _VEC, _VEC, _MAT)  # (mi, mf, ws, q, out)
# The fast path's entry points take the model as one buffer and no flag: every argument counts.
FAST_STATE = types.int64(_MB, _VEC, _VEC, _VEC, _VEC)  # (mb, ws, q, v, x), no external forces
FAST_GIM = types.int64(_MB, _VEC, _VEC, _MAT)  # (mb, ws, q, out)
BAD_LENGTH = -1  # the status of an entry point given q, v or x of the wrong length
NOT_STAMPED = -2  # the status of a fast entry point given a workspace made for another model
NOT_READY = -3  # the status ``refused`` gives a call whose arguments are not in the kernels' form


def ready(x, n: int) -> bool:
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


def kernel_array(x) -> np.ndarray:
    """A C-contiguous float64 array the entry points accept (writable: their signatures say so)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    return a if a.flags.writeable else a.copy()


def states(model: Model, data: Data, q, v, x, xname: str):
    """(q, v, x, batch) ready for the kernels; batch is None for one state, else B."""
    if getattr(data, "model", None) is not model:
        check_data(model, data)
    restamp(model, data)
    nq, nv = model.nq, model.nv
    if ready(q, nq) and ready(v, nv) and (x is None or ready(x, nv)):
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
    q = kernel_array(configuration(model, q))
    v = kernel_array(vector(v, nv, "v"))
    x = None if x is None else kernel_array(vector(x, nv, xname))
    return q, v, x, None


def restamp(model: Model, data: Data) -> None:
    """Stamp data (checked to be model's) for model's fast path: a copied Data carries its original's stamp."""
    data.ws[0] = model.mb.ctypes.data


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


def refused(refusal: Exception, model, data, *arrays) -> int:
    """NOT_READY if the fast entry point refused an argument that is not in the kernels' form (explicit checks:
    model and data of their types, every array ready); otherwise the refusal is a bug, raised again."""
    n = (model.nq, model.nv, model.nv) if type(model) is Model else ()
    if type(model) is not Model or type(data) is not Data or not all(map(ready, arrays, n)):
        return NOT_READY
    raise refusal


# ---------------------------------------------------------------------------------------
# Entry points on the flat buffers (core/layout.py): kinematics, then the algorithm's steps.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def rnea_entry(mi, mf, ws, q, v, a, with_fext):
    """Kinematics and Table 1; τ into ws.  Returns 1 if an input is not finite, BAD_LENGTH if q, v or a has the
    wrong length."""
    if len(q) != mi[4] or len(v) != mi[1] or len(a) != mi[1]:
        return BAD_LENGTH
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return 1
    kinematics_entry(mi, mf, ws, q)
    inverse_dynamics_step(mi, mf, ws, v, a, with_fext, True)
    return 0


@njit(cache=True)
def factor_entry(mi, mf, ws, q):
    """Kinematics and the UDUᵀ factors at q; returns 1 if q is not finite, 2 + k if Î_k is singular."""
    if not all_finite(q):
        return 1
    kinematics_entry(mi, mf, ws, q)
    k = factor_step(mi, mf, ws, q, False)  # no right side: the τ argument is not read (q: an array of its type)
    return 2 + k if k else 0


@njit(cache=True)
def aba_entry(mi, mf, ws, q, v, tau, with_fext):
    """q̈ = GIM⁻¹ (τ − h): the kinematics, Table 1's step 1 with q̈ = 0, then one backward pass for its step 2, the
    UDUᵀ factors and Table 3's step 1 (``forward.factor_step`` with ``solve``), then Table 3's step 2.  A status as
    raise_for_status reads it, or BAD_LENGTH if q, v or tau has the wrong length."""
    if len(q) != mi[4] or len(v) != mi[1] or len(tau) != mi[1]:
        return BAD_LENGTH
    if not (all_finite(q) and all_finite(v) and all_finite(tau)):
        return 1
    ddq = data_views(ws, mi).ddq
    ddq[:] = 0.0  # the zero acceleration of note 1 under Table 3
    kinematics_entry(mi, mf, ws, q)
    inverse_dynamics_step(mi, mf, ws, v, ddq, with_fext, False)  # step 1 alone
    k = factor_step(mi, mf, ws, tau, True)
    return 2 + k if k else 0


@njit(cache=True, fastmath=FMA)  # gim_step is inlined here, and compiled with FMA contraction
def crba_entry(mi, mf, ws, q, out):
    """Kinematics, composite inertias (eq. 17) and the GIM (eq. 16) into out; 1 if q is not finite, BAD_LENGTH
    if q has the wrong length."""
    if len(q) != mi[4]:
        return BAD_LENGTH
    if not all_finite(q):
        return 1
    kinematics_entry(mi, mf, ws, q)
    gim_step(mi, mf, ws, out)
    return 0


# The fast entry points: the model as one buffer, no flag, a workspace checked to be stamped for it.


@njit(cache=True)
def rnea_fast(mb, ws, q, v, a):
    """rnea_entry without external forces (the fast path)."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return rnea_entry(mi, mf, ws, q, v, a, False)


@njit(cache=True)
def aba_fast(mb, ws, q, v, tau):
    """aba_entry without external forces (the fast path)."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return aba_entry(mi, mf, ws, q, v, tau, False)


@njit(cache=True)
def crba_fast(mb, ws, q, out):
    """crba_entry (the fast path)."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return crba_entry(mi, mf, ws, q, out)


# Each compiled at its first use, for its signature alone (``compile_on_first_use``), the entries before their callers.
# factor_step serves the singularity check (no right side) and forward dynamics: one compile of the factorization,
# the longest of the package, for both (a literal True and a literal False would each compile it).
compile_on_first_use(factor_step, types.int64(_MI, _MF, _VEC, _VEC, types.boolean))
compile_on_first_use(rnea_entry, ENTRY_STATE)
compile_on_first_use(aba_entry, ENTRY_STATE, after=(factor_step,))
compile_on_first_use(crba_entry, ENTRY_GIM)
compile_on_first_use(rnea_fast, FAST_STATE, exact=True, after=(rnea_entry,))
compile_on_first_use(aba_fast, FAST_STATE, exact=True, after=(aba_entry,))
compile_on_first_use(crba_fast, FAST_GIM, exact=True, after=(crba_entry,))
compile_on_first_use(factor_entry, types.int64(_MI, _MF, _VEC, _VEC), after=(factor_step,))

# ---------------------------------------------------------------------------------------
# Batches of states over all cores: one threaded loop for inverse and forward dynamics.
# ---------------------------------------------------------------------------------------


@njit(cache=True)
def _run_rows(forward, with_fext, mi, mf, ws, Q, V, X, out, lo, hi):
    """Rows lo … hi−1 of a batch, on a private copy of the workspace; the worst kernel status.

    The shared arrays are read (model, states) or written in disjoint rows (out) through views
    that take no reference (core/layout.py): a view of a shared array otherwise updates its reference
    count atomically, and two threads fighting over that cache line ran at 1.2x one thread.
    """
    # The copy and the borrowed arrays are arguments of _rows, which keeps them alive while its views are used.
    return _rows(forward, with_fext, mi, mf, ws.copy(), borrow(Q), borrow(V), borrow(X), borrow(out), lo, hi)


@njit(cache=True)
def _rows(forward, with_fext, mi, mf, ws, Q, V, X, out, lo, hi):
    dv = data_views(ws, mi)
    result = dv.ddq if forward else dv.tau
    status = 0
    for i in range(lo, hi):
        if forward:
            s = aba_entry(mi, mf, ws, Q[i], V[i], X[i], with_fext)
        else:
            s = rnea_entry(mi, mf, ws, Q[i], V[i], X[i], with_fext)
        if s:
            status = s
        for c in range(out.shape[1]):
            out[i, c] = result[c]
    return status


@njit(cache=True, parallel=True)
def _run_batch(forward, with_fext, nchunks, mi, mf, ws0, Q, V, X, out):
    """Table 1 (forward=False: X = q̈, out = τ) or Table 3 (forward=True: X = τ, out = q̈) for
    every row, the batch cut into ``nchunks`` pieces.  (The views are built inside _run_rows:
    numba's parallel lowering cannot carry named tuples.)"""
    B = Q.shape[0]
    status = np.zeros(nchunks, dtype=np.int64)
    for c in numba.prange(nchunks):
        status[c] = _run_rows(forward, with_fext, mi, mf, ws0, Q, V, X, out, c * B // nchunks, (c + 1) * B // nchunks)
    return status.max()


def batch(forward: bool, model: Model, data: Data, Q, V, X) -> tuple[np.ndarray, int]:
    """(B, nv) results and the worst kernel status."""
    out = np.empty((Q.shape[0], model.nv))
    # One chunk a thread: each chunk copies the workspace (_run_rows).  Measured on
    # panda, 8 chunks on 2 threads ran at 1.5 µs a state against 0.9 µs for 2 chunks.
    nchunks = max(1, min(Q.shape[0], numba.get_num_threads()))
    prepare(rnea_entry, aba_entry)  # before _run_batch or _rows compiles (both branches are compiled)
    with_fext = not data.fext_is_zero
    if nchunks == 1:  # one thread (a Dask worker's): no parallel region, so no threading layer to share
        return out, _rows(forward, with_fext, model.mi, model.mf, data.ws, Q, V, X, out, 0, Q.shape[0])
    return out, _run_batch(forward, with_fext, nchunks, model.mi, model.mf, data.ws, Q, V, X, out)


def run_states(forward: bool, model: Model, data: Data, q, v, x, fext, xname: str) -> np.ndarray:
    """Inverse (forward=False) or forward dynamics through the checked path: one state or a batch."""
    q, v, x, B = states(model, data, q, v, x, xname)
    set_fext(model, data, fext)
    if B is None:
        entry = aba_entry if forward else rnea_entry
        raise_for_status(model, entry(model.mi, model.mf, data.ws, q, v, x, not data.fext_is_zero), q, v, x, xname)
        return (data.ddq if forward else data.tau).copy()
    out, status = batch(forward, model, data, q, v, x)
    raise_for_status(model, status, q, v, x, xname)
    return out


def factor(model: Model, data: Data, q: np.ndarray) -> None:
    """Kinematics and UDUᵀ factors at q into data; a clear error when singular."""
    raise_for_status(model, factor_entry(model.mi, model.mf, data.ws, q), q, None, None, "")
