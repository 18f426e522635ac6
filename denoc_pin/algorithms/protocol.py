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
- **the batch** over all cores: ``Entry.run_batch``, ``run_chunks`` with the entry's ``rows`` (the kernel on rows
  lo … hi−1 of the batch, compiled with ``nogil``, each row's results into that row of ``out`` and ``out2``).
  ``run_chunks`` is written once: one chunk per thread, each on private copies of the workspaces.
- **compiling at first use** (``kernel_cache.compile_on_first_use``): the kernel for its signature, then the fast
  entry, each at its first use, the kernels it calls first (``after``).

The signature of rows: ``rows(mi, mf, ws, lw, fixed, Q, V, X, out, out2, lo, hi) -> status`` (``fixed``: a tuple of
the arguments shared by every row; ``lw``: the loop workspace, empty for a tree; ``out2`` (B, 0) when unused): a loop
of the entry's own, so that the views it copies results from are made once a chunk.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import njit, types

from ..core.layout import WS_STAMP, borrow, split_model, stamped_for
from ..kernel_cache import announce, compile_on_first_use, prepare
from ..model import Data, Model, check_data, configuration, external_forces, vector
from ..model.status import NOT_READY, NOT_STAMPED

__all__ = [
    "CB",
    "FB",
    "MAT",
    "MATS",
    "MB",
    "MF",
    "MI",
    "VEC",
    "ENTRIES",
    "Entry",
    "in_pieces",
    "kernel_array",
    "on_model_buffer",
    "ready",
    "refused",
    "restamp",
    "rows_signature",
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
MATS = types.Array(types.float64, 3, "C")  # a stack of matrices: a fast entry's results in one block

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


@njit(cache=True, inline="always")
def borrowed(Q, V, X, out, out2):
    """The batch's arrays as views that take no reference (``layout.borrow``), at the top of every ``rows``: the
    threads read the states and write disjoint rows of the results, and a view of a shared array would update its
    reference count atomically, a cache line the threads would contend for."""
    return borrow(Q), borrow(V), borrow(X), borrow(out), borrow(out2)


_POOL: list = [None, 0, 0]  # the threads the chunks run on: (executor, its threads, the process that made it)
_POOL_LOCK = threading.Lock()


def _threads(n: int) -> ThreadPoolExecutor:
    """A pool of at least n threads (numba's thread count: it makes a thread at a submit, up to that), made once per
    process; a forked child makes its own, as its parent's threads are not in it."""
    with _POOL_LOCK:
        pool, size, pid = _POOL
        if pool is None or size < n or pid != os.getpid():  # a pool once made is left to its running chunks
            size = max(n, numba.config.NUMBA_NUM_THREADS)
            _POOL[:] = ThreadPoolExecutor(size, thread_name_prefix="denoc_pin-batch"), size, os.getpid()
        return _POOL[0]


def in_pieces(piece, n: int) -> list:
    """[piece(0), …, piece(n − 1)] on Python threads, piece 0 on the calling thread (``piece`` calls compiled code
    that releases the GIL: the pieces run on all cores at once); every piece has finished when it returns.  One piece
    runs on the calling thread alone, so a single-threaded caller (a Dask worker's task thread) starts no thread.
    Threads rather than a numba ``prange``: a parallel region compiles the whole entry under it once more, for each
    entry, and this takes no compile at all."""
    if n == 1:
        return [piece(0)]
    pool = _threads(n - 1)
    futures = [pool.submit(piece, c) for c in range(1, n)]
    try:
        first = piece(0)
    finally:
        rest = [f.result() for f in futures]  # every piece has finished before the results are read
    return [first, *rest]


def run_chunks(rows, nchunks: int, mi, mf, ws, lw, fixed, Q, V, X, out, out2) -> int:
    """``rows`` over a batch Q (B, ·), V, X, results into out, out2 (B, ·), the batch cut into ``nchunks`` pieces
    (``in_pieces``); the worst status.  Each chunk works on private copies of the workspaces ws and lw."""
    B = Q.shape[0]
    bounds = [c * B // nchunks for c in range(nchunks + 1)]

    def chunk(c: int) -> int:
        return rows(mi, mf, ws.copy(), lw.copy(), fixed, Q, V, X, out, out2, bounds[c], bounds[c + 1])

    return max(in_pieces(chunk, nchunks))


ENTRIES: list[Entry] = []
"""Every declared entry, in the order of declaration: what ``denoc-pin compile`` groups and ``dp.warmup`` loads."""
CMAT = types.Array(types.float64, 2, "C", readonly=True)  # a batch's states, read only


def rows_signature(fixed):
    """The signature of an entry's rows: (mi, mf, ws, lw, fixed, Q, V, X, out, out2, lo, hi) -> status."""
    return types.int64(MI, MF, VEC, VEC, fixed, CMAT, CMAT, CMAT, MAT, MAT, types.int64, types.int64)


@dataclass(eq=False)
class Entry:
    """A compiled entry, declared once: how Python calls it, and how it compiles.

    kernel: ``kernel(mi, mf, ws, …) -> status`` with ``signature`` (None: compiled for its caller's types at its first
    use, a loop of the simulation or of contact whose arguments are its run's buffers; no kernel: a fast entry
    alone); fast: ``fast(mb, ws, …)``, its fast path, with ``fast_signature`` (exact: other types are refused);
    rows: ``rows(mi, mf, ws, lw, fixed, Q, V, X, out, out2, lo, hi)``, the kernel on rows lo … hi−1 of a batch
    (``run_chunks``), compiled with ``nogil`` for ``rows_signature(fixed)``; states: the names of its per-state
    arrays (each with a batch axis in a batch, the first nq long and the others nv; the third names the array in
    errors); results: the length of each result row of a batch, as a Model attribute (() where the caller shapes
    them); after: kernels it calls, compiled first.

    How it compiles: ``group``, the group of ``denoc-pin compile`` whose first use compiles it (``rows_group`` its
    rows); ``what`` and ``seconds``, the notice a compile of it prints (what compiles, for about how long on 2 cores
    with nothing compiled yet); ``loops``: it needs a model with loops; ``derivatives``: ``dp.warmup`` loads it when
    asked for the derivatives.
    """

    kernel: object = None
    signature: object = None
    fast: object = None
    fast_signature: object = None
    rows: object = None
    states: tuple[str, ...] = ("q", "v", "x")
    results: tuple[str, ...] = ()
    after: tuple = field(default=())
    group: str = ""
    what: str = ""
    seconds: int = 30
    fixed: object = None
    rows_group: str = ""
    loops: bool = False
    derivatives: bool = False

    def __post_init__(self):
        if not (self.group and self.what) or (self.rows is not None and not (self.rows_group and self.fixed)):
            raise ValueError(f"entry {self.name}: declare its group and what it computes (and its rows' group and "
                             "fixed types)")  # fmt: skip
        if self.signature is not None:
            compile_on_first_use(self.kernel, self.signature, after=self.after)
        if self.kernel is not None:
            announce(self.kernel, self.what, self.seconds)
        if self.fast is not None:
            kernel = () if self.kernel is None else (self.kernel,)
            compile_on_first_use(self.fast, self.fast_signature, exact=True, after=kernel)
            announce(self.fast, self.what, self.seconds)
        if self.rows is not None:
            compile_on_first_use(self.rows, rows_signature(self.fixed), after=(self.kernel,))
            announce(self.rows, f"batches of {self.what}", self.seconds)
        ENTRIES.append(self)

    @property
    def name(self) -> str:
        return (self.fast if self.kernel is None else self.kernel).__name__

    @property
    def kernels(self) -> tuple:
        """The dispatchers it declares: kernel, fast entry, rows (those given)."""
        return tuple(k for k in (self.kernel, self.fast, self.rows) if k is not None)

    def prepare(self, rows: bool = False) -> None:
        """Compile the kernel and the fast entry now (and with ``rows`` the rows of its batches), if not compiled
        yet, or load them from the kernel cache: what ``denoc-pin compile`` and ``dp.warmup`` run."""
        prepare(*(k for k in (self.kernel, self.fast) if k is not None))
        if rows and self.rows is not None:
            prepare(self.rows)

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
        prepare(self.kernel, self.rows)  # on the calling thread, each on its own, before the chunks start
        lw = EMPTY if data.lw is None else data.lw
        status = run_chunks(self.rows, nchunks, model.mi, model.mf, data.ws, lw, fixed, Q, V, X, outs[0], outs[1])
        return (status, *outs[: max(1, len(self.results), 1 if out2 is None else 2)])
