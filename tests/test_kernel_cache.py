"""Stale numba caches are dropped when a source of the package changes (_kernel_cache.py)."""

from denoc_pin._kernel_cache import STAMP, drop_stale_kernels, sources_digest


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
