"""The kernels: compiled at their first use, once per machine, into a cache found by the sources' content
(``kernel_cache.py``).  The compile-bound tests run in fresh processes on copies of the package, each on a cache of
its own (``DENOC_PIN_CACHE_DIR``): the machine's cache is only read, never changed, by this file."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.core import event

import denoc_pin as dp
from denoc_pin import kernel_cache as kc
from denoc_pin.algorithms.energy import energy_entry

PACKAGE = Path(dp.__file__).resolve().parent
# A worker process: the energy (energy_entry calls kinematics.py's and spatial.py's kernels) and forward dynamics at
# fixed states; prints their results and the package kernels numba compiled (its own events fire on a cache miss).
WORKER = """
import json, sys
import numpy as np
from numba.core import event
import denoc_pin as dp
assert dp.__file__.startswith(sys.argv[1]), dp.__file__
from denoc_pin.kernel_cache import CompileRecord
record = CompileRecord()
event.register("numba:compile", record)
m = dp.models.chain(3)
q, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, -2.0, 0.5])
out = {"energy": dp.energy(m, m.create_data(), q, v)}
if "fd" in sys.argv[2:]:
    out["fd"] = dp.forward_dynamics(m, m.create_data(), q, v, np.zeros(3)).tolist()
out["compiled"] = record.kernels
print(json.dumps(out))
"""


def _copy(tmp_path: Path, name: str) -> Path:
    """A copy of the installed package in a folder of its own (files new: other paths, other times)."""
    root = tmp_path / name
    shutil.copytree(PACKAGE, root / "denoc_pin", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(root: Path, cache: Path | None, *args: str, n: int = 1) -> list[dict]:
    """``n`` workers on the package at ``root``, started together, on the kernel cache ``cache`` (None: the
    machine's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DENOC_PIN_CACHE_DIR", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = str(root)
    if cache is not None:
        env["DENOC_PIN_CACHE_DIR"] = str(cache)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(root), *args], env=env, cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]  # fmt: skip
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    return [json.loads(o.splitlines()[-1]) | {"stderr": e} for o, e in outs]


def _warm() -> None:
    """The worker's kernels in the machine's cache (compiled here if missing)."""
    m = dp.models.chain(3)
    dp.energy(m, m.create_data(), np.zeros(3), np.zeros(3))
    dp.forward_dynamics(m, m.create_data(), np.zeros(3), np.zeros(3), np.zeros(3))


def _seeded_cache(tmp_path: Path) -> Path:
    """A cache of its own holding the machine's kernels of the installed sources."""
    _warm()
    cache = tmp_path / "cache"
    mine = kc.cache_root() / kc.toolchain()
    src = kc.sources()
    for module in src.files:
        folder = mine / src.folder(module)
        if folder.is_dir():
            shutil.copytree(folder, cache / kc.toolchain() / folder.name, ignore=shutil.ignore_patterns("*.lock"))
    return cache


def _edit(root: Path, module: str, old: str, new: str) -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not once in {path}"
    path.write_text(text.replace(old, new))


def test_a_second_clone_of_the_same_sources_compiles_nothing(tmp_path):
    """The machine's cache serves a copy of the package in another folder (a fresh clone, a new venv, a wheel) with
    every kernel it uses: no compile, the same numbers bit for bit."""
    _warm()
    m = dp.models.chain(3)
    q, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, -2.0, 0.5])
    (out,) = _run(_copy(tmp_path, "clone"), None, "fd")
    assert out["compiled"] == [], out["compiled"]
    assert out["energy"] == list(dp.energy(m, m.create_data(), q, v))
    assert out["fd"] == dp.forward_dynamics(m, m.create_data(), q, v, np.zeros(3)).tolist()


