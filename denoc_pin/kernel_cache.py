"""The package's numba kernels: compiled at their first use, once per machine, kept in a cache found by what they
were compiled from.

**Compiling at first use.**  Kernels compile at their first use, not at import (``compile_on_first_use``), and a
compile that misses the cache for more than a second says so in one line on stderr (``CompileNotice``).

**One cache a machine, found by content.**  numba files a cached kernel next to its source (``__pycache__``) and keys
it by that one file, so every checkout, venv and wheel install compiled everything again, and a kernel whose callee
changed in another file kept the callee's old code.  Here numba is given one more cache *locator*
(``KernelLocator``, first in ``numba.core.caching.CacheImpl._locator_classes``) that claims the package's own files
only and files each module's kernels in

    <cache root>/<toolchain>/<module>-<digest>/

- the cache root: ``$DENOC_PIN_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/denoc_pin``, else the user's cache folder
  (platformdirs: ``~/.cache/denoc_pin/kernels`` on Linux);
- the toolchain: numba's, llvmlite's and Python's versions (numba also refuses an index of another version);
- the digest: SHA-256 of the module's source and of every package module it imports, transitively (``Sources``):
  a change to one file moves the kernels of the modules that import it, directly or not, and no other;
- the CPU: numba's own index key holds the target triple, the CPU name and its features, so two CPUs sharing a home
  folder keep their kernels side by side.

So a second clone, a new venv, a wheel, a Dask worker or a CI run of the same sources loads what the first compiled.
Within a folder numba's files are as numba writes them (``<file>.<function>-<line>.pyXY.nbi`` and ``.nbc``).

**Many processes at once.**  numba writes an index or a kernel to a temporary file and renames it into place, so no
reader sees half an entry.  Each package kernel compiles under an exclusive lock on a file beside its entry
(``KernelCache``, ``fcntl.flock``), taken on a miss, after this process's compiler lock: of processes starting
together, one compiles it and the others wait, then load it.

**A cache folder that cannot be written** (read-only, or not creatable): one ``KernelCacheWarning``, and the kernels
compile into a temporary folder of this process, removed at its exit.  **Its size** is capped
(``$DENOC_PIN_CACHE_SIZE`` bytes, default ``DEFAULT_SIZE``): after a compile, the folders used least recently are
removed until it fits; ``denoc-pin cache`` lists it, ``--clear`` empties it.

numba internals this relies on, each pinned by ``tests/test_kernel_cache.py``: ``CacheImpl._locator_classes`` (a
list numba walks in order, calling ``from_function(py_func, py_file)``), the ``_CacheLocator`` interface
(``get_cache_path``, ``get_source_stamp``, ``get_disambiguator``, ``ensure_cache_path``), ``Dispatcher._cache`` with
``cache_path``, the ``numba:compile`` event (fired only when the cache misses), and ``Dispatcher.compile`` looking the
cache up before compiling.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import llvmlite
import numba
import numba.core.dispatcher
import numpy as np
import platformdirs
from numba import types
from numba.core import event
from numba.core.caching import CacheImpl, FunctionCache, _CacheLocator
from numba.core.compiler_lock import global_compiler_lock

try:
    import fcntl
except ImportError:  # Windows: no flock; the locks are then no-ops (numba's renames still keep entries whole)
    fcntl = None

__all__ = [
    "DEFAULT_SIZE",
    "NOTICE",
    "NOTICES",
    "CompileNotice",
    "CompileRecord",
    "KernelCache",
    "KernelCacheWarning",
    "KernelLocator",
    "Sources",
    "announce",
    "cache_root",
    "clear",
    "compile_on_first_use",
    "compiled_groups",
    "compiling_alone",
    "contents",
    "evict",
    "install",
    "prepare",
    "record_compiled",
    "sources",
    "toolchain",
]

PACKAGE = Path(__file__).resolve().parent
DEFAULT_SIZE = 10**9  # bytes: every kernel of the package takes about 44 MB (a toolchain, a CPU, one version)
FORMAT = 1  # of the folders below the cache root; a new scheme takes new folders
# Modules no kernel reads a value of: kernel_cache decides when a kernel compiles and where it is kept, never what
# it computes (a kernel's signature is part of numba's own key).  Left out of the digests, so that changing it does
# not recompile every kernel.
NOT_COMPILED_IN = frozenset({"denoc_pin.kernel_cache"})


class KernelCacheWarning(UserWarning):
    """The kernel cache folder cannot be written: kernels compile for this process only."""


# ---------------------------------------------------------------------------------------------------------------------
# Where: the cache root and the toolchain's folder
# ---------------------------------------------------------------------------------------------------------------------


def cache_root() -> Path:
    """The machine's kernel cache: ``$DENOC_PIN_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/denoc_pin``, else the user's cache
    folder (``platformdirs.user_cache_dir``)."""
    if os.environ.get("DENOC_PIN_CACHE_DIR"):
        return Path(os.environ["DENOC_PIN_CACHE_DIR"]).expanduser()
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]).expanduser() / "denoc_pin"
    return Path(platformdirs.user_cache_dir("denoc_pin", appauthor=False)) / "kernels"


def toolchain() -> str:
    """The folder of this toolchain under the cache root: what numba's compiled code depends on besides the sources
    and the CPU (which numba's index key holds)."""
    py = f"{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return f"numba-{numba.__version__}_llvmlite-{llvmlite.__version__}_py{py}_f{FORMAT}"


def cache_size() -> int:
    """The cap on the cache's size in bytes (``$DENOC_PIN_CACHE_SIZE``, default ``DEFAULT_SIZE``)."""
    text = os.environ.get("DENOC_PIN_CACHE_SIZE", "")
    try:
        return int(float(text)) if text else DEFAULT_SIZE
    except ValueError:
        raise ValueError(f"DENOC_PIN_CACHE_SIZE={text!r}: expected a number of bytes, e.g. 2e9") from None


# ---------------------------------------------------------------------------------------------------------------------
# By what: each module's digest over what it imports from the package
# ---------------------------------------------------------------------------------------------------------------------

# `from .x import (a, b)`, `from ..x.y import a as b`, `from denoc_pin.x import a`, `import denoc_pin.x`: the package
# imports its own modules at module level only (tests/test_architecture.py), and ruff formats them one statement a
# line or one parenthesized list.
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.+[\w.]*|denoc_pin\b[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(denoc_pin\b[\w.]*)", re.M)


class Sources:
    """The package's modules (dotted names), their bytes' SHA-256 and what each imports from the package.

    An import ``from X import a, b`` counts as an import of ``X.a`` and ``X.b`` where those are modules, else of
    the module a package's ``__init__`` took the name from, else of ``X`` itself: ``from ..model import Data`` makes
    a module depend on ``model/data.py``, not on everything ``model/__init__.py`` gathers.  The parent packages
    Python initializes on the way are not counted: they bind no name in the importing module."""

    def __init__(self, package: Path = PACKAGE, name: str = "denoc_pin"):
        self.files: dict[str, Path] = {}
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.files[".".join((name, *parts))] = path
        self.text = {m: p.read_bytes() for m, p in self.files.items()}
        self.sha = {m: hashlib.sha256(b).hexdigest() for m, b in self.text.items()}
        self.origin: dict[str, dict[str, str]] = {}  # module -> {name it binds by import: module the name is from}
        self.statements: dict[str, set] = {}  # module -> {(module imported from, name or None)}, as written
        for module, raw in self.text.items():
            self._read_imports(module, raw.decode("utf-8", "replace"))
        self.imports = {m: {self._resolve(*t) for t in targets} - {None} for m, targets in self.statements.items()}

    def _read_imports(self, module: str, text: str) -> None:
        package = module if self.files[module].name == "__init__.py" else module.rpartition(".")[0]
        targets, origin = set(), {}
        for m in _FROM.finditer(text):
            spec, names = m.group(1), re.sub(r"#[^\n]*", "", m.group(2)).strip().strip("()")
            if spec.startswith("."):
                level = len(spec) - len(spec.lstrip("."))
                base = package.rsplit(".", level - 1)[0] if level > 1 else package
                spec = f"{base}.{spec.lstrip('.')}".rstrip(".")
            for item in names.split(","):
                item = item.strip()
                if not item:
                    continue
                imported, _, alias = item.partition(" as ")
                imported = imported.strip()
                targets.add((spec, imported))
                origin[(alias or imported).strip()] = f"{spec}.{imported}" if imported != "*" else spec
        for m in _IMPORT.finditer(text):
            targets.add((m.group(1), None))
        self.statements[module] = targets
        self.origin[module] = origin

    def _resolve(self, spec: str, name: str | None, depth: int = 0) -> str | None:
        """The module an import of ``name`` from ``spec`` reads (None: not the package's)."""
        if spec not in self.files:
            return None
        if name is None or name == "*":
            return spec
        if f"{spec}.{name}" in self.files:
            return f"{spec}.{name}"
        source = self.origin.get(spec, {}).get(name)
        if source is not None and depth < 8 and self.files[spec].name == "__init__.py":
            found = self._resolve(*source.rsplit(".", 1), depth + 1)
            if found is not None:
                return found
        return spec

    @functools.cache  # noqa: B019 (one Sources a process; the cache lives as long as it)
    def closure(self, module: str) -> frozenset[str]:
        """``module`` and every package module it imports, directly or not."""
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m not in seen and m not in NOT_COMPILED_IN:
                seen.add(m)
                todo.extend(self.imports.get(m, ()))
        return frozenset(seen)

    def digest(self, module: str) -> str:
        """SHA-256 over the names and bytes of ``module``'s closure: what its kernels were compiled from."""
        h = hashlib.sha256(f"denoc_pin kernels {FORMAT}\n".encode())
        for m in sorted(self.closure(module)):
            h.update(f"{m} {self.sha[m]}\n".encode())
        return h.hexdigest()

    def package_digest(self) -> str:
        """SHA-256 over every module compiled in: the sources as a whole (``compiled_groups`` is kept per package
        digest)."""
        h = hashlib.sha256()
        for m in sorted(set(self.files) - NOT_COMPILED_IN):
            h.update(f"{m} {self.sha[m]}\n".encode())
        return h.hexdigest()

    def folder(self, module: str) -> str:
        """The name of ``module``'s folder in the cache: ``<module>-<digest>``."""
        return f"{module.removeprefix('denoc_pin.')}-{self.digest(module)[:24]}"

    def dependents(self, module: str) -> set[str]:
        """The modules whose kernels a change to ``module`` recompiles."""
        return {m for m in self.files if module in self.closure(m)}


@functools.cache
def sources() -> Sources:
    """The installed package's sources, read once a process (about 5 ms)."""
    return Sources()


# ---------------------------------------------------------------------------------------------------------------------
# numba's side: a locator for the package's files
# ---------------------------------------------------------------------------------------------------------------------

_touched: set[Path] = set()  # the folders this process uses (eviction keeps them)
_grew = [False]  # whether this process wrote to the cache since it last checked the cap


@functools.cache
def _writable() -> Path:
    """This toolchain's folder in the cache, checked writable once a process; else (one ``KernelCacheWarning``) a
    temporary folder of this process, removed at its exit."""
    folder = cache_root() / toolchain()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return folder
    except OSError as e:
        warnings.warn(f"denoc_pin: the kernel cache {cache_root()} cannot be written ({e.strerror or e}); kernels "
                      "compile for this process only.  Set DENOC_PIN_CACHE_DIR to a writable folder to keep them.",
                      KernelCacheWarning, stacklevel=2)  # fmt: skip
        temporary = Path(tempfile.mkdtemp(prefix="denoc_pin-kernels-"))
        atexit.register(shutil.rmtree, temporary, ignore_errors=True)
        return temporary


class KernelLocator(_CacheLocator):
    """numba's cache locator for the package's own files: ``<root>/<toolchain>/<module>-<digest>/``."""

    def __init__(self, py_func, py_file: str, module: str, folder: Path):
        self._py_file, self._lineno, self.module, self.folder = py_file, py_func.__code__.co_firstlineno, module, folder
        self._stamp = folder.name

    def get_cache_path(self) -> str:
        return str(self.folder)

    def get_source_stamp(self) -> str:  # the folder is the content's already: its name stamps the index
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            relative = Path(py_file).resolve().relative_to(PACKAGE)
        except (OSError, ValueError):
            return None  # not the package's: numba's own locators
        src = sources()
        module = ".".join(("denoc_pin", *relative.with_suffix("").parts)).removesuffix(".__init__")
        if module not in src.files:
            return None
        folder = _writable() / src.folder(module)
        if folder not in _touched:  # used now: the last to be evicted (made at the first save)
            with contextlib.suppress(OSError):
                os.utime(folder)
            _touched.add(folder)
        return cls(py_func, py_file, module, folder)

    def ensure_cache_path(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)


# ---------------------------------------------------------------------------------------------------------------------
# Locks between processes
# ---------------------------------------------------------------------------------------------------------------------


def _acquire(path: Path, patience: float = 900.0) -> int | None:
    """An exclusive lock on the file ``path`` (its descriptor: closing it releases the lock, also if the process
    dies), waited for at most ``patience`` seconds (a process whose compile failed may hold a kernel's lock until
    its next try); None where it cannot be had."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return None
    if fcntl is None:
        return fd
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock between processes on the file ``path``, held for the block; none where its folder cannot
    be written."""
    fd = _acquire(path, patience=math.inf)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


class KernelCache(FunctionCache):
    """numba's per-function cache (``Dispatcher._cache``), which for a package kernel also keeps processes from
    compiling it twice: a miss takes the kernel's lock (a file beside its entry) and looks again, so a process that
    waited loads what the first compiled; the lock is released once the compiled kernel is saved, or when its
    compile fails (``numba:compile``'s end event, ``NOTICE``).  Functions outside the package: numba's cache as is."""

    _lock: int | None = None

    def load_overload(self, sig, target_context):
        found = super().load_overload(sig, target_context)
        if found is not None or not self._enabled or not isinstance(self._impl.locator, KernelLocator):
            return found
        self.release()
        self._lock = _acquire(Path(self._cache_path) / f"{self._impl.filename_base}.lock")
        found = super().load_overload(sig, target_context)  # compiled by the process we waited for?
        if found is not None:
            self.release()
        return found

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
            _grew[0] = True
        finally:
            self.release()

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # flock's lock goes with the descriptor
            self._lock = None


def compiling_alone() -> contextlib.AbstractContextManager:
    """An exclusive lock between the processes of this machine and toolchain, held around a first use that may
    compile kernels no declaration locks (a Dask worker's first task): one compiles, the others wait, then load."""
    return _locked(cache_root() / toolchain() / "compile.lock")


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
    details = {
        "dispatcher": dispatcher,
        "args": signature.args,
        "return_type": signature.return_type,
        "declared": True,
    }  # numba's own event for the same kernel (a cache miss) has no "declared"

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


NOTICES: dict[str, tuple[str, int]] = {}
"""What the first use of a kernel compiles and for about how long on 2 cores with nothing compiled yet (less when a
kernel it calls is compiled already), by the kernel's qualified name: from its declaration (``announce``)."""


def _qualified(func) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def announce(dispatcher, what: str, seconds: int) -> None:
    """Let the first compile of ``dispatcher`` say on stderr what compiles and for about how long (``CompileNotice``):
    the entries of the call protocol declare theirs."""
    NOTICES.setdefault(_qualified(dispatcher.py_func), (what, seconds))  # a kernel two entries share: the first says


class CompileRecord(event.Listener):
    """Every compile of the package's kernels in this process, as numba's ``numba:compile`` events report them (they
    fire on a cache miss only; ``compile_on_first_use``'s own event around a declared first use is left out):
    ``records``, one dict a compile, in the order they end: ``kernel`` (its qualified name), ``signature``,
    ``seconds``, ``own`` (less the kernels compiled inside it) and ``depth`` (0: compiled from Python).  Registered
    with ``numba.core.event.register("numba:compile", record)``; ``kernels`` lists the names."""

    def __init__(self, package: str = "denoc_pin"):
        self.package = package
        self.records: list[dict] = []
        self._open: list[list] = []  # [name, signature, start, seconds of the compiles inside], innermost last

    @property
    def kernels(self) -> list[str]:
        return [r["kernel"] for r in self.records]

    def _ours(self, ev) -> bool:
        return "declared" not in ev.data and ev.data["dispatcher"].py_func.__module__.startswith(self.package)

    def on_start(self, ev):
        if self._ours(ev):
            self._open.append(
                [_qualified(ev.data["dispatcher"].py_func), str(ev.data["args"]), time.perf_counter(), 0.0]
            )

    def on_end(self, ev):
        if self._ours(ev):
            name, signature, start, inner = self._open.pop()
            seconds = time.perf_counter() - start
            if self._open:
                self._open[-1][3] += seconds
            self.records.append({"kernel": name, "signature": signature, "seconds": seconds, "own": seconds - inner,
                                 "depth": len(self._open)})  # fmt: skip


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
        what, seconds = NOTICES.get(_qualified(func), (func.__name__, 30))
        text = (f"denoc_pin: compiling {what} for its first use, up to about {seconds} s on 2 cores; once a "
                "machine: later runs load it from the kernel cache (denoc-pin cache)")  # fmt: skip
        self.timer = threading.Timer(self.delay, print, (text,), {"file": sys.stderr})
        self.timer.daemon = True
        self.timer.start()

    def on_end(self, ev):
        cache = getattr(ev.data.get("dispatcher"), "_cache", None)
        # Its compile failed: no save will release the lock.  (Event.is_failed answers the opposite in numba 0.68,
        # so the exception is read where the event keeps it.)
        if getattr(ev, "_exc_details", None) is not None and isinstance(cache, KernelCache):
            cache.release()
        self.depth -= 1
        if self.depth == 0:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if _grew[0]:  # the cache grew: keep it under its cap (a compile that only loaded leaves it)
                _grew[0] = False
                with contextlib.suppress(OSError):
                    evict()


# ---------------------------------------------------------------------------------------------------------------------
# What the cache holds: listing, eviction, groups compiled ahead
# ---------------------------------------------------------------------------------------------------------------------


def _entries(root: Path) -> list[Path]:
    """The module folders under ``root`` (``<toolchain>/<module>-<digest>``)."""
    if not root.is_dir():
        return []
    return [f for tool in root.iterdir() if tool.is_dir() for f in tool.iterdir() if f.is_dir()]


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def evict(limit: int | None = None, root: Path | None = None) -> list[Path]:
    """Remove the module folders used least recently (loaded or written) until the cache holds at most ``limit``
    bytes (default ``cache_size()``); the folders this process uses stay.  Returns the folders removed.  A process
    loading from a removed folder finds no entry and compiles (numba treats a missing file as a miss)."""
    root = cache_root() if root is None else root
    limit = cache_size() if limit is None else limit
    removed = []
    with _locked(root / "evict.lock"):
        folders = sorted(((f.stat().st_mtime, f, _size(f)) for f in _entries(root)), key=lambda t: t[0])
        total = sum(s for _, _, s in folders)
        for _, folder, size in folders:
            if total <= limit:
                break
            if folder in _touched:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
            total -= size
    return removed


def contents(root: Path | None = None) -> dict:
    """What the cache holds (``denoc-pin cache``): its root, size and cap, and per toolchain the module folders,
    those of the installed sources (``current``), the kernels (numba's index files) and their compiled
    signatures (data files), with their sizes."""
    root = cache_root() if root is None else root
    src = sources()
    current = {src.folder(m) for m in src.files}
    tools: dict[str, dict] = {}
    for folder in _entries(root):
        t = tools.setdefault(folder.parent.name, {"folders": 0, "current": 0, "kernels": 0, "compiled": 0, "bytes": 0})
        files = list(folder.iterdir())
        t["folders"] += 1
        t["current"] += folder.name in current and folder.parent.name == toolchain()
        t["kernels"] += sum(f.suffix == ".nbi" for f in files)
        t["compiled"] += sum(f.suffix == ".nbc" for f in files)
        t["bytes"] += _size(folder)
    return {"root": str(root), "toolchain": toolchain(), "bytes": sum(t["bytes"] for t in tools.values()),
            "limit": cache_size(), "toolchains": tools, "groups": sorted(compiled_groups(root))}  # fmt: skip


def clear(root: Path | None = None) -> int:
    """Empty the cache; the bytes it held."""
    root = cache_root() if root is None else root
    held = sum(_size(f) for f in _entries(root))
    if root.is_dir():
        for entry in root.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    return held


def _groups_file(root: Path | None = None) -> Path:
    cpu = numba.config.CPU_NAME or numba.core.codegen.ll.get_host_cpu_name()
    root = cache_root() if root is None else root
    return root / toolchain() / f"groups-{sources().package_digest()[:24]}-{cpu}.txt"


def compiled_groups(root: Path | None = None) -> set[str]:
    """The kernel groups ``denoc-pin compile`` compiled into the cache for the installed sources, toolchain and CPU."""
    try:
        return set(_groups_file(root).read_text().split())
    except OSError:
        return set()


def record_compiled(groups, root: Path | None = None) -> None:
    """Add ``groups`` to ``compiled_groups``; nothing where the cache cannot be written."""
    with contextlib.suppress(OSError):
        path = _groups_file(root)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text("\n".join(sorted(compiled_groups(root) | set(groups))))
        os.replace(tmp, path)


def install() -> None:
    """Give numba the package's cache, once, before any kernel of the package is declared: ``KernelLocator`` first
    in numba's list of locators (it claims the package's files, numba's own locators the rest;
    ``$NUMBA_CACHE_LOCATOR_CLASSES``, if the user sets it, replaces the list and this with it), and ``KernelCache``
    as the cache ``Dispatcher.enable_caching`` makes (``cache=True``)."""
    if KernelLocator not in CacheImpl._locator_classes:
        CacheImpl._locator_classes.insert(0, KernelLocator)
    numba.core.dispatcher.FunctionCache = KernelCache


install()
NOTICE = CompileNotice()
event.register("numba:compile", NOTICE)
