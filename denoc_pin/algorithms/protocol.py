"""How Python calls a compiled entry: one protocol for every entry of the package (dynamics, kinematics, loops).

An *entry* is a compiled function ``kernel(mi, mf, ws, …) -> status`` on the flat buffers (``core/layout.py``); its
status is one of ``model.status``.  It is declared once, as an :class:`Entry`, and everything else follows from the
declaration:

- **the fast path**: ``fast(mb, ws, …)``, the kernel on the model as one buffer, for a workspace stamped for it
  (``on_model_buffer``), compiled for one exact signature.  numba's dispatcher checks dtype, dimension, layout
  and writability in C and refuses anything else with a TypeError instead of compiling for it; the kernel checks
  lengths and finiteness.  The public function calls it in a ``try`` written out in its own body (a helper
  would add a Python call, about 70 ns, to calls of 1.5–5 µs) and hands a refusal to ``refused``.
- **the refusal** (``refused``): explicit checks decide whether an argument was not in the kernels' form
  (``NOT_READY``: take the checked path, which converts or raises an error naming the array); a refusal of
  arguments that all were is a bug, raised again.
- **the checked path**: ``states`` converts one state or a batch (B, ·) and checks shapes; ``raise_for_status``
  turns a status into the user's error.
- **the batch** over all cores: ``Entry.run_batch``, through the entry's ``batch`` function, which is one line,
  ``run_chunks(rows, …)`` with the entry's ``rows`` (the kernel on rows lo … hi−1 of the batch, each row's results
  into that row of ``out`` and ``out2``).  ``run_chunks`` is written once: one chunk per thread, each on private
  copies of the workspaces.
- **compiling at first use** (``kernel_cache.compile_on_first_use``): the kernel for its signature, then the fast
  entry, each at its first use, the kernels it calls first (``after``).

The signature of rows: ``rows(mi, mf, ws, lw, fixed, Q, V, X, out, out2, lo, hi) -> status`` (``fixed``: a tuple of
the arguments shared by every row; ``lw``: the loop workspace, empty for a tree; ``out2`` (B, 0) when unused): a loop
of the entry's own, so that the views it copies results from are made once a chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
from numba import njit, types

from ..core.layout import WS_STAMP, borrow, split_model, stamped_for
from ..kernel_cache import compile_on_first_use, prepare
from ..model import Data, Model, check_data, configuration, external_forces, vector
from ..model.status import NOT_READY, NOT_STAMPED

__all__ = [
    "CB",
    "FB",
    "MAT",
    "MB",
    "MF",
    "MI",
    "VEC",
    "Entry",
    "kernel_array",
    "on_model_buffer",
    "ready",
    "refused",
    "restamp",
    "run_chunks",
    "set_fext",
    "states",
]

# The numba types of the buffers and arrays an entry takes.
MI = types.Array(types.int64, 1, "C", readonly=True)  # model.mi
MF = types.Array(types.float64, 1, "C", readonly=True)  # model.mf
MB = types.Array(types.float64, 1, "C", readonly=True)  # model.mb: mi bit for bit, then mf
FB = types.Array(types.float64, 2, "C", readonly=True)  # model.frame_buffer (layout.FRAME_ROW)
CB = types.Array(types.float64, 2, "C", readonly=True)  # model.constraint_buffer (cuts.PACKED)
VEC = types.Array(types.float64, 1, "C")  # data.ws, data.lw, q, v, x
MAT = types.Array(types.float64, 2, "C")

_F64 = np.dtype(np.float64)
_UNIT_STRIDE = (8,)
EMPTY = np.zeros(0)  # an array not given (v or a of the kinematics, lw of a tree): the kernels never write it


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


def restamp(model: Model, data: Data) -> None:
    """Stamp data (checked to be model's) for model's fast path: a copied Data carries its original's stamp."""
    data.ws[WS_STAMP] = model.mb.ctypes.data


def states(model: Model, data: Data, q, v, x, xname: str, optional: bool = False):
    """(q, v, x, B) ready for the kernels after checking data: B is None for one state q (nq,), v, x (nv,), else
    the batch size of q (B, nq), v, x (B, nv).  With ``optional``, v or x may be None (not given): None comes back
    for one state, a (B, 0) array for a batch; otherwise None is refused like any array of the wrong shape."""
    if getattr(data, "model", None) is not model:
        check_data(model, data)
    restamp(model, data)
    nq, nv = model.nq, model.nv
    if optional:
        absent = v is None, x is None
        if ready(q, nq) and (absent[0] or ready(v, nv)) and (absent[1] or ready(x, nv)):
            return q, v, x, None
    elif ready(q, nq) and ready(v, nv) and ready(x, nv):
        return q, v, x, None
    else:
        absent = False, False
    q = np.asarray(q, dtype=np.float64)  # converted once, for the batch test and for the checks below
    if q.ndim == 2 and (q.shape[1] != 1 or nq == 1):  # (n, 1): Pinocchio's column, one state; (1, 1) a batch
        B = q.shape[0]
        if q.shape[0] == nq and q.shape[1] != nq:
            raise ValueError(f"q of shape {q.shape} is a batch in columns (nq, B); a batch of B states is (B, {nq}), "
                             f"one state a row: pass q.T (and v.T, {xname}.T)")  # fmt: skip
        arrays = []
        for arr, n, name, skip in ((q, nq, "q", False), (v, nv, "v", absent[0]), (x, nv, xname, absent[1])):
            a = np.zeros((B, 0)) if skip else np.ascontiguousarray(arr, dtype=np.float64)
            if not skip and a.shape != (B, n):
                hint = f": pass {name}.T" if a.shape == (n, B) else ""
                raise ValueError(f"a batch of {B} states needs {name} of shape ({B}, {n}), got {a.shape}{hint}")
            arrays.append(a)
        return (*arrays, B)
    q = kernel_array(configuration(model, q))
    v = None if absent[0] else kernel_array(vector(v, nv, "v"))
    x = None if absent[1] else kernel_array(vector(x, nv, xname))
    return q, v, x, None


def set_fext(model: Model, data: Data, fext) -> None:
    """fext into data.fext (DeNOC order), zeroing it only when the last call had forces."""
    if fext is None:
        if not data.fext_is_zero:
            data.fext[:] = 0.0
            data.fext_is_zero = True
    else:
        data.fext[:] = external_forces(model, fext)
        data.fext_is_zero = False


def refused(refusal: Exception, model, data, *arrays, floats: tuple = (), loops: bool = False) -> int:
    """``NOT_READY`` if a fast entry refused an argument not in the kernels' form: model and data not of their types,
    an array (q (nq,), then (nv,) each) not ready, one of ``floats`` not a Python float, or (with ``loops``) a Data
    without a loop workspace.  Otherwise every argument was in form and the refusal is a bug, raised again."""
    if type(model) is not Model or type(data) is not Data or (loops and data.lw is None):
        return NOT_READY
    if not all(type(f) is float for f in floats):
        return NOT_READY
    for i, a in enumerate(arrays):
        if not ready(a, model.nq if i == 0 else model.nv):
            return NOT_READY
    raise refusal


@njit(cache=True, inline="always")
def on_model_buffer(kernel, mb, ws, args):
    """``kernel(mi, mf, ws, *args)`` on the model buffer mb, if ws was made for (stamped with) it; ``NOT_STAMPED``
    otherwise.  The body of every fast entry (``args``: a tuple, as numba inlines no starred parameter)."""
    if not stamped_for(ws, mb):
        return NOT_STAMPED
    mi, mf = split_model(mb)
    return kernel(mi, mf, ws, *args)


@njit(inline="always")
def run_chunks(rows, nchunks, mi, mf, ws, lw, fixed, Q, V, X, out, out2):
    """``rows`` over a batch Q (B, ·), V, X, results into out, out2 (B, ·), the batch cut into ``nchunks`` pieces
    over the threads; the worst status.  Each chunk works on private copies of the workspaces ws and lw.  The
    shared arrays are read (model, states) or written in disjoint rows (out, out2) through views that take no
    reference (``layout.borrow``): a view of a shared array would update its reference count atomically, and the
    threads would contend for that cache line.  One chunk runs without entering a parallel region, so a
    single-threaded caller (a Dask worker's task thread) never touches the threading layer."""
    B = Q.shape[0]
    Qb, Vb, Xb, ob, o2 = borrow(Q), borrow(V), borrow(X), borrow(out), borrow(out2)
    if nchunks == 1:  # lo = B − B: an int64 as in the chunks below (a literal 0 would compile rows a second time)
        return rows(mi, mf, ws.copy(), lw.copy(), fixed, Qb, Vb, Xb, ob, o2, B - B, B)
    status = np.zeros(nchunks, dtype=np.int64)
    for c in numba.prange(nchunks):
        status[c] = rows(mi, mf, ws.copy(), lw.copy(), fixed, Qb, Vb, Xb, ob, o2, c * B // nchunks,
                         (c + 1) * B // nchunks)  # fmt: skip
    return status.max()


@dataclass(eq=False)
class Entry:
    """A compiled entry, declared once.

    kernel: ``kernel(mi, mf, ws, …) -> status`` with ``signature``; fast: ``fast(mb, ws, …)``, its fast path, with
    ``fast_signature`` (exact: other types are refused); batch: ``batch(nchunks, mi, mf, ws, lw, fixed, Q, V, X,
    out, out2)``, one line of ``run_chunks`` with the entry's rows; states: the names of its per-state arrays (each
    with a batch axis in a batch, the first nq long and the others nv; the third names the array in errors);
    results: the length of each result row of a batch, as a Model attribute (() where the caller shapes them);
    after: kernels it calls, compiled first.
    """

    kernel: object
    signature: object
    fast: object = None
    fast_signature: object = None
    batch: object = None
    states: tuple[str, ...] = ("q", "v", "x")
    results: tuple[str, ...] = ()
    after: tuple = field(default=())

    def __post_init__(self):
        compile_on_first_use(self.kernel, self.signature, after=self.after)
        if self.fast is not None:
            compile_on_first_use(self.fast, self.fast_signature, exact=True, after=(self.kernel,))

    @property
    def name(self) -> str:
        return self.kernel.__name__

    def prepare(self) -> None:
        """Compile the kernel and the fast entry now, if not compiled yet (what ``denoc-pin compile`` runs)."""
        prepare(self.kernel, *(() if self.fast is None else (self.fast,)))

    def run_batch(self, model: Model, data: Data, fixed: tuple, Q, V, X, out=None, out2=None) -> tuple:
        """The batch over all cores (one chunk a thread: each copies the workspace): (the worst status, the results,
        (B, ·) each, shaped by ``results``, or ``out`` (and ``out2``) given by the caller)."""
        B = Q.shape[0]
        if out is None:
            outs = [np.empty((B, getattr(model, n))) for n in self.results]
        else:
            outs = [out] if out2 is None else [out, out2]
        outs += [np.empty((B, 0))] * (2 - len(outs))
        nchunks = max(1, min(B, numba.get_num_threads()))
        prepare(self.kernel)  # on its own, before the batch compiles
        lw = EMPTY if data.lw is None else data.lw
        status = self.batch(nchunks, model.mi, model.mf, data.ws, lw, fixed, Q, V, X, outs[0], outs[1])
        return (status, *outs[: max(1, len(self.results), 1 if out2 is None else 2)])