def test_a_changed_module_recompiles_its_importers_alone_and_never_serves_a_stale_callee(tmp_path):
    """A one-line change to energy.py recompiles energy.py's kernels and no other (forward dynamics loads); a change
    to a callee's body in spatial.py (M_k doubled) recompiles its caller in energy.py, whose file did not change,
    and the kinetic energy doubles: no stale copy of the callee is served."""
    cache = _seeded_cache(tmp_path)
    root = _copy(tmp_path, "site")
    src = kc.sources()
    (before,) = _run(root, cache, "fd")
    assert before["compiled"] == [], before["compiled"]  # the seeded cache serves the copy

    _edit(root, "denoc_pin.algorithms.energy", '__all__ = ["energy"]\n', '__all__ = ["energy"]  # changed\n')
    (leaf,) = _run(root, cache, "fd")
    compiled = {k.rsplit(".", 1)[0] for k in leaf["compiled"]}
    assert "denoc_pin.algorithms.energy.energy_entry" in leaf["compiled"], leaf["compiled"]
    assert compiled <= src.dependents("denoc_pin.algorithms.energy"), compiled
    assert not any("tree_entries" in k or "forward" in k for k in leaf["compiled"]), leaf["compiled"]
    assert leaf["energy"] == before["energy"] and leaf["fd"] == before["fd"]

    _edit(root, "denoc_pin.core.spatial", "    add_symmetric_of(mass_matrix_of(m, d, Io), out)\n",
          "    add_symmetric_of(mass_matrix_of(m, d, Io), out)\n    out[:, :] *= 2.0\n")  # fmt: skip
    (callee,) = _run(root, cache)
    assert "denoc_pin.algorithms.energy.energy_entry" in callee["compiled"], callee["compiled"]
    assert callee["energy"] == [2.0 * before["energy"][0], before["energy"][1]]


def test_processes_starting_together_on_an_empty_cache_compile_each_kernel_once(tmp_path):
    """Eight processes, one empty cache: each kernel is compiled by one of them (the others wait on its lock, then
    load it), all get the same numbers, no temporary file is left; a ninth process then compiles nothing."""
    root, cache = _copy(tmp_path, "site"), tmp_path / "cache"
    outs = _run(root, cache, n=8)
    counts = Counter(k for o in outs for k in o["compiled"])
    assert counts and set(counts.values()) == {1}, counts
    assert "denoc_pin.algorithms.energy.energy_entry" in counts
    assert len({tuple(o["energy"]) for o in outs}) == 1
    assert not list(cache.rglob("*.tmp*")), "a temporary file was left behind"
    (again,) = _run(root, cache)
    assert again["compiled"] == [] and again["energy"] == outs[0]["energy"]


