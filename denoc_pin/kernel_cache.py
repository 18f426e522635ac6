"""The package's numba kernels: compiled at their first use, announced when that takes a while, and dropped from
numba's cache when any source file of the package changed.

Kernels compile at their first use, not at import (``compile_on_first_use``), and a compile that misses the cache
for more than a second says so in one line on stderr (``CompileNotice``): what compiles and about how long.

numba keys a cached function by the timestamp and size of its own file, not of the files whose
functions it compiled in.  A kernel in ``inverse.py`` therefore keeps the views of an old
``layout.py`` after ``layout.py`` changes: in this project that showed up once as a reshape
error, and could as well have been wrong numbers.  So the package's sources are hashed at import
(about a millisecond), and on any change every cache file in the package's ``__pycache__``
folders is deleted before a kernel is loaded.

Many processes may import the package at once (a process pool, the workers of a cluster, right
after an upgrade).  The check holds an exclusive lock (``fcntl.flock`` on a file beside the stamp)
from reading the stamp to writing it, so exactly one process deletes stale files, and it does so
before any process of the new sources has passed the check and could be loading them; the stamp
is written to a temporary file and renamed into place, so nobody reads half a stamp.  numba's own
cache writes are atomic renames too.

This covers numba's default, in-tree cache (``pip install -e``, a writable site-packages).  A
cache placed elsewhere (``NUMBA_CACHE_DIR``, or numba's user-wide fallback for read-only
installs) is not touched; clear it by hand after changing the sources.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
from pathlib import Path

import numpy as np
from numba import types
from numba.core import event
from numba.core.compiler_lock import global_compiler_lock

try:
    import fcntl
except ImportError:  # Windows: no flock; the check then runs unlocked
    fcntl = None

__all__ = [
    "COMPILED",
    "NOTICE",
    "CompileNotice",
    "compile_on_first_use",
    "compiled_groups",
    "compiling_alone",
    "drop_stale_kernels",
    "prepare",
    "record_compiled",
    "sources_digest",
]

PACKAGE = Path(__file__).resolve().parent
STAMP = "denoc_pin_sources.sha1"
LOCK = "denoc_pin_sources.lock"


def sources_digest(package: Path = PACKAGE) -> str:
    digest = hashlib.sha1()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def compile_on_first_use(dispatcher, signature, exact: bool = False, after=()) -> object:
    """Let ``dispatcher`` compile for ``signature`` alone, at its first use, then refuse to compile again: what an
    explicit signature does, but not at import: a user pays only for the kernels called (``CompileNotice`` says on
    stderr what compiles).  Returns the dispatcher.

    The first use may be a call from Python or the typing of compiled code that calls it; either way numba asks
    the dispatcher to compile for the caller's types, and this compiles ``signature`` instead, to which numba then
    converts the caller's arguments (a literal ``False`` to a bool, a writable array to a read-only one), so every
    caller shares one compiled kernel.  ``exact``: a public fast entry, called from Python with the user's
    arrays, refuses any other types with a TypeError (its caller's cue to take the checked path), an array of
    another dimension in about a microsecond once compiled (``_refuse_quickly``); an internal entry is only ever
    given ``signature``'s types from Python.  ``after``: kernels it calls, each prepared likewise, compiled first and
    on their own: compiled from within the typing of their caller, they take about twice as long
    (``docs/performance.md#start-up``)."""
    declared = dispatcher.__dict__.get("compile")
    if declared is not None:  # declared already (several entries share a kernel): the same signature, once
        if declared.signature != signature:
            raise ValueError(f"{dispatcher.__name__} is declared for {declared.signature}, not also {signature}")
        return dispatcher
    if not dispatcher._can_compile:  # declared and compiled already: declaring it again changes nothing
        if signature.args not in dispatcher.overloads:
            raise ValueError(f"{dispatcher.__name__} is compiled for {list(dispatcher.overloads)}, not {signature}")
        return dispatcher
    compile_for = dispatcher.compile
    details = {"dispatcher": dispatcher, "args": signature.args, "return_type": signature.return_type}

    def compile_declared(requested):
        # Under numba's own (re-entrant) compiler lock: a thread that meets the kernel while another compiles it waits
        # for it, and no second lock can deadlock against numba's.
        with global_compiler_lock:
            if dispatcher.__dict__.get("compile") is compile_declared:  # the first use
                # One event around the kernels it calls and itself: one line from CompileNotice for the whole use.
                with event.trigger_event("numba:compile", data=details):
                    prepare(*after)
                    compile_for(signature)
                dispatcher.disable_compile()
                del dispatcher.compile  # the class's method again
                if exact:
                    _refuse_quickly(dispatcher, signature)
        if exact and tuple(requested) != signature.args:
            raise TypeError(f"{dispatcher.__name__} takes {signature.args}, not {tuple(requested)}")
        return dispatcher.overloads[signature.args].entry_point

    compile_declared.signature = signature
    dispatcher.compile = compile_declared
    return dispatcher


def _refuse_quickly(dispatcher, signature) -> None:
    """Let a compiled public entry refuse an array of another dimension (a batch, for one state) with a TypeError at
    once.  numba's dispatcher, given argument types it has no kernel for, looks for conversions and then explains the
    mismatch, typing every argument in Python for both, which costs more than a small batch's whole work
    (``docs/performance.md``).  No conversion changes an array's
    dimension, so for those neither step is needed; any other mismatch (a writable array for a read-only one, an int
    for a float) still goes through numba's search, which may convert it."""
    message = f"{dispatcher.__name__} takes ({', '.join(map(str, signature.args))}), nothing else"
    search = dispatcher._search_new_conversions
    dims = [(i, t.ndim) for i, t in enumerate(signature.args) if isinstance(t, types.Array)]

    def search_unless_a_dimension_differs(*args, **kws):
        for i, ndim in dims:
            if not isinstance(args[i], np.ndarray) or args[i].ndim != ndim:
                return False
        return search(*args, **kws)

    def refuse(*args, **kws):
        raise TypeError(message)

    dispatcher._search_new_conversions = search_unless_a_dimension_differs  # numba's callbacks, found on the instance
    dispatcher._explain_matching_error = refuse


def prepare(*kernels) -> None:
    """Compile now, each on its own, the kernels of ``compile_on_first_use`` not compiled yet: before a kernel that
    calls them compiles (see ``after`` there)."""
    for kernel in kernels:
        lazy = kernel.__dict__.get("compile")
        if lazy is not None:
            lazy(lazy.signature.args)


@contextlib.contextmanager
def _locked(folder: Path, name: str = LOCK):
    """An exclusive lock between processes on ``folder/name``; no lock where the folder is read-only."""
    try:
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a read-only install: numba caches elsewhere, if at all, and nothing here is deleted
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes, also if the process dies
        yield
    finally:
        os.close(fd)


def compiling_alone() -> contextlib.AbstractContextManager:
    """An exclusive lock between the processes of this installation, held around a first use that may compile:
    of many processes started together (a process pool, the workers of a Dask cluster), one compiles and writes
    numba's cache while the others wait, then load it.  Concurrent writers to numba's cache can crash (numba
    issue 4807), and N processes compiling the same kernels on fewer cores take N times as long."""
    return _locked(PACKAGE / "__pycache__", "denoc_pin_compile.lock")


def drop_stale_kernels(package: Path = PACKAGE) -> bool:
    """Delete the package's cached kernels if its sources changed since they were written; True if it did."""
    digest = sources_digest(package)
    stamp = package / "__pycache__" / STAMP
    with _locked(stamp.parent):
        try:
            if stamp.read_text() == digest:
                return False
        except OSError:
            pass
        for cache in package.rglob("__pycache__"):
            for f in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
                f.unlink(missing_ok=True)
        (stamp.parent / COMPILED).unlink(missing_ok=True)
        try:
            tmp = stamp.with_name(f"{STAMP}.{os.getpid()}.tmp")
            tmp.write_text(digest)
            os.replace(tmp, stamp)
        except OSError:  # a read-only install: numba caches elsewhere, if at all
            pass
    return True


# What the first use of each kernel compiles, and for about how long, measured on a 2-core machine with nothing
# compiled yet (less when a kernel it calls is already compiled).  Keyed by the outermost kernel numba compiles.
COMPILES = {
    "factor_entry": ("the UDUᵀ factors", 20),
    "aba_fast": ("forward dynamics (the kernel a new model's singularity check runs too)", 25),
    "aba_entry": ("forward dynamics (the kernel a new model's singularity check runs too)", 25),
    "rnea_fast": ("inverse dynamics", 10),
    "rnea_entry": ("inverse dynamics", 10),
    "crba_fast": ("the generalized inertia matrix", 10),
    "crba_entry": ("the generalized inertia matrix", 10),
    "rnea_batch": ("batches of inverse dynamics", 15),
    "aba_batch": ("batches of forward dynamics", 15),
    "rk4_kernel": ("the RK4 simulation loop", 15),
    "dp_kernel": ("the adaptive Dormand–Prince integrators", 30),
    "energy_entry": ("the energy", 10),
    "cfd_fast": ("the closed-loop dynamics", 40),
    "cfd_entry": ("the closed-loop dynamics", 40),
    "cfd_batch": ("batches of closed-loop states", 45),
    "vector_fast": ("frames and Jacobians", 25),
    "placement_fast": ("frames and Jacobians", 25),
    "matrix_fast": ("frames and Jacobians", 25),
    "kinematics_call": ("frames and Jacobians", 25),
    "kinematics_batch": ("batches of frames and Jacobians", 40),
}


class CompileNotice(event.Listener):
    """One line on stderr when a kernel of this package compiles (numba's ``numba:compile`` event fires only when
    its cache misses) for over a second: a first call should not look like a hang."""

    def __init__(self, package: str = "denoc_pin", delay: float = 1.0):
        self.package, self.delay = package, delay
        self.depth = 0  # nested compiles (a kernel compiles the kernels it calls) say nothing more
        self.timer = None

    def on_start(self, ev):
        self.depth += 1
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if self.depth > 1 or not getattr(func, "__module__", "").startswith(self.package):
            return
        what, seconds = COMPILES.get(func.__name__, (func.__name__, 30))
        text = (f"denoc_pin: compiling {what} for its first use, up to about {seconds} s on 2 cores; once: later "
                "runs load it from numba's cache")  # fmt: skip
        self.timer = threading.Timer(self.delay, print, (text,), {"file": sys.stderr})
        self.timer.daemon = True
        self.timer.start()

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0 and self.timer is not None:
            self.timer.cancel()
            self.timer = None


COMPILED = "denoc_pin_compiled.txt"  # the kernel groups compiled ahead for these sources (``tools/precompile.py``)


def compiled_groups(package: Path = PACKAGE) -> set[str]:
    """The kernel groups ``denoc-pin compile`` compiled for the package's current sources (a file beside the sources'
    stamp, dropped with the cached kernels when a source changes)."""
    try:
        return set((package / "__pycache__" / COMPILED).read_text().split())
    except OSError:
        return set()


def record_compiled(groups, package: Path = PACKAGE) -> None:
    """Add ``groups`` to ``compiled_groups``; nothing where the folder is read-only."""
    with contextlib.suppress(OSError):
        path = package / "__pycache__" / COMPILED
        tmp = path.with_name(f"{COMPILED}.{os.getpid()}.tmp")
        tmp.write_text("\n".join(sorted(compiled_groups(package) | set(groups))))
        os.replace(tmp, path)


drop_stale_kernels()  # on import of the package, before any kernel is compiled or loaded
NOTICE = CompileNotice()
event.register("numba:compile", NOTICE)
