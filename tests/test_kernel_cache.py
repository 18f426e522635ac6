"""Stale numba caches are dropped when a source of the package changes (kernel_cache.py)."""

from denoc_pin.kernel_cache import STAMP, drop_stale_kernels, sources_digest


def test_cached_kernels_are_dropped_exactly_when_a_source_changes(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "__pycache__").mkdir()
    (pkg / "layout.py").write_text("A = 1\n")
    (pkg / "sub" / "inverse.py").write_text("B = 2\n")

    def cache_files():
        return sorted(p.name for p in pkg.rglob("*.nb[ic]"))

    def write_caches():
        for d in (pkg / "__pycache__", pkg / "sub" / "__pycache__"):
            (d / "kernel-1.py311.nbi").write_text("index")
            (d / "kernel-1.py311.1.nbc").write_text("code")

    write_caches()
    assert drop_stale_kernels(pkg) and cache_files() == []  # no stamp yet: nothing cached can be trusted
    assert (pkg / "__pycache__" / STAMP).read_text() == sources_digest(pkg)
    write_caches()
    assert not drop_stale_kernels(pkg) and len(cache_files()) == 4  # unchanged sources: caches kept
    (pkg / "layout.py").write_text("A = 2\n")  # a callee changes, its callers' files do not
    assert drop_stale_kernels(pkg) and cache_files() == []
    write_caches()
    (pkg / "sub" / "new.py").write_text("")  # a new file counts too
    assert drop_stale_kernels(pkg) and cache_files() == []


def test_a_kernel_compiles_at_its_first_use_for_its_signature_alone():
    """compile_on_first_use: nothing at import; the first use, from Python or from compiled code, compiles the
    declared signature, to which every caller's arguments convert (a literal False, a writable array); then no
    other signature compiles."""
    import numpy as np
    import pytest
    from numba import njit, types

    from denoc_pin.kernel_cache import compile_on_first_use, prepare

    @njit
    def entry(x, flag):
        return x[0] + 1.0 if flag else x[0]

    @njit
    def caller(x):
        return entry(x, False)  # numba would compile entry for Literal[bool](False)

    read_only = types.Array(types.float64, 1, "C", readonly=True)
    compile_on_first_use(entry, types.float64(read_only, types.boolean))
    assert entry.signatures == []
    assert caller(np.ones(2)) == 1.0 and entry(np.ones(2), True) == 2.0
    assert entry.signatures == [(read_only, types.boolean)]
    with pytest.raises(TypeError):
        entry(np.ones((2, 2)), True)

    @njit
    def fast(x):
        return entry(x, True)

    compile_on_first_use(fast, types.float64(types.Array(types.float64, 1, "C")), exact=True, after=(entry,))
    with pytest.raises(TypeError):  # a public entry refuses other types, also at its first call
        fast(np.ones(2, dtype=np.float32))
    assert fast(np.ones(2)) == 2.0 and len(fast.signatures) == 1
    # ... and later ones naming its signature, an array of another dimension at once (no search for conversions,
    # no explanation typed in Python); a writable array for a read-only parameter still converts
    for wrong in (np.ones((2, 2)), np.ones(2, dtype=np.float32), np.ones(4)[::2], 1.0):
        with pytest.raises(TypeError, match=r"fast takes \(array\(float64, 1d, C\)\), nothing else"):
            fast(wrong)
    assert fast(np.ones(2)) == 2.0 and len(fast.signatures) == 1

    @njit
    def reader(x):
        return x[0]

    compile_on_first_use(reader, types.float64(read_only), exact=True)
    frozen = np.full(2, 3.0)
    frozen.setflags(write=False)
    assert reader(frozen) == 3.0  # the first use compiles
    assert reader(np.full(2, 4.0)) == 4.0  # a writable array for the read-only parameter converts (numba's search)
    with pytest.raises(TypeError, match="reader takes"):
        reader(np.ones((2, 2)))
    # Declared again once compiled (docs/architecture.md builds an Entry of compiled kernels): nothing changes, and
    # preparing it stays a no-op; another signature is refused.
    assert compile_on_first_use(entry, types.float64(read_only, types.boolean)) is entry
    prepare(entry)
    assert entry(np.ones(2), True) == 2.0 and entry.signatures == [(read_only, types.boolean)]
    with pytest.raises(ValueError, match="entry is compiled for"):
        compile_on_first_use(entry, types.float64(types.Array(types.float64, 1, "C"), types.boolean))


def test_a_slow_first_compile_says_so_in_one_line(capsys):
    """CompileNotice: one line on stderr, for the outermost kernel only, when compiling takes over its delay."""
    import time

    from numba import njit, types
    from numba.core import event

    from denoc_pin.kernel_cache import CompileNotice, compile_on_first_use

    class Slow:  # a kernel of compile_on_first_use, not compiled yet, whose compile takes a while
        def __init__(self):
            def compile(sig):
                time.sleep(0.6)

            compile.signature = types.void()
            self.__dict__["compile"] = compile

    @njit
    def twice(x):
        return 2.0 * x

    notice = CompileNotice(package=__name__, delay=0.2)
    event.register("numba:compile", notice)
    try:
        compile_on_first_use(twice, types.float64(types.float64), after=(Slow(), Slow()))
        assert twice(2.0) == 4.0
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("denoc_pin: compiling twice for its first use"), lines
        assert twice(3.0) == 6.0 and capsys.readouterr().err == ""  # compiled: nothing more is said
    finally:
        event.unregister("numba:compile", notice)


def test_the_import_compiles_nothing_and_each_entry_once():
    """In a fresh process: importing compiles (or loads) no kernel; threads meeting one at its first use together
    all get their results; the dynamics entries each get one compiled signature, shared by the fast path, the
    checked path and the batches."""
    import subprocess
    import sys

    code = """
import numpy as np
import denoc_pin as dp
from denoc_pin.algorithms import compositions as p
kernels = (p.rnea_entry, p.aba_entry, p.crba_entry, p.rnea_fast, p.aba_fast, p.crba_fast)
assert all(k.signatures == [] for k in kernels), [k.signatures for k in kernels]
m = dp.models.chain(4); d = m.create_data(); q = dp.neutral(m); v = np.zeros(m.nv)
import threading  # threads meeting a kernel at its first use together: each waits for the one compiling it
out = []
def first_use():
    out.append(dp.forward_dynamics(m, m.create_data(), q, v, v))
threads = [threading.Thread(target=first_use) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert len(out) == 4 and all((x == out[0]).all() for x in out)
dp.inverse_dynamics(m, d, q, v, v); dp.gim(m, d, q)
dp.forward_dynamics(m, d, q.tolist(), v, v)  # the checked path
dp.forward_dynamics(m, d, np.tile(q, (3, 1)), np.zeros((3, m.nv)), np.zeros((3, m.nv)))  # a batch
dp.inverse_dynamics(m, d, q, v, v, fext=np.zeros((m.njoints, 6)))
assert [len(k.signatures) for k in kernels] == [1] * 6, [k.signatures for k in kernels]
"""
    subprocess.run([sys.executable, "-c", code], check=True)
