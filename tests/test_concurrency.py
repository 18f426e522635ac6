"""Concurrency: threads share a Model freely, each with its own Data.  (Processes sharing the kernel cache, one
compiling while the others wait: ``test_kernel_cache.py``.)"""

import threading

import numpy as np

import denoc_pin as dp


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


def _batch_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("denoc_pin-batch")}


def test_a_batch_runs_its_chunks_on_threads_and_one_chunk_on_the_callers():
    """A batch cut into chunks, one per numba thread: each chunk on a thread of the pool (the first on the caller's),
    bit for bit the states one at a time; with one thread (a Dask worker's task), no thread is started.  Three
    threads calling batches at once share the pool and each gets its own results."""
    import numba

    m = dp.models.rope(12)
    rng = np.random.default_rng(3)
    Q = np.array([dp.random_configuration(m, rng) for _ in range(9)])
    V, T = rng.standard_normal((9, m.nv)), rng.standard_normal((9, m.nv))
    d = m.create_data()
    one_by_one = np.array([dp.forward_dynamics(m, d, Q[i], V[i], T[i]) for i in range(9)])
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        before = _batch_threads()
        assert dp.forward_dynamics(m, d, Q, V, T).tobytes() == one_by_one.tobytes()
        assert _batch_threads() == before  # one chunk: the calling thread alone
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        assert dp.forward_dynamics(m, d, Q, V, T).tobytes() == one_by_one.tobytes()
        if numba.config.NUMBA_NUM_THREADS > 1:
            assert _batch_threads(), "the other chunks ran on the pool's threads"
        out: dict[int, np.ndarray] = {}

        def batch(i: int) -> None:
            out[i] = dp.forward_dynamics(m, m.create_data(), Q, V, T + i)

        callers = [threading.Thread(target=batch, args=(i,)) for i in range(3)]
        for t in callers:
            t.start()
        for t in callers:
            t.join()
        for i in range(3):
            ref = np.array([dp.forward_dynamics(m, d, Q[k], V[k], T[k] + i) for k in range(9)])
            assert out[i].tobytes() == ref.tobytes()
    finally:
        numba.set_num_threads(threads)


def test_a_forked_child_runs_batches_on_threads_of_its_own():
    """A process forked after its parent ran a batch (a multiprocessing pool's worker) has none of its parent's
    threads: its batches make a pool of their own instead of waiting on threads that are not there."""
    import multiprocessing

    m = dp.models.rope(6)
    Q, Z = np.tile(dp.neutral(m), (4, 1)), np.zeros((4, m.nv))
    ref = dp.forward_dynamics(m, m.create_data(), Q, Z, Z)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        child = pool.apply_async(dp.forward_dynamics, (m, m.create_data(), Q, Z, Z)).get(timeout=120)
    assert child.tobytes() == ref.tobytes()
