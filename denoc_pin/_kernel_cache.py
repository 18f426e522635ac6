"""Drop numba's cached kernels of this package when any of its source files changed.

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
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; the check then runs unlocked
    fcntl = None

__all__ = ["drop_stale_kernels", "sources_digest"]

PACKAGE = Path(__file__).resolve().parent
STAMP = "denoc_pin_sources.sha1"
LOCK = "denoc_pin_sources.lock"


def sources_digest(package: Path = PACKAGE) -> str:
    digest = hashlib.sha1()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(folder: Path):
    """An exclusive lock between processes on ``folder/LOCK``; no lock where the folder is read-only."""
    try:
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a read-only install: numba caches elsewhere, if at all, and nothing here is deleted
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes, also if the process dies
        yield
    finally:
        os.close(fd)


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
        try:
            tmp = stamp.with_name(f"{STAMP}.{os.getpid()}.tmp")
            tmp.write_text(digest)
            os.replace(tmp, stamp)
        except OSError:  # a read-only install: numba caches elsewhere, if at all
            pass
    return True


drop_stale_kernels()  # on import of the package, before any kernel is compiled or loaded
