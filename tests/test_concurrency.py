"""Concurrency: many processes importing a changed package at once, and threads with a Data each.

A process pool or the workers of a cluster import the package together, right after an upgrade; the
stale-kernel check (``kernel_cache``) must not delete a file another process is loading, and numba's
cache must survive concurrent writers.  Threads share a Model freely, each with its own Data."""

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pinocchio as pin
from conftest import assert_close

import denoc_pin as dp

PACKAGE = Path(dp.__file__).resolve().parent
WORKER = """
import sys
import numpy as np
import denoc_pin as dp
assert dp.__file__.startswith(sys.argv[1]), dp.__file__
m = dp.models.rope(10)
rng = np.random.default_rng(5)
q, v, tau = dp.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
sys.stdout.write(dp.forward_dynamics(m, m.create_data(), q, v, tau).tobytes().hex())
"""


def _round(root: Path) -> list[str]:
    """Four processes import the copy at root and run forward dynamics, all started at once."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": str(root)}  # in-tree cache
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root)],
            env=env,
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(4)
    ]
    out = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, out, strict=True):
        assert p.returncode == 0, err
    return [o for o, _ in out]


def test_processes_importing_a_changed_package_at_once(tmp_path):
    root = tmp_path / "site"
    pkg = root / "denoc_pin"
    shutil.copytree(PACKAGE, pkg)  # with its compiled kernels and their stamps (mtimes kept: still valid)
    m = dp.models.rope(10)
    rng = np.random.default_rng(5)
    q, v, tau = dp.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    expected = dp.forward_dynamics(m, m.create_data(), q, v, tau)
    pm = dp.to_pinocchio(m)
    assert_close(expected, pin.aba(pm, pm.createData(), q, v, tau))
    source = pkg / "algorithms" / "forward.py"
    # A change to sources whose kernels are all cached: every cache dropped, recompiled by four writers at once; then
    # no change: all four load what was written.  (A second change repeats the first round's path: not run, it is
    # the suite's slowest minutes.)
    for change in (True, False):
        if change:
            source.write_text(source.read_text() + "\n# changed\n")
        results = _round(root)
        assert all(np.frombuffer(bytes.fromhex(r)).tobytes() == expected.tobytes() for r in results)
        assert list(pkg.rglob("*.nbi")), "the kernels were cached"
        assert not list(pkg.rglob("*.tmp*")), "a temporary file was left behind"


def test_threads_with_their_own_data_agree_bit_for_bit():
    m = dp.models.rope(40)  # one Model, shared; one Data per thread (as in Pinocchio)
    rng = np.random.default_rng(9)
    states = [(dp.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv))
              for _ in range(8)]  # fmt: skip
    serial = [(dp.inverse_dynamics(m, m.create_data(), q, v, x), dp.forward_dynamics(m, m.create_data(), q, v, x))
              for q, v, x in states]  # fmt: skip
    results: dict[int, list] = {}

    def work(i: int) -> None:
        d = m.create_data()
        out = []
        for _ in range(200):
            for q, v, x in states:
                out.append((dp.inverse_dynamics(m, d, q, v, x), dp.forward_dynamics(m, d, q, v, x)))
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in results.values():
        for k, (tau, ddq) in enumerate(out):
            ref_tau, ref_ddq = serial[k % len(states)]
            assert tau.tobytes() == ref_tau.tobytes() and ddq.tobytes() == ref_ddq.tobytes()
    assert len(results) == 4