def test_a_cache_folder_that_cannot_be_written_warns_once_and_works(tmp_path):
    """A cache root that cannot be made (a file stands in its way; root ignores permission bits, so this is the
    case every user can meet): one KernelCacheWarning, kernels compiled into a temporary folder removed at exit."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    m = dp.models.chain(3)
    q, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, -2.0, 0.5])
    (out,) = _run(_copy(tmp_path, "site"), blocker / "cache")
    assert out["stderr"].count("KernelCacheWarning") == 1, out["stderr"]
    assert "cannot be written" in out["stderr"] and "DENOC_PIN_CACHE_DIR" in out["stderr"]
    assert out["compiled"] and out["energy"] == list(dp.energy(m, m.create_data(), q, v))


def test_sources_read_each_import_of_the_package_as_python_does():
    """``Sources`` reads imports with two regular expressions (5 ms for the package, not ast's 100 ms): they find
    exactly the package imports ``ast`` finds, in every module."""
    src = kc.sources()
    for module, path in src.files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("denoc_pin")):
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                spec = f"{base}.{node.module}" if node.level and node.module else (node.module or base)
                found |= {(spec, a.name) for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {(a.name, None) for a in node.names if a.name.startswith("denoc_pin")}
        assert src.statements[module] == found, module


def test_a_module_digest_covers_what_it_imports_and_no_more(tmp_path):
    """Digests over the import closure: a name taken through a package's __init__ counts the module it comes from,
    not the package's other modules (``from .core import spatial`` reads spatial.py alone); a parent package is not
    counted; kernel_cache is not (it compiles nothing in)."""
    pkg = tmp_path / "denoc_pin"
    for name, text in {
        "__init__.py": "from . import kernel_cache\nfrom .core import spatial\n",
        "kernel_cache.py": "",
        "core/__init__.py": "from .spatial import cross\nfrom .tables import TABLE\n",
        "core/spatial.py": "def cross(): ...\n",
        "core/tables.py": "TABLE = 1\n",
        "algorithms/__init__.py": "",
        "algorithms/forward.py": "from ..core import cross\nfrom ..kernel_cache import x\n",
        "algorithms/api.py": "from .forward import (\n    a,  # the first\n    b as c,\n)\nimport denoc_pin.core\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    src = kc.Sources(pkg)
    assert src.closure("denoc_pin.algorithms.forward") == {"denoc_pin.algorithms.forward", "denoc_pin.core.spatial"}
    assert src.closure("denoc_pin.algorithms.api") == {"denoc_pin.algorithms.api", "denoc_pin.algorithms.forward",
                                                       "denoc_pin.core", "denoc_pin.core.spatial",
                                                       "denoc_pin.core.tables"}  # fmt: skip
    assert src.dependents("denoc_pin.core.tables") == {"denoc_pin.core", "denoc_pin.core.tables",
                                                       "denoc_pin.algorithms.api"}  # fmt: skip
    before = {m: src.digest(m) for m in src.files}
    (pkg / "core" / "tables.py").write_text("TABLE = 2\n")
    (pkg / "kernel_cache.py").write_text("changed = True\n")
    after = kc.Sources(pkg)
    changed = {m for m in src.files if after.digest(m) != before[m]}
    assert changed == src.dependents("denoc_pin.core.tables")


def test_the_numba_internals_the_cache_relies_on():
    """What kernel_cache takes from numba, beyond its public API; a numba upgrade that changes any of it fails here,
    not in a user's cache."""
    from numba.core import caching, dispatcher

    assert caching.CacheImpl._locator_classes[0] is kc.KernelLocator  # a list, walked in order, first match wins
    assert dispatcher.FunctionCache is kc.KernelCache  # what Dispatcher.enable_caching instantiates
    abstract = caching._CacheLocator.__abstractmethods__
    assert abstract == {"get_cache_path", "get_source_stamp", "get_disambiguator"}, abstract
    for name in ("from_function", "ensure_cache_path"):
        assert callable(getattr(caching._CacheLocator, name))
    kernel = energy_entry
    assert isinstance(kernel._cache, kc.KernelCache) and isinstance(kernel._cache._impl.locator, kc.KernelLocator)
    assert Path(kernel.stats.cache_path).parent == kc.cache_root() / kc.toolchain()
    # A different stamp in an index reads as empty (numba's own staleness check, on top of the folders' digests).
    index = caching.IndexDataCacheFile(str(kc.cache_root()), "probe-never-saved", "a stamp")
    assert index._load_index() == {}
    # Dispatcher.compile looks the cache up before compiling, fires numba:compile only on a miss, then saves.
    calls = []

    class Recorder:
        cache_path = None

        def load_overload(self, sig, ctx):
            calls.append("load")

        def save_overload(self, sig, data):
            calls.append("save")

    class Listener(event.Listener):
        def on_start(self, ev):
            calls.append("compile")

        def on_end(self, ev):
            pass

    @njit
    def probe(x):
        return x + 1

    probe._cache = Recorder()
    listener = Listener()
    event.register("numba:compile", listener)
    try:
        assert probe(1) == 2
    finally:
        event.unregister("numba:compile", listener)
    assert calls == ["load", "compile", "save"], calls
    # The end event of a compile keeps its exception in _exc_details (None when it succeeded): what tells
    # NOTICE to release a failed kernel's lock.
    ends = []

    class Ends(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            ends.append(ev._exc_details)

    @njit
    def broken(x):
        return undefined_name(x)  # noqa: F821

    listener = Ends()
    event.register("numba:compile", listener)
    try:
        assert probe(2.5) == 3.5
        with pytest.raises(Exception, match="undefined_name"):
            broken(1)
    finally:
        event.unregister("numba:compile", listener)
    assert ends[0] is None and ends[-1] is not None and ends[-1][0] is not None, ends


def test_eviction_removes_the_folders_used_least_recently(tmp_path, monkeypatch):
    """Over the cap, the folders loaded or written longest ago go first; the ones this process uses stay."""
    tool = tmp_path / kc.toolchain()
    folders = []
    for i in range(4):
        f = tool / f"core.m{i}-{i:024d}"
        f.mkdir(parents=True)
        (f / "k.nbc").write_bytes(b"x" * 1000)
        os.utime(f, (1000.0 + i, 1000.0 + i))
        folders.append(f)
    monkeypatch.setattr(kc, "_touched", {folders[0]})  # the oldest, but in use here
    removed = kc.evict(limit=2500, root=tmp_path)
    assert removed == folders[1:3] and sorted(p.name for p in tool.iterdir()) == [folders[0].name, folders[3].name]
    assert kc.evict(limit=10_000, root=tmp_path) == []
    held = kc.contents(tmp_path)
    assert held["bytes"] == 2000 and held["toolchains"][kc.toolchain()]["folders"] == 2
    assert kc.clear(tmp_path) == 2000 and kc.contents(tmp_path)["bytes"] == 0


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
from denoc_pin.algorithms import tree_entries as p
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
